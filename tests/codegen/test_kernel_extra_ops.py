"""The tile ops lowered by `lower_extra_elementwise`, `lower_generate`, `lower_indexing`,
`lower_batch_matmul` and `vector_trig`, through the MLIR path vs the torch reference
(`plang.debug.run_torch_ref` on the same kernel function), every dtype the registry allows,
on tiles whose widths are not multiples of the vector width and with valid_shape < shape.

Tolerances: integers and index ops are exact; FP32 rtol/atol 1e-6 (sin / cos atol 2e-7;
batch_matmul sums in another order: the FP32 rounding bound, relative to the sum of |terms|);
FP16 / BF16 compute in FP32 and round once per op, so they match to one unit in the last
place (rtol 8e-3).
Also: sin / cos error bounds over the whole f32 range, and a check that every `tile.*` op in
the registry has a lowering or a justified exclusion.
"""

from __future__ import annotations

from typing import Callable, Sequence

import numpy as np
import pytest
import torch
from _kernel_util import rand

from plang.codegen.kernel import compile_kernel
from plang.codegen.kernel.lower import _CONTEXT_OPS, LOWERINGS
from plang.codegen.kernel.vector_trig import FAST_LIMIT
from plang.debug import run_torch_ref
from plang.dtypes import BF16, FP32, INT16, INT32, DataType
from plang.ir import FunctionType, ParamDirection, ScalarType, TensorType
from plang.ir.builder import IRBuilder
from plang.ir.ops import REGISTRY, make_call

FLOATS = ("FP32", "FP16", "BF16")
NUMERIC = FLOATS + ("INT8", "INT16", "INT32")
SHAPE, VALID = (6, 37), (5, 29)  # 37 columns: not a multiple of any vector width

Input = tuple[Sequence[int], DataType, Sequence[int] | None]


def _function(name: str, inputs: Sequence[Input], out: tuple[Sequence[int], DataType], body: Callable,
              scalars: Sequence[DataType] = ()):
    """A kernel loading each input as one whole tile (with its valid shape), computing
    `body(tiles, scalars)` and storing the result tile at the origin of `out`."""
    b = IRBuilder()
    with b.function(name, type=FunctionType.InCore) as f:
        params = [f.param(f"x{i}", TensorType(list(s), d)) for i, (s, d, _) in enumerate(inputs)]
        svars = [f.param(f"s{i}", ScalarType(d)) for i, d in enumerate(scalars)]
        dst = f.param("out", TensorType(list(out[0]), out[1]), ParamDirection.Out)
        tiles = []
        for i, (p, (s, _, valid)) in enumerate(zip(params, inputs)):
            kw = {"valid_shape": list(valid)} if valid is not None else {}
            tiles.append(b.let(f"t{i}", make_call("tile.load", [p, [0] * len(s), list(s)], kw)))
        r = b.let("r", body(tiles, svars))
        b.eval(make_call("tile.store", [r, [0] * len(out[0]), dst]))
    return f.function


