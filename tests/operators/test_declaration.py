"""`Declaration`: what a class body or a generator signature declares, and every branch of
`infer` with the seed's messages."""

import inspect

import numpy as np
import pytest
from seed_ops import Scale

import plang as pl
from plang.operators import (
    CompileTime,
    Declaration,
    DispatchTime,
    In,
    InOut,
    Operator,
    Out,
    PerCallMember,
    Select,
    param,
)


class Wider(Scale):
    K: int = param(default=2)
    extra = In(K)


class Linear(Operator):
    M: int = param()
    N: int = param()
    K: int = param()
    has_bias: bool = param(default=False)
    b_col_maj: bool = param(default=False)
    a = In(M, K, dtype=pl.FP32)
    b = In(Select(b_col_maj, (N, K), (K, N)), dtype=pl.FP32)
    bias = In(N, dtype=pl.FP32, when=has_bias)
    c = Out(M, N, dtype=pl.FP32)


class Pair(Operator):
    N: int = param()
    flag: bool = param(default=lambda op: False)
    p = In(N, when=flag)
    q = In(N, when=flag)
    r = Out(N, when=flag)
    s = Out(N)


class Extra(Operator):
    N: int = param()
    more: bool = param(default=lambda op: op.N > 4)
    x = In(N)
    y = Out(N)
    z = Out(N, when=more)


class Batched(Operator):
    B: int | None = param(default=None)
    M: int = param()
    x = In(B, M)


class Fixed(Operator):
    N: int = param()
    x = In(4, N)
    y = Out(like=x)


class Flat(Operator):
    N: int = param()
    x = In(N)
    y = Out(like=x)


class Choose(Operator):
    N: int = param()
    K: int = param()
    flip: bool = param(default=lambda op: True)
    x = In(Select(flip, (N, K), (K, N)))


def test_scale_declaration():
    d = Scale.declaration
    assert d.name == "Scale" and list(d.params) == ["M", "factor", "tile"]
    assert d.tunables == ("tile",) and d.key == ("tile",)
    assert [m.name for m in d.members] == ["x", "y", "count"]
    assert d.nullable == frozenset({"tile"}) and d.scalars == () and d.signature is None


def test_subclass_params_base_first_members_derived_first():
    d = Wider.declaration
    assert list(d.params) == ["M", "factor", "tile", "K"]
    assert [m.name for m in d.members] == ["extra", "x", "y", "count"]


def test_key_takes_dtype_and_when_of_streamed_operands_only():
    class Op(Operator):
        N: int = param()
        dt = param(default=pl.FP32)
        on: bool = param(default=True)
        off: bool = param(default=True)
        rows: int = param(default=4, array=True)
        x = In(N, dtype=dt, obj_shape=N, when=on)
        y = In(N, when=off)

    assert Op.declaration.key == ("N", "dt", "on", "rows")


def test_infer_reads_the_shapes():
    assert Scale.declaration.infer({"x": (1024,)}) == {"M": 1024}
    got = Scale.declaration.infer({"x": (1024,)}, [(1024,)], M=1024, factor=2.0)
    assert got == {"M": 1024, "factor": 2.0}


def test_optional_operands_given_together():  # branch 1
    with pytest.raises(TypeError, match="Pair: the operands flag= brings are given together"):
        Pair.declaration.infer({"p": (4,)})


def test_flag_and_operand_disagree():  # branch 2
    d = Linear.declaration
    with pytest.raises(TypeError, match=r"Linear\(has_bias=True\) takes bias="):
        d.infer({"a": (2, 3), "b": (3, 4)}, has_bias=True)
    with pytest.raises(TypeError, match="Linear: bias= is an operand only where has_bias is true"):
        d.infer({"a": (2, 3), "b": (3, 4), "bias": (4,)}, has_bias=False)
    assert d.infer({"a": (2, 3), "b": (3, 4), "bias": (4,)})["has_bias"] is True


def test_absent_flag_reads_its_default():  # branch 3
    assert Linear.declaration.infer({"a": (2, 3), "b": (3, 4)}) == {"has_bias": False, "M": 2, "K": 3, "N": 4}
    assert Pair.declaration.infer({}) == {"flag": False}  # p, q absent: the flag is false


def test_inputs_are_the_present_fill_operands_in_order():  # branch 4
    with pytest.raises(TypeError, match=r"Linear takes 2 operand\(s\) \(a, b\), got 1"):
        Linear.declaration.infer({"a": (2, 3)})
    with pytest.raises(TypeError, match=r"Linear takes 2 operand\(s\) \(a, b\), got 2"):
        Linear.declaration.infer({"b": (3, 4), "a": (2, 3)})


