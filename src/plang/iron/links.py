"""Links: `forward`, `split` and `join` of fifo handles, each an `ObjectFifoLink` that a
mem-tile member of the run executes (acquire on every side, copy the pieces, release)."""

from __future__ import annotations

from enum import Enum
from typing import Any, Sequence

import numpy as np

from .device import AnyMemTile, Tile
from .hardware import hardware_only


class ObjectFifoLinkMode(Enum):
    """Space: objects are cut into / assembled from pieces at offsets (split, join, forward);
    Time: whole objects take turns (dispatch: object k to output k mod n; merge: in arrival
    order)."""

    Space = "space"
    Time = "time"


class ObjectFifoLink:
    """Moves the objects of `srcs` (consumer handles) into `dsts` (producer handles) on a mem
    tile; one side has exactly one handle, the other one piece per offset."""

    def __init__(self, srcs: Sequence[Any] | Any, dsts: Sequence[Any] | Any,
                 tile: Tile | None = AnyMemTile,
                 src_offsets: Sequence[int] | None = None, dst_offsets: Sequence[int] | None = None,
                 mode: ObjectFifoLinkMode = ObjectFifoLinkMode.Space) -> None:
        srcs = list(srcs) if isinstance(srcs, (list, tuple)) else [srcs]
        dsts = list(dsts) if isinstance(dsts, (list, tuple)) else [dsts]
        if not srcs:
            raise ValueError("An ObjectFifoLink must have at least one source")
        if not dsts:
            raise ValueError("An ObjectFifoLink must have at least one destination")
        if len(srcs) > 1 and len(dsts) > 1:
            raise ValueError("An ObjectFifoLink may only have > 1 of either sources or destinations, "
                             "but not both")
        if not isinstance(mode, ObjectFifoLinkMode):
            raise TypeError(f"ObjectFifoLink mode must be an ObjectFifoLinkMode, got {mode!r}")
        for h in srcs:
            if h.is_prod:
                raise ValueError(f"ObjectFifoLink sources are consumer handles, got {h}")
        for h in dsts:
            if not h.is_prod:
                raise ValueError(f"ObjectFifoLink destinations are producer handles, got {h}")
        self.srcs, self.dsts, self.mode = srcs, dsts, mode
        self.tile = AnyMemTile if tile is None else tile
        wide = dsts[0] if len(srcs) > 1 else srcs[0]
        pieces = srcs if len(srcs) > 1 else dsts
        if mode is ObjectFifoLinkMode.Time:
            if src_offsets is not None or dst_offsets is not None:
                raise ValueError("A time link moves whole objects and takes no offsets")
            if len(pieces) < 2:
                raise ValueError("A time link takes turns between at least two fifos")
            offsets = [0] * len(pieces)
        else:
            offsets = (self._offsets(src_offsets, srcs, "src_offsets") if len(srcs) > 1
                       else self._offsets(dst_offsets, dsts, "dst_offsets"))
        self.src_offsets = offsets if len(srcs) > 1 else [0]
        self.dst_offsets = [0] if len(srcs) > 1 else offsets
        size = int(np.prod(wide.shape))
        for h, off in zip(pieces, offsets):
            n = int(np.prod(h.shape))
            if h.dtype != wide.dtype:
                raise ValueError(f"ObjectFifoLink: {h} holds {h.dtype}, {wide} holds {wide.dtype}")
            if off + n > size or (mode is ObjectFifoLinkMode.Time and n != size):
                raise ValueError(f"ObjectFifoLink: a piece of {n} elements at offset {off} does not fit "
                                 f"an object of {size} elements" + (
                                     " whole" if mode is ObjectFifoLinkMode.Time else ""))
        for h in [*srcs, *dsts]:
            if h.endpoint is not None:
                raise ValueError(f"{h} already belongs to {h.endpoint}")
            h.endpoint = self
        self.name = ""  # set by the Program (trace lane, errors)
        self.suffixes: list[str] = []  # names of unnamed new fifos: source fifo name + suffix
        self.created: list[Any] = []  # the fifos split / join / forward made

    @staticmethod
    def _offsets(offsets: Sequence[int] | None, handles: list, what: str) -> list[int]:
        if offsets is None:
            offsets = [0] if len(handles) == 1 else None
        if offsets is None or len(offsets) != len(handles):
            raise ValueError(f"ObjectFifoLink needs one of {what} per handle ({len(handles)}), "
                             f"got {offsets!r}")
        return [int(o) for o in offsets]

    @property
    def wide(self) -> Any:
        """The handle of the fifo the link cuts or assembles."""
        return self.dsts[0] if len(self.srcs) > 1 else self.srcs[0]

    @property
    def handles(self) -> list[Any]:
        return [*self.srcs, *self.dsts]

    def buffer_bytes(self) -> int:
        return sum(h.depth * h.nbytes for h in self.handles)

    @property
    def lanes(self) -> int:
        """Threads the link's member runs: one per merge input, else one."""
        return len(self.srcs) if self.mode is ObjectFifoLinkMode.Time else 1

    def step(self, lane: int = 0, lock: Any = None) -> None:
        """Move one object of the wide side (the link member repeats it until the run ends);
        a merge's `lane` moves one object of its input under the output's `lock`."""
        if self.mode is ObjectFifoLinkMode.Time:
            if len(self.srcs) == 1:
                src = self.srcs[0]
                for dst in self.dsts:
                    _move_whole(src, dst)
                return
            src, dst = self.srcs[lane], self.dsts[0]
            x = src.acquire(1)
            with lock:
                dst.acquire(1).copy_(x)
                dst.release(1)
            src.release(1)
            return
        if len(self.srcs) == 1:
            src = self.srcs[0]
            x = src.acquire(1).reshape(-1)
            for dst, off in zip(self.dsts, self.dst_offsets):
                y = dst.acquire(1).reshape(-1)
                y.copy_(x[off:off + y.numel()])
                dst.release(1)
            src.release(1)
        else:
            dst = self.dsts[0]
            y = dst.acquire(1).reshape(-1)
            for src, off in zip(self.srcs, self.src_offsets):
                x = src.acquire(1).reshape(-1)
                y[off:off + x.numel()].copy_(x)
                src.release(1)
            dst.release(1)

    def __repr__(self) -> str:
        return f"ObjectFifoLink({self.name or '?'})"


