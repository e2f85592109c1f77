"""The torch reference codegen against hand-written torch / numpy expectations."""
# ruff: noqa: E501  (IR built inline reads best on one line)

from __future__ import annotations

import numpy as np
import pytest
import torch

from plang.codegen.torch_ref_ops import TABLE
from plang.debug import run_torch_ref, torch_codegen
from plang.dtypes import BF16, BOOL, FP16, FP32, INDEX, INT8, INT32, DataType
from plang.ir import (
    Add,
    Call,
    ConstBool,
    ConstInt,
    Eq,
    FunctionType,
    GlobalVar,
    Lt,
    Mul,
    ParamDirection,
    ScalarType,
    ScopeKind,
    SplitMode,
    TensorType,
)
from plang.ir.builder import IRBuilder
from plang.ir.ops import REGISTRY
from plang.ir.ops import make_call as mc

OUT = ParamDirection.Out
torch.manual_seed(0)


def rand(*shape, dtype=torch.float32):
    return torch.randn(*shape).to(dtype)


def tile_kernel(op: str, shapes, dtype: DataType = FP32, out_dtype: DataType | None = None,
                out_shape=None, extra=(), **kwargs):
    """InCore kernel: load each input whole, apply `op`, store into `out`, return out."""
    b = IRBuilder()
    with b.function("k", type=FunctionType.InCore) as f:
        ins = [f.param(f"in{i}", TensorType(s, dtype)) for i, s in enumerate(shapes)]
        out = f.param("out", TensorType(out_shape or shapes[0], out_dtype or dtype), OUT)
        tiles = [b.let(f"t{i}", mc("tile.load", [x, [0] * len(s), s])) for i, (x, s) in enumerate(zip(ins, shapes))]
        r = b.let("r", mc(op, [*tiles, *extra], kwargs))
        b.ret(b.let("o", mc("tile.store", [r, [0] * len(r.type.shape), out])))
    return f.function


def run(fn, *inputs, out_shape=None, out_dtype=torch.float32):
    out = torch.zeros(out_shape or inputs[0].shape, dtype=out_dtype)
    result = run_torch_ref(fn, *inputs, out)
    assert result is out  # stored in place into the Out tensor
    return out


def test_every_registered_op_has_an_emitter():
    assert set(TABLE) == set(REGISTRY)


def test_source_is_readable_python():
    src = torch_codegen(tile_kernel("tile.add", [[4, 8], [4, 8]]))
    assert "def k(in0, in1, out):" in src and "rt.binary('add', t0, t1)" in src
    compile(src, "<test>", "exec")


def test_check_shapes_asserts_every_variable_against_its_type():
    fn = tile_kernel("tile.add", [[4, 8], [4, 8]])
    src = torch_codegen(fn, check_shapes=True)
    assert "rt.check_shape(r, (4, 8), torch.float32, 'r')" in src
    a, b, out = rand(4, 8), rand(4, 8), torch.zeros(4, 8)
    ns: dict = {}
    exec(src, ns)  # noqa: S102
    ns["k"](a, b, out)
    torch.testing.assert_close(out, a + b)
    wrong: dict = {}  # a value that does not have its declared dtype is reported by name
    exec(src.replace("(4, 8), torch.float32, 'r'", "(4, 8), torch.float16, 'r'"), wrong)  # noqa: S102
    with pytest.raises(AssertionError, match=r"r is \[4, 8\] torch.float32; its type says \[4, 8\] torch.float16"):
        wrong["k"](a, b, out)


UNARY = {
    "tile.exp": torch.exp, "tile.log": torch.log, "tile.sqrt": torch.sqrt, "tile.rsqrt": torch.rsqrt,
    "tile.recip": torch.reciprocal, "tile.neg": torch.neg, "tile.abs": torch.abs, "tile.relu": torch.relu,
    "tile.sin": torch.sin, "tile.cos": torch.cos, "tile.tanh": torch.tanh, "tile.sigmoid": torch.sigmoid,
}