def test_output_flag_without_default():  # branch 5
    with pytest.raises(ValueError, match="Extra: more decides whether z is an output and has no default; "
                                         "pass it explicitly"):
        Extra.declaration.infer({"x": (8,)}, [(8,), (8,)])
    assert Extra.declaration.infer({"x": (8,)}, [(8,), (8,)], more=True) == {"more": True, "N": 8}


def test_output_count():  # branch 6
    with pytest.raises(TypeError, match=r"Scale produces 1 output\(s\) \(y\), got 2"):
        Scale.declaration.infer({"x": (8,)}, [(8,), (8,)])


def test_nullable_dimension():  # branch 7
    d = Batched.declaration
    assert d.infer({"x": (3, 5)}) == {"B": 3, "M": 5}
    assert d.infer({"x": (5,)}) == {"B": None, "M": 5}
    with pytest.raises(ValueError, match=r"Batched: operand x has rank 3, declared In\(B, M\)"):
        d.infer({"x": (1, 2, 3)})
    assert Batched(M=5).bound["x"].shape == (5,)


def test_select_expands_by_its_flag():  # branch 8
    d = Linear.declaration
    assert d.infer({"a": (2, 3), "b": (4, 3)}, b_col_maj=True)["N"] == 4
    assert d.infer({"a": (2, 3), "b": (3, 4)})["N"] == 4
    with pytest.raises(ValueError, match="Choose: flip selects x's shape and has no default; "
                                         "pass it explicitly"):
        Choose.declaration.infer({"x": (2, 3)})
    assert Choose.declaration.infer({"x": (2, 3)}, flip=False) == {"flip": False, "K": 2, "N": 3}


def test_a_flat_operand_takes_any_rank():  # branch 9
    assert Scale.declaration.infer({"x": (4, 8)}) == {"M": 32}


def test_rank_mismatch():  # branch 10
    with pytest.raises(ValueError, match=r"Linear: operand a has rank 3 \(1, 2, 3\), declared rank 2 "
                                         r"In\(M, K, dtype=pl.FP32\)"):
        Linear.declaration.infer({"a": (1, 2, 3), "b": (3, 4)})


def test_literal_dimension_mismatch():  # branch 11
    with pytest.raises(ValueError, match=r"Fixed: operand x.shape\[0\] is 5, declared 4"):
        Fixed.declaration.infer({"x": (5, 3)})


def test_like_output_shape():  # branch 12
    assert Fixed.declaration.infer({"x": (4, 3)}, [(4, 3)]) == {"N": 3}
    assert Flat.declaration.infer({"x": (2, 6)}, [(2, 6)]) == {"N": 12}
    with pytest.raises(ValueError, match=r"Flat: output y is \(3, 4\), but shaped like x, \(2, 6\)"):
        Flat.declaration.infer({"x": (2, 6)}, [(3, 4)])


def test_two_sources_disagree():  # branch 13
    with pytest.raises(ValueError, match=r"Linear: K is 5 from b.shape\[0\] but 3 from a.shape\[1\]"):
        Linear.declaration.infer({"a": (2, 3), "b": (5, 4)})
    with pytest.raises(ValueError, match=r"Scale: M is 8 from x.shape\[0\] but 16 from given"):
        Scale.declaration.infer({"x": (8,)}, M=16)


def test_result_has_pinned_inferred_and_flags():  # branch 14
    got = Linear.declaration.infer({"a": (2, 3), "b": (3, 4), "bias": (4,)}, [(2, 4)], M=2, unrelated=1)
    assert got == {"M": 2, "has_bias": True, "K": 3, "N": 4}


def test_from_signature():
    def design(a: In, b: Out, c: InOut, n: CompileTime[int], m: CompileTime[int | None] = None, s=0.0,
               *, k: DispatchTime[np.int32]):
        return a

    with pytest.raises(TypeError, match="parameter 's' has a default but no marker"):
        Declaration.from_signature(design)

    def good(a: In, b: Out, n: CompileTime[int], scalar, *, k: DispatchTime[np.int32]):
        return a

    d = Declaration.from_signature(good)
    assert d.name == "good" and list(d.params) == ["n"] and d.params["n"].array
    kinds = [(m.name, type(m).__name__) for m in d.members]
    assert kinds == [("a", "In"), ("b", "Out"), ("k", "PerCallMember")]
    assert isinstance(d.members[2], PerCallMember) and d.members[2].dtype == np.int32
    assert d.scalars == ("scalar",) and isinstance(d.signature, inspect.Signature)
    assert d.key == ("n",)

    def positional(a: In, k: DispatchTime[np.int32]):
        return a

    with pytest.raises(TypeError, match="DispatchTime parameter 'k' must be keyword-only"):
        Declaration.from_signature(positional)
