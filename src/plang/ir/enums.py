"""Enumerations shared by the IR, the DSL surface and the backends (re-exported on `pl`)."""

from __future__ import annotations

from enum import Enum, IntEnum, auto


class FunctionType(Enum):
    """Execution context of a function."""

    Opaque = "Opaque"
    Orchestration = "Orchestration"
    InCore = "InCore"
    AIC = "AIC"
    AIV = "AIV"
    Group = "Group"
    Spmd = "Spmd"
    Inline = "Inline"
    Graph = "Graph"

    @property
    def is_core(self) -> bool:
        """True for kernels that run on a core (InCore / AIC / AIV)."""
        return self in (FunctionType.InCore, FunctionType.AIC, FunctionType.AIV)


class ForKind(Enum):
    Sequential = "Sequential"
    Parallel = "Parallel"
    Unroll = "Unroll"
    Pipeline = "Pipeline"


class Level(Enum):
    """Hierarchy level; aliases resolve to the same member."""

    AIV = 0
    AIC = 1
    CORE_GROUP = 2
    CHIP_DIE = 3
    CHIP = 4
    HOST = 5
    CLUSTER_0 = 6
    CLUSTER_1 = 7
    CLUSTER_2 = 8
    GLOBAL = 9
    L2CACHE = 3
    PROCESSOR = 4
    UMA = 4
    NODE = 5
    POD = 6
    CLOS1 = 7
    CLOS2 = 8


class Role(Enum):
    Orchestrator = "Orchestrator"
    SubWorker = "SubWorker"


class SplitMode(Enum):
    NONE = 0
    UP_DOWN = 1
    LEFT_RIGHT = 2


class MemorySpace(Enum):
    DDR = "DDR"
    Vec = "Vec"
    Mat = "Mat"
    Left = "Left"
    Right = "Right"
    Acc = "Acc"
    Bias = "Bias"
    LeftScale = "LeftScale"
    RightScale = "RightScale"
    ScalarLocal = "ScalarLocal"


class TensorLayout(Enum):
    ND = "ND"
    DN = "DN"
    NZ = "NZ"
    MX_A_ZZ = "MX_A_ZZ"
    MX_B_NN = "MX_B_NN"


class TileLayout(Enum):
    none_box = "none_box"
    row_major = "row_major"
    col_major = "col_major"


class PadValue(Enum):
    null = "null"
    zero = "zero"
    max = "max"
    min = "min"


class CompactMode(Enum):
    null = "null"
    normal = "normal"


class AtomicType(IntEnum):
    None_ = 0
    Add = 1


class CachePolicy(IntEnum):
    DEFAULT = 0
    BYPASS = 1


class AccPhase(IntEnum):
    Unspecified = 0
    Partial = 2
    Final = 3


class STPhase(IntEnum):
    Unspecified = 0
    Final = 3


class ScopeMode(Enum):
    AUTO = 0
    MANUAL = 1


class PipeType(IntEnum):
    MTE1 = 0
    MTE2 = 1
    MTE3 = 2
    M = 3
    V = 4
    S = 5
    FIX = 6
    ALL = 7


class KernelType(Enum):
    AIC = auto()
    AIV = auto()
    MIX = auto()


class SyncAllMode(Enum):
    HARD = "hard"
    SOFT = "soft"


class ParamDirection(Enum):
    """Direction of a function parameter (and, after DeriveCallDirections, a call argument)."""

    In = "In"
    Out = "Out"
    InOut = "InOut"
    NoDep = "NoDep"


class ArgDirection(Enum):
    """How one call site passes an argument (`pl.adir.*`, in a call's `attrs=`), as the
    reference's task submission names it; `ParamDirection` is the callee's contract."""

    Input = "input"
    Output = "output"
    OutputExisting = "output_existing"
    InOut = "inout"
    NoDep = "no_dep"
    Scalar = "scalar"


class NotifyOp(IntEnum):
    """`pld.system.notify`: add to or set the peer's signal slot."""

    AtomicAdd = 0
    Set = 1


class WaitCmp(IntEnum):
    """`pld.system.wait`: the comparison that releases the waiter."""

    Eq = 0
    Ge = 1


class ReduceOp(IntEnum):
    """The combining operation of a `pld` reduction collective."""

    Sum = 0
    Max = 1
    Min = 2
    Prod = 3


DISTRIBUTED_ENUMS: tuple[type[Enum], ...] = (NotifyOp, WaitCmp, ReduceOp)
"""Enums spelled on `pld` (`pld.NotifyOp.AtomicAdd`), not on `pl`."""


class ScopeKind(Enum):
    """Kind of a `Scope` statement."""

    InCore = "InCore"
    Cluster = "Cluster"
    Spmd = "Spmd"
    Hierarchy = "Hierarchy"
    Runtime = "Runtime"
    Graph = "Graph"
    Fused = "Fused"  # kernel fusion decided by FuseTileOps: `with pl.fused(rows=R)` / `pl.fused()`


ALL_ENUMS: tuple[type[Enum], ...] = (
    FunctionType, ForKind, Level, Role, SplitMode, MemorySpace, TensorLayout, TileLayout,
    PadValue, CompactMode, AtomicType, CachePolicy, AccPhase, STPhase, ScopeMode, PipeType,
    KernelType, SyncAllMode, ParamDirection, ScopeKind, ArgDirection,
)
