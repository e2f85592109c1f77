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
                     InternalError,
                     InvalidOperationError,
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
from .pypto_core.logging import *  # noqa: F403  (the reference's logging and checks)

Mem = MemorySpace
ND, DN, NZ = TensorLayout.ND, TensorLayout.DN, TensorLayout.NZ
MX_A_ZZ, MX_B_NN = TensorLayout.MX_A_ZZ, TensorLayout.MX_B_NN
AUTO = -1  # `pl.reserve_buffer(base=pl.AUTO)`: the compiler picks the address
# the reference's top-level dtype constants (`pypto.DT_FP32` ...)
DT_BOOL, DT_INT4, DT_INT8, DT_INT16, DT_INT32, DT_INT64 = BOOL, INT4, INT8, INT16, INT32, INT64
DT_UINT4, DT_UINT8, DT_UINT16, DT_UINT32, DT_UINT64 = UINT4, UINT8, UINT16, UINT32, UINT64
DT_FP4, DT_FP8E4M3FN, DT_FP8E5M2, DT_FP8E8M0 = FP4, FP8E4M3FN, FP8E5M2, FP8E8M0
DT_FP16, DT_FP32, DT_BF16, DT_HF4, DT_HF8, DT_INDEX = FP16, FP32, BF16, HF4, HF8, INDEX

from . import runtime as _runtime  # noqa: E402
from .distributed.host import DistributedWorker as _DistributedWorker  # noqa: E402
from .jit import RUNTIME, JITFunction, jit  # noqa: E402
from .jit import compile_program as compile  # noqa: E402
from .runtime.compiled import CompiledProgram as _CompiledProgram  # noqa: E402
from .version import __version__  # noqa: E402

ir.CompiledProgram = _CompiledProgram  # the reference's `pypto.ir.CompiledProgram` (ir cannot import runtime)
_runtime.DistributedWorker = _DistributedWorker  # the reference's `pypto.runtime.DistributedWorker`

_register_facade(_sys.modules[__name__])  # the namespace `pl.` source text is read in
