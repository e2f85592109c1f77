"""Elementwise ops for both families: binary, scalar forms, unary math, compare, select,
cast and scalar broadcast (`tensor.add` / `tile.add`, `tile.adds`, `tile.exp`, ...)."""

from __future__ import annotations

from functools import partial
from typing import Sequence

from ...dtypes import BOOL, DataType
from ..types import ScalarType, TileType, Type
from .common import (
    CAST_MODES,
    CASTABLE,
    CMP_TYPES,
    FLOATS,
    INTS,
    INTS_AND_BOOL,
    NUMERIC,
    SATURATION_MODES,
    P,
    merge_valid,
    mode_name,
    require_dtype,
    require_dtype_attr,
    require_rank,
    require_same_dtype,
    require_same_kind,
    require_same_shape,
    require_scalar_matches,
    result_like,
)
from .common import (
    family as _family,
)
from .predicate import check_packed, is_packed, packed
from .registry import Bound, Pattern
from .registry import register as _register


def binary(allowed: Sequence[DataType], result_dtype: DataType | None = None,
           tmp_same_dtype: bool = True):
    """Same kind, dtype and shape on both operands; the result keeps them (or takes
    `result_dtype`). A scratch `tmp` tile, when the op has one, must share their dtype."""

    def deduce(b: Bound) -> Type:
        lhs, rhs = b.lhs.type, b.rhs.type
        require_same_kind(b, "rhs", rhs, "lhs", lhs)
        require_dtype(b, "lhs", lhs.dtype, allowed)
        require_same_dtype(b, "rhs", rhs, "lhs", lhs)
        require_same_shape(b, "rhs", rhs, "lhs", lhs)
        tmp = b.get("tmp")
        if tmp is not None and tmp_same_dtype:
            require_same_dtype(b, "tmp", tmp.type, "lhs", lhs)
        dtype = result_dtype or lhs.dtype
        if isinstance(lhs, TileType):
            return TileType(lhs.shape, dtype, None, merge_valid(lhs, rhs))
        return result_like(lhs, dtype)

    return deduce


def with_scalar(allowed: Sequence[DataType], result_dtype: DataType | None = None,
                scalar: str = "rhs", shaped: str = "lhs", converts: bool = False):
    """A tensor/tile operand combined with a scalar broadcast to every element. With
    `converts` (the reference's `subs`), a float scalar against an integer operand is
    converted to the operand's dtype instead of being an error."""

    def deduce(b: Bound) -> Type:
        t = b[shaped].type
        require_dtype(b, shaped, t.dtype, allowed)
        st = b[scalar].type
        if not (converts and isinstance(st, ScalarType) and st.dtype.is_float):
            require_scalar_matches(b, scalar, b[scalar], t.dtype)
        return result_like(t, result_dtype or t.dtype)

    return deduce


def unary(allowed: Sequence[DataType], operand: str = "input"):
    def deduce(b: Bound) -> Type:
        t = b[operand].type
        require_dtype(b, operand, t.dtype, allowed)
        tmp = b.get("tmp")
        if tmp is not None:
            require_same_dtype(b, "tmp", tmp.type, operand, t)
        return result_like(t)

    return deduce


def _check_cmp_type(b: Bound) -> None:
    if mode_name(b.cmp_type, CMP_TYPES) is None:
        raise b.bad_value(f"cmp_type must be 0..5 ({', '.join(CMP_TYPES)}) or one of those names, "
                          f"got {b.cmp_type!r}")


def _cmp(b: Bound) -> Type:
    _check_cmp_type(b)
    t = binary(NUMERIC, BOOL)(b)
    return packed(b, t) if isinstance(t, TileType) else t


def _cmps(b: Bound) -> Type:
    _check_cmp_type(b)
    t = with_scalar(NUMERIC, BOOL)(b)
    return packed(b, t) if isinstance(t, TileType) else t


def _rems(b: Bound) -> Type:
    require_same_dtype(b, "tmp", b.tmp.type, "lhs", b.lhs.type)
    return with_scalar(NUMERIC)(b)


def _cast(b: Bound) -> Type:
    t = b.input.type
    require_dtype(b, "input", t.dtype, CASTABLE)
    target = require_dtype_attr(b, "target_type", CASTABLE)
    if mode_name(b.mode, CAST_MODES) is None:
        raise b.bad_value(f"mode must be one of {', '.join(CAST_MODES)} (or its code 0..6), "
                          f"got {b.mode!r}")
    if b.saturation_mode is not None and mode_name(b.saturation_mode, SATURATION_MODES) is None:
        raise b.bad_value(f"saturation_mode must be 'off'/'on' (or 0/1), got {b.saturation_mode!r}")
    return result_like(t, target)


