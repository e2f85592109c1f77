"""structural_equal / assert_structural_equal / structural_hash."""

from __future__ import annotations

import random

import pytest
from ir_samples import every_statement_program

from plang.dtypes import FP16, FP32, INDEX, INT32
from plang.ir import (
    Add,
    Assign,
    Call,
    Cast,
    ConstBool,
    ConstFloat,
    ConstInt,
    Eval,
    For,
    Function,
    FunctionType,
    GlobalVar,
    If,
    IterArg,
    Lt,
    MakeTuple,
    Max,
    MemorySpace,
    Min,
    Mul,
    Neg,
    Program,
    Return,
    ScalarType,
    Scope,
    ScopeKind,
    SeqStmts,
    Sub,
    TensorType,
    TileType,
    TupleGetItem,
    Var,
    Yield,
)
from plang.ir.builder import IRBuilder
from plang.ir.equality import assert_structural_equal, structural_equal, structural_hash
from plang.ir.ops import get_op, make_call

IDX = ScalarType(INDEX)


def check_equal(a, b):
    assert_structural_equal(a, b)
    assert structural_equal(b, a)
    assert structural_hash(a) == structural_hash(b)


def check_differs(a, b, message=None):
    assert not structural_equal(a, b)
    assert not structural_equal(b, a)
    with pytest.raises(AssertionError) as err:
        assert_structural_equal(a, b)
    if message is not None:
        assert str(err.value) == message


def loop_fn(names=("a", "i", "acc", "s", "r"), step=1, stage=None, swap=False):
    """`for i, (acc,) in range(0, 8, step): s = acc + a; yield s; return r` with chosen names."""
    b = IRBuilder()
    an, iname, accn, sn, rn = names
    attrs = {} if stage is None else {"stage": stage}
    with b.function("f", type=FunctionType.InCore) as f:
        a = f.param(an, TensorType([16], FP32))
        n = f.param("n", IDX)
        with b.scope(ScopeKind.InCore):
            with b.for_range(iname, 0, 8, step, iter_args=[(accn, a)], return_names=[rn], attrs=attrs) as lp:
                x, y = (a, lp.iter_args[0]) if swap else (lp.iter_args[0], a)
                s = b.let(sn, make_call("tensor.add", [x, y]))
                with b.if_(Lt(lp.var, n), returns=[("t", s.type)]) as br:
                    with br.then_():
                        b.yield_(s)
                    with br.else_():
                        b.yield_(x)
                b.yield_(br.return_vars[0])
        b.ret(lp.return_vars[0])
    return f.function


def test_alpha_renamed_programs_are_equal():
    check_equal(loop_fn(), loop_fn(("x", "k", "carry", "tmp", "out")))
    check_equal(every_statement_program(), every_statement_program())


def test_swapped_operands_differ():
    check_differs(loop_fn(), loop_fn(swap=True),
                  "body[0].body[0].body[0].value.args[0]: IterArg acc vs Var a")


def test_var_bijection_violation():
    x, y, u, v = (Var(n, IDX) for n in "xyuv")
    # x<->u, then y meets u again: u is already taken by x
    check_differs(Add(x, y), Add(u, u),
                  "rhs: variable 'u' is matched to 'x' earlier, here to 'y'")
    check_differs(Add(x, x), Add(u, v), "rhs: variable 'x' is matched to 'u' earlier, here to 'v'")
    check_equal(Add(x, y), Add(v, u))


def test_nested_scopes_and_loops_compare_structure():
    check_differs(loop_fn(), loop_fn(step=2), "body[0].body[0].step: 1 vs 2")
    check_differs(loop_fn(stage=2), loop_fn(stage=3), "body[0].body[0].attrs['stage']: 2 vs 3")
    check_differs(loop_fn(stage=2), loop_fn(), "body[0].body[0].attrs: keys ['stage'] vs []")


def test_differing_attrs_and_kwargs():
    t = Var("t", TensorType([64, 64], FP32))
    vec = make_call("tile.load", [t, [0, 0], [64, 64]], {"target_memory": MemorySpace.Vec})
    mat = make_call("tile.load", [t, [0, 0], [64, 64]], {"target_memory": MemorySpace.Mat})
    check_differs(vec, mat, "kwargs['target_memory']: pl.MemorySpace.Vec vs pl.MemorySpace.Mat")
    body = Return([])
    f1 = Function("f", [], None, [], body, attrs={"w": (ConstInt(1), "x")})
    f2 = Function("f", [], None, [], body, attrs={"w": (ConstInt(1), "y")})
    check_differs(f1, f2, "attrs['w'][1]: 'x' vs 'y'")
    check_differs(f1, f1.replace(func_type=FunctionType.AIV),
                  "func_type: pl.FunctionType.Opaque vs pl.FunctionType.AIV")
    # kwarg order does not matter
    c1 = Call(vec.op, vec.args, {"a": 1, "b": 2}, vec.type)
    check_equal(c1, Call(vec.op, vec.args, {"b": 2, "a": 1}, vec.type))


