"""`ObjectFifo` and `ObjectFifoHandle`: a bounded stream of objects between one producer and
one or more consumers.

On the CPU chip each (fifo, consumer) pair is one ring of the run's `PipeSet` with
``max(producer depth, consumer depth)`` slots. `acquire` hands out the slots themselves (torch
views, no copy) on both ends: a producer reserves the next free slot and `release` publishes
it; a consumer pops the oldest published slot and `release` frees it. With several consumers
(a broadcast) the producer writes into the first consumer's ring and `release` copies the
object into the others. Each handle's own depth bounds what it may hold (`acquire(n)`)."""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from . import state
from .device import Tile
from .dtype import nbytes, obj_type_of
from .hardware import hardware_only
from .links import distribute, forward, gather, take_turns
from .taps import TensorAccessPattern


def _check_tap(tap: Any, what: str) -> None:
    if tap is not None and not isinstance(tap, TensorAccessPattern):
        raise TypeError(f"{what} must be a TensorAccessPattern, got {type(tap).__name__}")


class Transport:
    """How a fifo's data moves (`dma()`, `shared_mem()`, `auto()`): a path choice the CPU chip
    accepts and ignores; a packet-switched `dma(packet=...)` is hardware-only."""

    def __init__(self, kind: str, packet: Any = None) -> None:
        if packet is not None:
            raise hardware_only("Transport.dma(packet=...)", "packet-switched routing")
        self.kind = kind

    @classmethod
    def dma(cls, packet: Any = None) -> Transport:
        return cls("dma", packet)

    @classmethod
    def shared_mem(cls) -> Transport:
        return cls("shared_mem")

    @classmethod
    def auto(cls) -> Transport:
        return cls("auto")

    def __repr__(self) -> str:
        return f"Transport.{self.kind}()"


class Port:
    """What drives a fifo end: `dma(channel)` or `stream(k)`; validated, no effect."""

    def __init__(self, kind: str, index: int) -> None:
        if isinstance(index, bool) or not isinstance(index, int) or index < 0:
            raise ValueError(f"Port.{kind}() takes a channel index >= 0, got {index!r}")
        self.kind, self.index = kind, index

    @classmethod
    def dma(cls, channel: int = 0) -> Port:
        return cls("dma", channel)

    @classmethod
    def stream(cls, index: int = 0) -> Port:
        return cls("stream", index)

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, Port) and (self.kind, self.index) == (other.kind, other.index)

    def __hash__(self) -> int:
        return hash((self.kind, self.index))

    def __repr__(self) -> str:
        return f"Port.{self.kind}({self.index})"