def _move_whole(src: Any, dst: Any) -> None:
    x, y = src.acquire(1), dst.acquire(1)
    y.copy_(x)
    src.release(1)
    dst.release(1)


def take_turns(handle: Any, verb: str, n: int, tile: Tile | None, depths: Any, names: Any,
               transports: Any) -> list[Any]:
    """The new fifos of `merge` (producer side) / `dispatch` (consumer side) and their link."""
    if handle.is_prod != (verb == "merge"):
        raise ValueError(f"Cannot {verb}() a {handle.handle_type} ObjectFifoHandle")
    if isinstance(n, bool) or not isinstance(n, int) or n < 2:
        raise ValueError(f"{verb}() takes turns between at least two fifos, got {n!r}")
    depths, names = _per(depths, n, "depths"), _per(names, n, "names")
    transports = _per(transports, n, "transports")
    of = handle.object_fifo
    outs = [type(of)(of.obj_type, depth=d if d is not None else handle.depth, name=nm, transport=t)
            for d, nm, t in zip(depths, names, transports)]
    if verb == "merge":
        link = ObjectFifoLink([o.cons() for o in outs], [handle], tile, mode=ObjectFifoLinkMode.Time)
    else:
        link = ObjectFifoLink([handle], [o.prod() for o in outs], tile, mode=ObjectFifoLinkMode.Time)
    link.suffixes, link.created = [f"_{verb}{i}" for i in range(n)], outs
    return outs


def _per(values: Any, n: int, what: str) -> list:
    if values is None:
        return [None] * n
    if len(values) != n:
        raise ValueError(f"Number of {what} does not match number of offsets")
    return list(values)


