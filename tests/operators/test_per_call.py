"""`PerCall` and `Affine`: the closure of the arithmetic, names, clamp, evaluate, stage."""

import numpy as np
import pytest

from plang.operators import Affine, PerCall

p = PerCall("p", "plang.dispatch_time", np.int32)
n = PerCall("n", "plang.dispatch_time", np.int32)


def test_per_call_attributes():
    assert (p.name, p.marker, p.scalar_type, p.ssa) == ("p", "plang.dispatch_time", np.int32, None)


def test_linear_expressions():
    assert (p + 1) * 64 == Affine(p, 64, 64)
    assert p * 2 + p * 3 == Affine(p, 5)
    assert 3 - p == Affine(p, -1, 3)
    assert -p == Affine(p, -1)
    assert p - p == 0
    assert (4 * n) // n == 4
    assert Affine(p, 64, 64).linear


def test_floor_division_by_a_power_of_two():
    ceil = (p + 63) // 64
    assert ceil.down == 6 and not ceil.linear
    assert ceil.evaluate({"p": 65}) == 2
    assert ((p // 4) * 3 + 1).evaluate({"p": 9}) == 7


def test_wrap_and_post():
    ring = p % 8 + 8
    assert (ring.mod, ring.post) == (8, 8)
    assert ring.evaluate({"p": 13}) == 13
    with pytest.raises(ValueError, match="a wrap is a power of two"):
        Affine(p, mod=6)


@pytest.mark.parametrize("bad", [lambda: p < 3, lambda: p // 3, lambda: p + n, lambda: p * n,
                                 lambda: p * 1.5, lambda: bool(p), lambda: p % 6, lambda: (p % 8) * 2])
def test_anything_else_raises_type_error(bad):
    with pytest.raises(TypeError):
        bad()


def test_names():
    assert Affine(p).name == "p"
    assert (p * 64).name == "p_x64"
    assert ((p + 1) * 64).name == "p_x64_p64"
    assert (p - 1).name == "p_m1"


def test_affine_only_for_linear():
    assert (p * 2).affine() == Affine(p, 2)
    with pytest.raises(TypeError, match=r"\(p \+ 63\) >> 6 is not linear in p"):
        ((p + 63) // 64).affine()


def test_clamp():
    c = Affine(p).clamp(0, 8)
    assert (c.lo, c.hi) == (0, 8) and c.evaluate({"p": 20}) == 8 and c.evaluate({"p": -3}) == 0
    assert c.clamp(10) == 10  # held to a range it never reaches: the nearer bound
    assert c.clamp(hi=-1) == -1
    assert c.clamp(2, 4).evaluate({"p": 9}) == 4
    assert (c + 1).evaluate({"p": 20}) == 9 and (c * 2).evaluate({"p": 20}) == 16
    assert (c // 2).evaluate({"p": 7}) == 3
    with pytest.raises(ValueError, match=r"held to \[5, 1\] holds no value"):
        Affine(p).clamp(5, 1)
    with pytest.raises(TypeError, match=r"no expression clamps \(\(p\) % 8\) after it wraps"):
        (p % 8).clamp(0, 2)


def test_evaluate_and_stage():
    assert Affine(p, 64, 64).evaluate({"p": 3}) == 256
    bound = PerCall("q", "plang.dispatch_time", np.int32)
    with pytest.raises(TypeError, match="q has no staged value outside the runtime sequence it is bound to"):
        (bound * 2).stage()
    bound.ssa = 5
    assert (bound * 2 + 1).stage() == 11
