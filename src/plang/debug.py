"""Debugging aids: the torch reference of a program as source, and a way to run it."""

from __future__ import annotations

from .codegen.torch_ref import run_torch_ref, torch_codegen

__all__ = ["torch_codegen", "run_torch_ref"]
