"""`Program`: a design (device, Runtime, Workers) and `resolve_program()`, which places it
on the tile grid, checks it and returns the runnable `ResolvedDesign`."""

from __future__ import annotations

from enum import Enum
from typing import Any

from ..errors import UnsupportedConstructError
from .device import AIETileType, Device
from .hardware import hardware_only
from .kernel import _Bound
from .links import ObjectFifoLink
from .objectfifo import ObjectFifo, ObjectFifoHandle
from .runtime import Runtime
from .scratchpad import ScratchpadParameter, parameter_values
from .worker import Worker


class TraceMode(Enum):
    """How core tiles trace on the NPU; the CPU chip's trace is always wall-clock slices."""

    EventTime = "EventTime"
    EventPC = "EventPC"
    Execution = "Execution"


class Program:
    """One compilation unit: a device, the entry `Runtime` and the `Worker`\\ s."""

    def __init__(self, device: Any, rt: Runtime, workers: list | None = None, *,
                 expand_load_pdis: bool | None = None, reconfig_teardown: bool | None = None,
                 reconfig_init_entry: bool | None = None) -> None:
        if device is None:
            raise ValueError("Program requires a device, but none was selected. Pass an explicit "
                             "Device, or ensure an NPU runtime is available for "
                             "plang.iron.get_current_device().")
        if not isinstance(rt, Runtime):
            raise TypeError(f"Program rt must be a Runtime, got {type(rt).__name__}")
        workers = list(workers or [])
        for w in workers:
            if not isinstance(w, Worker):
                raise TypeError(f"Program workers must be Workers, got {type(w).__name__}")
        self.device, self.rt, self.workers = Device.of(device), rt, workers
        self.options = {"expand_load_pdis": expand_load_pdis, "reconfig_teardown": reconfig_teardown,
                        "reconfig_init_entry": reconfig_init_entry}
        self.trace: dict | None = None

    def enable_trace(self, trace_size: int | None = None, workers: list | None = None,
                     reuse_output_buffer: bool = False, coretile_events: list | None = None,
                     coremem_events: list | None = None, memtile_events: list | None = None,
                     shimtile_events: list | None = None, egress_shim_col: int = 0,
                     core_trace_mode: TraceMode = TraceMode.EventTime) -> None:
        """Record a Perfetto trace of every run: a lane per traced Worker (slices per core
        function iteration, kernel call and acquire wait), per DMA transfer and the sequence.
        `workers` picks the Workers (default: those with ``trace`` set, else every one)."""
        for name, events in (("coretile_events", coretile_events), ("coremem_events", coremem_events),
                             ("memtile_events", memtile_events), ("shimtile_events", shimtile_events)):
            if events is not None:
                raise hardware_only(f"enable_trace({name}=...)", "a list of AIE hardware trace event ids")
        if trace_size is not None and (isinstance(trace_size, bool) or not isinstance(trace_size, int)
                                       or trace_size <= 0):
            raise ValueError(f"trace_size must be a positive int, got {trace_size!r}")
        if not isinstance(core_trace_mode, TraceMode):
            raise TypeError(f"core_trace_mode must be a TraceMode, got {core_trace_mode!r}")
        for w in workers or []:
            if w not in self.workers:
                raise ValueError(f"enable_trace(): {w} is not a Worker of this Program")
        self.trace = {"workers": workers, "size": trace_size}

    def resolve_program(self, device_name: str = "main", context: Any = None) -> ResolvedDesign:
        """Place and check the design; returns the runnable `ResolvedDesign`."""
        if context is not None:
            raise UnsupportedConstructError(
                "resolve_program(context=...) builds an MLIR module; the CPU chip runs the design "
                "without one", hint="call resolve_program() and run the result")
        return ResolvedDesign(self, device_name)


