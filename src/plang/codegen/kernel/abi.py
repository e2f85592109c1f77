"""The kernel ABI: how the runtime (its only caller) passes arguments to a compiled kernel.

Every kernel, generated or external, exports one packed entry point
`void plang_entry_<name>(void **args)`. `args[i]` points to the i-th argument slot:

* **DDR tensor** parameter (any rank r >= 1): the slot holds a pointer to a strided memref
  descriptor `{void *allocated; void *aligned; int64 offset; int64 sizes[r]; int64 strides[r]}`
  (offset and strides in elements). `allocated`/`aligned` are the start of the tensor's
  storage and `offset` is its storage offset, so torch views and slices are passed zero-copy.
  Kernels are specialized for a unit innermost stride (vector loads); other strides raise.
  Dynamic dims of a tensor are read from `sizes` (no separate argument).
* **scalar** parameter: the slot holds the value itself (int64 for integers / INDEX, float
  for FP32, double for FP64, uint8 for BOOL).
* **launch context** (always last): the slot holds a `LaunchContext *`:
  `{int64 block_idx, block_num, subblock_idx, subblock_num; void *pipes; const PipeApi *pipe_api;
  volatile int64 *cancel; int64 status, check_site, check_axis, check_offset, check_extent,
  check_dim, own_cancel; void *barrier; int (*syncall)(...); void *(*scratch_acquire)(int64);
  void (*scratch_release)(void *)}`.

**Cancellation and checks.** `*cancel` is nonzero once the launch must stop (another member
of its Group failed, the watchdog fired, or the kernel itself failed); it points to
`own_cancel` unless the runtime shares one word among a Group's members. Generated kernels
read it at every loop back-edge and before every DDR store, and set it when a pipe call
returns nonzero. A failed bounds check (`checks.py`) stores `status` 1 and the failing
check's site (an index into the kernel's `check_sites`), axis, offset, extent and tensor
extent, sets `*cancel` and touches no memory for that transfer; `Kernel.launch` raises
`BoundsError` from that record. External kernels may poll `*cancel` the same way.

**Barriers.** `pl.system.syncall` calls `syncall(barrier, cancel, &status, site, kind,
workspace, used_cores)` (`plang.runtime.barriers`): `barrier` is the launch's barrier state
(NULL outside a launch with one), `site` indexes the kernel's `syncall_sites`, `kind` is the
core_type's index in `SYNC_CORE_TYPES` plus `SYNC_SOFT` and `SYNC_CALLER_AIC`, `workspace`
the soft form's INT32 counter (else NULL). A barrier that can not complete stores `status`
2 with the site, the reason (`check_axis`), the arrivals (`check_offset`) and the
participant count (`check_extent`), sets `*cancel`, and `Kernel.launch` raises
`SyncAllError` at the user's line.

**Scratch.** A buffer too large for a kernel's stack (a matmul's packed B panels) is taken
at entry with `scratch_acquire(bytes)` (64-byte aligned; NULL: none, and the kernel does
without) and given back at exit with `scratch_release`: the runtime's per-thread buffers
(`plang.runtime.scratch`), which every `LaunchContext` points at when it is made.

`PipeApi` holds the runtime's pipe functions (bounded ring buffers, see
`plang.runtime.pipes`); kernels call them through these pointers for `tpush_*` / `tpop_*` /
`tfree_*`:

    void *get(void *pipes, int64 pipe_id, int64 slot_bytes, int64 slots);  // slots 0: the Group's
                                                                           // `pl.cross_core_slot` depth
    int push(void *pipe, const void *src, int64 nbytes);   // blocks while the ring is full
    int pop(void *pipe, void *dst, int64 nbytes);          // blocks until a slot holds data
    int free(void *pipe);                                  // releases the oldest popped slot

Pipe ids: `pipe_id(id, direction, lane) = 4 * id + 2 * direction + lane`, direction
`TO_AIV` (0) or `TO_AIC` (1), lane = the AIV sub-block. A tile crosses as its row-major
buffer (rows × padded row pitch); with split 1 (up-down) each lane gets half the rows,
with split 2 (left-right) half the columns (3 / 4: the same over an odd extent, halves
rounded up and lane 1 one short); split 0 sends the whole tile to both lanes (and the cube
pops both lanes' copies, keeping lane 0's). The cross-core event `event_id`
(`system.sync_set` / `sync_wait`) is crossing `EVENT_CROSSING + event_id`, carrying 8-byte
tokens.

`ArgPacker` precomputes the ctypes structures of one signature; `pack` fills them from torch
tensors / ints / floats and returns the `void*[]` to hand to the entry point.
"""