def _run_both(fn, args: Sequence, out: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(kernel result, reference result) of `fn` on `args`, each into a zeroed copy of `out`."""
    got, want = out.clone(), out.clone()
    compile_kernel(fn)(*[a.clone() if isinstance(a, torch.Tensor) else a for a in args], got)
    run_torch_ref(fn, *[a.clone() if isinstance(a, torch.Tensor) else a for a in args], want)
    return got, want


def _check(got: torch.Tensor, want: torch.Tensor, dtype: DataType, rtol: float = 1e-6,
           atol: float = 1e-6) -> None:
    if dtype.is_float:
        half = dtype.bits == 16
        torch.testing.assert_close(got.float(), want.float(), rtol=8e-3 if half else rtol,
                                   atol=1e-3 if half else atol, equal_nan=True)
    else:
        assert torch.equal(got, want)


def _elementwise(name: str, dtype: DataType, n_tiles: int, body: Callable, args: Sequence[torch.Tensor],
                 scalars: Sequence[DataType] = (), scalar_args: Sequence = (), valid=VALID, **tol) -> None:
    fn = _function(name, [(SHAPE, dtype, valid)] * n_tiles, (SHAPE, dtype), body, scalars)
    got, want = _run_both(fn, [*args, *scalar_args], torch.zeros(SHAPE, dtype=dtype.to_torch()))
    _check(got, want, dtype, **tol)
    if valid is not None:
        assert not got[valid[0]:].any() and not got[:, valid[1]:].any(), "wrote outside the valid region"


def _scalar_dtype(d: DataType) -> DataType:
    """A runtime scalar for a `d` tile (kernel scalars are FP32 / 64-bit integers in the ABI)."""
    return FP32 if d.is_float else INT32


def _nonzero(x: torch.Tensor) -> torch.Tensor:
    small = x.float().abs() < 0.25 if x.is_floating_point() else x == 0
    return torch.where(small, torch.full_like(x, 3), x)


# -- elementwise ------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", NUMERIC)
def test_rem_takes_the_sign_of_the_divisor(dtype: str) -> None:
    d = DataType.from_name(dtype)
    x, y = rand(SHAPE, d, -40, 40), _nonzero(rand(SHAPE, d))
    # the reference zero-fills outside the valid region, and torch raises on integer % 0
    _elementwise("rem", d, 2, lambda t, s: make_call("tile.rem", [t[0], t[1], t[0]]), [x, y],
                 valid=VALID if d.is_float else None)


@pytest.mark.parametrize("dtype", NUMERIC)
def test_rems_with_negative_scalar_divisor(dtype: str) -> None:
    d = DataType.from_name(dtype)
    divisor = -2.5 if d.is_float else -7
    _elementwise("rems", d, 1, lambda t, s: make_call("tile.rems", [t[0], s[0], t[0]]),
                 [rand(SHAPE, d, -40, 40)], scalars=[_scalar_dtype(d)], scalar_args=[divisor])


@pytest.mark.parametrize("dtype", ("INT8", "INT16", "INT32"))
def test_integer_rem_by_minus_one_and_zero_does_not_trap(dtype: str) -> None:
    d = DataType.from_name(dtype)
    info = torch.iinfo(d.to_torch())
    x = torch.full(SHAPE, info.min, dtype=d.to_torch())
    y = torch.full(SHAPE, -1, dtype=d.to_torch())
    y[:, ::2] = 0
    fn = _function("rem0", [(SHAPE, d, None)] * 2, (SHAPE, d),
                   lambda t, s: make_call("tile.rem", [t[0], t[1], t[0]]))
    out = torch.ones(SHAPE, dtype=d.to_torch())
    compile_kernel(fn)(x, y, out)
    assert not out.any()  # INT_MIN % -1 == 0; % 0 is documented to give 0


@pytest.mark.parametrize("dtype", NUMERIC)
@pytest.mark.parametrize("op", ["addc", "subc"])
def test_carry_forms(op: str, dtype: str) -> None:
    d = DataType.from_name(dtype)
    _elementwise(op, d, 3, lambda t, s: make_call(f"tile.{op}", t),
                 [rand(SHAPE, d, -100, 100) for _ in range(3)])


@pytest.mark.parametrize("dtype", NUMERIC)
@pytest.mark.parametrize("op", ["addsc", "subsc"])
def test_scalar_carry_forms(op: str, dtype: str) -> None:
    d = DataType.from_name(dtype)
    _elementwise(op, d, 2, lambda t, s: make_call(f"tile.{op}", [t[0], s[0], t[1]]),
                 [rand(SHAPE, d, -100, 100) for _ in range(2)], scalars=[_scalar_dtype(d)],
                 scalar_args=[1.5 if d.is_float else 5])


@pytest.mark.parametrize("dtype", FLOATS)
def test_prelu(dtype: str) -> None:
    d = DataType.from_name(dtype)
    _elementwise("prelu", d, 2, lambda t, s: make_call("tile.prelu", [t[0], t[1], t[0]]),
                 [rand(SHAPE, d), rand(SHAPE, d, -1, 1)])


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("op", ["sin", "cos"])
def test_sin_cos_match_reference(op: str, dtype: str) -> None:
    d = DataType.from_name(dtype)
    _elementwise(op, d, 1, lambda t, s: make_call(f"tile.{op}", [t[0]]), [rand(SHAPE, d, -50, 50)],
                 atol=2e-7)


def test_sin_cos_in_a_fused_chain_stay_vectorized() -> None:
    b = IRBuilder()
    with b.function("exp_sin_cos", type=FunctionType.InCore) as f:
        x, out = f.param("x", TensorType(list(SHAPE), FP32)), f.param(
            "out", TensorType(list(SHAPE), FP32), ParamDirection.Out)
        t = b.let("t", make_call("tile.load", [x, [0, 0], list(SHAPE)]))
        for op in ("cos", "sin", "exp"):  # single-use chain: fused into one chunk loop
            t = b.let(op, make_call(f"tile.{op}", [t]))
        b.eval(make_call("tile.store", [t, [0, 0], out]))
    fn = f.function
    text = compile_kernel(fn).mlir_text
    assert "math.sin" not in text and "math.cos" not in text  # no scalar libm call per element
    got, want = _run_both(fn, [rand(SHAPE, FP32, -50, 50)], torch.zeros(SHAPE))
    _check(got, want, FP32, rtol=1e-6, atol=1e-6)


# -- sin / cos error bounds -------------------------------------------------------------------

def _trig(op: str, x: torch.Tensor) -> torch.Tensor:
    n = x.numel()
    fn = _function(op, [((1, n), FP32, None)], ((1, n), FP32), lambda t, s: make_call(f"tile.{op}", [t[0]]))
    out = torch.zeros(1, n)
    compile_kernel(fn)(x.reshape(1, -1), out)
    return out.reshape(-1)


def _wide_range() -> torch.Tensor:
    g = torch.Generator().manual_seed(0)
    bits = torch.randint(0, 0x7F800000, (16384,), generator=g, dtype=torch.int32).view(torch.float32)
    return torch.cat([torch.linspace(-10, 10, 4096), torch.linspace(-FAST_LIMIT, FAST_LIMIT, 8192),
                      (torch.rand(8192, generator=g) * 2 - 1) * FAST_LIMIT, torch.logspace(5, 38, 4096),
                      -torch.logspace(5, 38, 4096), bits, -bits])


@pytest.mark.parametrize("op", ["sin", "cos"])
def test_sin_cos_error_bounds(op: str) -> None:
    x = _wide_range()
    want = getattr(torch, op)(x.double())
    err = (_trig(op, x).double() - want).abs()
    assert err.max().item() <= 1.5e-7
    ulp = torch.from_numpy(np.spacing(want.float().abs().numpy())).double()
    sizable = want.abs() >= 2 ** -10
    assert (err[sizable] / ulp[sizable]).max().item() <= 2.0


def test_sin_cos_special_values() -> None:
    inf, nan = float("inf"), float("nan")
    x = torch.tensor([0.0, -0.0, inf, -inf, nan, 1e-30, -1e-30, 3e38, 1.0])  # 3e38: full-range path
    s, c = _trig("sin", x), _trig("cos", x)
    assert s[0].item() == 0 and not s[0].signbit() and s[1].item() == 0 and s[1].signbit()
    assert s[2:5].isnan().all() and c[2:5].isnan().all()
    assert s[5].item() == pytest.approx(1e-30) and s[6].item() == pytest.approx(-1e-30)
    assert c[0].item() == 1 and c[5].item() == 1
    assert abs(s[7].item() - torch.sin(x[7].double()).item()) < 1.5e-7


# -- generated tiles --------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ["INT16", "INT32", "UINT16", "UINT32"])
@pytest.mark.parametrize("descending", [False, True])
def test_arange_with_runtime_start(dtype: str, descending: bool) -> None:
    d = DataType.from_name(dtype)
    for shape in ([1, 100], [1, 1, 37]):
        fn = _function("ar", [], (shape, d), lambda t, s: make_call(
            "tile.arange", [s[0], shape], {"dtype": d, "descending": descending}), scalars=[INT32])
        start = {"INT16": 32760, "UINT16": 65530}.get(dtype, 5 if descending else -5)
        if dtype == "UINT32":
            start = 4294967290 if not descending else 3  # wraps past the end / below 0
        # (INT16 wraps past 32767, UINT16 past 65535, like the reference)
        got, want = _run_both(fn, [start], torch.zeros(shape, dtype=d.to_torch()))
        assert torch.equal(got, want)


@pytest.mark.parametrize("dtype", NUMERIC)
def test_tri(dtype: str) -> None:
    d = DataType.from_name(dtype)
    cases = ((0, False, None), (-2, False, [5, 13]), (3, True, [6, 20]), (-1, True, None))
    for diagonal, upper, valid in cases:
        kw = {"dtype": d, "upper": upper, **({"valid_shape": valid} if valid else {})}
        fn = _function("tri", [], ((7, 37), d), lambda t, s: make_call("tile.tri", [s[0], [7, 37]], kw),
                       scalars=[INT32])
        got, want = _run_both(fn, [diagonal], torch.zeros(7, 37, dtype=d.to_torch()))
        assert torch.equal(got, want), (diagonal, upper, valid)


# -- gather / scatter -------------------------------------------------------------------------

GATHER = [("FP32", "INT32"), ("FP16", "INT32"), ("FP16", "INT16"), ("INT16", "INT16"), ("INT32", "INT32")]


@pytest.mark.parametrize("dtype,index_dtype", GATHER)
@pytest.mark.parametrize("dim", [None, 1, -1, 0])
def test_gather(dtype: str, index_dtype: str, dim: int | None) -> None:
    d, di = DataType.from_name(dtype), DataType.from_name(index_dtype)
    src_shape, idx_shape = (7, 37), (5, 21)
    limit = {None: 7 * 37, 1: 37, -1: 37, 0: 7}[dim]
    if dim is None and di is not INT32:
        pytest.skip("the flat form takes INT32 indices")
    fn = _function("g", [(src_shape, d, None), (idx_shape, di, (4, 19))], (idx_shape, d),
                   lambda t, s: make_call("tile.gather", t, {} if dim is None else {"dim": dim}))
    index = torch.randint(0, limit, idx_shape, dtype=di.to_torch())
    got, want = _run_both(fn, [rand(src_shape, d), index], torch.zeros(idx_shape, dtype=d.to_torch()))
    _check(got, want, d)


def test_gather_out_of_range_index_reads_zero() -> None:
    fn = _function("g", [((4, 37), FP32, None), ((4, 37), INT32, None)], ((4, 37), FP32),
                   lambda t, s: make_call("tile.gather", t, {"dim": 1}))
    x = torch.rand(4, 37) + 1
    index = torch.randint(0, 37, (4, 37), dtype=torch.int32)
    index[:, 3], index[:, 5] = -1, 37
    out = torch.zeros(4, 37)
    compile_kernel(fn)(x, index, out)
    expected = torch.gather(x, 1, index.clamp(0, 36).long())
    expected[:, 3] = expected[:, 5] = 0
    assert torch.equal(out, expected)


@pytest.mark.parametrize("dtype", NUMERIC)
def test_scatter_with_duplicate_indices(dtype: str) -> None:
    d = DataType.from_name(dtype)
    di = INT32 if d.bits == 32 else INT16
    fn = _function("s", [((6, 40), d, (5, 33)), ((6, 13), di, None), ((6, 13), d, None)], ((6, 40), d),
                   lambda t, s: make_call("tile.scatter", t, {"dim": 1}))
    index = torch.randint(0, 40, (6, 13), dtype=di.to_torch())  # duplicates: the last one wins
    index[:, 1] = index[:, 0]
    args = [rand((6, 40), d), index, rand((6, 13), d)]
    got, want = _run_both(fn, args, torch.zeros(6, 40, dtype=d.to_torch()))
    assert torch.equal(got, want)


# -- batch matmul -----------------------------------------------------------------------------

def _check_sums(got: torch.Tensor, want: torch.Tensor, mag: torch.Tensor, terms: int) -> None:
    """FP32 sums of `terms` products in two orders: each is off by at most (terms + 1) * 2^-24
    times `mag`, the sum of the terms' magnitudes (not the result's, which may cancel), so
    both are normalised by it."""
    bound = 2 * (terms + 1) * 2.0 ** -24
    torch.testing.assert_close(got.double() / mag, want.double() / mag, rtol=0, atol=bound)


@pytest.mark.parametrize("dtype", ["FP32", "FP16", "BF16", "INT8"])
@pytest.mark.parametrize("shapes", [((3, 5, 20), (3, 20, 17)), ((2, 3, 7, 9), (3, 9, 32)),
                                    ((7, 9), (2, 9, 16)), ((2, 1, 13, 8), (1, 3, 8, 33))])
def test_batch_matmul_broadcasts_batch_dims(dtype: str, shapes) -> None:
    d = DataType.from_name(dtype)
    acc = INT32 if dtype == "INT8" else FP32
    (ls, rs) = shapes
    out_shape = list(torch.broadcast_shapes(ls[:-2], rs[:-2])) + [ls[-2], rs[-1]]
    fn = _function("bm", [(ls, d, None), (rs, d, None)], (out_shape, acc),
                   lambda t, s: make_call("tile.batch_matmul", t))
    x, y = rand(ls, d), rand(rs, d)
    got, want = _run_both(fn, [x, y], torch.zeros(out_shape, dtype=acc.to_torch()))
    if dtype == "INT8":
        assert torch.equal(got, want)
    else:
        _check_sums(got, want, x.double().abs() @ y.double().abs(), ls[-1])


def test_bf16_batch_matmul_of_whole_tiles() -> None:
    """Batches of whole 16 x 32 BF16 tiles: on AMX tiles where the host has them, through the
    batch's strided views (k = 64: fp32 sums in another order, atol 1e-4)."""
    ls, rs, out_shape = (2, 32, 64), (2, 64, 64), [2, 32, 64]
    fn = _function("bmt", [(ls, BF16, None), (rs, BF16, None)], (out_shape, FP32),
                   lambda t, s: make_call("tile.batch_matmul", t))
    got, want = _run_both(fn, [rand(ls, BF16), rand(rs, BF16)], torch.zeros(out_shape))
    _check(got, want, FP32, rtol=1e-5, atol=1e-4)


