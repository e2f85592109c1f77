"""Focused parser tests: each construct parses to the hand-built IR."""

from __future__ import annotations

import pytest

import plang as pl
from plang.dtypes import FP32, INDEX
from plang.ir import (
    Call,
    FunctionType,
    GlobalVar,
    ParamDirection,
    Program,
    TensorType,
    TileType,
    assert_structural_equal,
)
from plang.ir.builder import IRBuilder
from plang.ir.ops import make_call

T128 = TensorType([128, 128], FP32)


def test_thin_path_program_matches_hand_built_ir():
    @pl.program
    class Add:
        @pl.function(type=pl.FunctionType.InCore)
        def kernel(
            self,
            a: pl.Tensor[[128, 128], pl.FP32],
            b: pl.Tensor[[128, 128], pl.FP32],
            c: pl.Out[pl.Tensor[[128, 128], pl.FP32]],
        ) -> pl.Tensor[[128, 128], pl.FP32]:
            ta = pl.load(a, [0, 0], [128, 128])
            tb = pl.load(b, [0, 0], [128, 128])
            tc = pl.add(ta, tb)
            c = pl.store(tc, [0, 0], c)
            return c

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(
            self,
            a: pl.Tensor[[128, 128], pl.FP32],
            b: pl.Tensor[[128, 128], pl.FP32],
            c: pl.Out[pl.Tensor[[128, 128], pl.FP32]],
        ) -> pl.Tensor[[128, 128], pl.FP32]:
            c = self.kernel(a, b, c)
            return c

    b = IRBuilder()
    with b.program("Add") as prog:
        with b.function("kernel", type=FunctionType.InCore, return_types=[T128]) as f:
            a, bb = f.param("a", T128), f.param("b", T128)
            c = f.param("c", T128, ParamDirection.Out)
            ta = b.let("ta", make_call("tile.load", [a, [0, 0], [128, 128]]))
            tb = b.let("tb", make_call("tile.load", [bb, [0, 0], [128, 128]]))
            tc = b.let("tc", make_call("tile.add", [ta, tb]))
            b.assign(c, make_call("tile.store", [tc, [0, 0], c]))
            b.ret(c)
        with b.function("main", type=FunctionType.Orchestration, return_types=[T128]) as f:
            a, bb = f.param("a", T128), f.param("b", T128)
            c = f.param("c", T128, ParamDirection.Out)
            b.assign(c, Call(GlobalVar("kernel"), [a, bb, c], {}, T128))
            b.ret(c)
    assert isinstance(Add, Program)
    assert_structural_equal(Add, prog.program)
    # the rebinding of `c` reuses the parameter Var (non-SSA default)
    kernel = Add.functions["kernel"]
    assert kernel.body.stmts[3].var is kernel.params[2]
    assert isinstance(kernel.body.stmts[0].value.type, TileType)


def test_wrapper_called_eagerly_raises_clear_error():
    with pytest.raises(pl.EagerCallError, match="only works inside a DSL function"):
        pl.add(1, 2)
    with pytest.raises(pl.EagerCallError, match="only works inside a DSL function"):
        pl.tile.load([1, 2], [0], [1])


def test_lone_int_literal_is_index():
    @pl.function
    def f(n: pl.Scalar[pl.INDEX]) -> pl.Scalar[pl.INDEX]:
        m = n + 1
        return m

    value = f.body.stmts[0].value
    assert value.rhs.type.dtype is INDEX


def _parse_body(body: str, header: str = "", ftype: str = "Opaque"):
    src = (
        f"import plang as pl\n{header}\n\n@pl.function(type=pl.FunctionType.{ftype})\n"
        "def f(a: pl.Tensor[[64, 64], pl.FP32], n: pl.Scalar[pl.INT32], m: pl.Scalar[pl.FP16]):\n"
        + "\n".join("    " + ln for ln in body.strip().splitlines())
        + "\n"
    )
    return pl.parse(src)


def test_literal_dtype_rule():
    from plang.ir import flatten

    f = _parse_body("x = n + 1\ny = m * 2.0\nz = 3\nw = 1.5\nv = m + 1")
    x, y, z, w, v = (s.value for s in flatten(f.body))
    assert x.rhs.type.dtype is pl.INT32 and y.rhs.type.dtype is pl.FP16
    assert z.type.dtype is pl.INDEX and w.type.dtype is pl.FP32
    assert v.rhs.type.dtype is pl.INDEX and v.type.dtype is pl.FP16


def test_rebinding_reuses_var_only_when_type_unchanged():
    from plang.ir import flatten

    f = _parse_body("x = n + 1\nx = n + 2\nx = m * 2.0")
    a, b, c = flatten(f.body)
    assert a.var is b.var
    assert c.var is not a.var and c.var.name == "x"


def test_counted_loop_with_carried_values_matches_builder():
    from plang.ir import Add, IterArg, ScalarType

    f = _parse_body(
        "for i, (s,) in pl.range(1, 8, 2, init_values=(n,)):\n    s2 = s + i\n    r = pl.yield_(s2)"
    )
    b = IRBuilder()
    with b.function("f") as fr:
        fr.param("a", TensorType([64, 64], FP32))
        n = fr.param("n", ScalarType(pl.INT32))
        fr.param("m", ScalarType(pl.FP16))
        with b.for_range("i", 1, 8, 2, iter_args=[("s", n)]) as loop:
            s2 = b.let("s2", Add(loop.iter_args[0], loop.var))
            b.yield_(s2)
    assert_structural_equal(f, fr.function)
    assert isinstance(f.body.iter_args[0], IterArg) and f.body.return_vars[0].name == "r"


