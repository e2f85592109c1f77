"""`param`, `tunable`, `per_call`, `Select`, `OperatorParam`, `MISSING`, `widths`: the
seed's attributes, defaults and error messages."""

import enum

import numpy as np
import pytest

from plang.operators import (
    MISSING,
    In,
    Operator,
    OperatorParam,
    PerCall,
    PerCallMember,
    Select,
    param,
    per_call,
    tunable,
    widths,
)


class Mode(enum.Enum):
    FAST = 1
    SMALL = 2


def test_param_attributes():
    p = param()
    assert isinstance(p, OperatorParam)
    assert (p.default, p.derive, p.array, p.repr, p.init, p.tunable, p.domain) == \
        (MISSING, None, False, True, True, False, None)
    assert (p.name, p.owner) == ("", None)
    assert repr(MISSING) == "MISSING"


def test_param_default_and_derive_are_exclusive():
    with pytest.raises(TypeError, match=r"param\(default=, derive=\): give one, not both"):
        param(default=1, derive=lambda op: 2)


@pytest.mark.parametrize("default", [[1], {"a": 1}, {1}])
def test_param_mutable_default_is_refused(default):
    with pytest.raises(TypeError, match=r"would be shared by every instance; give default=lambda op: "):
        param(default=default)


def test_a_type_default_is_the_value_and_a_lambda_is_computed():
    class Op(Operator):
        M: int = param()
        dt = param(default=np.float32)
        half: int = param(default=lambda op: op.M // 2)
        hidden: int = param(default=3, repr=False)
        fixed: int = param(default=7, init=False)

    op = Op(M=8)
    assert op.dt is np.float32 and op.half == 4 and op.fixed == 7
    assert repr(op) == "Op(M=8, dt=<class 'numpy.float32'>, half=4, fixed=7)"
    with pytest.raises(TypeError, match=r"Op\(\) takes no argument \['fixed'\]"):
        Op(M=8, fixed=1)


def test_tunable_attributes_and_domains():
    t = tunable()
    assert (t.default, t.array, t.tunable, t.init, t.derive) == (None, True, True, True, None)
    assert tunable(domain=(1, 2)).domain == (1, 2)
    assert tunable(domain=Mode).domain is Mode
    assert tunable(domain=widths).domain is widths


@pytest.mark.parametrize("domain", [[1, 2], 3, "ab", {1, 2}])
def test_tunable_domain_must_be_tuple_enum_or_function(domain):
    with pytest.raises(TypeError, match=r"give a tuple, an Enum or a function \(op, dev, start\) -> tuple"):
        tunable(domain=domain)


def test_a_subclass_fixes_an_inherited_tunable():
    class Base(Operator):
        M: int = param()
        tile: int | None = tunable()

    class Sub(Base):
        tile = tunable(default=16, init=False)

    assert Sub(M=8).tile == 16
    assert Base.declaration.tunables == ("tile",)
    assert Sub.declaration.tunables == ()
    with pytest.raises(TypeError, match=r"Sub\(\) takes no argument \['tile'\]"):
        Sub(M=8, tile=8)


def test_per_call_dtype_and_exclusive_arguments():
    m = per_call()
    assert isinstance(m, PerCallMember) and m.dtype == np.int32
    assert per_call(np.uint16).dtype == np.uint16
    with pytest.raises(TypeError, match=r"per_call\(float32\): a per-call value is an integer, since the "
                                        r"scratchpad encoding zeroes the top two bits of a word"):
        per_call(np.float32)
    with pytest.raises(TypeError, match=r"per_call\(derive=, bounds=\): give one, not both"):
        per_call(derive=lambda op: 1, bounds=param())


def test_per_call_reads_as_its_value_or_as_the_per_call_variable():
    class Op(Operator):
        M: int = param()
        count = per_call(derive=lambda op: op.M // 4)
        valid = per_call(bounds=M)

    op = Op(M=64)
    assert op.count == 16
    assert op.valid == PerCall("valid", "plang.per_call", np.int32)
    assert Op.valid.check(op, 64) == 64
    with pytest.raises(ValueError, match="Op: valid=65 exceeds M=64"):
        Op.valid.check(op, 65)
    with pytest.raises(TypeError, match="takes an integer"):
        Op.valid.check(op, 1.5)


def test_select_branch_and_its_unresolved_flag():
    class Gemm(Operator):
        N: int = param()
        K: int = param()
        b_col_maj: bool | None = param(default=None)
        b = In(Select(b_col_maj, (N, K), (K, N)))

    sel = Gemm.b.dims[0]
    assert sel.flag is Gemm.b_col_maj
    assert sel.branch(Gemm(N=2, K=3, b_col_maj=True)) == (Gemm.N, Gemm.K)
    assert sel.branch(Gemm(N=2, K=3, b_col_maj=False)) == (Gemm.K, Gemm.N)
    with pytest.raises(ValueError, match=r"b_col_maj is None; a Select\(\) on it needs a resolved operator"):
        sel.branch(Gemm(N=2, K=3))


def test_widths_are_powers_of_two_around_the_start():
    assert widths(None, None, 16) == (4, 8, 16, 32, 64)
    assert widths(None, None, 1) == (1, 2, 4)
    assert widths(None, None, None) == (8, 16, 32, 64)


def test_class_access_names_the_parameter():
    class Op(Operator):
        M: int = param()
        x = In(M)

    assert Op.M.name == "M" and Op.M.owner is Op
    assert Op.x.dims == (Op.M,) and Op.x.dims[0] is Op.M
    op = Op(M=5)
    assert vars(op)["M"] == 5 and op.M == 5
