"""The cube (matrix) ops: matmul, matmul_acc, matmul_bias and the gemv family.

Operands share one dtype; the cube accumulates FP16 / BF16 / FP32 in FP32 and INT8 in
INT32. Tensor matmul may narrow its FP32 result to FP16 / BF16 through `out_dtype`; at tile
level the result dtype is the accumulator's. `a_trans` / `b_trans` swap the trailing two
axes of their operand and exist on tensors only (a tile carries its layout in its type).
"""

from __future__ import annotations

from ...dtypes import BF16, BOOL, FP16, FP32, INT32, DataType
from ..enums import AccPhase
from ..expr import Expr
from ..types import ScalarType, TensorType, TileType, Type, dim_value
from .common import (
    MATMUL_ACC,
    P,
    const_dim,
    fmt_shape,
    fmt_type,
    require_dim,
    require_dtype,
    require_rank,
    require_same_dtype,
    require_same_kind,
    result_like,
)
from .registry import Bound, Pattern, register

MM = Pattern.MATMUL

OUT_DTYPES = {FP32: (FP32, FP16, BF16), INT32: (INT32,)}


def _operand_dims(b: Bound, name: str, t, trans: bool) -> tuple[tuple[Expr, ...], Expr, Expr]:
    """(batch dims, rows, cols) of a 2D+ operand after an optional transpose."""
    if trans and t.rank < 2:
        raise b.fail(f"{'a_trans' if name == 'lhs' else 'b_trans'} needs operand {name!r} of rank >= 2, "
                     f"got shape {fmt_shape(t.shape)}")
    rows, cols = t.shape[-2], t.shape[-1]
    return t.shape[:-2], (cols if trans else rows), (rows if trans else cols)


def _broadcast(b: Bound, x: tuple[Expr, ...], y: tuple[Expr, ...]) -> tuple[Expr, ...]:
    out: list[Expr] = []
    for i in range(1, max(len(x), len(y)) + 1):
        dx = x[-i] if i <= len(x) else None
        dy = y[-i] if i <= len(y) else None
        if dx is None or dim_value(dx) == 1:
            out.append(dy if dy is not None else dx)
        elif dy is None or dim_value(dy) == 1:
            out.append(dx)
        else:
            require_dim(b, f"batch dims {fmt_shape(x)} and {fmt_shape(y)} do not broadcast", dy, dx)
            out.append(dx)
    return tuple(reversed(out))


def matmul_shape(b: Bound, lhs, rhs, a_trans: bool = False, b_trans: bool = False) -> tuple[Expr, ...]:
    """Result shape of lhs @ rhs (2D, mat-vec, vec-mat or batched)."""
    if lhs.rank == 0 or rhs.rank == 0 or (lhs.rank == 1 and rhs.rank == 1):
        raise b.fail(f"needs a matrix operand; got lhs {fmt_shape(lhs.shape)} and rhs {fmt_shape(rhs.shape)}")
    if lhs.rank == 1:
        if a_trans:
            raise b.fail(f"a_trans needs operand 'lhs' of rank >= 2, got shape {fmt_shape(lhs.shape)}")
        batch, k2, n = _operand_dims(b, "rhs", rhs, b_trans)
        require_dim(b, f"contraction dims differ: lhs {fmt_shape(lhs.shape)} vs rhs {fmt_shape(rhs.shape)}",
                    k2, lhs.shape[0])
        return batch + (n,)
    if rhs.rank == 1:
        if b_trans:
            raise b.fail(f"b_trans needs operand 'rhs' of rank >= 2, got shape {fmt_shape(rhs.shape)}")
        batch, m, k = _operand_dims(b, "lhs", lhs, a_trans)
        require_dim(b, f"contraction dims differ: lhs {fmt_shape(lhs.shape)} vs rhs {fmt_shape(rhs.shape)}",
                    rhs.shape[0], k)
        return batch + (m,)
    lb, m, k = _operand_dims(b, "lhs", lhs, a_trans)
    rb, k2, n = _operand_dims(b, "rhs", rhs, b_trans)
    require_dim(b, f"contraction dims differ: lhs {fmt_shape(lhs.shape)}"
                   f"{' (a_trans)' if a_trans else ''} has K={_d(k)} but rhs {fmt_shape(rhs.shape)}"
                   f"{' (b_trans)' if b_trans else ''} has K={_d(k2)}", k2, k)
    return _broadcast(b, lb, rb) + (m, n)


def _d(e: Expr) -> str:
    return fmt_shape((e,))[1:-1]