from __future__ import annotations

import ctypes
import threading
from dataclasses import dataclass
from typing import Any, Sequence

from ... import ir as pir
from ...dtypes import BF16, BOOL, FP16, FP32, INT8, INT16, INT32, INT64, UINT8, UINT16, UINT32, DataType
from ...errors import Error
from ...ir.span import Span
from .native import KernelCompileError

TO_AIV = 0
TO_AIC = 1
EVENT_CROSSING = 1 << 20  # the crossing id of event 0 (the tiles' crossings count from 0)

_i64 = ctypes.c_int64
_vp = ctypes.c_void_p

def pipe_id(crossing: int, direction: int, lane: int) -> int:
    return 4 * crossing + 2 * direction + lane


class PipeApi(ctypes.Structure):
    """Addresses of the runtime's pipe functions (see module docstring)."""

    _fields_ = [("get", _vp), ("push", _vp), ("pop", _vp), ("free", _vp)]

    @classmethod
    def from_addresses(cls, addresses: dict) -> PipeApi:
        """From `plang.runtime.pipes.symbol_addresses()`."""
        return cls(addresses["plang_pipeset_get"], addresses["plang_pipe_push"],
                   addresses["plang_pipe_pop"], addresses["plang_pipe_free"])


class LaunchContext(ctypes.Structure):
    """Per-launch values a kernel reads (block / sub-block indices, the pipe handles, the
    cancel word) and the check-failure record it writes; `cancel` starts at `own_cancel`."""

    _fields_ = [("block_idx", _i64), ("block_num", _i64), ("subblock_idx", _i64),
                ("subblock_num", _i64), ("pipes", _vp), ("pipe_api", ctypes.POINTER(PipeApi)),
                ("cancel", _vp), ("status", _i64), ("check_site", _i64), ("check_axis", _i64),
                ("check_offset", _i64), ("check_extent", _i64), ("check_dim", _i64),
                ("own_cancel", _i64), ("barrier", _vp), ("syncall", _vp), ("scratch_acquire", _vp),
                ("scratch_release", _vp)]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.cancel = self.own_cancel_address
        self.scratch_acquire, self.scratch_release = _runtime_scratch()

    @property
    def own_cancel_address(self) -> int:
        return ctypes.addressof(self) + LaunchContext.own_cancel.offset


_SCRATCH: list[tuple[int, int]] = []


def _runtime_scratch() -> tuple[int, int]:
    """The runtime's scratch functions' addresses (`plang.runtime.scratch`), loaded once."""
    if not _SCRATCH:
        from ...runtime.scratch import addresses

        _SCRATCH.append(addresses())
    return _SCRATCH[0]


CONTEXT_FIELDS = tuple(name for name, _ in LaunchContext._fields_)
"""Field order of `LaunchContext`: codegen reads field i at byte offset 8 * i."""

PIPE_API_FIELDS = tuple(name for name, _ in PipeApi._fields_)

C_HEADER = """\
/* plang kernel ABI (see plang.codegen.kernel.abi). */
#include <stdint.h>
typedef struct { void *allocated; void *aligned; int64_t offset; int64_t sizes_strides[]; }
    plang_memref;  /* sizes[r] then strides[r] */
#define PLANG_SIZE(m, rank, i) ((m)->sizes_strides[(i)])
#define PLANG_STRIDE(m, rank, i) ((m)->sizes_strides[(rank) + (i)])
#define PLANG_DATA(type, m) (((type *)(m)->aligned) + (m)->offset)
typedef struct {
  void *(*get)(void *, int64_t, int64_t, int64_t);
  int (*push)(void *, const void *, int64_t);
  int (*pop)(void *, void *, int64_t);
  int (*free)(void *);
} plang_pipe_api;
typedef struct {
  int64_t block_idx, block_num, subblock_idx, subblock_num;
  void *pipes; const plang_pipe_api *pipe_api;
  volatile int64_t *cancel;  /* nonzero: stop before writing again */
  int64_t status, check_site, check_axis, check_offset, check_extent, check_dim, own_cancel;
  void *barrier;
  int (*syncall)(void *, volatile int64_t *, int64_t *, int64_t, int64_t, volatile int32_t *, int64_t);
  void *(*scratch_acquire)(int64_t);
  void (*scratch_release)(void *);
} plang_launch_context;
#define PLANG_CANCELLED(ctx) (*(ctx)->cancel != 0)
/* args[i]: tensor -> (plang_memref **), scalar -> (value *), last -> (plang_launch_context **) */
#define PLANG_TENSOR_ARG(args, i) (*(plang_memref **)(args)[i])
#define PLANG_SCALAR_ARG(type, args, i) (*(type *)(args)[i])
#define PLANG_CONTEXT_ARG(args, n) (*(plang_launch_context **)(args)[n])
"""


