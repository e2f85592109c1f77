"""`plang.operators`: declarative operators on top of `@pl.jit`.

An `Operator` subclass declares its compile-time parameters (`param`, `tunable`, `Select`),
its operands (`In`, `Out`, `InOut`) and its per-call values (`per_call`) in its class body,
read into a `Declaration`; `resolve(dev)` fills its tunables for a device. A `JitOperator`
builds a `@pl.jit` program and is called with torch tensors; `tune` searches its tunables
by timing real runs and caches the winner. `kernels` holds ready operators (row softmax,
RMSNorm, LayerNorm, GEMM, fused attention).
"""

from .declaration import Declaration
from .library import JitOperator
from .markers import CompileTime, DispatchTime
from .operands import In, InOut, Operand, Out
from .operator import Operator, Unresolvable
from .params import MISSING, OperatorParam, PerCallMember, Select, param, per_call, tunable, widths
from .per_call import Affine, PerCall
from .tuner import COUNTERS, TuneReport, tune, tune_report
from .tuning_cache import TUNING_CACHE, TuningCache, tuning_key

__all__ = ["COUNTERS", "MISSING", "TUNING_CACHE", "Affine", "CompileTime", "Declaration",
           "DispatchTime", "In", "InOut", "JitOperator", "Operand", "Operator", "OperatorParam",
           "Out", "PerCall", "PerCallMember", "Select", "TuneReport", "TuningCache", "Unresolvable",
           "param", "per_call", "tune", "tune_report", "tunable", "tuning_key", "widths"]
