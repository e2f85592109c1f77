"""The DSL parser: Python AST → plang IR (see `functions.parse_function` / `parse_program`).

`FunctionParser` (functions.py) owns one collaborator per concern and passes them explicitly:
`SourceTracker` (source.py: spans, located errors, the error boundary), `NameScopes`
(names.py), `Body` (body.py: blocks, yields, returns), `ExprEvaluator` (expressions.py) with
its `CallParser` (calls.py), `TypeResolver` (types.py) and `StatementParser` (statements.py)
with its `Directives`, `LoopParser` and `ScopeParser` (directives.py, loops.py, scopes.py).
"""

from .functions import FunctionOptions, FunctionSource, parse_function, parse_program

__all__ = ["FunctionOptions", "FunctionSource", "parse_function", "parse_program"]
