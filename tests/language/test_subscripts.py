"""Subscripts are numpy-style, as in the reference: naming every axis with an integer reads an
element; otherwise an integer index removes its axis from a slice view, `a:b` keeps its
axis and missing trailing axes are `:`. A tile keeps two axes. Checked on the parsed types
(hand-written) and end to end against torch."""

# ruff: noqa: F841  (DSL bodies bind values only to type them)
from __future__ import annotations

import pytest
import torch

import plang as pl
from plang.errors import ParserTypeError
from plang.ir.ops.common import fmt_type


@pl.function
def views(x: pl.Tensor[[2, 8, 16], pl.FP32], t2: pl.Tensor[[8, 16], pl.FP32]):
    row_block = x[1]
    row = x[1, 3]
    column = x[:, 2, 5:9]
    element = t2[2, 3]
    rows = t2[2:4]


def _types(fn) -> dict[str, str]:
    return {s.var.name: fmt_type(s.var.type) for s in fn.body.stmts if hasattr(s, "var")}


def test_an_integer_index_removes_its_axis():
    assert _types(views) == {
        "row_block": "Tensor[[8, 16], FP32]",
        "row": "Tensor[[16], FP32]",
        "column": "Tensor[[2, 4], FP32]",
        "element": "Scalar[FP32]",
        "rows": "Tensor[[2, 16], FP32]",
    }


def test_too_many_indices_is_a_located_error():
    with pytest.raises(ParserTypeError, match="too many indices: 3 for a rank-2 value") as e:
        @pl.function
        def bad(t: pl.Tensor[[8, 16], pl.FP32]):
            v = t[1, 2, 3]
    assert "test_subscripts.py" in str(e.value)


@pl.jit
def per_batch(x: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        for b in pl.range(2):
            t = pl.load(x[b], [0, 0], [8, 16])  # [2, 8, 16] -> [8, 16]
            out = pl.store(pl.mul(t, 2.0), [b, 0, 0], out)
    return out


@pl.jit
def rows_and_columns(x: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(x, [0, 0], [8, 16])
        out = pl.store(pl.add(t[3], t[3]), [0, 0], out)  # a row: [1, 16]
        out = pl.store(t[:, 5], [1, 0], out)  # a column, as a [1, 8] row
    return out


def test_a_batch_of_a_tensor_in_a_kernel():
    x = torch.randn(2, 8, 16)
    torch.testing.assert_close(per_batch(x, torch.zeros(2, 8, 16)), 2 * x)


def test_a_row_and_a_column_of_a_tile():
    x = torch.randn(8, 16)
    got = rows_and_columns(x, torch.zeros(2, 16))
    torch.testing.assert_close(got[0], 2 * x[3])
    torch.testing.assert_close(got[1, :8], x[:, 5])


@pl.jit
def write_rows(x: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        for b in pl.range(2):
            out[b] = pl.add(x[b], x[b])  # a [8, 16] tensor into the [1, 8, 16] window
    out[:, 0, 0:4] = x[:, 1, 4:8]  # rank-reduced on both sides, in orchestration
    return out


def test_a_subscript_write_fills_the_rank_reduced_window():
    x = torch.randn(2, 8, 16)
    want = 2 * x
    want[:, 0, 0:4] = x[:, 1, 4:8]
    torch.testing.assert_close(write_rows(x, torch.zeros(2, 8, 16)), want)