class ResolvedDesign:
    """A placed, checked design: fifos, rings, Workers and links, callable with the Runtime's
    tensors (``design(*tensors, config=RunConfig(...))``)."""

    def __init__(self, program: Program, name: str) -> None:
        self.program, self.name = program, name
        self.device, self.runtime = program.device, program.rt
        self.workers = list(program.workers)
        self.fifos, self.links = self._collect()
        self._name_everything()
        self._check_endpoints()
        self._place()
        self.rings = self._rings()
        self.traced_lanes = self._traced()
        self.kernels = [a for w in self.workers for a in w.flat_fn_args if isinstance(a, _Bound)]
        for k in self.kernels:
            k.build()
        found = [p for w in self.workers for p in w.parameters] + [
            a for a in self.runtime.fn_args if isinstance(a, ScratchpadParameter)]
        self.parameters = list({id(p): p for p in found}.values())
        self._compiled: Any = None
        self.last_trace: str | None = None

    # -- discovery -----------------------------------------------------------------------
    def _collect(self) -> tuple[list[ObjectFifo], list[ObjectFifoLink]]:
        fifos: list[ObjectFifo] = []
        links: list[ObjectFifoLink] = []
        todo = [h.object_fifo for w in self.workers for h in w.fifos] + [
            h.object_fifo for h in self.runtime.fifos]
        while todo:
            of = todo.pop(0)
            if any(of is f for f in fifos):
                continue
            fifos.append(of)
            for h in ([of.producer] if of.producer else []) + list(of.consumers):
                if isinstance(h.endpoint, ObjectFifoLink) and not any(h.endpoint is k for k in links):
                    links.append(h.endpoint)
                    todo += [x.object_fifo for x in h.endpoint.handles]
        return fifos, links

    def _name_everything(self) -> None:
        created = {id(f) for k in self.links for f in k.created}
        taken = {f.name for f in self.fifos if f.name}
        counter = 0
        for f in self.fifos:
            if f.name is None and id(f) not in created:
                while f"of{counter}" in taken:
                    counter += 1
                f.name = f"of{counter}"
                taken.add(f.name)
        for _ in self.links:  # a link's fifos are named after its source, itself maybe a link's
            for link in self.links:
                base = link.wide.name
                for f, suffix in zip(link.created, link.suffixes):
                    if f.name is None and base is not None:
                        f.name = f"{base}{suffix}"
        names = [f.name for f in self.fifos]
        dup = sorted({n for n in names if names.count(n) > 1})
        if dup:
            raise ValueError(f"ObjectFifo names must be unique in a Program, got {dup} twice")
        labels: dict[str, int] = {}
        for w in self.workers:
            base = getattr(w.core_fn, "__name__", "idle")
            n = labels.get(base, 0)
            labels[base] = n + 1
            w.label = base if n == 0 else f"{base}_{n}"
        for i, link in enumerate(self.links):
            link.name = f"link{i}:{link.wide.name}"

    def _check_endpoints(self) -> None:
        for f in self.fifos:
            if f.producer is None or f.producer.endpoint is None:
                raise ValueError(f"ObjectFifo '{f.name}' has no producer: give its prod() handle to a "
                                 "Worker or the Runtime (Cannot return prod.tile.op because prod was "
                                 "not created.)")
            if not f.consumers:
                raise ValueError(f"ObjectFifo '{f.name}' has no consumer: give a cons() handle to a "
                                 "Worker or the Runtime (Cannot return cons tiles because cons were "
                                 "not created.)")
            for i, h in enumerate(f.consumers):
                if h.endpoint is None:
                    raise ValueError(f"ObjectFifo '{f.name}': consumer handle {i} is given to no Worker, "
                                     "Runtime or link, so the producer would wait on it forever")
            for h in [f.producer, *f.consumers]:
                if isinstance(h.endpoint, Worker) and all(h.endpoint is not w for w in self.workers):
                    raise ValueError(f"ObjectFifo '{f.name}' is used by {h.endpoint}, which is not in "
                                     "Program(workers=...)")

    # -- placement and budgets -----------------------------------------------------------
    def _place(self) -> None:
        dev = self.device
        used: dict[tuple[int, int], Worker] = {}
        for w in self.workers:
            t = w.placed
            if t is None:
                continue
            if dev.get_tile_type(t.col, t.row) is not AIETileType.CoreTile:
                raise ValueError(f"Worker requires a compute tile, but got tile_type="
                                 f"{dev.get_tile_type(t.col, t.row)}")
            if (t.col, t.row) in used:
                raise ValueError(f"{w} and {used[(t.col, t.row)]} are both placed on tile {t}")
            used[(t.col, t.row)] = w
        free = [t for t in dev.tiles(AIETileType.CoreTile) if (t.col, t.row) not in used]
        for w in self.workers:
            if w.placed is None:
                if not free:
                    raise ValueError(f"no free compute tile for {w}: device {dev.name} has "
                                     f"{len(dev.tiles(AIETileType.CoreTile))}")
                w.placed = free.pop(0)
        for w in self.workers:
            need, have = w.memory_bytes(dev.default_core_stack_bytes), dev.core_memory_bytes
            if need > have:
                raise ValueError(f"{w} needs {need} bytes of tile memory (fifo buffers, Buffers, stack "
                                 f"and data) but a compute tile of {dev.name} has {have}")
            for h in w.fifos:
                h.placed_tile = w.tile
        mem_tiles = dev.tiles(AIETileType.MemTile)
        load: dict[int, int] = {}
        for i, link in enumerate(self.links):
            tile = link.tile if link.tile.placed else mem_tiles[i % len(mem_tiles)]
            load[tile.col] = load.get(tile.col, 0) + link.buffer_bytes()
            if load[tile.col] > dev.mem_tile_memory_bytes:
                raise ValueError(f"{link} needs {load[tile.col]} bytes on mem tile {tile} but a mem tile "
                                 f"of {dev.name} has {dev.mem_tile_memory_bytes}")
            for h in link.handles:
                h.placed_tile = tile
        shim = dev.tiles(AIETileType.ShimNOCTile)[0]
        for h in self.runtime.fifos:
            h.placed_tile = h.tile or shim

    def _rings(self) -> list[tuple[ObjectFifo, ObjectFifoHandle, int]]:
        """(fifo, consumer handle, slots) per ring, in consumer objects; the pipe id is the index."""
        return [(f, c, max(f.producer.depth * f.ratio, c.depth)) for f in self.fifos for c in f.consumers]

    def _traced(self) -> frozenset[str]:
        if self.program.trace is None:
            return frozenset()
        chosen = self.program.trace["workers"]
        if chosen is None:
            chosen = [w for w in self.workers if w.trace] or self.workers
        return frozenset([w.label for w in chosen] + ["shim"] + [f"dma {h.name}" for h in self.runtime.fifos]
                         + [k.name for k in self.links])

    # -- naming ------------------------------------------------------------------------
    def endpoint_name(self, h: ObjectFifoHandle) -> str:
        e = h.endpoint
        if isinstance(e, Worker):
            return f"Worker '{e.label}'"
        if isinstance(e, ObjectFifoLink):
            return f"link '{e.name}'"
        return "Runtime " + ("fill" if h.is_prod else "drain")

    def lane_of(self, h: ObjectFifoHandle) -> str:
        """The trace lane of the thread that uses `h`."""
        e = h.endpoint
        if isinstance(e, Worker):
            return e.label
        return e.name if isinstance(e, ObjectFifoLink) else f"dma {h.name}"

    def pipe_name(self, pipe_id: int) -> str:
        if not 0 <= pipe_id < len(self.rings):
            return f"pipe {pipe_id}"
        f, c, _ = self.rings[pipe_id]
        return f"ObjectFifo '{f.name}' ({self.endpoint_name(f.producer)} -> {self.endpoint_name(c)})"

    def __str__(self) -> str:
        lines = [f"design {self.name} on {self.device.name}"]
        lines += [f"  worker {w.label} at {w.tile}" for w in self.workers]
        lines += [f"  fifo {f.name}: {f.shape} {f.dtype}, depth {f.depth}, "
                  f"{self.endpoint_name(f.producer)} -> "
                  + ", ".join(self.endpoint_name(c) for c in f.consumers) for f in self.fifos]
        lines += [f"  {k.name}" for k in self.links]
        return "\n".join(lines)

    # -- running -------------------------------------------------------------------------
    def compiled(self) -> Any:
        """The design as a plang `CompiledProgram` (one Group task per call)."""
        if self._compiled is None:
            from .execute import package

            self._compiled = package(self)
        return self._compiled

    def __call__(self, *inputs: Any, config: Any = None, dispatch: dict | None = None,
                 parameters: dict | None = None) -> None:
        """Run one call; `parameters` gives the ScratchpadParameters' values."""
        from .execute import run_design

        values = parameter_values(self.parameters, parameters, f"design {self.name}")
        run_design(self, inputs, config, dispatch or {}, values)
