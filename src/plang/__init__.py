"""plang: a multi-level kernel DSL (`import plang as pl`). This module is the `pl` face:
re-exports only."""

# ruff: noqa: F401

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
                     ParserError,
                     ParserNameError,
                     ParserSyntaxError,
                     ParserTypeError,
                     SSAViolationError,
                     UnsupportedConstructError,
)
from .ir.enums import (
                     AccPhase,
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

Mem = MemorySpace
ND, DN, NZ = TensorLayout.ND, TensorLayout.DN, TensorLayout.NZ
MX_A_ZZ, MX_B_NN = TensorLayout.MX_A_ZZ, TensorLayout.MX_B_NN

from .jit import RUNTIME, JITFunction, jit  # noqa: E402
from .jit import compile_program as compile  # noqa: E402

__version__ = "0.1.0"
