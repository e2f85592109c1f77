"""python_print / repr: the printed IR format of docs/ir-text-format.md."""

from __future__ import annotations

import textwrap

import pytest
from ir_samples import every_statement_program

from plang.dtypes import BF16, BOOL, FP16, FP32, INDEX, INT32
from plang.ir import (
    Add,
    And,
    ArrayType,
    Assign,
    AtomicType,
    Break,
    Call,
    Cast,
    ConstBool,
    ConstFloat,
    ConstInt,
    Continue,
    Div,
    Eq,
    Eval,
    FloorDiv,
    FloorMod,
    For,
    Function,
    FunctionType,
    GlobalVar,
    If,
    IterArg,
    Level,
    Lt,
    MakeTuple,
    Max,
    MemorySpace,
    Min,
    Mul,
    Neg,
    Not,
    Or,
    ParamDirection,
    Pow,
    Program,
    PtrType,
    Return,
    Role,
    ScalarType,
    Scope,
    ScopeKind,
    SeqStmts,
    SplitAivScope,
    SplitMode,
    Sub,
    TensorLayout,
    TensorType,
    TileType,
    TupleGetItem,
    TupleType,
    UnknownType,
    Var,
    While,
    Yield,
)
from plang.ir.ops import make_call
from plang.ir.printer import python_print

IDX = ScalarType(INDEX)


