"""`pl.Array`: `pl.array.create`, `arr[i]` reads and functional `arr[i] = v` writes."""

from __future__ import annotations

import pytest
import torch

import plang as pl
from plang.dtypes import INT32, TASK_ID
from plang.ir import Add, ArrayType, Call, ScalarType, assert_structural_equal, flatten
from plang.ir.builder import IRBuilder
from plang.ir.ops import make_call

ARRAY_FUNCTION = """
import plang as pl


@pl.function
def f(n: pl.Scalar[pl.INT32]):
    arr = pl.array.create(8, pl.INT32)
    for i in pl.range(8):
        arr[i] = n + i
    x = arr[3]
    arr[0] = x
    return arr
"""


def test_array_create_read_write_match_hand_built_ir():
    fn = pl.parse(ARRAY_FUNCTION)
    b = IRBuilder()
    with b.function("f") as f:
        n = f.param("n", ScalarType(INT32))
        arr = b.let("arr", make_call("array.create", [8, INT32]))
        with b.for_range("i", 0, 8) as loop:
            b.assign(arr, make_call("array.update_element", [arr, loop.var, Add(n, loop.var)]))
        x = b.let("x", make_call("array.get_element", [arr, 3]))
        b.assign(arr, make_call("array.update_element", [arr, 0, x]))
        b.ret(arr)
    assert_structural_equal(fn, f.function)
    assert isinstance(fn.return_types[0], ArrayType) and fn.return_types[0].extent == 8
    text = fn.as_python()
    assert "arr: pl.Array[8, pl.INT32] = pl.array.update_element(arr, i, n + i)" in text
    assert_structural_equal(pl.parse(text), fn)


def test_task_id_array_feeds_deps():
    src = """
import plang as pl


@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[64, 64], pl.FP32], out: pl.Out[pl.Tensor[[64, 64], pl.FP32]]):
        t = pl.load(a, [0, 0], [64, 64])
        out = pl.store(t, [0, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[64, 64], pl.FP32], out: pl.Out[pl.Tensor[[64, 64], pl.FP32]]):
        tids = pl.array.create(2, pl.TASK_ID)
        r, tid = pl.submit(self.k, a, out)
        tids[0] = tid
        r2, tid2 = pl.submit(self.k, a, r, deps=[tids[0]])
        return r2
"""
    prog = pl.parse(src)
    main = prog.functions["main"]
    (submit2,) = [s.value for s in flatten(main.body) if isinstance(getattr(s, "value", None), Call)
                  and "deps" in s.value.kwargs]
    (dep,) = submit2.kwargs["deps"]
    assert dep.op.name == "array.get_element" and dep.type.dtype is TASK_ID
    assert_structural_equal(pl.parse(prog.as_python()), prog)


def test_array_annotation_on_assignment():
    @pl.function
    def f(n: pl.Scalar[pl.INT32]):
        arr: pl.Array[4, pl.INT32] = pl.array.create(4, pl.INT32)
        arr[1] = n

    assert isinstance(f.body.stmts[0].var.type, ArrayType)


@pytest.mark.parametrize("line, message", [
    ("x = arr[1.5]", r"array\.get_element: argument 'index' must be an integer scalar, got Scalar\[FP32\]"),
    ("x = arr[8]", r"array\.get_element: index 8 is out of range for an array of 8 elements"),
    ("arr[0] = 1.5", r"operand 'value' of type Scalar\[FP32\] cannot be stored in a INT32 array"),
    ("arr2 = pl.array.create(0, pl.INT32)", r"array\.create: argument 'extent' must be >= 1, got 0"),
    ("x = pl.array.get_element(t, 0)", r"array\.get_element: argument 'array' must be a array, got Tensor"),
])
def test_array_mistakes_point_at_the_line(line, message):
    src = f"""
import plang as pl


@pl.function
def f(t: pl.Tensor[[8], pl.FP32]):
    arr = pl.array.create(8, pl.INT32)
    {line}
"""
    with pytest.raises(pl.ParserTypeError, match=message) as info:
        pl.parse(src)
    assert info.value.line == 8



@pl.jit.incore
def pick_row_kernel(flags: pl.Tensor, src: pl.Tensor, dst: pl.InOut[pl.Tensor]):
    c: pl.Scalar[pl.INT32] = pl.tile.read(pl.load(flags, [0, 0], [1, 8]), [0, 0])
    arr = pl.array.create(4, pl.INT32)
    arr[1] = 3
    if c > 0:
        arr[0] = c
    else:
        arr[0] = arr[1]
    row: pl.Scalar[pl.INDEX] = pl.cast(arr[0], pl.INDEX)
    return pl.store(pl.load(src, [0, 0], [1, 32]), [row, 0], dst)


@pl.jit
def pick_row(flags: pl.Tensor, src: pl.Tensor, dst: pl.InOut[pl.Tensor]):
    return pick_row_kernel(flags, src, dst)


@pytest.mark.parametrize("flag, row", [(5, 5), (0, 3)])
def test_an_array_in_a_kernel_is_read_after_a_branch_writes_it(flag, row):
    flags, src = torch.full((1, 8), flag, dtype=torch.int32), torch.randn(1, 32)
    dst = torch.zeros(8, 32)
    pick_row(flags, src, dst)
    want = torch.zeros(8, 32)
    want[row] = src[0]
    assert torch.equal(dst, want)


@pl.jit.incore
def array_at_kernel(src: pl.Tensor, dst: pl.Out[pl.Tensor], i: pl.Scalar[pl.INDEX]):
    arr = pl.array.create(4, pl.INT32)
    arr[i] = 2
    row: pl.Scalar[pl.INDEX] = pl.cast(arr[i], pl.INDEX)
    return pl.store(pl.load(src, [0, 0], [1, 32]), [row, 0], dst)


@pl.jit
def array_at(src: pl.Tensor, dst: pl.Out[pl.Tensor], i: pl.Scalar[pl.INDEX]):
    return array_at_kernel(src, dst, i)


def test_a_runtime_array_index_outside_the_array_is_a_bounds_error():
    src, dst = torch.randn(1, 32), torch.zeros(8, 32)
    array_at(src, dst, 3)
    assert torch.equal(dst[2], src[0])
    with pytest.raises(pl.Error, match=r"out of bounds of array 'arr' \(shape \[4\]\) on axis 0: offset 4"):
        array_at(src, torch.zeros(8, 32), 4)
