"""The DSL parser: Python AST → plang IR (see `functions.parse_function` / `parse_program`)."""

from .functions import FunctionOptions, FunctionSource, parse_function, parse_program

__all__ = ["FunctionOptions", "FunctionSource", "parse_function", "parse_program"]