def acc_dtype(b: Bound, lhs, rhs) -> DataType:
    """The accumulator dtype for same-dtype cube operands."""
    require_same_kind(b, "rhs", rhs, "lhs", lhs)
    require_dtype(b, "lhs", lhs.dtype, tuple(MATMUL_ACC))
    require_same_dtype(b, "rhs", rhs, "lhs", lhs)
    return MATMUL_ACC[lhs.dtype]


def _no_tile_flags(b: Bound, *flags: str) -> None:
    for f in flags:
        if b.get(f):
            raise b.fail(f"{f} is tensor-only: at tile level transposition is a type property")


def _check_init_cond(b: Bound) -> None:
    c = b.get("init_cond")
    if c is not None and not (isinstance(c.type, ScalarType) and c.type.dtype is BOOL):
        raise b.fail(f"init_cond must be a BOOL scalar, got {fmt_type(c.type)}")


def _matmul(b: Bound) -> Type:
    lhs, rhs = b.lhs.type, b.rhs.type
    acc = acc_dtype(b, lhs, rhs)
    tile = isinstance(lhs, TileType)
    if tile:
        _no_tile_flags(b, "a_trans", "b_trans", "c_matrix_nz")
        require_rank(b, "lhs", lhs, 2)
        require_rank(b, "rhs", rhs, 2)
    shape = matmul_shape(b, lhs, rhs, bool(b.get("a_trans")), bool(b.get("b_trans")))
    out = b.out_dtype
    if out is not None:
        allowed = (acc,) if tile else OUT_DTYPES[acc]
        if out not in allowed:
            raise b.fail(f"out_dtype {getattr(out, 'name', out)} is not available for {lhs.dtype.name} "
                         f"operands; expected one of {', '.join(d.name for d in allowed)}")
    dtype = out or acc
    return TileType(shape, dtype, None, _product_valid(lhs, rhs)) if tile else TensorType(shape, dtype)


def _product_valid(lhs: TileType, rhs: TileType) -> list[Expr] | None:
    """The valid region of a tile product: lhs's valid rows by rhs's valid columns (None when
    both operands are valid everywhere), as in the reference."""
    if lhs.valid_shape is None and rhs.valid_shape is None:
        return None
    return [lhs.effective_valid_shape[0], rhs.effective_valid_shape[1]]


def _batch_matmul(b: Bound) -> Type:
    lhs, rhs = b.lhs.type, b.rhs.type
    acc = acc_dtype(b, lhs, rhs)
    for name, t in (("lhs", lhs), ("rhs", rhs)):
        require_rank(b, name, t, min_rank=2)
    return TileType(matmul_shape(b, lhs, rhs), acc)


def _batch_matmul_acc(b: Bound) -> Type:
    acc = b.acc.type
    _check_acc(b, "acc", acc, _batch_matmul(b).shape, acc_dtype(b, b.lhs.type, b.rhs.type))
    return result_like(acc)


def _matmul_acc(b: Bound) -> Type:
    acc, lhs, rhs = b.acc.type, b.lhs.type, b.rhs.type
    want = acc_dtype(b, lhs, rhs)
    require_same_kind(b, "acc", acc, "lhs", lhs)
    if isinstance(lhs, TileType):
        _no_tile_flags(b, "a_trans", "b_trans")
        require_rank(b, "lhs", lhs, 2)
        require_rank(b, "rhs", rhs, 2)
    _check_init_cond(b)
    shape = matmul_shape(b, lhs, rhs, bool(b.get("a_trans")), bool(b.get("b_trans")))
    _check_acc(b, "acc", acc, shape, want)
    return result_like(acc)


def _check_acc(b: Bound, name: str, acc, shape, dtype: DataType) -> None:
    if acc.dtype is not dtype:
        raise b.fail(f"operand {name!r} dtype {acc.dtype.name} must be the accumulator dtype {dtype.name}")
    require_rank(b, name, acc, len(shape))
    for got, want in zip(acc.shape, shape):
        require_dim(b, f"operand {name!r} shape {fmt_shape(acc.shape)} must be {fmt_shape(shape)}", got, want)


def _matmul_bias(b: Bound) -> Type:
    lhs, rhs, bias = b.lhs.type, b.rhs.type, b.bias.type
    acc = acc_dtype(b, lhs, rhs)
    require_rank(b, "lhs", lhs, 2)
    require_rank(b, "rhs", rhs, 2)
    m, n = matmul_shape(b, lhs, rhs)
    _check_acc(b, "bias", bias, (_one(), n), acc)
    return TileType((m, n), acc, None, _product_valid(lhs, rhs))


def _one() -> Expr:
    return const_dim(1)


