"""Tensor-level ops (`tensor.*`): whole DDR tensors, legal anywhere."""

from __future__ import annotations

from .common import elementwise_binary
from .registry import Param, register

register("tensor.add", [Param("lhs", "tensor"), Param("rhs", "tensor")], elementwise_binary,
         unit="vector", doc="Elementwise addition.")