@pytest.mark.parametrize("op", sorted(UNARY))
def test_unary(op):
    x = rand(16, 24).abs() + 0.1 if op in ("tile.log", "tile.sqrt", "tile.rsqrt") else rand(16, 24)
    torch.testing.assert_close(run(tile_kernel(op, [[16, 24]]), x), UNARY[op](x))


BINARY = {"tile.add": torch.add, "tile.sub": torch.sub, "tile.mul": torch.mul, "tile.div": torch.div,
          "tile.maximum": torch.maximum, "tile.minimum": torch.minimum}


@pytest.mark.parametrize("op", sorted(BINARY))
@pytest.mark.parametrize("dtype", [FP32, FP16, BF16])
def test_binary(op, dtype):
    td = dtype.to_torch()
    x, y = rand(8, 40, dtype=td), rand(8, 40, dtype=td) + 3
    got = run(tile_kernel(op, [[8, 40], [8, 40]], dtype), x, y, out_dtype=td)
    torch.testing.assert_close(got, BINARY[op](x, y))


def test_integer_division_truncates():
    x, y = torch.tensor([[7, -7, 9, -9]], dtype=torch.int32), torch.tensor([[2, 2, -4, -4]], dtype=torch.int32)
    got = run(tile_kernel("tile.div", [[1, 4], [1, 4]], INT32), x, y, out_dtype=torch.int32)
    assert got.tolist() == [[3, -3, -2, 2]]


@pytest.mark.parametrize("op,scalar,expect", [
    ("tile.adds", 1.5, lambda x: x + 1.5), ("tile.muls", 3, lambda x: x * 3),
    ("tile.maximums", 0.0, lambda x: x.clamp(min=0)), ("tile.minimums", 0.25, lambda x: x.clamp(max=0.25)),
])
def test_scalar_forms(op, scalar, expect):
    x = rand(8, 16)
    torch.testing.assert_close(run(tile_kernel(op, [[8, 16]], extra=[scalar]), x), expect(x))


def test_cmp_and_sel():
    b = IRBuilder()
    with b.function("k", type=FunctionType.InCore) as f:
        x = f.param("x", TensorType([8, 8], FP32))
        y = f.param("y", TensorType([8, 8], FP32))
        out = f.param("out", TensorType([8, 8], FP32), OUT)
        tx, ty = b.let("tx", mc("tile.load", [x, [0, 0], [8, 8]])), b.let("ty", mc("tile.load", [y, [0, 0], [8, 8]]))
        m = b.let("m", mc("tile.cmp", [tx, ty], {"cmp_type": 4}))
        s = b.let("s", mc("tile.sel", [m, tx, ty, mc("tile.create", [[1, 16], INT32])]))
        b.ret(b.let("o", mc("tile.store", [s, [0, 0], out])))
    x, y = rand(8, 8), rand(8, 8)
    torch.testing.assert_close(run(f.function, x, y), torch.maximum(x, y))


def test_row_and_col_reductions():
    x = rand(16, 32)
    torch.testing.assert_close(run(tile_kernel("tile.row_sum", [[16, 32]], out_shape=[16, 1],
                                               extra=[mc("tile.create", [[16, 32], FP32])]), x, out_shape=(16, 1)),
                               x.sum(-1, keepdim=True))
    torch.testing.assert_close(run(tile_kernel("tile.col_max", [[16, 32]], out_shape=[1, 32]), x, out_shape=(1, 32)),
                               x.amax(0, keepdim=True))
    got = run(tile_kernel("tile.row_argmax", [[16, 32]], out_shape=[16, 1], out_dtype=INT32,
                          extra=[mc("tile.create", [[16, 32], FP32])]), x, out_shape=(16, 1), out_dtype=torch.int32)
    assert torch.equal(got, x.argmax(-1, keepdim=True).to(torch.int32))


