"""plang's typed, immutable IR: types, expressions, statements, functions, programs, ops."""

from .enums import (AccPhase, AtomicType, CachePolicy, CompactMode, ForKind, FunctionType,
                    KernelType, Level, MemorySpace, PadValue, ParamDirection, PipeType, Role,
                    ScopeKind, ScopeMode, SplitMode, STPhase, SyncAllMode, TensorLayout,
                    TileLayout)
from .expr import (BINARY_OPS, Add, And, BinaryExpr, Call, Cast, ConstBool, ConstFloat, ConstInt,
                   Div, Eq, Expr, FloorDiv, FloorMod, Ge, GlobalVar, Gt, IterArg, Le, Lt,
                   MakeTuple, Max, Min, Mul, Ne, Neg, Not, Or, Pow, Sub, TupleGetItem, UnaryExpr,
                   Var)
from .function import Function, Program
from .node import Node
from .span import NO_SPAN, Span
from .stmt import (Assign, Break, Continue, Eval, For, If, Return, Scope, SeqStmts, SplitAivScope,
                   Stmt, While, Yield, flatten, seq)
from .types import (ArrayType, PtrType, ScalarType, ShapedType, TensorType, TileType, TupleType,
                    Type, UnknownType)
from . import ops  # noqa: E402  (registers every op)
from .printer import python_print  # noqa: E402
from .equality import assert_structural_equal, structural_equal, structural_hash  # noqa: E402
from .visitor import IRMutator, IRVisitor, substitute  # noqa: E402
from .builder import IRBuilder  # noqa: E402
