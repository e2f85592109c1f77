"""`plang.language.parser.diagnostics`: the reference's path to the parser's errors (see
`exceptions`)."""

from .exceptions import *  # noqa: F403
from .exceptions import __all__  # noqa: F401
