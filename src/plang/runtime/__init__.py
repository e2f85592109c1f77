"""The simulated chip: run configuration, task graph, pipes, workers and profiling."""

from ..codegen.kernel.abi import BoundsError, SyncAllError
from .bench import BenchmarkStats, benchmark
from .cancel import KernelCancelled
from .compiled import CompiledProgram, ParamSpec
from .config import RunConfig
from .device_tensor import DeviceTensor
from .graph import GraphRecording, GraphReplayError
from .orchestrator import Orchestrator
from .pipes import PipeError, PipeSet
from .pto_isa import ensure_pto_isa_root
from .runner import RunResult, ScalarSpec, TensorSpec, run
from .scheduler import GroupMember, Scheduler, Task, TaskError, TaskGroupError
from .worker import ChipWorker, ProgramHandle, Worker

__all__ = ["BenchmarkStats", "BoundsError", "ChipWorker", "CompiledProgram", "DeviceTensor", "GraphRecording",
           "GraphReplayError", "GroupMember", "KernelCancelled", "Orchestrator", "ParamSpec", "PipeError",
           "PipeSet", "ProgramHandle", "RunConfig", "RunResult", "ScalarSpec", "Scheduler", "SyncAllError",
           "Task", "TaskError", "TaskGroupError", "TensorSpec", "Worker", "benchmark", "ensure_pto_isa_root",
           "run"]
