"""Row-wise fusion (`codegen/kernel/lower_rows.py`) against torch: chains of loads,
elementwise ops, row reductions and `row_expand_*` over one row block run row by row (their
tile buffers shrink to one row, which the MLIR text shows), with tails (columns not a
multiple of the vector width, clipped row blocks), valid_shape < shape, several row
reductions, rank-3 tiles, tiles used after the region or carried by a loop, half-float and
integer dtypes, column broadcasts of a [1, N] tile from before the region (a layer norm's
weight and bias); and chains that must not fuse (a load after a store, a column reduction)
still match torch.

Tolerances: FP32 rtol 1e-5 / atol 1e-7 (exp and a reciprocal per row); FP16 / BF16 round
per op (rtol 2e-2); integers exact.
"""

from __future__ import annotations

import re

import pytest
import torch
from _kernel_util import edge_valid

from plang.codegen.kernel import compile_kernel
from plang.dtypes import FP32, INDEX, INT32, DataType
from plang.ir import (
    Add,
    Assign,
    ConstInt,
    FunctionType,
    ParamDirection,
    ScalarType,
    ScopeKind,
    TensorType,
    Var,
    flatten,
)
from plang.ir.builder import IRBuilder
from plang.ir.ops import make_call
from plang.passes import FuseTileOps
from plang.passes.analysis.var_uses import calls_in

OUT = ParamDirection.Out


def row_regions(body) -> list[list[str]]:
    """The op names (short) of each `with pl.fused(rows=..)` region FuseTileOps forms in a
    block, in order."""
    fused = FuseTileOps().run_on_function(_wrap(body), None).body
    return [[c.op.short_name for c in calls_in(st.body)] for st in flatten(fused)
            if getattr(st, "kind", None) is ScopeKind.Fused and "rows" in st.attrs]


def _wrap(body):
    b = IRBuilder()
    with b.function("block", type=FunctionType.AIV) as f:
        for st in body:
            b.emit(st)
    return f.function


def _call(name: str, *args, **kwargs):
    return make_call(f"tile.{name}", list(args), kwargs)


def _softmax_rows(b: IRBuilder, t):
    """The user-written row softmax: max, subtract, exp, sum, divide."""
    mx = b.let("mx", _call("row_max", t))
    e = b.let("e", _call("exp", b.let("d", _call("row_expand_sub", t, mx))))
    s = b.let("s", _call("row_sum", e))
    return b.let("p", _call("row_expand_div", e, s))