def _check_plain(plio: bool, where: str) -> None:
    if plio:
        raise hardware_only(f"{where}(plio=True)", "a PLIO connection to programmable logic")


def forward(handle: Any, tile: Tile | None, obj_type: Any, depth: int | None,
            name: str | None, to_stream: Any, from_stream: Any, plio: bool,
            repeat_count: int | None, port: Any) -> Any:
    if handle.is_prod:
        raise ValueError(f"Cannot forward a {handle.handle_type} ObjectFifoHandle")
    _check_plain(plio, "forward")
    of = handle.object_fifo
    out = type(of)(obj_type if obj_type is not None else of.obj_type,
                     depth=depth if depth is not None else of.depth, name=name,
                     to_stream=to_stream, from_stream_per_cons=from_stream, repeat_count=repeat_count)
    if out.nbytes != of.nbytes:
        raise ValueError(f"forward(): obj_type of {out.nbytes} bytes for objects of {of.nbytes} bytes")
    link = ObjectFifoLink([handle], [out.prod(port=port)], tile)
    link.suffixes, link.created = ["_fwd"], [out]
    return out


def distribute(handle: Any, offsets: Sequence[int], tile: Tile | None, depths: Any,
               obj_types: Any, names: Any, to_stream: Any, from_stream: Any, plio: bool,
               repeat_counts: Any, pad_value: Any, ports: Any) -> list[Any]:
    if handle.is_prod:
        raise ValueError(f"Cannot split() a {handle.handle_type} ObjectFifoHandle")
    _check_plain(plio, "split")
    n = len(offsets)
    if ports is not None and len(ports) != n:
        raise ValueError(f"split() got {len(ports)} ports for {n} outputs; give one per output or "
                         "none at all.")
    outs = _new_fifos(handle, n, depths, obj_types, names, to_stream, from_stream, repeat_counts,
                      pad_value, "split")
    link = ObjectFifoLink([handle], [o.prod(port=p) for o, p in zip(outs, _per(ports, n, "ports"))],
                          tile, dst_offsets=offsets)
    link.suffixes, link.created = [f"_split{i}" for i in range(n)], outs
    return outs


def gather(handle: Any, offsets: Sequence[int], tile: Tile | None, depths: Any,
           obj_types: Any, names: Any, to_stream: Any, from_stream: Any, plio: bool,
           repeat_counts: Any) -> list[Any]:
    if not handle.is_prod:
        raise ValueError(f"Cannot join() a {handle.handle_type} ObjectFifoHandle")
    _check_plain(plio, "join")
    n = len(offsets)
    outs = _new_fifos(handle, n, depths, obj_types, names, to_stream, from_stream, repeat_counts,
                      None, "join")
    link = ObjectFifoLink([o.cons() for o in outs], [handle], tile, src_offsets=offsets)
    link.suffixes, link.created = [f"_join{i}" for i in range(n)], outs
    return outs


def _new_fifos(handle: Any, n: int, depths: Any, obj_types: Any, names: Any,
               to_stream: Any, from_stream: Any, repeat_counts: Any, pad_value: Any,
               verb: str) -> list[Any]:
    if obj_types is None:
        raise ValueError(f"{verb}() needs obj_types: the object type of each new fifo")
    depths, obj_types = _per(depths, n, "depths"), _per(obj_types, n, "obj_types")
    names, repeat_counts = _per(names, n, "names"), _per(repeat_counts, n, "repeat_counts")
    to_stream = _per(to_stream, n, "dims to stream" if verb == "join" else "to_stream arrays")
    from_stream = _per(from_stream, n, "from_stream" if verb == "join" else "from_stream arrays")
    if pad_value is not None:
        _per(pad_value, n, "pad_value")
    default = handle.object_fifo.depth
    fifo = type(handle.object_fifo)
    return [fifo(t, depth=d if d is not None else default, name=nm, to_stream=ts,
                       from_stream_per_cons=fs, repeat_count=rc)
            for t, d, nm, ts, fs, rc in zip(obj_types, depths, names, to_stream, from_stream,
                                            repeat_counts)]
