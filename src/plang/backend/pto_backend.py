"""`PartialCodegenError`, the error the reference's backend raises when code generation fails
for some functions; plang's kernel codegen failure (`KernelCompileError`) is one."""

from __future__ import annotations

from ..errors import Error


class PartialCodegenError(Error, RuntimeError):
    """Code generation failed; `files` holds whatever was generated before (name -> text)."""

    def __init__(self, message: str = "", files: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.files = dict(files or {})


__all__ = ["PartialCodegenError"]