def test_row_reduction_respects_valid_region():
    b = IRBuilder()
    with b.function("k", type=FunctionType.InCore) as f:
        x = f.param("x", TensorType([8, 32], FP32))
        out = f.param("out", TensorType([8, 1], FP32), OUT)
        t = b.let("t", mc("tile.load", [x, [0, 0], [8, 32]], {"valid_shape": [8, 20]}))
        r = b.let("r", mc("tile.row_sum", [t, mc("tile.create", [[8, 32], FP32])]))
        b.ret(b.let("o", mc("tile.store", [r, [0, 0], out])))
    x = rand(8, 32)
    torch.testing.assert_close(run(f.function, x, out_shape=(8, 1)), x[:, :20].sum(-1, keepdim=True))


@pytest.mark.parametrize("op,rhs_shape,expect", [
    ("tile.row_expand_sub", [16, 1], lambda x, r: x - r), ("tile.col_expand_mul", [1, 32], lambda x, r: x * r),
    ("tile.row_expand_expdif", [16, 1], lambda x, r: torch.exp(x - r)),
])
def test_broadcast_expands(op, rhs_shape, expect):
    x, r = rand(16, 32), rand(*rhs_shape)
    torch.testing.assert_close(run(tile_kernel(op, [[16, 32], rhs_shape]), x, r), expect(x, r))


@pytest.mark.parametrize("dtype", [FP16, BF16, FP32])
def test_matmul_accumulates_in_fp32(dtype):
    td = dtype.to_torch()
    a, w = rand(32, 64, dtype=td), rand(64, 16, dtype=td)
    got = run(tile_kernel("tile.matmul", [[32, 64], [64, 16]], dtype, out_dtype=FP32, out_shape=[32, 16]),
              a, w, out_shape=(32, 16))
    torch.testing.assert_close(got, a.double().matmul(w.double()).float(), rtol=1e-5, atol=1e-4)


def test_int8_matmul_is_exact_int32():
    a = torch.randint(-128, 128, (16, 64), dtype=torch.int8)
    w = torch.randint(-128, 128, (64, 8), dtype=torch.int8)
    got = run(tile_kernel("tile.matmul", [[16, 64], [64, 8]], INT8, out_dtype=INT32, out_shape=[16, 8]),
              a, w, out_shape=(16, 8), out_dtype=torch.int32)
    expect = a.numpy().astype(np.int64) @ w.numpy().astype(np.int64)
    assert np.array_equal(got.numpy(), expect.astype(np.int32))


def test_tensor_matmul_transposes_and_narrows():
    b = IRBuilder()
    with b.function("f") as f:
        x = f.param("x", TensorType([64, 32], BF16))
        w = f.param("w", TensorType([16, 64], BF16))
        b.ret(b.let("y", mc("tensor.matmul", [x, w], {"a_trans": True, "b_trans": True, "out_dtype": BF16})))
    x, w = rand(64, 32, dtype=torch.bfloat16), rand(16, 64, dtype=torch.bfloat16)
    got = run_torch_ref(f.function, x, w)
    assert got.dtype == torch.bfloat16 and got.shape == (32, 16)
    torch.testing.assert_close(got, (x.float().T @ w.float().T).to(torch.bfloat16))


def test_matmul_acc_init_cond_in_a_loop():
    b = IRBuilder()
    with b.function("f") as f:
        x = f.param("x", TensorType([8, 64], FP32))
        w = f.param("w", TensorType([64, 4], FP32))
        acc0 = b.let("acc0", mc("tensor.create", [[8, 4], FP32]))
        with b.for_range("k", 0, 64, 16, iter_args=[("acc", acc0)]) as loop:
            k = loop.var
            xs = b.let("xs", mc("tensor.slice", [x, [8, 16], [0, k]]))
            ws = b.let("ws", mc("tensor.slice", [w, [16, 4], [k, 0]]))
            b.yield_(mc("tensor.matmul_acc", [loop.iter_args[0], xs, ws], {"init_cond": Eq(k, ConstInt(0))}))
        b.ret(loop.return_vars[0])
    x, w = rand(8, 64), rand(64, 4)
    torch.testing.assert_close(run_torch_ref(f.function, x, w), x @ w, rtol=1e-5, atol=1e-5)


