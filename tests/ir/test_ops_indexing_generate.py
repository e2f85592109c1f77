"""Type deduction of rem / carry / prelu, batch_matmul, arange, tri, gather and scatter:
the other valid forms and the messages of invalid operands."""
# ruff: noqa: E501  (expected messages read best on one line)

from __future__ import annotations

import pytest
from _ops_util import describe, scalar, tensor, tile

from plang.dtypes import FP16, FP32, INT8, INT16, INT32, INT64
from plang.ir.ops import OpTypeError, OpValueError, make_call

A = tile([16, 32], FP32, name="a")
IDX = tile([16, 8], INT32, name="idx")

# valid cases are in test_ops_valid.py (one per op); these add the other forms
VALID = [
    ("tile.batch_matmul", (tile([1, 16, 32], INT8), tile([3, 32, 8], INT8)), {}, "Tile[[3, 16, 8], INT32]"),
    ("tile.tri", (0, [8, 8]), {}, "Tile[[8, 8], INT32]"),
    ("tensor.gather", (tensor([4, 64, 32]), tensor([4, 10, 32], INT32)), {"dim": -2}, "Tensor[[4, 10, 32], FP32]"),
]


@pytest.mark.parametrize("op, args, kwargs, expect", VALID, ids=[v[0] for v in VALID])
def test_valid(op, args, kwargs, expect):
    assert describe(make_call(op, args, kwargs).type) == expect


INVALID = [
    (OpTypeError, r"tile\.rem: operand 'tmp' dtype INT32 does not match 'lhs' dtype FP32", "tile.rem",
     (A, A, tile([2, 32], INT32)), {}),
    (OpTypeError, r"tile\.rem: operand 'rhs' shape \[8, 32\] does not match 'lhs' shape \[16, 32\]", "tile.rem",
     (A, tile([8, 32]), A), {}),
    (OpTypeError, r"tile\.rems: operand 'rhs' is a FP32 scalar but the INT32 operand is integer", "tile.rems",
     (tile([8, 8], INT32), 0.5, tile([1, 8], INT32)), {}),
    (OpTypeError, r"tile\.addc: operand 'rhs2' shape \[8, 32\] does not match 'lhs' shape \[16, 32\]", "tile.addc",
     (A, A, tile([8, 32])), {}),
    (OpTypeError, r"tile\.prelu: operand 'tile' dtype INT32 is not supported", "tile.prelu",
     (IDX, IDX, IDX), {}),
    (OpTypeError, r"tile\.batch_matmul: contraction dims differ", "tile.batch_matmul",
     (tile([4, 16, 32], FP16), tile([4, 16, 8], FP16)), {}),
    (OpTypeError, r"tile\.batch_matmul: batch dims \[4\] and \[3\] do not broadcast", "tile.batch_matmul",
     (tile([4, 16, 32], FP16), tile([3, 32, 8], FP16)), {}),
    (OpTypeError, r"tile\.batch_matmul: operand 'lhs' must have rank >= 2", "tile.batch_matmul",
     (tile([32], FP16), tile([32, 8], FP16)), {}),
    (OpTypeError, r"tensor\.arange: the sequence runs along the last axis: leading dims must be 1 and the last one larger, e\.g\. \[1, N\]; got shape \[4, 16\]",
     "tensor.arange", (0, [4, 16]), {}),
    (OpTypeError, r"tensor\.arange: argument 'dtype' dtype FP32 is not supported", "tensor.arange",
     (0, [1, 16]), {"dtype": FP32}),
    (OpTypeError, r"tile\.arange: operand 'start' must be an integer scalar, got Scalar\[FP32\]", "tile.arange",
     (scalar(FP32), [1, 16]), {}),
    (OpTypeError, r"tile\.tri: shape must be two static dims \[rows, cols\], got \[8\]", "tile.tri", (0, [8]), {}),
    (OpValueError, r"tile\.tri: valid_shape \[9, 8\] exceeds shape \[8, 8\]", "tile.tri", (0, [8, 8]),
     {"valid_shape": [9, 8]}),
    (OpValueError, r"tile\.tri: upper must be True or False, got 1", "tile.tri", (0, [8, 8]), {"upper": 1}),
    (OpTypeError, r"tile\.gather: operand 'index' dtype INT16 is not supported; expected one of INT32", "tile.gather",
     (A, tile([16, 8], INT16)), {"dim": 1}),
    (OpTypeError, r"tile\.gather: index \[32, 8\] exceeds input \[16, 32\] on axis 0 \(only the gather axis 1 may differ\)",
     "tile.gather", (A, tile([32, 8], INT32)), {"dim": 1}),
    (OpTypeError, r"tensor\.gather: operand 'index' must have rank 2", "tensor.gather",
     (tensor([64]), tensor([8], INT32)), {}),
    (OpTypeError, r"tensor\.gather: operand 'input' dtype INT64 is not supported", "tensor.gather",
     (tensor([8, 8], INT64), tensor([8, 8], INT32)), {"dim": 0}),
    (OpValueError, r"tile\.scatter: dim must be the last axis \(-1 or 1\), got 0", "tile.scatter",
     (A, IDX, tile([16, 8])), {"dim": 0}),
    (OpTypeError, r"tile\.scatter: operand 'index' shape \[16, 4\] does not match 'src' shape \[16, 8\]",
     "tile.scatter", (A, tile([16, 4], INT32), tile([16, 8])), {}),
    (OpTypeError, r"tile\.scatter: src \[16, 64\] has more columns than input \[16, 32\]", "tile.scatter",
     (A, tile([16, 64], INT32), tile([16, 64])), {}),
    (OpTypeError, r"tensor\.scatter: operand 'index' dtype INT32 is not supported; expected one of INT16",
     "tensor.scatter", (tensor([4, 32], FP16), tensor([4, 8], INT32), tensor([4, 8], FP16)), {}),
]


@pytest.mark.parametrize("cls, message, op, args, kwargs", INVALID, ids=[f"{c[2]}-{i}" for i, c in enumerate(INVALID)])
def test_invalid(cls, message, op, args, kwargs):
    with pytest.raises(cls, match=message):
        make_call(op, args, kwargs)