def test_batch_matmul_acc_starts_each_batch_from_its_accumulator() -> None:
    ls, rs, out_shape = (3, 5, 20), (20, 17), [3, 5, 17]
    fn = _function("bma", [(out_shape, FP32, None), (ls, FP32, None), (rs, FP32, None)], (out_shape, FP32),
                   lambda t, s: make_call("tile.batch_matmul_acc", t))
    acc, x, y = rand(out_shape, FP32), rand(ls, FP32), rand(rs, FP32)
    got, want = _run_both(fn, [acc, x, y], torch.zeros(out_shape))
    mag = acc.double().abs() + x.double().abs() @ y.double().abs()
    _check_sums(got, want, mag, 21)
    _check_sums(got, acc.double() + x.double() @ y.double(), mag, 21)


# -- completeness -----------------------------------------------------------------------------

# Tile ops that never reach kernel codegen, and why.
NOT_LOWERED = {
    "tile.aiv_shard": "ExpandMixedKernel rewrites the named split crossing into tpush / tpop",
    "tile.aic_gather": "ExpandMixedKernel rewrites the named split crossing into tpush / tpop",
}


def test_every_tile_op_is_lowered_or_excluded() -> None:
    tile_ops = {name for name in REGISTRY if name.startswith("tile.")}
    handled = set(LOWERINGS) | set(_CONTEXT_OPS) | set(NOT_LOWERED)
    missing = sorted(tile_ops - handled)
    assert not missing, f"tile ops without a kernel lowering: {missing}"
    assert not set(NOT_LOWERED) & set(LOWERINGS), "an excluded op has a lowering: drop it from NOT_LOWERED"
    assert set(NOT_LOWERED) <= tile_ops