def _f16_directed(x: np.ndarray, mode: str) -> np.ndarray:
    """Independent numpy reference for a directed FP32 -> FP16 narrowing."""
    r = x.astype(np.float16)
    wide, back = x.astype(np.float64), r.astype(np.float64)
    if mode == "floor":
        return np.where(back > wide, np.nextafter(r, np.float16(-np.inf)), r)
    if mode == "ceil":
        return np.where(back < wide, np.nextafter(r, np.float16(np.inf)), r)
    return np.where(np.abs(back) > np.abs(wide), np.nextafter(r, np.float16(0)), r)  # trunc


@pytest.mark.parametrize("mode", ["floor", "ceil", "trunc"])
def test_cast_float_narrowing_modes(mode):
    x = (torch.randn(4, 64) * 1000).float()
    got = run(tile_kernel("tile.cast", [[4, 64]], FP32, out_dtype=FP16, extra=[FP16], mode=mode), x,
              out_dtype=torch.float16)
    assert np.array_equal(got.numpy(), _f16_directed(x.numpy(), mode))


@pytest.mark.parametrize("mode,expect", [
    ("round", [3, -3, 2, -2, 127, -128]), ("rint", [2, -2, 2, -2, 127, -128]),
    ("floor", [2, -3, 1, -2, 127, -128]), ("ceil", [3, -2, 2, -1, 127, -128]),
    ("trunc", [2, -2, 1, -1, 127, -128]),
])
def test_cast_to_int8_rounds_and_saturates(mode, expect):
    x = torch.tensor([[2.5, -2.5, 1.5, -1.5, 300.0, -1e9]])
    got = run(tile_kernel("tile.cast", [[1, 6]], FP32, out_dtype=INT8, extra=[INT8], mode=mode), x,
              out_dtype=torch.int8)
    assert got.tolist() == [expect]


def test_cast_saturation_off_wraps():
    x = torch.tensor([[300.0, -129.0, 5.0]])
    got = run(tile_kernel("tile.cast", [[1, 3]], FP32, out_dtype=INT8, extra=[INT8], mode="trunc",
                          saturation_mode="off"), x, out_dtype=torch.int8)
    assert got.tolist() == [[44, 127, 5]]


def test_load_pads_and_store_writes_only_valid_region():
    b = IRBuilder()
    with b.function("k", type=FunctionType.InCore) as f:
        x = f.param("x", TensorType([16, 16], FP32))
        out = f.param("out", TensorType([16, 16], FP32), OUT)
        t = b.let("t", mc("tile.load", [x, [4, 8], [8, 8]], {"valid_shape": [6, 8]}))
        e = b.let("e", mc("tile.adds", [t, 1.0]))
        b.ret(b.let("o", mc("tile.store", [e, [2, 0], out])))
    x = rand(16, 16)
    out = torch.full((16, 16), -7.0)
    run_torch_ref(f.function, x, out)
    expect = torch.full((16, 16), -7.0)
    expect[2:8, 0:8] = x[4:10, 8:16] + 1
    torch.testing.assert_close(out, expect)


def test_layout_ops():
    b = IRBuilder()
    with b.function("f") as f:
        x = f.param("x", TensorType([4, 6], FP32))
        t = b.let("t", mc("tensor.transpose", [x, 0, 1]))
        r = b.let("r", mc("tensor.reshape", [t, [3, 8]]))
        s = b.let("s", mc("tensor.slice", [r, [2, 4], [1, 2]]))
        c = b.let("c", mc("tensor.concat", [s, s]))
        z = b.let("z", mc("tensor.full", [[4, 10], FP32, 0.0]))
        a = b.let("a", mc("tensor.assemble", [z, c, [1, 1]]))
        b.ret(a)
    x = rand(4, 6)
    s = x.T.reshape(3, 8)[1:3, 2:6]
    expect = torch.zeros(4, 10)
    expect[1:3, 1:9] = torch.cat([s, s], -1)
    torch.testing.assert_close(run_torch_ref(f.function, x), expect)