def test_first_difference_path_in_a_program():
    def prog(dim):
        a = Var("a", TensorType([64, 64], FP32))
        tile = TileType([dim, 64], FP32)
        inner = Call(get_op("tile.load"), [a, MakeTuple([ConstInt(0), ConstInt(0)])], {}, tile)
        stmts = [Assign(Var(f"v{k}", IDX), ConstInt(k)) for k in range(3)]
        out = TileType([64, 64], FP32)
        stmts.append(Assign(Var("w", out), Call(get_op("tile.add"), [a, inner], {}, out)))
        main = Function("main", [a], None, [], SeqStmts(stmts))
        return Program("P", [main])
    check_differs(prog(64), prog(128), "functions['main'].body[3].value.args[1].type.shape[0]: 64 vs 128")


def test_constants_compare_value_and_dtype():
    check_differs(ConstInt(1), ConstInt(1, INT32), "<root>: 1 vs pl.const(1, pl.INT32)")
    check_differs(ConstFloat(1.0), ConstFloat(1.0, FP16))
    check_equal(ConstFloat(float("nan")), ConstFloat(float("nan")))
    check_differs(ConstInt(1), ConstBool(True), "<root>: ConstInt 1 vs ConstBool True")


def test_ops_globalvars_and_spans():
    check_equal(GlobalVar("k"), GlobalVar("k"))
    check_differs(GlobalVar("k"), GlobalVar("j"), "name: 'k' vs 'j'")
    t = Var("t", TileType([8], FP32))
    add = make_call("tile.add", [t, t])
    check_differs(add, Call(get_op("tile.sub"), add.args, {}, add.type), "op: tile.add vs tile.sub")
    from plang.ir import Span
    check_equal(Eval(ConstInt(1, span=Span("a.py", 3, 1))), Eval(ConstInt(1, span=Span("b.py", 9, 0))))


def test_bodies_compare_flattened():
    a, b = Eval(ConstInt(1)), Eval(ConstInt(2))
    check_equal(SeqStmts([a, SeqStmts([b])]), SeqStmts([a, b]))
    check_equal(a, SeqStmts([a]))
    cond = ConstBool(True)
    check_equal(If(cond, a, None), If(cond, SeqStmts([a]), SeqStmts([])))
    check_differs(If(cond, a, None), If(cond, a, b), "else_body: 0 vs 1 statements")


def test_deep_expressions_do_not_hit_the_recursion_limit():
    def chain(var):
        e = var
        for k in range(20000):
            e = Add(e, ConstInt(k))
        return e
    x, y = Var("x", IDX), Var("y", IDX)
    check_equal(chain(x), chain(y))


# ------------------------------------------------------------------ random expressions

SCALARS = [ScalarType(INDEX), ScalarType(FP32)]


def random_expr(rng: random.Random, pool: list[Var], depth: int):
    """A random scalar expression over `pool`; the same rng state gives the same shape."""
    if depth == 0 or rng.random() < 0.2:
        r = rng.random()
        if r < 0.5:
            return pool[rng.randrange(len(pool))]
        if r < 0.8:
            return ConstInt(rng.randrange(-3, 4), rng.choice([INDEX, INT32]))
        return ConstFloat(rng.choice([0.5, 1.0, 2.0]))
    kind = rng.randrange(8)
    a = random_expr(rng, pool, depth - 1)
    if kind == 0:
        return Neg(a)
    if kind == 1:
        return Cast(a, rng.choice([INDEX, FP32]))
    if kind == 2:
        return TupleGetItem(MakeTuple([a, random_expr(rng, pool, depth - 1)]), rng.randrange(2))
    b = random_expr(rng, pool, depth - 1)
    return [Add, Sub, Mul, Min, Max][kind - 3](a, b)


def make_pool(prefix: str) -> list[Var]:
    return [Var(f"{prefix}{k}", SCALARS[k % 2]) for k in range(4)]


def test_hash_agrees_with_equality_on_random_expressions():
    seeds = range(240)
    left = [random_expr(random.Random(s), make_pool("x"), 5) for s in seeds]
    right = [random_expr(random.Random(s), make_pool("renamed_"), 5) for s in seeds]
    for a, b in zip(left, right):  # the same tree over renamed variables
        check_equal(a, b)
    rng = random.Random(7)
    unequal = hash_differs = 0
    for _ in range(2000):
        a, b = rng.choice(left), rng.choice(right)
        if structural_equal(a, b):
            assert structural_hash(a) == structural_hash(b)
        else:
            unequal += 1
            hash_differs += structural_hash(a) != structural_hash(b)
    assert unequal > 1500
    assert hash_differs >= unequal * 0.99


def test_hash_distinguishes_variable_structure():
    x, y = Var("x", IDX), Var("y", IDX)
    assert structural_hash(Add(x, x)) != structural_hash(Add(x, y))
    assert structural_hash(Add(x, y)) == structural_hash(Add(y, x))  # both are "v0 + v1"

    def loop(carried_init):
        it = IterArg("acc", IDX, carried_init)
        return For(Var("i", IDX), ConstInt(0), ConstInt(4), ConstInt(1), Yield([it]), [it], [Var("r", IDX)])
    assert structural_hash(loop(ConstInt(0))) == structural_hash(loop(ConstInt(0)))
    assert structural_hash(loop(ConstInt(0))) != structural_hash(loop(ConstInt(1)))
    body = For(Var("i", IDX), ConstInt(0), ConstInt(4), ConstInt(1), SeqStmts([]))
    check_equal(Scope(ScopeKind.Runtime, body), Scope(ScopeKind.Runtime, SeqStmts([body])))
