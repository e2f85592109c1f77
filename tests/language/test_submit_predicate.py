"""`pl.submit(..., predicate=(t[i] > 0))`: one `tensor[indices] <cmp> <int>` comparison whose
tensor, when produced by an earlier submit, must come from a task listed in `deps=`."""

from __future__ import annotations

import pytest

import plang as pl


def program(body: str) -> str:
    lines = "\n".join("        " + ln for ln in body.strip().splitlines())
    return f"""
import plang as pl


@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[8, 8], pl.INT32], out: pl.Out[pl.Tensor[[8, 8], pl.INT32]]):
        t = pl.load(a, [0, 0], [8, 8])
        out = pl.store(t, [0, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[8, 8], pl.INT32], out: pl.Out[pl.Tensor[[8, 8], pl.INT32]],
             n: pl.Scalar[pl.INT32]):
{lines}
        return out
"""


@pytest.mark.parametrize("body", [
    "r1, t1 = pl.submit(self.k, a, out)\n"
    "r2, t2 = pl.submit(self.k, a, out, deps=[t1], predicate=(r1[0, 0] > 0))",
    "r1, t1 = pl.submit(self.k, a, out)\nr2, t2 = pl.spmd_submit(self.k, a, out, core_num=2, deps=[t1], "
    "predicate=(r1[1, 2] != 3))",
    # a parameter tensor has no producing task in this function
    "r2, t2 = pl.submit(self.k, a, out, predicate=(a[0, 0] == 1))",
    # a task id read from an array may be the producer: not statically provable
    "tids = pl.array.create(1, pl.TASK_ID)\nr1, t1 = pl.submit(self.k, a, out)\ntids[0] = t1\n"
    "r2, t2 = pl.submit(self.k, a, out, deps=[tids[0]], predicate=(r1[0, 0] > 0))",
    # rebound inside a loop: the producer is not statically known
    "r1, t1 = pl.submit(self.k, a, out)\nfor i in pl.range(2):\n    r1 = self.k(a, r1)\n"
    "r2, t2 = pl.submit(self.k, a, out, predicate=(r1[0, 0] > 0))",
])
def test_accepted_predicates(body):
    prog = pl.parse(program(body))
    pl.parse(prog.as_python())


def test_producer_missing_from_deps_is_reported():
    body = ("r1, t1 = pl.submit(self.k, a, out)\nr0, t0 = pl.submit(self.k, a, out)\n"
            "r2, t2 = pl.submit(self.k, a, out, deps=[t0], predicate=(r1[0, 0] > 0))")
    with pytest.raises(pl.ParserTypeError,
                       match=r"predicate= reads 'r1', produced by task 't1', which is not in deps=") as info:
        pl.parse(program(body))
    err = info.value
    assert err.line == 18 and "deps=[..., t1]" in str(err)


def test_producer_missing_without_deps_keyword():
    body = "r1, t1 = pl.submit(self.k, a, out)\nr2, t2 = pl.submit(self.k, a, out, predicate=(r1[0, 0] > 0))"
    with pytest.raises(pl.ParserTypeError, match=r"produced by task 't1', which is not in deps="):
        pl.parse(program(body))


@pytest.mark.parametrize("predicate", ["(r1[0, 0] + 1 > 0)", "(n > 0)", "(r1[0, 0] > n)",
                                       "(r1[0, 0] > 0) and (r1[0, 1] > 0)"])
def test_predicate_must_be_one_read_compared_with_an_int(predicate):
    body = ("r1, t1 = pl.submit(self.k, a, out)\n"
            f"r2, t2 = pl.submit(self.k, a, out, deps=[t1], predicate={predicate})")
    shape = r"predicate= must be one comparison `tensor\[indices\] <op> <int literal>`"
    with pytest.raises(pl.ParserTypeError, match=shape):
        pl.parse(program(body))