def test_for_while_if_break():
    b = IRBuilder()
    with b.function("f") as f:
        x = f.param("x", TensorType([4], FP32))
        n = f.param("n", ScalarType(INDEX))
        with b.for_range("i", 0, n, iter_args=[("acc", x)]) as loop:
            with b.if_(Lt(loop.var, ConstInt(3)), returns=[("nxt", x.type)]) as br:
                with br.then_():
                    b.yield_(mc("tensor.add", [loop.iter_args[0], x]))
                with br.else_():
                    b.yield_(mc("tensor.muls", [loop.iter_args[0], 2.0]))
            b.yield_(br.return_vars[0])
        with b.while_([("j", ConstInt(0)), ("v", loop.return_vars[0])]) as w:
            w.set_cond(Lt(w.iter_args[0], ConstInt(100)))
            with b.if_(Lt(ConstInt(9), w.iter_args[0])) as stop:
                with stop.then_():
                    b.break_()
            b.yield_(Add(w.iter_args[0], ConstInt(5)), mc("tensor.adds", [w.iter_args[1], 1.0]))
        b.ret(w.return_vars[1])
    x = rand(4)
    # i = 0,1,2 add x (acc = 4x), i = 3,4 double (16x); then j = 0, 5 add 1 twice before j = 10 breaks
    torch.testing.assert_close(run_torch_ref(f.function, x, 5), 16 * x + 2)


def test_spmd_loop_over_blocks():
    b = IRBuilder()
    with b.function("k", type=FunctionType.Orchestration) as f:
        x = f.param("x", TensorType([64, 8], FP32))
        out = f.param("out", TensorType([64, 8], FP32), OUT)
        with b.scope(ScopeKind.Spmd, {"core_num": 4}, index_var="blk") as sc:
            row = Mul(sc.index_var, ConstInt(16))
            t = b.let("t", mc("tile.load", [x, [row, 0], [16, 8]]))
            e = b.let("e", mc("tile.muls", [mc("tile.exp", [t]), mc("tile.get_block_num", [])]))
            b.eval(mc("tile.store", [e, [row, 0], out]))
        b.ret(out)
    x = rand(64, 8)
    torch.testing.assert_close(run(f.function, x), torch.exp(x) * 4)


def test_split_aiv_lanes_take_halves():
    b = IRBuilder()
    with b.function("k", type=FunctionType.InCore) as f:
        x = f.param("x", TensorType([32, 8], FP32))
        out = f.param("out", TensorType([32, 8], FP32), OUT)
        full = b.let("full", mc("tile.load", [x, [0, 0], [32, 8]]))
        with b.split_aiv(SplitMode.UP_DOWN) as lane:
            half = b.let("half", mc("tile.aiv_shard", [full], {"mode": SplitMode.UP_DOWN}))
            r = b.let("r", mc("tile.adds", [half, mc("tile.get_subblock_idx", [])]))
            b.eval(mc("tile.store", [r, [Mul(lane, ConstInt(16)), 0], out]))
        b.ret(out)
    x = rand(32, 8)
    expect = x.clone()
    expect[16:] += 1
    torch.testing.assert_close(run(f.function, x), expect)


