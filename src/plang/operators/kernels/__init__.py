"""Ready operators, each a `JitOperator` with tunables and a torch reference: `RowSoftmax`,
`RMSNorm`, `LayerNorm`, `GEMM` (fp32 / bf16 / fp16 inputs, a `Select` for a column-major b)
and `Attention` (a fused attention block)."""

from .attention import Attention
from .gemm import GEMM
from .norm import LayerNorm, RMSNorm
from .softmax import RowSoftmax

__all__ = ["GEMM", "Attention", "LayerNorm", "RMSNorm", "RowSoftmax"]