def _mask(b: Bound, values: str) -> None:
    mask, ref = b.mask.type, b[values].type
    require_dtype(b, "mask", mask.dtype, INTS_AND_BOOL)
    if is_packed(mask, ref):
        check_packed(b, mask, ref, values)


def _sel(b: Bound) -> Type:
    _mask(b, "lhs")
    return binary(CASTABLE, tmp_same_dtype=False)(b)


def _sels(b: Bound) -> Type:
    _mask(b, "src")
    return with_scalar(CASTABLE, scalar="scalar", shaped="src", converts=True)(b)


def _expands(b: Bound) -> Type:
    t = b.target.type
    require_scalar_matches(b, "scalar", b.scalar, t.dtype)
    return result_like(t)


def _carry(scalar: bool):
    """addc / subc (three tiles) and addsc / subsc (tile, scalar, carry tile): every tile
    operand shares lhs's dtype and shape."""

    def deduce(b: Bound) -> Type:
        lhs = b.lhs.type
        require_dtype(b, "lhs", lhs.dtype, NUMERIC)
        if scalar:
            require_scalar_matches(b, "rhs", b.rhs, lhs.dtype)
        for name in ("rhs2",) if scalar else ("rhs", "rhs2"):
            t = b[name].type
            require_same_dtype(b, name, t, "lhs", lhs)
            require_same_shape(b, name, t, "lhs", lhs)
        return result_like(lhs)

    return deduce


def _prelu(b: Bound) -> Type:
    t, slope = b.tile.type, b.slope.type
    require_dtype(b, "tile", t.dtype, FLOATS)
    require_same_dtype(b, "slope", slope, "tile", t)
    require_same_shape(b, "slope", slope, "tile", t)
    require_rank(b, "tmp", b.tmp.type, 2)  # any dtype: a scratch the CPU does not need
    return result_like(t)


# every op of this module is elementwise
family = partial(_family, pattern=Pattern.ELEMENTWISE)
register = partial(_register, pattern=Pattern.ELEMENTWISE)