def test_scope_kinds_and_attrs():
    from plang.ir import Scope, ScopeKind, flatten

    f = _parse_body(
        "with pl.at(level=pl.Level.CORE_GROUP, optimizations=[pl.split(pl.SplitMode.UP_DOWN)]) as tid:\n"
        "    x = n + 1\n"
        "with pl.at(level=pl.Level.HOST, role=pl.Role.Orchestrator):\n    y = n + 1\n"
        "with pl.manual_scope():\n    z = n\n"
        "for i in pl.spmd(4, sync_start=True):\n    w = i\n"
        "for lane in pl.split_aiv(2, mode=pl.SplitMode.LEFT_RIGHT):\n    q = lane",
        ftype="Orchestration",
    )
    incore, hier, manual, spmd, split = flatten(f.body)
    assert isinstance(incore, Scope) and incore.kind is ScopeKind.InCore
    assert dict(incore.attrs) == {"level": pl.Level.CORE_GROUP, "split": pl.SplitMode.UP_DOWN}
    assert incore.task_var.name == "tid" and incore.task_var.type.dtype is pl.TASK_ID
    assert hier.kind is ScopeKind.Hierarchy and hier.attrs["role"] is pl.Role.Orchestrator
    assert manual.kind is ScopeKind.Runtime and manual.attrs["mode"] is pl.ScopeMode.MANUAL
    assert (
        spmd.kind is ScopeKind.Spmd
        and spmd.index_var.name == "i"
        and dict(spmd.attrs) == {"core_num": 4, "sync_start": True}
    )
    assert split.mode is pl.SplitMode.LEFT_RIGHT and split.lane_var.name == "lane"


def test_submit_call_shape():
    from plang.ir import TupleType, flatten

    prog = pl.parse(
        """
import plang as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[64], pl.FP32]) -> pl.Tensor[[64], pl.FP32]:
        return a

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[64], pl.FP32]) -> pl.Tensor[[64], pl.FP32]:
        r, tid = pl.submit(self.k, pl.no_dep(a), allow_early_resolve=True)
        r2, tid2 = pl.submit(self.k, r, deps=[tid])
        return r2
"""
    )
    stmts = flatten(prog.functions["main"].body)
    call = stmts[0].value
    assert isinstance(call.op, GlobalVar) and call.op.name == "k"
    assert dict(call.kwargs) == {"submit": True, "allow_early_resolve": True, "no_dep_args": (0,)}
    assert isinstance(call.type, TupleType) and call.type.types[1].dtype is pl.TASK_ID
    assert stmts[3].value.kwargs["deps"] == (stmts[2].var,)


def test_function_options_land_in_attrs():
    @pl.function(type=pl.FunctionType.Orchestration, auto_scope=False, strict_ssa=True, attrs={"k": 1})
    def g(a: pl.Tensor[[64], pl.FP32]) -> pl.Tensor[[64], pl.FP32]:
        return a

    assert dict(g.attrs) == {"k": 1, "auto_scope": False, "strict_ssa": True}
    assert g.func_type is pl.FunctionType.Orchestration

    @pl.function
    def h(a: pl.Tensor[[64], pl.FP32]) -> pl.Tensor[[64], pl.FP32]:
        return a

    assert dict(h.attrs) == {}


def test_parse_autodetect_and_deprecated_aliases(tmp_path):
    src = "import plang as pl\n\n@pl.function\ndef f(a: pl.Scalar[pl.INDEX]):\n    b = a + 1\n"
    assert pl.parse(src).name == "f"
    path = tmp_path / "k.py"
    path.write_text(src)
    assert pl.loads(path).name == "f"
    with pytest.warns(DeprecationWarning), pytest.raises(ValueError, match="expected a @pl.program"):
        pl.parse_program(src)
    with pytest.warns(DeprecationWarning), pytest.raises(ValueError, match="expected a @pl.program"):
        pl.loads_program(path)
    with pytest.raises(ValueError, match="no @pl.function"):
        pl.parse("x = 1\n")
    with pytest.raises(ValueError, match="expected one"):
        pl.parse(src + "\n@pl.function\ndef g(a: pl.Scalar[pl.INDEX]):\n    c = a\n")


def test_inline_expansion_splices_body():
    from plang.ir import flatten

    @pl.inline
    def double(x: pl.Tensor[[64], pl.FP32]) -> pl.Tensor[[64], pl.FP32]:
        y = pl.add(x, x)
        return y

    @pl.function
    def g(a: pl.Tensor[[64], pl.FP32]) -> pl.Tensor[[64], pl.FP32]:
        b = double(a)
        return b

    stmts = flatten(g.body)
    assert stmts[0].var.name == "y" and stmts[0].value.op.name == "tensor.add"
    assert stmts[1].value is stmts[0].var
    with pytest.raises(pl.EagerCallError):
        double(1)


def test_compile_time_if_and_static_constants():
    from plang.ir import flatten

    f = _parse_body("if N > 32:\n    x = n + N\nelse:\n    x = n - N", header="N = 64")
    (stmt,) = flatten(f.body)
    assert stmt.value.rhs.value == 64 and stmt.value.symbol == "+"