def src(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")


def test_program_with_every_statement_kind():
    expected = src('''
        import plang as pl

        M = pl.dynamic("M")


        @pl.program
        class Sample:
            @pl.function(type=pl.FunctionType.InCore)
            def kernel(self, a: pl.Tensor[[M, 64], pl.FP32], out: pl.Out[pl.Tensor[[M, 64], pl.FP32]], n: pl.Scalar[pl.INDEX]) -> pl.Tensor[[M, 64], pl.FP32]:
                t: pl.Tile[[64, 64], pl.FP32, pl.Mem.Vec] = pl.tile.load(a, [0, 0], [64, 64], target_memory=pl.MemorySpace.Vec)
                for i, (acc,) in pl.range(4, init_values=(t,)):
                    s: pl.Tile[[64, 64], pl.FP32] = pl.tile.add(acc, t)
                    acc_1: pl.Tile[[64, 64], pl.FP32, pl.Mem.Vec] = pl.yield_(s)
                for j in pl.parallel(1, n, 2):
                    if i < n:
                        break
                    else:
                        continue
                if n < 8:
                    r: pl.Tile[[64, 64], pl.FP32, pl.Mem.Vec] = pl.yield_(acc_1)
                else:
                    r: pl.Tile[[64, 64], pl.FP32, pl.Mem.Vec] = pl.yield_(t)
                for (k, x) in pl.while_(init_values=(0, 0.5)):
                    pl.cond(k < n)
                    k_1, x_1 = pl.yield_(k + 1, x)
                for u in pl.pipeline(2, stage=2):
                    pl.tile.store(r, [0, 0], out)
                return out

            @pl.function(type=pl.FunctionType.Orchestration)
            def orch(self, x: pl.Tensor[[M, 64], pl.FP32], y: pl.InOut[pl.Tensor[[M, 64], pl.FP32]]):
                with pl.at(level=pl.Level.CORE_GROUP, optimizations=[pl.split(pl.SplitMode.UP_DOWN)]) as tid:
                    for lane in pl.split_aiv(2, mode=pl.SplitMode.UP_DOWN):
                        c: pl.Scalar[pl.INT32] = pl.const(3, pl.INT32)
                with pl.manual_scope():
                    for blk in pl.spmd(4, deps=[tid]):
                        flag: pl.Scalar[pl.BOOL] = True
                with pl.at(level=pl.Level.HOST, role=pl.Role.Orchestrator):
                    tup: pl.Tuple[pl.Tensor[[M, 64], pl.FP32], pl.Tensor[[M, 64], pl.FP32]] = (x, y)
                with pl.cluster():
                    z: pl.Scalar[pl.INDEX] = pl.const(2, pl.INDEX) + 3
                with pl.graph('g'):
                    return y
        ''')  # noqa: E501
    prog = every_statement_program()
    assert prog.as_python() == expected
    assert python_print(prog) == expected


@pytest.mark.parametrize("t, text", [
    (ScalarType(FP16), "pl.Scalar[pl.FP16]"),
    (TensorType([64, 128], FP32), "pl.Tensor[[64, 128], pl.FP32]"),
    (TensorType([64, 128], FP32, TensorLayout.NZ), "pl.Tensor[[64, 128], pl.FP32, pl.NZ]"),
    (TensorType([4], FP32, TensorLayout.MX_A_ZZ), "pl.Tensor[[4], pl.FP32, pl.TensorLayout.MX_A_ZZ]"),
    (TileType([64, 64], FP32), "pl.Tile[[64, 64], pl.FP32]"),
    (TileType([64, 64], FP32, MemorySpace.Vec), "pl.Tile[[64, 64], pl.FP32, pl.Mem.Vec]"),
    (TileType([64, 64], FP32, MemorySpace.Vec, [32, 64]),
     "pl.Tile[[64, 64], pl.FP32, pl.Mem.Vec, pl.TileView(valid_shape=[32, 64])]"),
    (TileType([64, 64], BF16, None, [32, 64]),
     "pl.Tile[[64, 64], pl.BF16, pl.TileView(valid_shape=[32, 64])]"),
    (TupleType([ScalarType(INT32), TileType([8], FP32)]),
     "pl.Tuple[pl.Scalar[pl.INT32], pl.Tile[[8], pl.FP32]]"),
    (ArrayType(16, INT32), "pl.Array[16, pl.INT32]"),
    (PtrType(), "pl.Ptr"),
    (UnknownType(), "pl.Unknown"),
])
def test_types(t, text):
    assert python_print(t) == text
    assert repr(t) == f"<{type(t).__name__} {text}>"


i, j = Var("i", IDX), Var("j", IDX)
f32 = Var("f", ScalarType(FP32))
k32 = Var("k", ScalarType(INT32))
flag = Var("b", ScalarType(BOOL))


@pytest.mark.parametrize("e, text", [
    (ConstInt(7), "7"),
    (ConstInt(-7), "-7"),
    (ConstInt(7, INT32), "pl.const(7, pl.INT32)"),
    (ConstFloat(2.0), "2.0"),
    (ConstFloat(1e-5), "1e-05"),
    (ConstFloat(2.0, FP16), "pl.const(2.0, pl.FP16)"),
    (ConstFloat(float("inf")), 'float("inf")'),
    (ConstBool(False), "False"),
    (Mul(Add(i, j), Sub(i, j)), "(i + j) * (i - j)"),
    (Add(Mul(i, j), Mul(i, j)), "i * j + i * j"),
    (Sub(i, Sub(i, j)), "i - (i - j)"),
    (Sub(Sub(i, j), i), "i - j - i"),
    (Div(i, Mul(i, j)), "i / (i * j)"),
    (FloorDiv(i, j), "i // j"),
    (FloorMod(Add(i, j), j), "(i + j) % j"),
    (Pow(i, Pow(i, j)), "i ** i ** j"),
    (Pow(Pow(i, i), j), "(i ** i) ** j"),
    (Pow(Neg(i), ConstInt(2)), "(-i) ** 2"),
    (Neg(Pow(i, ConstInt(2))), "-i ** 2"),
    (Neg(Add(i, j)), "-(i + j)"),
    (Lt(Lt(i, j), flag), "(i < j) < b"),
    (And(Lt(i, j), Or(flag, flag)), "i < j and (b or b)"),
    (Or(And(flag, flag), flag), "b and b or b"),
    (Not(And(flag, flag)), "not (b and b)"),
    (Eq(Not(flag), flag), "(not b) == b"),
    (Min(i, Max(j, ConstInt(3))), "pl.min(i, pl.max(j, 3))"),
    (Cast(i, FP32), "pl.cast(i, pl.FP32)"),
    # literals take the dtype of the other operand when re-parsed
    (Add(k32, ConstInt(1, INT32)), "k + 1"),
    (Add(k32, ConstInt(1)), "k + pl.const(1, pl.INDEX)"),
    (Mul(f32, ConstInt(2)), "f * 2"),
    (Mul(ConstFloat(0.5), f32), "0.5 * f"),
    (Mul(ConstFloat(0.5, FP16), f32), "pl.const(0.5, pl.FP16) * f"),
    (Add(ConstInt(1, INT32), ConstInt(2, INT32)), "pl.const(1, pl.INT32) + pl.const(2, pl.INT32)"),
    (Add(i, ConstInt(-1)), "i + -1"),
    (MakeTuple([i]), "(i,)"),
    (MakeTuple([i, j]), "(i, j)"),
    (TupleGetItem(MakeTuple([i, j]), 1), "(i, j)[1]"),
])
def test_expressions(e, text):
    assert python_print(e) == text
    assert repr(e) == f"<{type(e).__name__} {text}>"


def test_call_kwargs_enums_dtypes_and_lists():
    a = Var("a", TensorType([64, 64], FP32))
    t = make_call("tile.load", [a, [0, i], [64, 64]], {"target_memory": MemorySpace.Mat})
    store = make_call("tile.store", [t, [0, 0], a])
    st = Call(store.op, store.args, {"atomic": AtomicType.None_}, store.type)
    assert python_print(t) == "pl.tile.load(a, [0, i], [64, 64], target_memory=pl.MemorySpace.Mat)"
    assert python_print(st) == (
        "pl.tile.store(pl.tile.load(a, [0, i], [64, 64], target_memory=pl.MemorySpace.Mat), [0, 0], a, "
        "atomic=pl.AtomicType.None_)")
    c = Call(st.op, st.args, {"dtype": BF16, "flags": (1, "x", None), "level": Level.CHIP}, st.type)
    assert python_print(c).endswith(", dtype=pl.BF16, flags=[1, 'x', None], level=pl.Level.CHIP)")


def test_call_args_after_an_attr_or_optional_param_print_as_keywords():
    full = make_call("tile.full", [[16, 64], FP32, 0.0])  # params: shape, dtype (attr), value
    assert python_print(full) == "pl.tile.full([16, 64], dtype=pl.FP32, value=0.0)"
    create = make_call("tensor.create", [[8, 8], BF16])
    assert python_print(create) == "pl.tensor.create([8, 8], dtype=pl.BF16)"
    # required expression params before the first attr stay positional
    a = Var("a", TensorType([64, 64], FP32))
    assert python_print(make_call("tile.load", [a, [0, 0], [16, 64]])) == "pl.tile.load(a, [0, 0], [16, 64])"


def _ten(name):
    return Var(name, TensorType([16], FP32))


def test_program_function_calls_submit_and_no_dep():
    x, y, tid = _ten("x"), _ten("y"), Var("tid", ScalarType(INDEX))
    kern = Function("k", [x], None, [x.type], Return([x]), FunctionType.InCore)
    gv = GlobalVar("k")
    plain = Call(gv, [x], {"no_dep_args": (0,)}, x.type)
    sub = Call(gv, [x, y], {"submit": True, "deps": (tid,), "allow_early_resolve": True},
               TupleType([x.type, IDX]))
    spmd = Call(gv, [x], {"spmd_submit": True, "core_num": 8}, TupleType([x.type, IDX]))
    r1, r2, r3 = Var("r", x.type), Var("r", sub.type), Var("r", spmd.type)
    body = SeqStmts([Assign(tid, ConstInt(0)), Assign(r1, plain), Assign(r2, sub), Assign(r3, spmd),
                     Return([r1])])
    orch = Function("main", [x, y], None, [x.type], body, FunctionType.Orchestration)
    text = Program("P", [kern, orch]).as_python()
    assert "        r: pl.Tensor[[16], pl.FP32] = self.k(pl.no_dep(x))\n" in text
    assert ("        r_1: pl.Tuple[pl.Tensor[[16], pl.FP32], pl.Scalar[pl.INDEX]] = "
            "pl.submit(self.k, x, y, deps=[tid], allow_early_resolve=True)\n") in text
    assert "= pl.spmd_submit(self.k, x, core_num=8)\n" in text
    # a lone function calls by bare name
    assert "    r: pl.Tensor[[16], pl.FP32] = k(pl.no_dep(x))\n" in orch.as_python()


def test_decorator_keywords_and_func_attr():
    w = _ten("w")
    fn = Function("f", [w], None, [], Eval(ConstInt(0)), FunctionType.AIV, Level.HOST, Role.Orchestrator,
                  {"stationary": w, "tag": "x", "auto_scope": False, "strict_ssa": True,
                   "external_source": "k.c"})
    assert fn.as_python() == src('''
        import plang as pl


        @pl.function(type=pl.FunctionType.AIV, level=pl.Level.HOST, role=pl.Role.Orchestrator, attrs={'tag': 'x'}, auto_scope=False, strict_ssa=True, external_source='k.c')
        def f(w: pl.Tensor[[16], pl.FP32]):
            pl.func_attr({'stationary': w})
            0
        ''')  # noqa: E501
    empty = Function("g", [], None, [], SeqStmts([]))
    assert empty.as_python().endswith("@pl.function\ndef g():\n    pass\n")


def test_distinct_vars_sharing_a_name_get_suffixes_and_rebinding_keeps_it():
    x0, x1, x_1 = Var("x", IDX), Var("x", IDX), Var("x_1", IDX)
    body = SeqStmts([Assign(x0, ConstInt(1)), Assign(x0, Add(x0, ConstInt(1))), Assign(x1, x0),
                     Assign(x_1, x1), Return([x_1])])
    fn = Function("f", [], None, [IDX], body)
    assert fn.as_python().split("\n")[4:10] == [
        "def f() -> pl.Scalar[pl.INDEX]:",
        "    x: pl.Scalar[pl.INDEX] = 1",
        "    x: pl.Scalar[pl.INDEX] = x + 1",
        "    x_1: pl.Scalar[pl.INDEX] = x",
        "    x_1_1: pl.Scalar[pl.INDEX] = x_1",
        "    return x_1_1",
    ]


def test_dynamic_dims_and_local_names_do_not_collide():
    n_dyn, n_local, pl_var = Var("N", IDX), Var("N", IDX), Var("pl", IDX)
    a = Var("a", TensorType([n_dyn, 8], FP32))
    body = SeqStmts([Assign(n_local, ConstInt(3)), Assign(pl_var, n_local), Return([a])])
    text = Function("f", [a], None, [a.type], body).as_python()
    assert text.startswith('import plang as pl\n\nN = pl.dynamic("N")\n\n\n@pl.function\n')
    assert "    N_1: pl.Scalar[pl.INDEX] = 3\n    pl_1: pl.Scalar[pl.INDEX] = N_1\n" in text


def test_statement_repr():
    x = Var("x", IDX)
    it = IterArg("a", IDX, ConstInt(0))
    loop = For(i, ConstInt(0), ConstInt(8), ConstInt(1), Yield([Add(it, i)]), [it], [x])
    cases = {
        Assign(x, ConstInt(1)): "x: pl.Scalar[pl.INDEX] = 1",
        Eval(Add(x, x)): "x + x",
        Return([x, x]): "return x, x",
        Return([]): "return",
        Break(): "break",
        Continue(): "continue",
        Yield([x]): "pl.yield_(x)",
        loop: "for i, (a,) in pl.range(8, init_values=(0,)):\n"
              "    x: pl.Scalar[pl.INDEX] = pl.yield_(a + i)",
        If(flag, Break(), None): "if b:\n    break",
        While(Lt(it, ConstInt(3)), [it], Yield([it]), [x]):
            "for (a,) in pl.while_(init_values=(0,)):\n    pl.cond(a < 3)\n"
            "    x: pl.Scalar[pl.INDEX] = pl.yield_(a)",
        Scope(ScopeKind.Spmd, Break(), {"core_num": 2, "sync_start": True}):
            "with pl.spmd(2, sync_start=True):\n    break",
        Scope(ScopeKind.Runtime, SeqStmts([])): "with pl.scope():\n    pass",
        SplitAivScope(SplitMode.LEFT_RIGHT, i, Break()):
            "for i in pl.split_aiv(2, mode=pl.SplitMode.LEFT_RIGHT):\n    break",
        SeqStmts([Break(), Continue()]): "break\ncontinue",
    }
    for stmt, text in cases.items():
        assert python_print(stmt) == text
        assert repr(stmt) == f"<{type(stmt).__name__} {text}>"


def test_function_and_program_repr():
    x = _ten("x")
    fn = Function("f", [x], [ParamDirection.In], [x.type], Return([x]))
    assert repr(fn) == f"<Function {fn.as_python()}>"
    prog = Program("P", [fn])
    assert repr(prog).startswith(
        "<Program import plang as pl\n\n\n@pl.program\nclass P:\n    @pl.function\n"
        "    def f(self, x: pl.Tensor[[16], pl.FP32]) -> pl.Tensor[[16], pl.FP32]:\n")


def test_concise_drops_the_annotations_of_assignments_and_yields_only():
    prog = pl_parse('''
        import plang as pl

        @pl.function
        def f(a: pl.Tensor[[16, 16], pl.FP32], T: pl.Scalar[pl.FP32]) -> pl.Tensor[[16, 16], pl.FP32]:
            b: pl.Tensor[[16, 16], pl.FP32] = pl.add(a, T)
            for i, (acc,) in pl.range(2, init_values=(b,)):
                acc_1: pl.Tensor[[16, 16], pl.FP32] = pl.yield_(pl.mul(acc, 2.0))
            return acc_1
        ''')
    assert prog.as_python(concise=True).endswith(src('''
        def f(a: pl.Tensor[[16, 16], pl.FP32], T: pl.Scalar[pl.FP32]) -> pl.Tensor[[16, 16], pl.FP32]:
            b = pl.tensor.adds(a, T)
            for i, (acc,) in pl.range(2, init_values=(b,)):
                acc_1 = pl.yield_(pl.tensor.muls(acc, 2.0))
            return acc_1
        '''))


def test_prefix_respells_the_import_and_every_pl_name_but_not_strings_or_clashing_vars():
    prog = pl_parse('''
        import plang as pl

        @pl.function
        def f(a: pl.Tensor[[16, 16], pl.FP32], T: pl.Scalar[pl.FP32]) -> pl.Tensor[[16, 16], pl.FP32]:
            pl.func_attr({"note": "pl.keep"})
            b: pl.Tensor[[16, 16], pl.FP32] = pl.add(a, T)
            return b
        ''')
    assert prog.as_python(prefix="T", concise=True) == src('''
        import plang as T


        @T.function(attrs={'note': 'pl.keep'})
        def f(a: T.Tensor[[16, 16], T.FP32], T_1: T.Scalar[T.FP32]) -> T.Tensor[[16, 16], T.FP32]:
            b = T.tensor.adds(a, T_1)
            return b
        ''')
    body = python_print(prog.body, prefix="T")
    assert body.startswith("b: T.Tensor[[16, 16], T.FP32] = T.tensor.adds(a, T_1)")
    assert python_print(ScalarType(FP16), "T", format=False, explicit_layout=True) == "T.Scalar[T.FP16]"
    with pytest.raises(ValueError, match="prefix must be a Python identifier"):
        prog.as_python(prefix="not a name")


def pl_parse(text: str):
    import plang as pl

    return pl.parse(src(text))