STATUS_BOUNDS = 1  # LaunchContext.status of a failed bounds check
STATUS_SYNCALL = 2  # ... of a barrier that can not complete
SYNC_CORE_TYPES = ("aiv_only", "aic_only", "mix")
SYNC_SOFT, SYNC_CALLER_AIC = 4, 8  # flags of a syncall's `kind`
_SYNC_FAILURES = {1: "timed out waiting (deadlock?) after RunConfig.pipe_timeout",
                  3: "has no barrier: the kernel was launched outside a runtime task",
                  4: "has no participants of its core_type on the calling core",
                  5: "got a negative used_cores"}


class BoundsError(Error, IndexError):
    """A kernel's load, store or element access would leave its tensor."""


class SyncAllError(Error, RuntimeError):
    """A `pl.system.syncall` barrier can not complete: a deadlock (timeout), or a launch
    whose cores can not all reach it."""


@dataclass(frozen=True)
class SyncSite:
    """One `pl.system.syncall` of a kernel: its mode ("hard" / "soft"), core_type, the core
    the kernel runs on ("AIC" / "AIV") and the user's span (as in `CheckSite`)."""

    mode: str
    core_type: str
    core: str
    span: tuple = ()

    def describe(self) -> str:
        return f"pl.system.syncall(mode={self.mode!r}, core_type={self.core_type!r})"

    def to_json(self) -> list:
        return [self.mode, self.core_type, self.core, list(self.span)]

    @classmethod
    def from_json(cls, item: list) -> SyncSite:
        *fields, span = item
        return cls(*fields, tuple(span))

    def fail(self, message: str) -> SyncAllError:
        return SyncAllError(f"{self.describe()}: {message}", Span(*self.span) if self.span else None)

    def error(self, kernel: str, ctx: LaunchContext) -> SyncAllError:
        why = _SYNC_FAILURES.get(ctx.check_axis, f"failed (code {ctx.check_axis})")
        timed_out = ctx.check_axis == 1
        count = f": {ctx.check_offset} of {ctx.check_extent} participants arrived" if timed_out else ""
        return self.fail(f"in kernel {kernel!r} {why}{count}")


@dataclass(frozen=True)
class CheckSite:
    """One checked transfer: the op, what it accesses (a "tensor" or "tile", its name and IR
    shape), and the user's span."""

    op: str
    kind: str
    name: str
    shape: str
    span: tuple = ()  # Span fields (filename, begin_line, begin_col, end_line, end_col)

    def to_json(self) -> list:
        return [self.op, self.kind, self.name, self.shape, list(self.span)]

    @classmethod
    def from_json(cls, item: list) -> CheckSite:
        *fields, span = item
        return cls(*fields, tuple(span))

    def error(self, kernel: str, ctx: LaunchContext) -> BoundsError:
        return bounds_error(f"kernel {kernel!r}: {self.op}", self.kind, self.name, self.shape,
                            ctx.check_axis, ctx.check_offset, ctx.check_extent, ctx.check_dim, self.span)


def bounds_error(what: str, kind: str, name: str | None, shape: str, axis: int, offset: int,
                 extent: int, dim: int, span: tuple = ()) -> BoundsError:
    """The error of a window [offset, offset + extent) that leaves axis `axis` (extent `dim`)
    of the `kind` ("tensor" / "tile") `name` (None: unnamed); `span` as in `CheckSite`."""
    why = (f"offset {offset} is negative" if offset < 0 else
           f"offset {offset} + extent {extent} = {offset + extent} exceeds the {kind}'s extent {dim}")
    what_of = f"{kind} {name!r}" if name else f"its {kind}"
    return BoundsError(f"{what} out of bounds of {what_of} (shape {shape}) on axis {axis}: {why}",
                       Span(*span) if span else None)


