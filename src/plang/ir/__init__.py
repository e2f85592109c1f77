"""plang's typed, immutable IR: types, expressions, statements, functions, programs, ops."""

from . import ops  # noqa: E402  (registers every op)
from .builder import IRBuilder  # noqa: E402
from .enums import (
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
from .equality import assert_structural_equal, structural_equal, structural_hash  # noqa: E402
from .expr import (
                    BINARY_OPS,
                    Add,
                    And,
                    BinaryExpr,
                    Call,
                    Cast,
                    ConstBool,
                    ConstFloat,
                    ConstInt,
                    Div,
                    Eq,
                    Expr,
                    FloorDiv,
                    FloorMod,
                    Ge,
                    GlobalVar,
                    Gt,
                    IterArg,
                    Le,
                    Lt,
                    MakeTuple,
                    Max,
                    Min,
                    Mul,
                    Ne,
                    Neg,
                    Not,
                    Or,
                    Pow,
                    Sub,
                    TupleGetItem,
                    UnaryExpr,
                    Var,
)
from .function import Function, Program
from .node import Node
from .pipeline import OptimizationStrategy, PassDumpLevel, compile  # noqa: A004  (the reference's ir.compile)
from .printer import python_print  # noqa: E402  (importing it registers the printer behind repr)
from .serialize import deserialize, serialize  # noqa: E402
from .span import NO_SPAN, Span
from .stmt import (
                    Assign,
                    Break,
                    Continue,
                    Eval,
                    For,
                    If,
                    InlineStmt,
                    Return,
                    Scope,
                    SeqStmts,
                    SplitAivScope,
                    Stmt,
                    While,
                    Yield,
                    flatten,
                    seq,
)
from .types import (
                    ArrayType,
                    AsyncHandleType,
                    CommCtxType,
                    DistributedTensorType,
                    MemRef,
                    PtrType,
                    ScalarType,
                    ShapedType,
                    TensorType,
                    TensorView,
                    TileType,
                    TileView,
                    TupleType,
                    Type,
                    UnknownType,
)
from .visitor import IRMutator, IRVisitor, substitute  # noqa: E402
