"""How the printer writes types: annotations with their placement metadata (`pl.MemRef`,
`pl.TensorView`, `pl.TileView`) and the distributed types of `pld`."""

from __future__ import annotations

from enum import Enum
from typing import Any

from ..dtypes import FP32, DataType
from .enums import DISTRIBUTED_ENUMS, ArgDirection, PadValue, TensorLayout
from .types import (
    ArrayType,
    AsyncHandleType,
    CommCtxType,
    DistributedTensorType,
    MemRef,
    PtrType,
    ScalarType,
    TensorType,
    TensorView,
    TileType,
    TileView,
    TupleType,
    Type,
    UnknownType,
)

_SHORT_LAYOUTS = (TensorLayout.ND, TensorLayout.DN, TensorLayout.NZ)
PLD_IMPORT = "import plang.distributed as pld"


def _quoted(name: str) -> str:
    return '"' + name.replace("\\", "\\\\").replace('"', '\\"') + '"'


def dtype_text(d: DataType) -> str:
    return "pl." + d.name


class TypePrinter:
    """Mixin of the printer: `type(t)` as annotation source. Sets `uses_pld` when the text
    needs the `pld` module."""

    uses_pld: bool = False

    def expr(self, e: Any) -> str:  # provided by the printer
        raise NotImplementedError

    def shape(self, dims) -> str:
        return "[" + ", ".join(self.expr(d) for d in dims) + "]"

    def enum(self, v: Enum) -> str:
        if type(v) is ArgDirection:
            return f"pl.adir.{v.value}"
        if type(v) in DISTRIBUTED_ENUMS:
            self.uses_pld = True
            return f"pld.{type(v).__name__}.{v.name}"
        return f"pl.{type(v).__name__}.{v.name}"

    def type(self, t: Type) -> str:
        cls = type(t)
        if cls is TensorType or cls is DistributedTensorType:
            return self._tensor(t)
        if cls is TileType:
            return self._tile(t)
        if cls is ScalarType:
            return f"pl.Scalar[{dtype_text(t.dtype)}]"
        if cls is TupleType:
            return f"pl.Tuple[{', '.join(self.type(x) for x in t.types)}]"
        if cls is ArrayType:
            return f"pl.Array[{t.extent}, {dtype_text(t.dtype)}]"
        if cls is PtrType:
            return "pl.Ptr"
        if cls is AsyncHandleType:
            return f"pl.{t.kind}"
        if cls is CommCtxType:
            self.uses_pld = True
            return "pld.CommCtx"
        if cls is UnknownType:
            return "pl.Unknown"
        raise TypeError(f"python_print: unknown type node {cls.__name__}")

    def _tensor(self, t: TensorType) -> str:
        parts = [self.shape(t.shape), dtype_text(t.dtype)]
        if t.view is not None:
            v = t.view
            kw = [f"stride={self.shape(v.stride)}", f"layout={self.enum(t.layout)}"]
            if v.valid_shape is not None:
                kw.append(f"valid_shape={self.shape(v.valid_shape)}")
            if v.pad is not PadValue.null:
                kw.append(f"pad={self.enum(v.pad)}")
            parts.append(f"pl.TensorView({', '.join(kw)})")
        elif t.layout is not TensorLayout.ND:
            parts.append(f"pl.{t.layout.name}" if t.layout in _SHORT_LAYOUTS else self.enum(t.layout))
        if t.memref is not None:
            parts.append(self.memref(t.memref))
        head = "pl.Tensor"
        if type(t) is DistributedTensorType:
            self.uses_pld = True
            head = "pld.DistributedTensor"
        return f"{head}[{', '.join(parts)}]"

    def _tile(self, t: TileType) -> str:
        parts = [self.shape(t.shape), dtype_text(t.dtype)]
        if t.memref is not None:
            parts.append(self.memref(t.memref))
        if t.memory_space is not None:
            parts.append(f"pl.Mem.{t.memory_space.name}")
        kw = [] if t.valid_shape is None else [f"valid_shape={self.shape(t.valid_shape)}"]
        v = t.view
        if v is not None:
            for name in ("blayout", "slayout"):
                if getattr(v, name) is not None:
                    kw.append(f"{name}={self.enum(getattr(v, name))}")
            if v.fractal is not None:
                kw.append(f"fractal={v.fractal}")
            if v.pad is not PadValue.null:
                kw.append(f"pad={self.enum(v.pad)}")
            if v.stride:
                kw.append(f"stride={self.shape(v.stride)}")
            if v.start_offset is not None:
                kw.append(f"start_offset={self.expr(v.start_offset)}")
        if kw:
            parts.append(f"pl.TileView({', '.join(kw)})")
        return f"pl.Tile[{', '.join(parts)}]"

    def placement(self, node: MemRef | TensorView | TileView) -> str:
        """A placement node alone, as the annotation item that writes it."""
        if isinstance(node, MemRef):
            return self.memref(node)
        if isinstance(node, TensorView):
            return self._tensor(TensorType([], FP32, view=node)).split(", ", 2)[2][:-1]
        return self._tile(TileType([], FP32, view=node)).split(", ", 2)[2][:-1]

    def memref(self, m: MemRef) -> str:
        args = [_quoted(m.base) if isinstance(m.base, str) else self.expr(m.base)]
        if m.byte_offset is not None:
            args += [self.expr(m.byte_offset), str(m.size)]
        if m.slots != 1:
            args.append(f"slots={m.slots}")
        text = f"pl.MemRef({', '.join(args)})"
        return text if m.slot is None else f"{text}[{self.expr(m.slot)}]"
