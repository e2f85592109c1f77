"""Cross-core pipe ops between the cube (AIC) and the two vector lanes (AIV): push / pop /
free on a ring of slots, and the named crossings `aiv_shard` / `aic_gather` of split regions."""

from __future__ import annotations

from ...dtypes import DataType
from ..enums import MemorySpace, SplitMode
from ..expr import Add, Expr, FloorDiv, Mul
from ..types import TileType, Type, UnknownType, dim_value
from .common import VOID, P, const_dim, index_values, require_int_attr, require_rank, result_like
from .registry import Bound, register


def _check_split(b: Bound, name: str = "split") -> None:
    if b[name] is not None:
        require_int_attr(b, name, 0, 4)
    if b.get("id") is not None:
        require_int_attr(b, "id", 0)


def _push(b: Bound) -> Type:
    _check_split(b)
    return VOID


def _popper(memory: MemorySpace):
    def deduce(b: Bound) -> Type:
        _check_split(b)
        shape = index_values(b, "shape")
        if not shape and b.dtype is None:
            return UnknownType()  # typed by the annotation of the name it is bound to
        if not shape or not isinstance(b.dtype, DataType):
            raise b.fail(f"shape and dtype of the received tile go together, got shape={b.shape!r}, "
                         f"dtype={b.dtype!r}")
        return TileType(shape, b.dtype, memory)

    return deduce


def _free(b: Bound) -> Type:
    _check_split(b)
    return VOID


def _resized(d: Expr, gather: bool, ceil: bool) -> Expr:
    """Extent `d` doubled (gather) or halved, rounded up where `ceil` (else down)."""
    n = dim_value(d)
    if gather:
        return const_dim(2 * n) if n is not None else Mul(d, const_dim(2))
    if n is not None:
        return const_dim(-(-n // 2))
    return FloorDiv(Add(d, const_dim(1)), const_dim(2)) if ceil else FloorDiv(d, const_dim(2))


def _crossing(gather: bool):
    """aiv_shard halves (aic_gather doubles) the split axis of a data-parallel region. An odd
    extent halves rounded up, as the reference's: each lane's box holds the larger half and
    lane 1 is one short. A tile's valid extent is resized with it (lane-agnostic: the lane's
    own share is bound where the lane index is known, see ExpandMixedKernel)."""

    def deduce(b: Bound) -> Type:
        t = b.x.type
        require_rank(b, "x", t, 2)
        if b.get("lane_stride") is not None:
            require_int_attr(b, "lane_stride", 1)
        mode = b.mode
        if not isinstance(mode, SplitMode):
            raise b.bad_value(f"mode must be a pl.SplitMode (filled in from the enclosing split_aiv "
                              f"region), got {mode!r}")
        if mode is SplitMode.NONE:
            return result_like(t)
        axis = 0 if mode is SplitMode.UP_DOWN else 1
        shape = list(t.shape)
        shape[axis] = _resized(shape[axis], gather, ceil=False)
        valid = None
        if isinstance(t, TileType) and t.valid_shape is not None:
            valid = list(t.valid_shape)
            valid[axis] = _resized(valid[axis], gather, ceil=True)
        return result_like(t, shape=shape, valid_shape=valid)

    return deduce


def _register_all() -> None:
    ident = P("id", "attr", None)
    register("tile.tpush_to_aiv", [P("tile", "tile"), P("split", "attr"), P("lane_stride", "attr", None),
                                   ident], _push, unit="pipe",
             doc="Push a tile from the cube to the vector lanes through the C2V pipe.")
    register("tile.tpush_to_aic", [P("tile", "tile"), P("split", "attr"), ident], _push, unit="pipe",
             doc="Push a tile from a vector lane to the cube through the V2C pipe.")
    pop = [P("shape", "index_list", None), P("dtype", "attr", None), P("split", "attr", 0)]
    register("tile.tpop_from_aic", pop + [P("lane_stride", "attr", None), ident],
             _popper(MemorySpace.Vec), unit="pipe",
             doc="Receive a tile pushed by the cube (on a vector lane).")
    register("tile.tpop_from_aiv", pop + [ident], _popper(MemorySpace.Mat), unit="pipe",
             doc="Receive a tile pushed by a vector lane (on the cube).")
    for side in ("aic", "aiv"):
        register(f"tile.tfree_to_{side}", [P("tile", "tile"), P("split", "attr", None), ident], _free,
                 unit="pipe", reads=(),
                 doc=f"Release the pipe slot of a tile popped from the {side.upper()} back to its producer.")
    for ns in ("tensor", "tile"):
        mode = P("mode", "attr", SplitMode.NONE)
        register(f"{ns}.aiv_shard", [P("x", ns), mode, P("lane_stride", "attr", None)], _crossing(False),
                 unit="pipe",
                 doc="Bring a cube-produced value onto the AIV lanes (halved along the split axis).")
        register(f"{ns}.aic_gather", [P("x", ns), mode], _crossing(True), unit="pipe",
                 doc="Hand a vector-produced value to the cube (lane halves rejoined).")


_register_all()
