"""`plang.iron`: IRON designs (Workers, ObjectFifos, a Runtime sequence, C/C++ kernels) run
on plang's simulated chip. See docs/iron.md for the mapping of every name."""

from ..operators.markers import CompileTime, DispatchTime
from ..operators.operands import In, InOut, Out
from ..target import ensure_current_device, get_current_device, set_current_device
from .buffer import Buffer
from .controlflow import forever_, range_
from .device import AIETileType, AnyComputeTile, AnyMemTile, AnyShimTile, Device, Tile
from .dtype import dtype_to_str, str_to_dtype
from .incore import IncoreKernel
from .jit import CallableDesign, CompilableDesign, compileconfig, get_compile_arg, jit
from .kernel import ExternalFunction, Kernel, KernelCompileError
from .links import ObjectFifoLink, ObjectFifoLinkMode
from .objectfifo import ObjectFifo, ObjectFifoHandle, Port, Transport
from .program import Program, ResolvedDesign, TraceMode
from .runtime import IronRuntimeError, Runtime, RuntimeData, Task, TaskGroup, sync_parameters
from .scratchpad import ScratchpadParameter
from .state import COUNTERS
from .taps import TensorAccessPattern
from .tensors import arange, full, ones, rand, randint, tensor, zeros, zeros_like
from .unsupported import (
    Acquire,
    Bd,
    CascadeFlow,
    DeviceConfiguration,
    DmaChannel,
    DmaEndpoint,
    Flow,
    FlowEndpoint,
    Lock,
    Packet,
    PacketDest,
    PacketFlow,
    Release,
    TileDma,
    TileDmaTask,
)
from .worker import Worker, WorkerRuntimeBarrier

__all__ = [
    # design objects
    "Program", "ResolvedDesign", "Worker", "WorkerRuntimeBarrier", "ObjectFifo", "ObjectFifoHandle",
    "ObjectFifoLink", "ObjectFifoLinkMode", "Runtime", "RuntimeData", "Task", "TaskGroup",
    "IronRuntimeError", "sync_parameters", "ScratchpadParameter", "Buffer", "TensorAccessPattern",
    "Transport", "Port", "TraceMode", "range_", "forever_",
    # kernels
    "Kernel", "ExternalFunction", "IncoreKernel", "KernelCompileError",
    # jit and markers
    "jit", "CompilableDesign", "CallableDesign", "compileconfig", "get_compile_arg", "In", "Out",
    "InOut", "CompileTime", "DispatchTime", "COUNTERS",
    # device
    "Device", "Tile", "AIETileType", "AnyComputeTile", "AnyMemTile", "AnyShimTile",
    "get_current_device", "set_current_device", "ensure_current_device",
    # tensors and dtypes
    "tensor", "arange", "zeros", "ones", "full", "zeros_like", "rand", "randint", "str_to_dtype",
    "dtype_to_str",
    # hardware-only
    "Flow", "PacketFlow", "PacketDest", "FlowEndpoint", "CascadeFlow", "Packet", "TileDma",
    "DmaChannel", "DmaEndpoint", "TileDmaTask", "Bd", "Acquire", "Release", "Lock",
    "DeviceConfiguration",
]