class ObjectFifo:
    """A synchronized dataflow channel: a circular buffer of `depth` objects of `obj_type`."""

    def __init__(self, obj_type: Any, *, depth: int | None = 2, name: str | None = None,
                 to_stream: TensorAccessPattern | None = None,
                 from_stream_per_cons: TensorAccessPattern | None = None, plio: bool = False,
                 pad_value: int = 0, disable_synchronization: bool = False,
                 repeat_count: int | None = None, delegate_tile: Tile | None = None,
                 transport: Transport | str | None = None,
                 init_values: list[np.ndarray] | None = None,
                 consumer_obj_type: Any = None) -> None:
        if plio:
            raise hardware_only("ObjectFifo(plio=True)", "a PLIO connection to programmable logic")
        if disable_synchronization:
            raise hardware_only("ObjectFifo(disable_synchronization=True)",
                                "unsynchronized buffer sharing, whose results depend on timing")
        if depth is not None and (isinstance(depth, bool) or not isinstance(depth, int) or depth < 1):
            raise ValueError(f"Default ObjectFifo depth must be > 0, but got {depth}")
        if repeat_count is not None and (isinstance(repeat_count, bool)
                                         or not isinstance(repeat_count, int) or repeat_count < 1):
            raise ValueError(f"ObjectFifo repeat_count must be an int >= 1, got {repeat_count!r}")
        if isinstance(transport, str):
            if transport not in ("dma", "shared_mem", "auto"):
                raise ValueError(f"ObjectFifo transport must be 'dma', 'shared_mem' or 'auto', "
                                 f"got {transport!r}")
        elif transport is not None and not isinstance(transport, Transport):
            raise TypeError(f"ObjectFifo transport must be a Transport or str, "
                            f"got {type(transport).__name__}")
        _check_tap(to_stream, "ObjectFifo to_stream")
        _check_tap(from_stream_per_cons, "ObjectFifo from_stream_per_cons")
        self.shape, self.dtype = obj_type_of(obj_type)
        self.obj_type = obj_type
        self.cons_shape, self._consumer_obj_type = self.shape, consumer_obj_type
        if consumer_obj_type is not None:
            self.cons_shape, cons_dtype = obj_type_of(consumer_obj_type)
            if cons_dtype != self.dtype:
                raise ValueError(f"ObjectFifo consumer_obj_type holds {cons_dtype}, obj_type {self.dtype}")
            if int(np.prod(self.shape)) % int(np.prod(self.cons_shape)):
                raise ValueError("Producer element count must be an integer multiple of consumer "
                                 "element count.")
        #: consumer objects per produced object (an asymmetric fifo sends each in pieces)
        self.ratio = int(np.prod(self.shape)) // int(np.prod(self.cons_shape))
        for tap, what in ((to_stream, "to_stream"), (from_stream_per_cons, "from_stream_per_cons")):
            if tap is not None and (tap.offset or tap.transfer_len != int(np.prod(self.shape))):
                raise ValueError(f"ObjectFifo {what} must walk one whole object of "
                                 f"{int(np.prod(self.shape))} elements from offset 0, got {tap}")
        self._depth, self._name = depth, name
        self.to_stream, self.from_stream_per_cons = to_stream, from_stream_per_cons
        self.pad_value, self.repeat_count = pad_value, repeat_count or 1
        self.delegate_tile, self.transport = delegate_tile, transport
        self.init_values = self._check_init(init_values)
        self.iter_count: int | None = None
        self._prod: ObjectFifoHandle | None = None
        self._cons: list[ObjectFifoHandle] = []

    def _check_init(self, values: list | None) -> list | None:
        if values is None:
            return None
        if self._depth is None or len(values) != self._depth:
            raise ValueError(f"ObjectFifo init_values needs one object per buffer ({self._depth}), "
                             f"got {len(values)}")
        out = []
        for v in values:
            a = np.asarray(v, dtype=self.dtype)
            if a.size != int(np.prod(self.shape)):
                raise ValueError(f"ObjectFifo init_values: each object has {int(np.prod(self.shape))} "
                                 f"elements, got one of {a.size}")
            out.append(a.reshape(self.shape))
        return out

    # -- identity ------------------------------------------------------------------------
    @property
    def name(self) -> str | None:
        return self._name

    @name.setter
    def name(self, value: str) -> None:
        self._name = value

    @property
    def depth(self) -> int | None:
        return self._depth

    @property
    def nbytes(self) -> int:
        """Bytes of one object."""
        return nbytes(self.shape, self.dtype)

    @property
    def cons_nbytes(self) -> int:
        """Bytes of one object at a consumer."""
        return nbytes(self.cons_shape, self.dtype)

    @property
    def consumer_obj_type(self) -> Any:
        """The object type at a consumer: obj_type unless the transfer is asymmetric."""
        return self.obj_type if self._consumer_obj_type is None else self._consumer_obj_type

    def __repr__(self) -> str:
        return f"ObjectFifo({self._name!r}, shape={self.shape}, dtype={self.dtype}, depth={self._depth})"

    # -- endpoints -----------------------------------------------------------------------
    def prod(self, depth: int | None = None, port: Port | None = None,
             tile: Tile | None = None) -> ObjectFifoHandle:
        """The producer handle (one per fifo: a second call returns the same handle)."""
        if self._prod is None:
            self._prod = ObjectFifoHandle(self, True, depth, port=port, tile=tile)
            return self._prod
        if depth is not None and depth != self._prod.depth:
            raise ValueError(f"Producer handle for {self._name} has depth {self._prod.depth}, "
                             f"cannot change it to {depth}.")
        if port is not None and self._prod.port is not None and port != self._prod.port:
            raise ValueError(f"Producer handle for {self._name} already pinned to "
                             f"{self._prod.port}, cannot re-pin to {port}.")
        if tile is not None and self._prod.tile is not None and tile != self._prod.tile:
            raise ValueError(f"Producer handle for {self._name} already pinned to "
                             f"{self._prod.tile}, cannot re-pin to {tile}.")
        self._prod.port = port or self._prod.port
        self._prod.tile = tile or self._prod.tile
        return self._prod

    def cons(self, depth: int | None = None, from_stream: TensorAccessPattern | None = None,
             port: Port | None = None, tile: Tile | None = None) -> ObjectFifoHandle:
        """A new consumer handle (several consumers: a broadcast)."""
        handle = ObjectFifoHandle(self, False, depth, from_stream=from_stream, port=port, tile=tile)
        self._cons.append(handle)
        return handle

    @property
    def producer(self) -> ObjectFifoHandle | None:
        return self._prod

    @property
    def consumers(self) -> tuple[ObjectFifoHandle, ...]:
        return tuple(self._cons)

    def all_of_endpoints(self) -> list[Any]:
        """The endpoints (Workers, the Runtime, links) of every handle that has one."""
        handles = ([self._prod] if self._prod else []) + self._cons
        return [h.endpoint for h in handles if h.endpoint is not None]

    def tiles(self, cons_only: bool = False) -> list[Tile]:
        if not cons_only and self._prod is None:
            raise ValueError("Cannot return prod.tile.op because prod was not created.")
        if not self._cons:
            raise ValueError("Cannot return cons tiles because cons were not created.")
        handles = self._cons if cons_only else [self._prod, *self._cons]
        return [h.placed_tile for h in handles]

    def set_iter_count(self, iter_count: int) -> None:
        """Passes each end makes before it stops; in [1, 256]."""
        if isinstance(iter_count, bool) or not isinstance(iter_count, int) or not 1 <= iter_count <= 256:
            raise ValueError("Iter count must be in [1, 256] range.")
        self.iter_count = iter_count