def check_window(what: str, shape: Sequence[int], offsets: Sequence[int], extents: Sequence[int],
                 clamp: bool = False, span: tuple = ()) -> None:
    """Raise `bounds_error` (of an unnamed tensor of `shape`) unless offsets >= 0 and (without
    `clamp`) offsets + extents <= shape, or (without `clamp`) the window is empty."""
    if not clamp and 0 in extents:
        return
    for axis, (off, ext, dim) in enumerate(zip(offsets, extents, shape)):
        if off < 0 or (not clamp and off + ext > dim):
            raise bounds_error(what, "tensor", None, str(list(shape)), axis, off, ext, dim, span)


def _same_bits(declared: DataType, got) -> bool:
    """A torch tensor whose elements are `declared`'s bits under another name (an INDEX as
    int64, a UINT32 as int32: see `DataType.accepts_storage`)."""
    try:
        return declared.accepts_storage(DataType.from_torch(got))
    except (KeyError, ValueError, TypeError):
        return False


_DESCRIPTORS: dict[int, type[ctypes.Structure]] = {}


def memref_descriptor(rank: int) -> type[ctypes.Structure]:
    """The ctypes struct of a rank-`rank` strided memref descriptor."""
    cls = _DESCRIPTORS.get(rank)
    if cls is None:
        fields = [("allocated", _vp), ("aligned", _vp), ("offset", _i64)]
        if rank:
            fields += [("sizes", _i64 * rank), ("strides", _i64 * rank)]
        cls = type(f"MemRefDescriptor{rank}", (ctypes.Structure,), {"_fields_": fields})
        _DESCRIPTORS[rank] = cls
    return cls


@dataclass(frozen=True)
class TensorArg:
    """A DDR tensor parameter."""

    name: str
    rank: int
    dtype: DataType


@dataclass(frozen=True)
class ScalarArg:
    """A scalar parameter."""

    name: str
    dtype: DataType


def scalar_ctype(dtype: DataType) -> type:
    """The C type a scalar of `dtype` is passed as."""
    if dtype.is_bool:
        return ctypes.c_uint8
    if dtype.is_float:
        if dtype.bits == 64:
            return ctypes.c_double
        if dtype.bits == 32:
            return ctypes.c_float
        raise TypeError(f"scalar kernel parameters of dtype {dtype.name} are not supported")
    return ctypes.c_int64


@dataclass(frozen=True)
class Signature:
    """The parameter list of a kernel, in order (the launch context is implicit, last)."""

    args: tuple[TensorArg | ScalarArg, ...]

    def describe(self) -> str:
        parts = [f"{a.name}: Tensor[rank {a.rank}, {a.dtype.name}]" if isinstance(a, TensorArg)
                 else f"{a.name}: Scalar[{a.dtype.name}]" for a in self.args]
        return "(" + ", ".join(parts + ["ctx: LaunchContext*"]) + ")"