def _block_kernel(m: int, n: int, rows: int, body, dtype: DataType = FP32, valid=None,
                  tensor_rank: int = 2, name: str = "rows"):
    """for i in range(0, m, rows): out[i:i+rows] = body(b, load(x[i:i+rows]))."""
    b = IRBuilder()
    shape = [m, n] if tensor_rank == 2 else [m // 4, 4, n]
    with b.function(name, type=FunctionType.AIV) as f:
        x = f.param("x", TensorType(shape, dtype))
        out = f.param("out", TensorType(shape, dtype), OUT)
        step = rows if tensor_rank == 2 else rows // 4
        with b.for_range("i", 0, shape[0], step) as loop:
            offs = [loop.var] + [0] * (tensor_rank - 1)
            tile_shape = [rows, n] if tensor_rank == 2 else [rows // 4, 4, n]
            valid_shape = list(valid) if valid is not None else edge_valid(offs, tile_shape, shape)
            kw = {"valid_shape": valid_shape}
            t = b.let("t", make_call("tile.load", [x, offs, tile_shape], kw))
            r = body(b, t)
            b.eval(make_call("tile.store", [r, offs, out]))
    return f.function, compile_kernel(f.function)


def _full_tile_buffers(kernel, rows: int, pitch: int) -> int:
    """How many [rows, pitch] f32 tile buffers the kernel allocates."""
    return kernel.mlir_text.count(f"memref.alloca() {{alignment = 64 : i64}} : memref<{rows * pitch}x")


@pytest.mark.parametrize("m, n, rows", [(64, 1024, 8), (30, 1000, 8), (13, 37, 4), (16, 64, 16)])
def test_softmax_fuses_row_by_row(m: int, n: int, rows: int) -> None:
    """Clipped last row block (30 = 3 * 8 + 6) and column tails (1000, 37)."""
    fn, k = _block_kernel(m, n, rows, _softmax_rows)
    pitch = -(-n // min(64, 1 << (n - 1).bit_length())) * min(64, 1 << (n - 1).bit_length())
    assert _full_tile_buffers(k, rows, pitch) == 0  # every buffer holds one row
    x = torch.randn(m, n) * 5
    out = torch.full((m, n), 9.0)
    k(x, out)
    torch.testing.assert_close(out, torch.softmax(x, -1), rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("m, n, rows, paired", [(30, 200, 8, True), (13, 37, 4, True), (16, 256, 16, True),
                                                (64, 1024, 8, False), (12, 64, 3, False)])
def test_short_rows_two_per_trip(m: int, n: int, rows: int, paired: bool) -> None:
    """Rows of at most SHORT_ROW columns, an even number per block, are lowered two per trip
    of the row loop (a clipped last block: 30 = 3 * 8 + 6, 13 = 3 * 4 + 1 leaves one row of a
    pair invalid); wide rows and odd blocks one per trip."""
    fn, k = _block_kernel(m, n, rows, _softmax_rows)
    sfx = r"(?:_\d+)?"  # the printer's suffix of a repeated constant name
    steps = re.findall(rf"scf\.for %\S+ = %c0{sfx} to %c{rows}{sfx} step %c(\d+){sfx}\b", k.mlir_text)
    assert steps == ["2" if paired else "1"]
    x = torch.randn(m, n) * 5
    out = torch.full((m, n), 9.0)
    k(x, out)
    torch.testing.assert_close(out, torch.softmax(x, -1), rtol=1e-5, atol=1e-7)


def test_softmax_rank3_tiles() -> None:
    """[2, 4, N] tiles of a rank-3 tensor: leading dims fold into 8 rows."""
    fn, k = _block_kernel(24, 200, 8, _softmax_rows, tensor_rank=3)
    x = torch.randn(6, 4, 200) * 3
    out = torch.zeros(6, 4, 200)
    k(x, out)
    torch.testing.assert_close(out, torch.softmax(x, -1), rtol=1e-5, atol=1e-7)


def test_valid_shape_smaller_than_shape() -> None:
    """Only the valid [5, 700] corner of each [8, 1024] block is loaded, reduced and stored."""
    fn, k = _block_kernel(16, 1024, 8, _softmax_rows, valid=[5, 700])
    x = torch.randn(16, 1024)
    out = torch.full((16, 1024), 3.0)
    k(x, out)
    want = torch.full((16, 1024), 3.0)
    for i in (0, 8):
        want[i:i + 5, :700] = torch.softmax(x[i:i + 5, :700], -1)
    torch.testing.assert_close(out, want, rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("dtype", ["FP16", "BF16"])
def test_half_float_softmax(dtype: str) -> None:
    d = DataType.from_name(dtype)
    fn, k = _block_kernel(24, 130, 8, _softmax_rows, dtype=d)
    x = torch.randn(24, 130).to(d.to_torch())
    out = torch.zeros(24, 130, dtype=d.to_torch())
    k(x, out)
    torch.testing.assert_close(out.float(), torch.softmax(x.float(), -1), rtol=2e-2, atol=1e-3)


def test_several_row_reductions() -> None:
    """(x - min) / (max - min) + argmax: three row reductions and a [R, 1] elementwise op."""
    def body(b, t):
        lo = b.let("lo", _call("row_min", t))
        hi = b.let("hi", _call("row_max", t))
        span = b.let("span", _call("sub", hi, lo))
        scaled = b.let("scaled", _call("row_expand_div", b.let("d", _call("row_expand_sub", t, lo)), span))
        am = b.let("am", _call("cast", b.let("ai", _call("row_argmax", t)), target_type=FP32))
        return b.let("r", _call("row_expand_add", scaled, am))

    fn, k = _block_kernel(20, 300, 4, body)
    assert _full_tile_buffers(k, 4, 320) == 0
    x = torch.randn(20, 300)
    out = torch.zeros(20, 300)
    k(x, out)
    lo, hi = x.amin(1, keepdim=True), x.amax(1, keepdim=True)
    want = (x - lo) / (hi - lo) + x.argmax(1, keepdim=True).float()
    torch.testing.assert_close(out, want, rtol=1e-5, atol=1e-6)


def test_integer_chain() -> None:
    """INT32: x * 3 - row_sum(x), row_max of that added back: exact."""
    def body(b, t):
        s = b.let("s", _call("row_sum", t))
        y = b.let("y", _call("row_expand_sub", b.let("t3", _call("muls", t, 3)), s))
        return b.let("r", _call("row_expand_add", y, b.let("mx", _call("row_max", y))))

    fn, k = _block_kernel(12, 70, 4, body, dtype=INT32)
    x = torch.randint(-100, 100, (12, 70), dtype=torch.int32)
    out = torch.zeros(12, 70, dtype=torch.int32)
    k(x, out)
    y = x * 3 - x.sum(1, keepdim=True, dtype=torch.int32)
    assert torch.equal(out, y + y.amax(1, keepdim=True))


def test_values_used_after_the_region() -> None:
    """A column sum of the region's exp tile (not row-local) ends the region: the exp tile
    and the row sums are copied row by row into full buffers and read afterwards."""
    m, n, rows = 8, 96, 8
    b = IRBuilder()
    with b.function("escape", type=FunctionType.AIV) as f:
        x = f.param("x", TensorType([m, n], FP32))
        out = f.param("out", TensorType([m, n], FP32), OUT)
        colsum = f.param("colsum", TensorType([1, n], FP32), OUT)
        rowsum = f.param("rowsum", TensorType([m, 1], FP32), OUT)
        t = b.let("t", _call("load", x, [0, 0], [rows, n]))
        e = b.let("e", _call("row_expand_expdif", t, b.let("mx", _call("row_max", t))))
        s = b.let("s", _call("row_sum", e))
        b.eval(_call("store", b.let("p", _call("row_expand_div", e, s)), [0, 0], out))
        b.eval(_call("store", b.let("cs", _call("col_sum", e)), [0, 0], colsum))
        b.eval(_call("store", s, [0, 0], rowsum))
    assert [sorted(r) for r in row_regions(flatten(f.function.body))] == [
        sorted(["load", "row_max", "row_expand_expdif", "row_sum", "store", "row_expand_div"])]
    k = compile_kernel(f.function)
    xs = torch.randn(m, n)
    outs = [torch.zeros(m, n), torch.zeros(1, n), torch.zeros(m, 1)]
    k(xs, *outs)
    e_ref = torch.exp(xs - xs.amax(1, keepdim=True))
    torch.testing.assert_close(outs[0], torch.softmax(xs, -1), rtol=1e-5, atol=1e-7)
    torch.testing.assert_close(outs[1], e_ref.sum(0, keepdim=True), rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(outs[2], e_ref.sum(1, keepdim=True), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("through", ["none", "cast", "cast, read after"])
def test_a_tile_used_after_the_region_is_computed_into_its_buffer(monkeypatch, through: str) -> None:
    """The exp tile a column sum reads after the region is written row by row straight into
    its full buffer, also through a cast to its own dtype (attention's `pl.cast(p, FP32)` before
    P @ V): no row buffer is copied over (a spy counts the copies). A cast whose source the
    region reads again afterwards copies the source's row into the buffer itself."""
    from plang.codegen.kernel import lower_rows

    copies = []
    copy_tile = lower_rows.copy_tile
    monkeypatch.setattr(lower_rows, "copy_tile", lambda *a: copies.append(1) or copy_tile(*a))
    m, n = 8, 96
    b = IRBuilder()
    with b.function("escape_in_place", type=FunctionType.AIV) as f:
        x = f.param("x", TensorType([m, n], FP32))
        out = f.param("out", TensorType([m, n], FP32), OUT)
        colsum = f.param("colsum", TensorType([1, n], FP32), OUT)
        t = b.let("t", _call("load", x, [0, 0], [m, n]))
        e = b.let("e", _call("row_expand_expdif", t, b.let("mx", _call("row_max", t))))
        s = b.let("s", _call("row_sum", e))
        kept = e if through == "none" else b.let("c", _call("cast", e, target_type=FP32))
        p = _call("row_expand_div", e if through.endswith("after") else kept, s)
        b.eval(_call("store", b.let("p", p), [0, 0], out))
        b.eval(_call("store", b.let("cs", _call("col_sum", kept)), [0, 0], colsum))
    k = compile_kernel(f.function)
    assert not copies
    xs = torch.randn(m, n)
    got, got_cs = torch.zeros(m, n), torch.zeros(1, n)
    k(xs, got, got_cs)
    e_ref = torch.exp(xs - xs.amax(1, keepdim=True))
    torch.testing.assert_close(got, torch.softmax(xs, -1), rtol=1e-5, atol=1e-7)
    torch.testing.assert_close(got_cs, e_ref.sum(0, keepdim=True), rtol=1e-5, atol=1e-6)


def test_column_broadcasts_of_a_row_from_before_the_region() -> None:
    """Layer norm with weight and bias: the [1, N] weight and bias are loaded once before
    the row blocks and every row of the region reads them whole, so the normalize, scale,
    shift and store all run row by row (clipped last block, column tail); the squares of
    the variance are summed as c is computed, never stored."""
    m, n, rows = 30, 1000, 8
    b = IRBuilder()
    with b.function("layer_norm", type=FunctionType.AIV) as f:
        x = f.param("x", TensorType([m, n], FP32))
        weight = f.param("weight", TensorType([1, n], FP32))
        bias = f.param("bias", TensorType([1, n], FP32))
        out = f.param("out", TensorType([m, n], FP32), OUT)
        w = b.let("w", _call("load", weight, [0, 0], [1, n]))
        sh = b.let("sh", _call("load", bias, [0, 0], [1, n]))
        with b.for_range("i", 0, m, rows) as loop:
            offs = [loop.var, 0]
            t = b.let("t", make_call("tile.load", [x, offs, [rows, n]],
                                     {"valid_shape": edge_valid(offs, [rows, n], [m, n])}))
            mean = b.let("mean", _call("muls", b.let("s", _call("row_sum", t)), 1 / n))
            c = b.let("c", _call("row_expand_sub", t, mean))
            sq = b.let("sq", _call("mul", c, c))
            var = b.let("var", _call("muls", b.let("ss", _call("row_sum", sq)), 1 / n))
            inv = b.let("inv", _call("rsqrt", b.let("ve", _call("adds", var, 1e-5))))
            normed = b.let("nd", _call("row_expand_mul", c, inv))
            y = b.let("y", _call("col_expand_add", b.let("scaled", _call("col_expand_mul", normed, w)), sh))
            b.eval(make_call("tile.store", [y, offs, out]))
    loop_body = next(st for st in flatten(f.function.body) if hasattr(st, "loop_var")).body
    (region,) = row_regions(flatten(loop_body))
    assert {"col_expand_mul", "col_expand_add", "store"} <= set(region)
    k = compile_kernel(f.function)
    assert _full_tile_buffers(k, rows, 1024) == 0
    # one-row buffers (the pitch depends on the target's vector width): the row of x,
    # c = x - mean, weight, bias; the squares of c are summed in c's own pass, as each
    # chunk of c is written, and get none
    pitches = re.findall(r"memref\.alloca\(\) \{alignment = \d+ : i64\} : memref<(\d+)xf32>", k.mlir_text)
    assert sum(n <= int(p) < 2 * n for p in pitches) == 4
    xs, ws, bs = torch.randn(m, n) * 3 + 1, torch.randn(1, n), torch.randn(1, n)
    got = torch.full((m, n), 7.0)
    k(xs, ws, bs, got)
    want = torch.nn.functional.layer_norm(xs, (n,), ws[0], bs[0], 1e-5)
    torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-5)


def test_loop_carried_tile() -> None:
    """acc += exp(x_block - row_max) over three row blocks: the region reads the carried
    tile one row at a time and writes its new value into the carried buffer."""
    rows, n = 8, 100
    b = IRBuilder()
    with b.function("carried", type=FunctionType.AIV) as f:
        x = f.param("x", TensorType([3 * rows, n], FP32))
        out = f.param("out", TensorType([rows, n], FP32), OUT)
        zero = b.let("zero", make_call("tile.full", [[rows, n]], {"dtype": FP32, "value": 0.0}))
        with b.for_range("j", 0, 3 * rows, rows, iter_args=[("acc", zero)]) as loop:
            t = b.let("t", _call("load", x, [loop.var, 0], [rows, n]))
            e = b.let("e", _call("row_expand_expdif", t, b.let("mx", _call("row_max", t))))
            b.yield_(b.let("acc2", _call("add", loop.iter_args[0], e)))
        b.eval(_call("store", loop.return_vars[0], [0, 0], out))
    k = compile_kernel(f.function)
    xs = torch.randn(3 * rows, n)
    got = torch.zeros(rows, n)
    k(xs, got)
    blocks = xs.reshape(3, rows, n)
    want = torch.exp(blocks - blocks.amax(2, keepdim=True)).sum(0)
    torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-6)


def test_load_after_store_is_not_fused() -> None:
    """y = x - row_max(x) is stored into `buf`, then `buf` is loaded one row further down:
    fused row by row, that load would read rows not yet written."""
    m, n, rows = 9, 64, 8
    b = IRBuilder()
    with b.function("shifted", type=FunctionType.AIV) as f:
        x = f.param("x", TensorType([m, n], FP32))
        buf = f.param("buf", TensorType([m, n], FP32), ParamDirection.InOut)
        out = f.param("out", TensorType([m, n], FP32), OUT)
        t = b.let("t", _call("load", x, [0, 0], [rows, n]))
        y = b.let("y", _call("row_expand_sub", t, b.let("mx", _call("row_max", t))))
        b.eval(_call("store", y, [0, 0], buf))
        t2 = b.let("t2", _call("load", buf, [1, 0], [rows, n]))
        b.eval(_call("store", b.let("r", _call("row_expand_add", t2, b.let("s", _call("row_sum", t2)))),
                     [0, 0], out))
    assert [sorted(r) for r in row_regions(flatten(f.function.body))] == [
        sorted(["load", "row_max", "row_expand_sub", "store"]),
        sorted(["load", "row_sum", "row_expand_add", "store"])]
    k = compile_kernel(f.function)
    xs, bufs, got = torch.randn(m, n), torch.randn(m, n), torch.zeros(m, n)
    last = bufs[8].clone()
    k(xs, bufs, got)
    y_ref = torch.cat([xs[:8] - xs[:8].amax(1, keepdim=True), last[None]])
    t2 = y_ref[1:9]
    want = torch.zeros(m, n)
    want[:8] = t2 + t2.sum(1, keepdim=True)
    torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-5)


def test_chains_that_do_not_fuse() -> None:
    """A column reduction is not row-local (the column broadcast after it then has nothing
    worth a row loop); a chain of single-use elementwise ops already streams and gains
    nothing from a row loop."""
    m, n = 8, 64
    b = IRBuilder()
    with b.function("cols", type=FunctionType.AIV) as f:
        x = f.param("x", TensorType([m, n], FP32))
        out = f.param("out", TensorType([m, n], FP32), OUT)
        t = b.let("t", _call("load", x, [0, 0], [m, n]))
        cm = b.let("cm", _call("col_max", t))
        y = b.let("y", _call("col_expand_sub", t, cm))
        z = b.let("z", _call("exp", y))
        b.eval(_call("store", z, [0, 0], out))
    assert row_regions(flatten(f.function.body)) == []
    k = compile_kernel(f.function)
    xs, got = torch.randn(m, n), torch.zeros(m, n)
    k(xs, got)
    torch.testing.assert_close(got, torch.exp(xs - xs.amax(0, keepdim=True)), rtol=1e-5, atol=1e-7)

    def streaming(b, t):
        return b.let("r", _call("exp", b.let("a", _call("adds", t, 1.0))))

    fn, _ = _block_kernel(16, 64, 8, streaming)
    assert not any(row_regions(flatten(s.body)) for s in flatten(fn.body) if hasattr(s, "loop_var"))


def test_scalar_reassigned_inside_a_run() -> None:
    """Non-SSA IR: `off` is read by the first load, then reassigned; hoisting the
    reassignment before a row loop would move the first load too."""
    m, n, rows = 8, 64, 4
    b = IRBuilder()
    with b.function("reassign", type=FunctionType.AIV) as f:
        x = f.param("x", TensorType([m, n], FP32))
        out = f.param("out", TensorType([rows, n], FP32), OUT)
        off = Var("off", ScalarType(INDEX))
        b.emit(Assign(off, ConstInt(0)))
        t = b.let("t", _call("load", x, [off, 0], [rows, n]))
        mx = b.let("mx", _call("row_max", t))
        b.emit(Assign(off, Add(off, ConstInt(rows))))
        t2 = b.let("t2", _call("load", x, [off, 0], [rows, n]))
        b.eval(_call("store", b.let("r", _call("row_expand_sub", t2, mx)), [0, 0], out))
    k = compile_kernel(f.function)
    xs, got = torch.randn(m, n), torch.zeros(rows, n)
    k(xs, got)
    torch.testing.assert_close(got, xs[rows:] - xs[:rows].amax(1, keepdim=True))
