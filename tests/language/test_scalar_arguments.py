"""An integer scalar passed to a function parameter of another integer dtype is converted
implicitly (a `Cast` at the call), so the program type-checks through the pass pipeline."""

from __future__ import annotations

import torch

import plang as pl
from plang.codegen.torch_ref import run_torch_ref
from plang.ir import assert_structural_equal
from plang.ir.expr import Call, Cast
from plang.passes import PassManager

SOURCE = """
import plang as pl

M = pl.dynamic("M")


@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[M, 64], pl.FP32], rows: pl.Scalar[pl.INDEX],
          out: pl.Out[pl.Tensor[[M, 64], pl.FP32]]) -> pl.Tensor[[M, 64], pl.FP32]:
        for r in pl.range(0, rows, 16):
            valid = pl.min(rows - r, 16)
            t = pl.load(a, [r, 0], [16, 64], valid_shape=[valid, 64])
            out = pl.store(pl.add(t, t), [r, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[M, 64], pl.FP32],
             out: pl.Out[pl.Tensor[[M, 64], pl.FP32]]) -> pl.Tensor[[M, 64], pl.FP32]:
        out = self.k(a, {rows}, out)
        return out
"""


def _call_of_k(prog) -> Call:
    return prog.functions["main"].body.stmts[0].value


def test_dynamic_dim_passed_to_an_index_parameter_is_cast():
    prog = pl.parse(SOURCE.format(rows="a.shape[0]"))
    rows = _call_of_k(prog).args[1]
    assert isinstance(rows, Cast) and rows.dtype is pl.INDEX
    assert isinstance(rows.operand, Call) and rows.operand.op.name == "tensor.dim"
    assert rows.operand.type.dtype is pl.INT64
    text = prog.as_python()
    assert "self.k(a, pl.cast(pl.tensor.dim(a, axis=0), pl.INDEX), out)" in text
    assert_structural_equal(pl.parse(text), prog)
    PassManager("Default", verify=True).run(prog)  # TypeCheck accepts the call


def test_matching_dtype_is_passed_unchanged():
    prog = pl.parse(SOURCE.format(rows="pl.cast(a.shape[0], pl.INDEX)"))
    rows = _call_of_k(prog).args[1]
    assert isinstance(rows, Cast) and isinstance(rows.operand, Call)  # the user's cast, not wrapped again


def test_torch_reference_runs_the_converted_call():
    prog = pl.parse(SOURCE.format(rows="a.shape[0]"))
    a = torch.randn(37, 64)
    got = run_torch_ref(prog, a, torch.zeros(37, 64))
    torch.testing.assert_close(got, 2 * a)
