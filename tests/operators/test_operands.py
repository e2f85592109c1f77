"""`In`, `Out`, `InOut`: arguments, normalization, errors, bound operands, markers."""

from typing import get_type_hints

import numpy as np
import pytest
import torch

import plang as pl
from plang.operators import CompileTime, DispatchTime, In, InOut, Operand, Operator, Out, param, tunable
from plang.operators.markers import COMPILE_TIME, DISPATCH_TIME, marked_type, marker_of


class Rows(Operator):
    rows: int = param()
    cols: int = param()
    tile: int | None = tunable(default=4)
    lanes: int = param(default=2)
    x = In(rows, cols, dtype=pl.FP32, obj_shape=(tile, cols), per=lanes)
    w = In(cols, dtype=np.float32, obj_shape=cols, per=lanes, replicate=True)
    y = Out(like=x, dtype=torch.float32)
    z = InOut(8)


def test_errors():
    with pytest.raises(TypeError, match=r"replicate=True needs per=<dim>: every lane receives the "
                                        r"whole tensor"):
        In(4, replicate=True)
    with pytest.raises(TypeError, match=r"give dims \(4,\) or like=In\(4\), not both"):
        Out(4, like=In(4))
    with pytest.raises(ValueError, match="depth=0"):
        In(4, depth=0)


def test_normalization_and_defaults():
    x = In(4, obj_shape=2, per=Rows.lanes)
    assert x.obj_dims == (2,) and x.per == (Rows.lanes,) and x.depth == 2
    assert x.declared_dtype is pl.BF16 and x.dtype is pl.BF16
    assert not x.replicate and x.when is None and x.like is None
    assert Rows.y.dims == Rows.x.dims and Rows.y.like is Rows.x
    assert (In.fills, Out.fills, InOut.fills) == (True, False, True)
    assert Rows.x.streamed and not Rows.z.streamed
    assert [Rows.x.direction, Rows.y.direction, Rows.z.direction] == ["In", "Out", "InOut"]


def test_bound_operand_reads_through_the_operator():
    op = Rows(rows=16, cols=8)
    x = op.x
    assert isinstance(x, In) and x is not Rows.x
    assert x.shape == (16, 8) and x.obj_shape == (4, 8) and x.lanes == 2 and x.numel() == 128
    assert x.dtype is pl.FP32 and x.torch_dtype is torch.float32
    assert x.ndarray_type == np.ndarray[(16, 8), np.dtype[np.float32]]
    assert x.obj_type == np.ndarray[(4, 8), np.dtype[np.float32]]
    assert op.w.dtype is pl.FP32 and op.y.dtype is pl.FP32 and op.z.obj_type is None
    assert list(op.bound) == ["x", "w", "y", "z"] and op.bound["x"].shape == (16, 8)


def test_a_literal_operand_is_concrete_and_a_declared_one_needs_an_operator():
    assert In(4, 8, dtype=np.int32).shape == (4, 8)
    with pytest.raises(TypeError, match="reads rows: bind it to an operator"):
        Rows.x.shape


def test_key_names_what_streams_read():
    assert Rows.declaration.key == ("cols", "tile", "lanes")


def test_repr():
    assert repr(Rows.x) == "In(rows, cols, dtype=pl.FP32, obj_shape=(tile, cols), per=lanes)"
    assert repr(Rows.y) == "Out(like=x, dtype=pl.FP32)"


def test_markers_are_annotated_types():
    def gen(a: In, b: Out, n: CompileTime[int], *, k: DispatchTime[np.int32]):
        return a

    hints = get_type_hints(gen, include_extras=True)
    assert marker_of(hints["n"]) is COMPILE_TIME and marked_type(hints["n"]) is int
    assert marker_of(hints["k"]) is DISPATCH_TIME and marked_type(hints["k"]) is np.int32
    assert marker_of(hints["a"]) is In and marker_of(hints["b"]) is Out and marker_of(int) is None
    assert issubclass(In, Operand)


@pytest.mark.parametrize("bad", [float, int, bool, np.float32])
def test_dispatch_time_takes_a_numpy_integer(bad):
    with pytest.raises(TypeError, match="must be a NumPy integer scalar type"):
        DispatchTime[bad]


def test_markers_are_not_instantiated():
    with pytest.raises(TypeError, match=r"write CompileTime\[int\]"):
        CompileTime()
    with pytest.raises(TypeError, match=r"write DispatchTime\[np.int32\]"):
        DispatchTime()