def test_program_call_and_group_pipes():
    """AIC computes a @ w and pushes it split UP_DOWN; both AIV lanes pop a half, exp, store."""
    b = IRBuilder()
    with b.program("p") as prog:
        with b.function("cube", type=FunctionType.AIC) as fc:
            a = fc.param("a", TensorType([32, 16], FP16))
            w = fc.param("w", TensorType([16, 8], FP16))
            ta, tw = b.let("ta", mc("tile.load", [a, [0, 0], [32, 16]])), b.let("tw", mc("tile.load", [w, [0, 0], [16, 8]]))
            b.eval(mc("tile.tpush_to_aiv", [b.let("c", mc("tile.matmul", [ta, tw]))], {"split": 1}))
        with b.function("vec", type=FunctionType.AIV) as fv:
            out = fv.param("out", TensorType([32, 8], FP32), OUT)
            h = b.let("h", mc("tile.tpop_from_aic", [], {"shape": [16, 8], "dtype": FP32, "split": 1}))
            e = b.let("e", mc("tile.exp", [h]))
            row = Mul(mc("tile.get_subblock_idx", []), ConstInt(16))
            b.eval(mc("tile.store", [e, [row, 0], out]))
            b.eval(mc("tile.tfree_to_aic", [h]))
        with b.function("group", type=FunctionType.Group) as fg:
            ga, gw = fg.param("a", a.type), fg.param("w", w.type)
            go = fg.param("out", out.type, OUT)
            b.eval(Call(GlobalVar("cube"), [ga, gw], None, TensorType([1], FP32)))
            b.eval(Call(GlobalVar("vec"), [go], None, TensorType([1], FP32)))
        with b.function("main", type=FunctionType.Orchestration) as fm:
            ma, mw = fm.param("a", a.type), fm.param("w", w.type)
            mo = fm.param("out", out.type, OUT)
            b.eval(Call(GlobalVar("group"), [ma, mw, mo], None, TensorType([1], FP32)))
            b.ret(mo)
    a, w = rand(32, 16, dtype=torch.float16), rand(16, 8, dtype=torch.float16)
    out = torch.zeros(32, 8)
    assert run_torch_ref(prog.program, a, w, out) is out
    torch.testing.assert_close(out, torch.exp(a.float() @ w.float()), rtol=1e-5, atol=1e-5)


def test_scalar_read_write_and_bool():
    b = IRBuilder()
    with b.function("f") as f:
        x = f.param("x", TensorType([2, 3], INT32))
        v = b.let("v", mc("tensor.read", [x, [1, 2]]))
        b.eval(mc("tensor.write", [x, [0, 0], v]))
        m = b.let("m", mc("tensor.cmps", [x, 4], {"cmp_type": "gt"}))
        b.ret(m, ConstBool(True))
    x = torch.tensor([[1, 2, 3], [4, 5, 6]], dtype=torch.int32)
    m, flag = run_torch_ref(f.function, x)
    assert x.tolist() == [[6, 2, 3], [4, 5, 6]] and flag is True
    assert m.dtype == torch.bool and m.tolist() == [[True, False, False], [False, True, True]]
    assert BOOL.to_torch() == torch.bool


def test_on_core_array_reads_and_writes():
    import plang as pl

    fn = pl.parse("""
import plang as pl


@pl.function(type=pl.FunctionType.InCore)
def k(a: pl.Tensor[[1, 8], pl.INT32], out: pl.Out[pl.Tensor[[1, 8], pl.INT32]]):
    arr = pl.array.create(8, pl.INT32)
    for i in pl.range(8):
        arr[i] = pl.tensor.read(a, [0, 7 - i]) * 2
    for j in pl.range(8):
        pl.tensor.write(out, [0, j], arr[j])
    return out
""")
    a = torch.randint(-50, 50, (1, 8), dtype=torch.int32)
    got = run(fn, a, out_dtype=torch.int32)
    assert torch.equal(got, a.flip(-1) * 2)


def test_submit_yields_results_and_a_task_id():
    import plang as pl

    prog = pl.parse("""
import plang as pl


@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def square(self, x: pl.Tensor[[4, 8], pl.FP32], out: pl.Out[pl.Tensor[[4, 8], pl.FP32]]):
        out = pl.assemble(out, pl.mul(x, x), [0, 0])
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[4, 8], pl.FP32], out: pl.Out[pl.Tensor[[4, 8], pl.FP32]]):
        with pl.manual_scope():
            out, t = pl.submit(self.square, x, out)
        return out
""")
    x = rand(4, 8)
    assert torch.equal(run_torch_ref(prog, x, torch.zeros(4, 8)), x * x)
