"""Debugging aids: the torch reference of a program as source, a way to run it, and the
per-pass check that finds the pass which changed a program's result."""

from __future__ import annotations

from .codegen.torch_ref import run_torch_ref, torch_codegen
from .codegen.torch_ref_validation import validate_pass_ir_codegen_results

__all__ = ["torch_codegen", "run_torch_ref", "validate_pass_ir_codegen_results"]