class ObjectFifoHandle:
    """A producer or consumer end of an `ObjectFifo`."""

    def __init__(self, of: ObjectFifo, is_prod: bool, depth: int | None = None,
                 from_stream: TensorAccessPattern | None = None, port: Port | None = None,
                 tile: Tile | None = None) -> None:
        if depth is None:
            if of.depth is None:
                raise ValueError("Must specify either ObjectFifoHandle depth or ObjectFifo default "
                                 "depth; both are None.")
            depth = of.depth
        if isinstance(depth, bool) or not isinstance(depth, int) or depth < 1:
            raise ValueError(f"Depth must be > 0 but is {depth}")
        if from_stream is not None and is_prod:
            raise ValueError("Can only specify from_stream for cons handles")
        _check_tap(from_stream, "ObjectFifoHandle from_stream")
        if port is not None and not isinstance(port, Port):
            raise TypeError(f"port must be a Port, got {type(port).__name__}")
        if tile is not None and tile.placed and tile.row != 0:
            raise ValueError(f"An ObjectFifoHandle tile pins a runtime-driven end to a shim tile "
                             f"(row 0), got {tile}")
        self._object_fifo, self._is_prod, self._depth = of, is_prod, depth
        self.from_stream = from_stream if from_stream is not None else (
            None if is_prod else of.from_stream_per_cons)
        self.port, self.tile = port, tile
        self.endpoint: Any = None  # the Worker, Runtime or link this end belongs to
        self.placed_tile: Tile | None = None  # set by placement

    @property
    def object_fifo(self) -> ObjectFifo:
        return self._object_fifo

    @property
    def name(self) -> str | None:
        return self._object_fifo.name

    @property
    def handle_type(self) -> str:
        return "prod" if self._is_prod else "cons"

    @property
    def is_prod(self) -> bool:
        return self._is_prod

    @property
    def depth(self) -> int:
        return self._depth

    @property
    def obj_type(self) -> Any:
        of = self._object_fifo
        return of.obj_type if self._is_prod else of.consumer_obj_type

    @property
    def shape(self) -> tuple[int, ...]:
        of = self._object_fifo
        return of.shape if self._is_prod else of.cons_shape

    @property
    def nbytes(self) -> int:
        """Bytes of one object at this end."""
        of = self._object_fifo
        return of.nbytes if self._is_prod else of.cons_nbytes

    @property
    def dtype(self) -> np.dtype:
        return self._object_fifo.dtype

    def __repr__(self) -> str:
        return f"ObjectFifoHandle({self.name!r}, {self.handle_type}, depth={self._depth})"

    # -- core-side synchronization -------------------------------------------------------
    def acquire(self, num_elem: int) -> Any:
        """Hold `num_elem` objects (taking only those missing if some are held): one object
        (a torch view of its slot) when ``num_elem == 1``, else a list of them."""
        if self._depth < num_elem:
            raise ValueError(f"Number of elements to acquire {num_elem} must be smaller than depth "
                             f"{self._depth}")
        if isinstance(num_elem, bool) or not isinstance(num_elem, int) or num_elem < 1:
            raise ValueError(f"Number of elements to acquire must be an int >= 1, got {num_elem!r}")
        return state.port(self, "ObjectFifoHandle.acquire()").acquire(num_elem)

    def release(self, num_elem: int) -> None:
        """Give the `num_elem` oldest held objects to the other end."""
        if self._depth < num_elem:
            raise ValueError(f"Number of elements to release {num_elem} must be smaller than depth "
                             f"{self._depth}")
        if isinstance(num_elem, bool) or not isinstance(num_elem, int) or num_elem < 1:
            raise ValueError(f"Number of elements to release must be an int >= 1, got {num_elem!r}")
        state.port(self, "ObjectFifoHandle.release()").release(num_elem)

    # -- runtime-side transfers ----------------------------------------------------------
    def fill(self, source: Any, tap: TensorAccessPattern | None = None, wait: bool = False,
             packet: Any = None, offset_parameter: Any = None, group: Any = None,
             managed: bool = True, length_parameter: Any = None, length_unit: int | None = None,
             repeat_parameter: Any = None) -> Any:
        """Fill this producer fifo from a runtime buffer (in a Runtime sequence body)."""
        if not self._is_prod:
            raise ValueError("fill() is only valid on a producer ObjectFifoHandle")
        return self._transfer("fill", source, tap, wait, packet, group, managed,
                              (offset_parameter, length_parameter, repeat_parameter), length_unit)

    def drain(self, dest: Any, tap: TensorAccessPattern | None = None, wait: bool = False,
              packet: Any = None, offset_parameter: Any = None, group: Any = None,
              managed: bool = True, length_parameter: Any = None, length_unit: int | None = None,
              repeat_parameter: Any = None) -> Any:
        """Drain this consumer fifo into a runtime buffer (in a Runtime sequence body)."""
        if self._is_prod:
            raise ValueError("drain() is only valid on a consumer ObjectFifoHandle")
        return self._transfer("drain", dest, tap, wait, packet, group, managed,
                              (offset_parameter, length_parameter, repeat_parameter), length_unit)

    def _transfer(self, kind: str, data: Any, tap: Any, wait: bool, packet: Any, group: Any,
                  managed: bool, parameters: tuple, length_unit: Any) -> Any:
        if packet is not None:
            raise hardware_only(f"{kind}(packet=...)", "a packet header on a shim DMA descriptor")
        _check_tap(tap, f"{kind}() tap")
        sequence = state.current_run(f"ObjectFifoHandle.{kind}()").sequence
        return sequence.transfer(kind, self, data, tap, wait, group, managed, parameters, length_unit)

    # -- links (a mem-tile member of the run moves the objects) --------------------------
    def forward(self, tile: Tile | None = None, obj_type: Any = None, depth: int | None = None,
                name: str | None = None, to_stream: TensorAccessPattern | None = None,
                from_stream: TensorAccessPattern | None = None, plio: bool = False,
                repeat_count: int | None = None, pad_value: int = 0,
                port: Port | None = None) -> ObjectFifo:
        """A new fifo carrying this consumer's objects on, through a mem tile."""
        return forward(self, tile, obj_type, depth, name, to_stream, from_stream, plio,
                       repeat_count, port)

    def split(self, offsets: Sequence[int], tile: Tile | None = None, depths: Any = None,
              obj_types: Any = None, names: Any = None, to_stream: Any = None,
              from_stream: Any = None, plio: bool = False, repeat_counts: Any = None,
              pad_value: Any = None, ports: Any = None) -> list[ObjectFifo]:
        """New fifos, one per offset, each taking its piece of every object of this consumer."""
        return distribute(self, offsets, tile, depths, obj_types, names, to_stream, from_stream,
                          plio, repeat_counts, pad_value, ports)

    def merge(self, num_inputs: int, tile: Tile | None = None, depths: Any = None,
              names: Any = None, transports: Any = None) -> list[ObjectFifo]:
        """New fifos whose whole objects take turns feeding this producer, in arrival order."""
        return take_turns(self, "merge", num_inputs, tile, depths, names, transports)

    def dispatch(self, num_outputs: int, tile: Tile | None = None, depths: Any = None,
                 names: Any = None, transports: Any = None) -> list[ObjectFifo]:
        """New fifos taking turns receiving this consumer's objects (object k to output k mod n)."""
        return take_turns(self, "dispatch", num_outputs, tile, depths, names, transports)

    def join(self, offsets: Sequence[int], tile: Tile | None = None, depths: Any = None,
             obj_types: Any = None, names: Any = None, to_stream: Any = None,
             from_stream: Any = None, plio: bool = False,
             repeat_counts: Any = None) -> list[ObjectFifo]:
        """New fifos, one per offset, whose objects together make each object of this producer."""
        return gather(self, offsets, tile, depths, obj_types, names, to_stream, from_stream,
                      plio, repeat_counts)
