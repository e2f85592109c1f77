"""plang: a multi-level kernel DSL (`import plang as pl`). This module is the `pl` face:
re-exports only."""

# ruff: noqa: F401

import sys as _sys

from . import ir
from .dtypes import (
                     BF16,
                     BOOL,
                     FP4,
                     FP8E4M3FN,
                     FP8E5M2,
                     FP8E8M0,
                     FP16,
                     FP32,
                     HF4,
                     HF8,
                     INDEX,
                     INT4,
                     INT8,
                     INT16,
                     INT32,
                     INT64,
                     TASK_ID,
                     UINT4,
                     UINT8,
                     UINT16,
                     UINT32,
                     UINT64,
                     DataType,
)
from .errors import (
                     EagerCallError,
                     Error,
                     InternalCompilerError,
                     InvalidPythonError,
                     ParserError,
                     ParserNameError,
                     ParserSyntaxError,
                     ParserTypeError,
                     SSAViolationError,
                     UnsupportedConstructError,
)
from .ir.enums import (
                     AccPhase,
                     ArgDirection,
                     AtomicType,
                     CachePolicy,
                     CompactMode,
                     ForKind,
                     FunctionType,
                     KernelType,
                     Level,
                     MemorySpace,
                     PadValue,
                     ParamDirection,
                     PipeType,
                     Role,
                     ScopeKind,
                     ScopeMode,
                     SplitMode,
                     STPhase,
                     SyncAllMode,
                     TensorLayout,
                     TileLayout,
)
from .language import *  # noqa: F403  (types, op wrappers, constructs, decorators)
from .language.facade import register_facade as _register_facade

Mem = MemorySpace
ND, DN, NZ = TensorLayout.ND, TensorLayout.DN, TensorLayout.NZ
MX_A_ZZ, MX_B_NN = TensorLayout.MX_A_ZZ, TensorLayout.MX_B_NN
AUTO = -1  # `pl.reserve_buffer(base=pl.AUTO)`: the compiler picks the address

from . import runtime as _runtime  # noqa: E402
from .distributed.host import DistributedWorker as _DistributedWorker  # noqa: E402
from .jit import RUNTIME, JITFunction, jit  # noqa: E402
from .jit import compile_program as compile  # noqa: E402
from .runtime.compiled import CompiledProgram as _CompiledProgram  # noqa: E402
from .version import __version__  # noqa: E402

ir.CompiledProgram = _CompiledProgram  # the reference's `pypto.ir.CompiledProgram` (ir cannot import runtime)
_runtime.DistributedWorker = _DistributedWorker  # the reference's `pypto.runtime.DistributedWorker`

_register_facade(_sys.modules[__name__])  # the namespace `pl.` source text is read in
