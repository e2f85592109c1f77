"""`attrs=` on counted loops: parsed into the loop, printed back, bad values located."""
# ruff: noqa: E501  (SOURCE is printer output, one statement per line)

from __future__ import annotations

import pytest

import plang as pl
from plang import ir
from plang.errors import ParserSyntaxError

SOURCE = '''
import plang as pl


@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[16, 16], pl.FP32], out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        for i, (o,) in pl.pipeline(0, 16, 8, stage=2, init_values=(out,), attrs={"pipeline_overlap_stores": False}):
            t: pl.Tile[[8, 16], pl.FP32] = pl.tile.load(a, [i, 0], [8, 16])
            o2: pl.Tensor[[16, 16], pl.FP32] = pl.tile.store(t, [i, 0], o)
            o3: pl.Tensor[[16, 16], pl.FP32] = pl.yield_(o2)
        return o3
'''


def test_loop_attrs_round_trip():
    program = pl.parse(SOURCE)
    loop = program.functions["k"].body.stmts[0]
    assert dict(loop.attrs) == {"stage": 2, "pipeline_overlap_stores": False}
    assert ir.python_print(program).strip() == SOURCE.strip()


def test_a_bad_attrs_value_is_located():
    with pytest.raises(ParserSyntaxError, match="attrs= takes a dict") as e:
        pl.parse(SOURCE.replace('{"pipeline_overlap_stores": False}', '{"stage": 3}'))
    assert "line" in str(e.value) or e.value.span is not None
