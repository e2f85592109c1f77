"""The reference's module path of `TensorSpec` / `ScalarSpec` (``pypto.runtime.tensor_spec``)."""

from .runner import SCALAR_CTYPES, ScalarSpec, TensorSpec

__all__ = ["SCALAR_CTYPES", "ScalarSpec", "TensorSpec"]
