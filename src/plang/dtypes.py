"""Scalar element types: `DataType` with bit width, kind and conversions to numpy / torch.

Every dtype the language reference lists is a module constant (`FP32`, `BF16`, ...).
Conversions that have no counterpart raise `TypeError` naming both sides.
"""

from __future__ import annotations

import functools
import sys

import numpy as np


class DataType:
    """One element type. Instances are singletons: compare with `is` or `==`."""

    __slots__ = ("name", "bits", "kind", "signed")
    _by_name: dict[str, DataType] = {}

    def __init__(self, name: str, bits: int, kind: str, signed: bool) -> None:
        self.name, self.bits, self.kind, self.signed = name, bits, kind, signed
        DataType._by_name[name] = self

    @property
    def is_float(self) -> bool:
        return self.kind == "float"

    @property
    def is_int(self) -> bool:
        """Integer-valued: INT*/UINT*, INDEX and TASK_ID (not BOOL)."""
        return self.kind in ("int", "index")

    @property
    def is_bool(self) -> bool:
        return self.kind == "bool"

    def holds(self, value: int) -> bool:
        """Whether the integer `value` is representable in this dtype (always, for a non-integer one)."""
        if not self.is_int:
            return True
        if self.signed:
            return -(1 << (self.bits - 1)) <= value < 1 << (self.bits - 1)
        return 0 <= value < 1 << self.bits

    @property
    def itemsize(self) -> int:
        """Bytes per element, rounding sub-byte types up to one byte."""
        return max(1, self.bits // 8)

    def get_byte(self) -> int:
        """Bytes per element (the reference's spelling of `itemsize`)."""
        return self.itemsize

    def accepts_storage(self, got: DataType) -> bool:
        """Whether a host tensor of element type `got` can be passed where `self` is declared:
        the same type, or the same bits under the name the host library has for them (torch
        has no INDEX, so INDEX takes INT64; its unsigned 16/32/64-bit types are barely
        supported, so UINT16/32/64 take the signed type of their width, as the reference's
        harness passes them)."""
        if got is self:
            return True
        if self.kind == "index" and self.signed:
            return got.name == "INT64"
        return (self.kind == "int" and not self.signed and self.bits >= 16 and got.kind == "int"
                and got.signed and got.bits == self.bits)

    @classmethod
    def from_name(cls, name: str) -> DataType:
        try:
            return cls._by_name[name.upper()]
        except KeyError:
            raise TypeError(f"unknown dtype {name!r}") from None

    def to_numpy(self) -> np.dtype:
        npd = _numpy_type(self.name)
        if npd is None:
            raise TypeError(f"dtype {self} has no numpy counterpart")
        return np.dtype(npd)

    def to_torch(self):
        import torch

        t = getattr(torch, _TORCH.get(self.name, "?"), None)
        if t is None:
            raise TypeError(f"dtype {self} has no torch counterpart")
        return t

    @classmethod
    def from_numpy(cls, dtype) -> DataType:
        npd = np.dtype(dtype)
        # an array of an ml_dtypes type exists only once ml_dtypes is imported
        names = [n for n, t in _NUMPY.items() if "ml_dtypes" in sys.modules or not isinstance(t, str)]
        for name in names:
            cand = _numpy_type(name)
            if cand is not None and np.dtype(cand) == npd and name not in ("INDEX", "TASK_ID"):
                return cls._by_name[name]
        raise TypeError(f"numpy dtype {npd} has no plang counterpart")

    @classmethod
    def from_torch(cls, dtype) -> DataType:
        hit = _FROM_TORCH.get(dtype)
        if hit is None:
            import torch

            for name, attr in _TORCH.items():
                if name not in ("INDEX", "TASK_ID") and getattr(torch, attr, None) == dtype:
                    hit = _FROM_TORCH[dtype] = cls._by_name[name]
                    break
            else:
                raise TypeError(f"torch dtype {dtype} has no plang counterpart")
        return hit

    def __repr__(self) -> str:
        return f"pl.{self.name}"

    def __reduce__(self):
        return (DataType.from_name, (self.name,))


FP4 = DataType("FP4", 4, "float", True)
FP8E4M3FN = DataType("FP8E4M3FN", 8, "float", True)
FP8E5M2 = DataType("FP8E5M2", 8, "float", True)
FP8E8M0 = DataType("FP8E8M0", 8, "float", False)
FP16 = DataType("FP16", 16, "float", True)
FP32 = DataType("FP32", 32, "float", True)
BF16 = DataType("BF16", 16, "float", True)
HF4 = DataType("HF4", 4, "float", True)
HF8 = DataType("HF8", 8, "float", True)
INT4 = DataType("INT4", 4, "int", True)
INT8 = DataType("INT8", 8, "int", True)
INT16 = DataType("INT16", 16, "int", True)
INT32 = DataType("INT32", 32, "int", True)
INT64 = DataType("INT64", 64, "int", True)
UINT4 = DataType("UINT4", 4, "int", False)
UINT8 = DataType("UINT8", 8, "int", False)
UINT16 = DataType("UINT16", 16, "int", False)
UINT32 = DataType("UINT32", 32, "int", False)
UINT64 = DataType("UINT64", 64, "int", False)
BOOL = DataType("BOOL", 8, "bool", False)
INDEX = DataType("INDEX", 64, "index", True)
TASK_ID = DataType("TASK_ID", 64, "index", False)

ALL_DTYPES: tuple[DataType, ...] = tuple(DataType._by_name.values())


_NUMPY = {  # a name is a type of ml_dtypes (numpy bf16 / fp8 / int4), imported on first use
    "FP4": "float4_e2m1fn",
    "FP8E4M3FN": "float8_e4m3fn",
    "FP8E5M2": "float8_e5m2",
    "FP8E8M0": "float8_e8m0fnu",
    "FP16": np.float16,
    "FP32": np.float32,
    "BF16": "bfloat16",
    "HF4": None,
    "HF8": None,
    "INT4": "int4",
    "INT8": np.int8,
    "INT16": np.int16,
    "INT32": np.int32,
    "INT64": np.int64,
    "UINT4": "uint4",
    "UINT8": np.uint8,
    "UINT16": np.uint16,
    "UINT32": np.uint32,
    "UINT64": np.uint64,
    "BOOL": np.bool_,
    "INDEX": np.int64,
    "TASK_ID": np.int64,
}


@functools.cache
def _numpy_type(name: str):
    """The numpy scalar type of dtype `name` (None: it has none). ml_dtypes is imported only
    here: its import takes 0.03-1.3 s (version 0.7 on a Zen 1 core), and most programs never
    need it."""
    npd = _NUMPY.get(name)
    if isinstance(npd, str):
        try:
            import ml_dtypes
        except ImportError:  # pragma: no cover - declared dependency
            return None
        return getattr(ml_dtypes, npd, None)
    return npd


_FROM_TORCH: dict = {}  # torch dtype -> DataType, filled on first use

_TORCH = {
    "FP8E4M3FN": "float8_e4m3fn",
    "FP8E5M2": "float8_e5m2",
    "FP8E8M0": "float8_e8m0fnu",
    "FP16": "float16",
    "FP32": "float32",
    "BF16": "bfloat16",
    "INT8": "int8",
    "INT16": "int16",
    "INT32": "int32",
    "INT64": "int64",
    "UINT8": "uint8",
    "UINT16": "uint16",
    "UINT32": "uint32",
    "UINT64": "uint64",
    "BOOL": "bool",
    "INDEX": "int64",
    "TASK_ID": "int64",
}
