"""`tile.batch_matmul`: lhs [..., M, K] @ rhs [..., K, N] over broadcast batch dims
(`tile.batch_matmul_acc`: acc + the same, each batch starting from its block of acc).

A tile's leading dims fold into its rows, so batch `b` of an operand is the contiguous
block of rows [b * M, (b + 1) * M). An `scf.for` over the result's batches takes a
`memref.subview` of each operand's block and runs the matmul micro-kernel of
`lower_matmul` on it (B panels are packed per batch into one scratch buffer allocated at
kernel entry). Batch dims broadcast like torch.matmul: an operand's dim of extent 1 (or a
missing leading dim) repeats its block.
"""

from __future__ import annotations

from ... import ir as pir
from .builder import TileBuf
from .context import LowerContext
from .lower_matmul import Init, _check, _narrow_output, emit_matmul
from .mlir import arith, ir, memref


def _batch_dims(t: pir.TileType) -> tuple[int, ...]:
    return tuple(t.static_shape[:-2])


def _block(lc: LowerContext, t: TileBuf, rows: int, batch: ir.Value) -> TileBuf:
    """Rows [batch * rows, (batch + 1) * rows) of `t` as a tile of its own."""
    kb = lc.kb
    offset = arith.muli(batch, kb.idx(rows * t.pitch))
    view = memref.subview(t.buf, [offset], [rows * t.pitch], [1])
    return TileBuf(view, t.dtype, rows, t.cols, t.pitch, t.width, (kb.idx(rows), kb.idx(t.cols)))


def _operand_batch(lc: LowerContext, out_dims: tuple[int, ...], dims: tuple[int, ...],
                   ob: ir.Value) -> ir.Value:
    """The flat batch index of an operand with batch `dims` for the result's flat batch `ob`."""
    kb = lc.kb
    dims = (1,) * (len(out_dims) - len(dims)) + dims
    index, rest, scale = kb.idx(0), ob, 1
    for out_d, d in reversed(list(zip(out_dims, dims))):
        coord = arith.remui(rest, kb.idx(out_d))
        rest = arith.divui(rest, kb.idx(out_d))
        if d != 1:
            index = arith.addi(index, arith.muli(coord, kb.idx(scale)))
        scale *= d
    return index


def lower_batch_matmul(lc: LowerContext, short: str, a: dict) -> TileBuf:
    name = f"tile.{short}"
    lt, rt = a["lhs"].type, a["rhs"].type
    lhs, rhs = lc.tile(a["lhs"]), lc.tile(a["rhs"])
    out = _narrow_output(lc, lc.result_tile(), name)
    _check(lc, name, lhs, rhs, out.dtype)
    m, k = lt.static_shape[-2:]
    out_dims = _batch_dims(lc.call.type)
    batches = out.rows // m
    acc = lc.tile(a["acc"]) if "acc" in a else None
    kb = lc.kb
    with kb.loop(0, batches) as lb:
        ob = lb.induction_variable
        a_blk = _block(lc, lhs, m, _operand_batch(lc, out_dims, _batch_dims(lt), ob))
        b_blk = _block(lc, rhs, k, _operand_batch(lc, out_dims, _batch_dims(rt), ob))
        init = Init(acc=None if acc is None else _block(lc, acc, m, ob))
        emit_matmul(kb, a_blk, b_blk, _block(lc, out, m, ob), init)
    return out


def register(table: dict) -> None:
    table["tile.batch_matmul"] = table["tile.batch_matmul_acc"] = lower_batch_matmul
