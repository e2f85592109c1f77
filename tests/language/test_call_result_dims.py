"""A call of a DSL function whose signature uses dynamic dims is typed with the caller's
dims: the result of `f(x: Tensor[[N, 64]]) -> Tensor[[N, 64]]` on a [128, 64] tensor is a
[128, 64] tensor (so it combines with the caller's other [128, 64] values)."""

from __future__ import annotations

import plang as pl
from plang.ir.types import TensorType, static_shape

SOURCE = """
import plang as pl

N = pl.dynamic("N")


@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[N, 64], pl.FP32]
          ) -> tuple[pl.Tensor[[N, 64], pl.FP32], pl.Tensor[[N, 1], pl.FP32]]:
        return pl.exp(x), pl.row_sum(x)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[128, 64], pl.FP32], b: pl.Tensor[[N, 64], pl.FP32]):
        r = self.k(a)
        s = pl.add(r[0], a)
        q = self.k(b)
        return s, q[1]
"""


def test_call_result_binds_the_callee_dims_to_the_arguments():
    prog = pl.parse(SOURCE)
    first, _, second, _ = prog.functions["main"].body.stmts
    assert [static_shape(t.shape) for t in first.value.type.types] == [(128, 64), (128, 1)]
    n_dim = prog.functions["k"].params[0].type.shape[0]
    assert all(isinstance(t, TensorType) and t.shape[0] is n_dim for t in second.value.type.types)
    assert pl.parse(prog.as_python()).as_python() == prog.as_python()
