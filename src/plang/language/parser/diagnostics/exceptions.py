"""The parser's errors under the reference's module path
(`pypto.language.parser.diagnostics.exceptions`), for handlers written against it. Each name
is plang's own class (`plang.errors`); the reference's `UndefinedVariableError` and
`UnsupportedFeatureError` are plang's `ParserNameError` and `UnsupportedConstructError`."""

from ....errors import (
    InvalidOperationError,
    ParserError,
    ParserNameError,
    ParserSyntaxError,
    ParserTypeError,
    SSAViolationError,
    UnsupportedConstructError,
)

UndefinedVariableError = ParserNameError
UnsupportedFeatureError = UnsupportedConstructError

__all__ = ["InvalidOperationError", "ParserError", "ParserSyntaxError", "ParserTypeError",
           "SSAViolationError", "UndefinedVariableError", "UnsupportedFeatureError"]