def _register_all() -> None:
    X = "X"
    lhs_rhs = [P("lhs", X), P("rhs", X)]
    hp = P("high_precision", "attr", False)
    arith = {"add": "addition", "sub": "subtraction", "mul": "multiplication",
             "div": "division", "maximum": "maximum", "minimum": "minimum", "fmod": "truncating remainder"}
    for name, what in arith.items():
        params = lhs_rhs + ([hp] if name in ("div", "fmod") else [])
        family(name, params, binary(NUMERIC), unit="vector", doc=f"Elementwise {what} of two operands.")
    scalar_forms = {"adds": "add", "subs": "sub", "muls": "mul", "divs": "div",
                    "maximums": "maximum", "minimums": "minimum", "fmods": "fmod"}
    for name, base in scalar_forms.items():
        family(name, [P("lhs", X), P("rhs", "scalar")], with_scalar(NUMERIC, converts=name == "subs"),
               unit="vector",
               unified=name not in ("adds", "subs", "muls", "divs"),  # pl.add etc. take scalars
               doc=f"Elementwise {arith[base]} with a scalar rhs broadcast to every element.")
    bitwise = {"and_": ("AND", INTS_AND_BOOL), "or_": ("OR", INTS_AND_BOOL), "xor": ("XOR", INTS_AND_BOOL),
               "shl": ("left shift", INTS), "shr": ("right shift", INTS)}
    for name, (what, dts) in bitwise.items():
        extra = {"tile": [P("tmp", "tile")]} if name == "xor" else None
        family(name, lhs_rhs, binary(dts), unit="vector", extra=extra,
               doc=f"Elementwise bitwise {what}.")
        sname = name.rstrip("_") + "s"
        extra = {"tile": [P("tmp", "tile")]} if name == "xor" else None
        family(sname, [P("lhs", X), P("rhs", "scalar")], with_scalar(dts), unit="vector",
               extra=extra, doc=f"Elementwise bitwise {what} with a scalar.")

    math = {"exp": "exponential", "sqrt": "square root", "sin": "sine (radians)",
            "cos": "cosine (radians)", "tanh": "hyperbolic tangent",
            "sigmoid": "logistic sigmoid 1 / (1 + exp(-x))"}
    for name, what in math.items():
        family(name, [P("input", X)], unary(FLOATS), unit="vector", doc=f"Elementwise {what}.")
    for name, what in {"log": "natural logarithm", "recip": "reciprocal 1/x"}.items():
        family(name, [P("input", X), hp], unary(FLOATS), unit="vector", doc=f"Elementwise {what}.")
    family("rsqrt", [P("input", X)], unary(FLOATS), unit="vector",
           extra={"tensor": [hp], "tile": [P("tmp", "tile", None)]},
           doc="Elementwise reciprocal square root (a tile `tmp` selects the precise path).")
    for name, what in {"neg": "negation", "abs": "absolute value"}.items():
        family(name, [P("input", X)], unary(NUMERIC), unit="vector", doc=f"Elementwise {what}.")
    family("not_", [P("input", X)], unary(INTS_AND_BOOL), unit="vector", doc="Elementwise bitwise NOT.")
    register("tensor.relu", [P("input", "tensor")], unary(NUMERIC), unit="vector",
             doc="Elementwise ReLU, max(0, x).")
    register("tile.relu", [P("tile", "tile")], unary(NUMERIC, "tile"), unit="vector",
             doc="Elementwise ReLU, max(0, x).")
    register("tile.lrelu", [P("tile", "tile"), P("slope", "scalar")],
             with_scalar(FLOATS, scalar="slope", shaped="tile"), unit="vector",
             doc="Elementwise leaky ReLU: x where x > 0, else slope * x.")

    register("tile.rem", [P("lhs", "tile"), P("rhs", "tile"), P("tmp", "tile"), hp], binary(NUMERIC),
             unit="vector", doc="Elementwise remainder lhs % rhs taking the sign of rhs (Python's `%`, "
                                "torch.remainder); `tmp` is a same-dtype scratch tile.")
    register("tile.rems", [P("lhs", "tile"), P("rhs", "scalar"), P("tmp", "tile")], _rems, unit="vector",
             doc="Elementwise remainder lhs % rhs with a scalar rhs, taking the sign of rhs.")
    carry = {"addc": "lhs + rhs + rhs2", "subc": "lhs - rhs + rhs2"}
    for name, what in carry.items():
        register(f"tile.{name}", [P("lhs", "tile"), P("rhs", "tile"), P("rhs2", "tile")], _carry(False),
                 unit="vector", doc=f"Elementwise carry arithmetic {what} (rhs2: per-element carry-in).")
        register(f"tile.{name[:-1]}sc", [P("lhs", "tile"), P("rhs", "scalar"), P("rhs2", "tile")],
                 _carry(True), unit="vector",
                 doc=f"Elementwise carry arithmetic {what} with a scalar rhs (rhs2: carry-in tile).")
    register("tile.prelu", [P("tile", "tile"), P("slope", "tile"), P("tmp", "tile")], _prelu, unit="vector",
             doc="Elementwise parametric ReLU: x where x >= 0, else slope * x (per-element slope).")

    for ns, what, pattern in (("tensor", "a BOOL mask", Pattern.ELEMENTWISE),
                              ("tile", "a packed UINT8 predicate mask (one bit per element, see "
                                       "`ir.ops.predicate`; tile.sel reads it)", Pattern.OPAQUE)):
        _family("cmp", lhs_rhs + [P("cmp_type", "attr", 0)], _cmp, unit="vector", namespaces=(ns,),
                pattern=pattern, doc=f"Elementwise comparison (cmp_type 0=eq 1=ne 2=lt 3=le 4=gt 5=ge) "
                                     f"giving {what}.")
        _family("cmps", [P("lhs", X), P("rhs", "scalar"), P("cmp_type", "attr", 0)], _cmps, unit="vector",
                namespaces=(ns,), pattern=pattern, doc=f"Elementwise comparison with a scalar giving {what}.")
    register("tile.sel", [P("mask", "tile"), P("lhs", "tile"), P("rhs", "tile"), P("tmp", "tile")],
             _sel, unit="vector", doc="Per-element select: lhs where mask is true, else rhs.")
    register("tile.sels", [P("mask", "tile"), P("src", "tile"), P("tmp", "tile"), P("scalar", "scalar")],
             _sels, unit="vector", doc="Per-element select: src where mask is true, else the scalar.")
    family("cast", [P("input", X), P("target_type", "attr"), P("mode", "attr", "round"),
                    P("saturation_mode", "attr", None)], _cast, unit="vector",
           doc="Convert every element to target_type with the given rounding / saturation mode.")
    family("expands", [P("target", X), P("scalar", "scalar")], _expands, unit="vector", reads=(),
           doc="A value shaped like target (which is not read) with every element set to scalar.")


_register_all()