ACC_PHASE_NAMES = tuple(p.name.lower() for p in AccPhase)
"""The reference's spelling of an accumulation phase (`acc_phase="partial"`)."""


def _gemv_shape(b: Bound) -> tuple[tuple[Expr, Expr], DataType]:
    lhs, rhs = b.lhs.type, b.rhs.type
    acc = acc_dtype(b, lhs, rhs)
    require_rank(b, "lhs", lhs, 2)
    require_rank(b, "rhs", rhs, 2)
    if dim_value(lhs.shape[0]) != 1:
        raise b.fail(f"operand 'lhs' must be a row vector [1, K], got shape {fmt_shape(lhs.shape)}")
    _, n = matmul_shape(b, lhs, rhs)
    if not isinstance(b.acc_phase, AccPhase) and b.acc_phase not in ACC_PHASE_NAMES:
        names = ", ".join(map(repr, ACC_PHASE_NAMES))
        raise b.bad_value(f"acc_phase must be a pl.AccPhase or one of {names}, got {b.acc_phase!r}")
    return (_one(), n), acc


def _gemv(b: Bound) -> Type:
    shape, acc = _gemv_shape(b)
    return TileType(shape, acc, None, _product_valid(b.lhs.type, b.rhs.type))


def _gemv_acc(b: Bound) -> Type:
    shape, acc = _gemv_shape(b)
    _check_init_cond(b)
    _check_acc(b, "acc", b.acc.type, shape, acc)
    return result_like(b.acc.type)


def _gemv_bias(b: Bound) -> Type:
    shape, acc = _gemv_shape(b)
    _check_acc(b, "bias", b.bias.type, shape, acc)
    return TileType(shape, acc, None, _product_valid(b.lhs.type, b.rhs.type))


def _register_all() -> None:
    flags = [P("a_trans", "attr", False), P("b_trans", "attr", False)]
    for ns in ("tensor", "tile"):
        # a kernel packs B as it reads it, and reads a loaded A where it lies in DDR
        streamed = ("lhs", "rhs") if ns == "tile" else ()
        register(f"{ns}.matmul", [P("lhs", ns), P("rhs", ns), P("out_dtype", "attr", None), *flags,
                                  P("c_matrix_nz", "attr", False)],
                 _matmul, unit="cube", pattern=MM, streamed=streamed,
                 doc="Matrix product lhs @ rhs (FP32 accumulation for float operands, INT32 for INT8).")
        register(f"{ns}.matmul_acc", [P("acc", ns), P("lhs", ns), P("rhs", ns), *flags,
                                      P("init_cond", "scalar", None)],
                 _matmul_acc, unit="cube", pattern=MM, accumulator="acc", streamed=streamed,
                 doc="acc + lhs @ rhs; where init_cond holds, acc is overwritten with lhs @ rhs.")
    register("tile.batch_matmul", [P("lhs", "tile"), P("rhs", "tile")], _batch_matmul, unit="cube",
             pattern=MM,
             doc="Batched lhs @ rhs over the leading axes of rank >= 2 tiles (batch dims broadcast; "
                 "accumulates like tile.matmul).")
    register("tile.batch_matmul_acc", [P("acc", "tile"), P("lhs", "tile"), P("rhs", "tile")],
             _batch_matmul_acc, unit="cube", pattern=MM, accumulator="acc",
             doc="acc + tile.batch_matmul(lhs, rhs), acc shaped like that product.")
    register("tile.matmul_bias", [P("lhs", "tile"), P("rhs", "tile"), P("bias", "tile")], _matmul_bias,
             unit="cube", pattern=MM, streamed=("lhs", "rhs"),
             doc="lhs @ rhs + bias, bias [1, N] in the accumulator dtype.")
    phase = P("acc_phase", "attr", AccPhase.Unspecified)
    register("tile.gemv", [P("lhs", "tile"), P("rhs", "tile"), phase], _gemv, unit="cube", pattern=MM,
             doc="Row vector times matrix: [1, K] @ [K, N] -> [1, N].")
    register("tile.gemv_acc", [P("acc", "tile"), P("lhs", "tile"), P("rhs", "tile"), phase,
                               P("init_cond", "scalar", None)], _gemv_acc, unit="cube",
             pattern=MM, accumulator="acc",
             doc="acc + lhs @ rhs for a row vector lhs [1, K]; init_cond selects overwrite.")
    register("tile.gemv_bias", [P("lhs", "tile"), P("rhs", "tile"), P("bias", "tile"), phase],
             _gemv_bias, unit="cube", pattern=MM, doc="lhs @ rhs + bias for a row vector lhs [1, K].")


_register_all()

__all__ = ["matmul_shape", "acc_dtype"]