class ArgPacker:
    """Reusable ctypes storage for one signature; use one per thread (`thread_packer`)."""

    def __init__(self, signature: Signature) -> None:
        self.signature = signature
        n = len(signature.args)
        self.array = (_vp * (n + 1))()
        self._slots: list[Any] = []
        self._fills = []
        for i, a in enumerate(signature.args):
            if isinstance(a, TensorArg):
                desc = memref_descriptor(a.rank)()
                ptr = ctypes.pointer(desc)
                self._slots.append((desc, ptr))
                self.array[i] = ctypes.addressof(ptr)
                self._fills.append(self._tensor_filler(a, desc))
            else:
                cell = scalar_ctype(a.dtype)()
                self._slots.append(cell)
                self.array[i] = ctypes.addressof(cell)
                self._fills.append(self._scalar_filler(a, cell))
        self._ctx_ptr = ctypes.c_void_p()
        self.array[n] = ctypes.addressof(self._ctx_ptr)
        self._block_cells: list[ctypes.c_void_p] = []  # the context pointers of `block_arrays`

    @staticmethod
    def _tensor_filler(a: TensorArg, desc: ctypes.Structure):
        rank, name = a.rank, a.name
        itemsize = a.dtype.itemsize
        expected = a.dtype.to_torch()

        def fill(t) -> None:
            if t.dim() != rank or (t.dtype != expected and not _same_bits(a.dtype, t.dtype)):
                raise TypeError(f"kernel argument {name!r} expects a rank-{rank} {expected} tensor, "
                                f"got {tuple(t.shape)} {t.dtype}")
            strides = t.stride()
            if strides[-1] != 1 and t.shape[-1] > 1:
                raise TypeError(f"kernel argument {name!r} must have innermost stride 1, got strides "
                                f"{strides} (pass .contiguous())")
            off = t.storage_offset()
            desc.allocated = desc.aligned = t.data_ptr() - off * itemsize
            desc.offset = off
            desc.sizes[:] = t.shape
            desc.strides[:] = strides
        return fill

    @staticmethod
    def _scalar_filler(a: ScalarArg, cell):
        name = a.name
        conv = float if a.dtype.is_float else int

        def fill(v) -> None:
            try:
                cell.value = conv(v)
            except (TypeError, ValueError):
                raise TypeError(f"kernel argument {name!r} expects a {a.dtype.name} scalar, "
                                f"got {v!r}") from None
        return fill

    def pack(self, values: Sequence[Any], ctx: LaunchContext) -> ctypes.Array:
        self.fill(values)
        self._ctx_ptr.value = ctypes.addressof(ctx)
        return self.array

    def fill(self, values: Sequence[Any]) -> None:
        """Store `values` in the argument slots (every array of `block_arrays` sees them)."""
        if len(values) != len(self._fills):
            raise TypeError(f"kernel expects {len(self._fills)} arguments {self.signature.describe()}, "
                            f"got {len(values)}")
        for fill, v in zip(self._fills, values):
            fill(v)

    def block_arrays(self, contexts: Sequence[LaunchContext]) -> list[ctypes.Array]:
        """One argument array per launch context, all sharing this packer's argument slots
        (the blocks of one SPMD launch take the same arguments: `fill` once for all)."""
        n = len(self._fills)
        arrays = []
        for ctx in contexts:
            array = (_vp * (n + 1))(*self.array[:n])
            cell = ctypes.c_void_p(ctypes.addressof(ctx))
            array[n] = ctypes.addressof(cell)
            arrays.append(array)
            self._block_cells.append(cell)  # kept alive with the packer
        return arrays


class ThreadPackers(threading.local):
    """One `ArgPacker` per thread, so concurrent launches of one kernel do not race."""

    def __init__(self) -> None:
        self.packer: ArgPacker | None = None
        self.context: LaunchContext | None = None
        self.default: LaunchContext | None = None  # the context of a launch given none


SUPPORTED_DTYPES = (FP32, FP16, BF16, INT8, INT16, INT32, INT64, UINT8, UINT16, UINT32, BOOL)
"""Tensor / tile dtypes the kernel backend handles."""


def kernel_signature(function: pir.Function) -> Signature:
    """The ABI signature of a core function (its parameters in order)."""
    args = []
    for p in function.params:
        t = p.type
        if isinstance(t, pir.TensorType):
            if t.rank == 0:
                raise KernelCompileError(f"function {function.name!r}: rank-0 tensor parameter "
                                         f"{p.name!r} is not supported")
            if t.dtype not in SUPPORTED_DTYPES:
                raise KernelCompileError(f"function {function.name!r}: parameter {p.name!r}: dtype "
                                         f"{t.dtype.name} is not supported by the kernel backend")
            args.append(TensorArg(p.name, t.rank, t.dtype))
        elif isinstance(t, pir.ScalarType):
            try:
                scalar_ctype(t.dtype)
            except TypeError as e:
                raise KernelCompileError(f"function {function.name!r}: parameter {p.name!r}: {e}") from None
            args.append(ScalarArg(p.name, t.dtype))
        else:
            raise KernelCompileError(f"function {function.name!r}: parameter {p.name!r} of type "
                                     f"{type(t).__name__} cannot be passed to a kernel")
    return Signature(tuple(args))


def single_block_context() -> LaunchContext:
    """A context for a one-block launch without pipes."""
    return LaunchContext(0, 1, 0, 1, None, None)
