"""Type-deduction errors: each names the op, the operand and expected vs actual."""
# ruff: noqa: E501  (expected messages and types read best on one line)

from __future__ import annotations

import pytest
from _ops_util import array, deduce, handle, scalar, tensor, tile

from plang.dtypes import BF16, BOOL, FP16, FP32, INDEX, INT8, INT32, INT64, TASK_ID, UINT32
from plang.ir import AtomicType, MemorySpace, PipeType
from plang.ir.ops import OpTypeError, OpValueError

A = tile([64, 128], FP32, name="a")
TA = tensor([64, 128], FP32, name="ta")

CASES = {
    "elementwise": [
        (OpTypeError, r"tile\.add: operand 'rhs' dtype FP16 does not match 'lhs' dtype FP32",
         "tile.add", (A, tile([64, 128], FP16)), {}),
        (OpTypeError, r"tensor\.mul: operand 'rhs' shape \[64, 64\] does not match 'lhs' shape \[64, 128\]",
         "tensor.mul", (TA, tensor([64, 64])), {}),
        (OpTypeError, r"tile\.sub: argument 'rhs' must be a tile, got Tensor\[\[64, 128\], FP32\]",
         "tile.sub", (A, TA), {}),
        (OpTypeError, r"tile\.exp: operand 'input' dtype INT32 is not supported; expected one of FP",
         "tile.exp", (tile([8, 8], INT32),), {}),
        (OpTypeError, r"tensor\.tanh: operand 'input' dtype INT32 is not supported; expected one of FP",
         "tensor.tanh", (tensor([8, 8], INT32),), {}),
        (OpTypeError, r"tile\.sigmoid: operand 'input' dtype INT8 is not supported; expected one of FP",
         "tile.sigmoid", (tile([8, 8], INT8),), {}),
        (OpTypeError, r"tile\.adds: operand 'rhs' is a FP32 scalar but the INT32 operand is integer",
         "tile.adds", (tile([8, 8], INT32), 0.5), {}),
        (OpTypeError, r"tile\.and_: operand 'lhs' dtype FP32 is not supported", "tile.and_",
         (A, A), {}),
        (OpValueError, r"tile\.cmp: cmp_type must be 0\.\.5", "tile.cmp", (A, A), {"cmp_type": 9}),
        (OpTypeError, r"tile\.sel: mask Tile\[\[8, 8\], BOOL\] must be shaped like 'lhs' Tile\[\[64, 128\], FP32\] or "
                      r"be its packed predicate \(same rows, at least ceil\(128 / 8\) bytes a row of 8-, 16- or 32-bit integers\)",
         "tile.sel", (tile([8, 8], BOOL), A, A, tile([1, 16])), {}),
        (OpTypeError, r"tile\.expands: operand 'scalar' must be a numeric scalar, got Scalar\[TASK_ID\]",
         "tile.expands", (tile([4, 4], INT32), scalar(TASK_ID)), {}),
    ],
    "cast": [
        (OpTypeError, r"tile\.cast: argument 'target_type' must be a dtype such as pl\.FP32, got 'fp16'",
         "tile.cast", (A, "fp16"), {}),
        (OpValueError, r"tensor\.cast: mode must be one of none, rint, round, floor, ceil, trunc, odd .*'nearest'",
         "tensor.cast", (TA, FP16), {"mode": "nearest"}),
        (OpValueError, r"tile\.cast: saturation_mode must be 'off'/'on'", "tile.cast", (A, INT8),
         {"saturation_mode": "clip"}),
        (OpTypeError, r"tile\.cast: argument 'target_type' dtype INDEX is not supported", "tile.cast",
         (A, INDEX), {}),
    ],
    "reduction": [
        (OpTypeError, r"tile\.col_max: operand 'tmp_tile' shape \[32, 128\] must be at least the input "
                      r"shape \[64, 128\] \(axis 0\)", "tile.col_max", (A, tile([32, 128])), {}),
        (OpTypeError, r"tile\.col_argmin: argument 'tmp_tile' must be a tile, got Tensor\[\[64, 128\], FP32\]",
         "tile.col_argmin", (A,), {"tmp_tile": TA}),
        (OpTypeError, r"tile\.row_max: operand 'tmp_tile' shape \[64, 64\] must be at least the input "
                      r"shape \[64, 128\]", "tile.row_max", (A, tile([64, 64])), {}),
        (OpTypeError, r"tile\.row_argmax: operand 'tmp_tile' shape \[64, 256\] must be exactly",
         "tile.row_argmax", (A, tile([64, 256])), {}),
        (OpTypeError, r"tensor\.row_sum: operand 'input' must have rank >= 2, got rank 1 \(shape \[64\]\)",
         "tensor.row_sum", (tensor([64]),), {}),
        (OpTypeError, r"tile\.row_min: operand 'tmp_tile' dtype FP16 does not match 'input' dtype FP32",
         "tile.row_min", (A, tile([64, 128], FP16)), {}),
        (OpTypeError, r"tensor\.row_sum got an unexpected keyword argument 'tmp_tile'", "tensor.row_sum",
         (TA,), {"tmp_tile": A}),
        (OpTypeError, r"tile\.row_expand_mul: operand 'rhs' of shape \[1, 128\] must be \[64, 1\]",
         "tile.row_expand_mul", (A, tile([1, 128])), {}),
        (OpTypeError, r"tensor\.col_expand_add: operand 'rhs' of shape \[64, 1\] must be \[1, 128\]",
         "tensor.col_expand_add", (TA, tensor([64, 1])), {}),
    ],
    "matmul": [
        (OpTypeError, r"tile\.matmul: contraction dims differ: lhs \[64, 32\] has K=32 but rhs \[16, 8\] has K=16",
         "tile.matmul", (tile([64, 32], FP16), tile([16, 8], FP16)), {}),
        (OpTypeError, r"tensor\.matmul: out_dtype FP32 is not available for INT8 operands; expected one of INT32",
         "tensor.matmul", (tensor([8, 8], INT8), tensor([8, 8], INT8)), {"out_dtype": FP32}),
        (OpTypeError, r"tile\.matmul: out_dtype FP16 is not available for FP16 operands; expected one of FP32",
         "tile.matmul", (tile([8, 8], FP16), tile([8, 8], FP16)), {"out_dtype": FP16}),
        (OpTypeError, r"tile\.matmul: a_trans is tensor-only", "tile.matmul", (tile([8, 8]), tile([8, 8])),
         {"a_trans": True}),
        (OpTypeError, r"tensor\.matmul: a_trans needs operand 'lhs' of rank >= 2, got shape \[8\]",
         "tensor.matmul", (tensor([8]), tensor([8, 4])), {"a_trans": True}),
        (OpTypeError, r"tensor\.matmul: operand 'rhs' dtype BF16 does not match 'lhs' dtype FP16",
         "tensor.matmul", (tensor([8, 8], FP16), tensor([8, 8], BF16)), {}),
        (OpTypeError, r"tile\.matmul: operand 'lhs' dtype INT32 is not supported; expected one of FP16, BF16, FP32, INT8",
         "tile.matmul", (tile([8, 8], INT32), tile([8, 8], INT32)), {}),
        (OpTypeError, r"tile\.matmul_acc: operand 'acc' dtype FP16 must be the accumulator dtype FP32",
         "tile.matmul_acc", (tile([8, 8], FP16), tile([8, 8], FP16), tile([8, 8], FP16)), {}),
        (OpTypeError, r"tile\.matmul_acc: operand 'acc' shape \[8, 4\] must be \[8, 8\]",
         "tile.matmul_acc", (tile([8, 4]), tile([8, 8]), tile([8, 8])), {}),
        (OpTypeError, r"tile\.matmul_acc: init_cond must be a BOOL scalar, got Scalar\[INDEX\]",
         "tile.matmul_acc", (tile([8, 8]), tile([8, 8]), tile([8, 8])), {"init_cond": 1}),
        (OpTypeError, r"tile\.gemv: operand 'lhs' must be a row vector \[1, K\], got shape \[2, 8\]",
         "tile.gemv", (tile([2, 8]), tile([8, 8])), {}),
        (OpTypeError, r"tile\.matmul_bias: operand 'bias' shape \[1, 4\] must be \[1, 8\]",
         "tile.matmul_bias", (tile([8, 8]), tile([8, 8]), tile([1, 4])), {}),
    ],
    "load_store": [
        (OpTypeError, r"tile\.load: 'offsets' has 1 entries but tensor rank is 2 \(shape \[64, 128\]\)",
         "tile.load", (TA, [0], [64, 64]), {}),
        (OpValueError, r"tile\.load: load window \[96, 160\) on axis 1 exceeds tensor extent 128",
         "tile.load", (TA, [0, 96], [64, 64]), {}),
        (OpValueError, r"tile\.load: target_memory must be one of MemorySpace\.Vec, MemorySpace\.Mat, got",
         "tile.load", (TA, [0, 0], [64, 64]), {"target_memory": MemorySpace.Acc}),
        (OpTypeError, r"tile\.load: every element of 'offsets' must be an integer scalar, got float 0\.5",
         "tile.load", (TA, [0.5, 0], [64, 64]), {}),
        (OpValueError, r"tile\.store: store window \[32, 96\) on axis 0 exceeds output tensor extent 64",
         "tile.store", (A, [32, 0], TA), {}),
        (OpTypeError, r"tile\.store: 'offsets' has 3 entries but output tensor rank is 2",
         "tile.store", (A, [0, 0, 0], TA), {}),
        (OpTypeError, r"tile\.store: operand 'tile' dtype BOOL is not supported", "tile.store",
         (tile([64, 128], BOOL), [0, 0], tensor([64, 128], BOOL)), {"atomic": AtomicType.Add}),
        (OpValueError, r"tile\.move: target_memory must be one of", "tile.move", (A, MemorySpace.DDR), {}),
        (OpTypeError, r"tensor\.read: 'offset' has 3 entries; expected 1 \(flat index\) or the rank 2",
         "tensor.read", (TA, [0, 0, 0]), {}),
    ],
    "reshape_slice_assemble": [
        (OpValueError, r"tile\.reshape: cannot reshape \[64, 128\] \(8192 elements\) to \[64, 64\] \(4096 elements\)",
         "tile.reshape", (A, [64, 64]), {}),
        (OpValueError, r"tile\.reshape: the valid region \[64, 100\] of shape \[64, 128\] is not a box of the "
                       r"new shape \[128, 64\]", "tile.reshape", (tile([64, 128], valid=[64, 100]), [128, 64]), {}),
        (OpTypeError, r"tensor\.transpose: operand 'input' must have rank >= 2, got rank 1",
         "tensor.transpose", (tensor([8]), 0, 1), {}),
        (OpValueError, r"tile\.transpose: axis1 and axis2 name the same axis 1", "tile.transpose", (A, 1, -1), {}),
        (OpValueError, r"tensor\.transpose: axis2=2 is out of range for rank 2", "tensor.transpose",
         (TA, 0, 2), {}),
        (OpValueError, r"tensor\.slice: slice window \[100, 132\) on axis 1 exceeds input extent 128",
         "tensor.slice", (TA, [8, 32], [0, 100]), {}),
        (OpTypeError, r"tile\.slice: clamp is tensor-only", "tile.slice", (A, [8, 8], [0, 0]), {"clamp": True}),
        (OpTypeError, r"tile\.slice: 'offset' has 1 entries but input rank is 2", "tile.slice",
         (A, [8, 8], [0]), {}),
        (OpValueError, r"tensor\.assemble: assemble window \[60, 76\) on axis 0 exceeds target extent 64",
         "tensor.assemble", (TA, tensor([16, 16]), [60, 0]), {}),
        (OpTypeError, r"tile\.assemble: operand 'source' dtype FP16 does not match 'target' dtype FP32",
         "tile.assemble", (A, tile([16, 16], FP16), [0, 0]), {}),
        (OpTypeError, r"tensor\.assemble: operand 'source' must have rank 2, got rank 3",
         "tensor.assemble", (TA, tensor([1, 16, 16]), [0, 0]), {}),
        (OpTypeError, r"tile\.assemble: atomic is tensor-only", "tile.assemble", (A, tile([8, 8]), [0, 0]),
         {"atomic": AtomicType.Add}),
        (OpTypeError, r"tile\.concat: row counts differ: src0 \[64, 128\] vs src1 \[32, 8\]: expected 64, got 32",
         "tile.concat", (A, tile([32, 8])), {}),
    ],
    "array": [
        (OpValueError, r"array\.create: argument 'extent' must be >= 1, got 0", "array.create",
         (0, INT32), {}),
        (OpTypeError, r"array\.create: argument 'dtype' must be a dtype such as pl\.FP32, got 'int32'",
         "array.create", (4, "int32"), {}),
        (OpTypeError, r"array\.get_element: argument 'index' must be an integer scalar, got Scalar\[FP32\]",
         "array.get_element", (array(4, INT32), 1.0), {}),
        (OpValueError, r"array\.get_element: index 4 is out of range for an array of 4 elements",
         "array.get_element", (array(4, INT32), 4), {}),
        (OpTypeError, r"array\.update_element: operand 'value' of type Scalar\[FP32\] cannot be stored in a "
                      r"INT32 array", "array.update_element", (array(4, INT32), 0, 1.5), {}),
        (OpTypeError, r"array\.update_element: operand 'value' of type Scalar\[INDEX\] cannot be stored in a "
                      r"TASK_ID array", "array.update_element", (array(4, TASK_ID), 0, 3), {}),
        (OpTypeError, r"array\.get_element: argument 'array' must be a array, got Tensor",
         "array.get_element", (TA, 0), {}),
    ],
    "pipe_system": [
        (OpTypeError, r"tile\.tpop_from_aic: shape and dtype of the received tile go together",
         "tile.tpop_from_aic", (), {"shape": [8, 8]}),
        (OpValueError, r"tile\.tpush_to_aiv: argument 'split' must be in \[0, 4\], got 7",
         "tile.tpush_to_aiv", (A,), {"split": 7}),
        (OpTypeError, r"system\.sync_set: argument 'event_id' must be a compile-time integer",
         "system.sync_set", ("x",), {}),
        (OpValueError, r"system\.sync_src: set_pipe must be a pl\.PipeType", "system.sync_src", (),
         {"set_pipe": 2, "wait_pipe": PipeType.V, "event_id": 0}),
        (OpTypeError, r"system\.cacheinvalid: offsets has 1 entries; the tensor has rank 2",
         "system.cacheinvalid", (TA, [1, 1], [0]), {}),
        (OpTypeError, r"system\.cacheinvalid: the region form needs", "system.cacheinvalid", (TA,), {}),
        (OpTypeError, r"system\.set_ffts: workspace must be a 1-D INT64 tensor of at least 256",
         "system.set_ffts", (tensor([16], INT64),), {}),
        (OpTypeError, r"system\.task_dummy: deps takes TaskIds or arrays of them, got 'Scalar\[INT32\]'",
         "system.task_dummy", (), {"deps": (scalar(INT32),)}),
    ],
    "indexing_sort_random": [
        (OpValueError, r"tile\.gather_mask: argument 'mask_pattern' must be in \[1, 7\], got 9", "tile.gather_mask",
         (tile([8, 16]),), {"mask_pattern": 9}),
        (OpValueError, r"tensor\.gather_mask: mask_pattern=3 selects one column in 4, so operand 'input' needs a "
                       r"column count divisible by 4, got 18", "tensor.gather_mask", (tensor([8, 18]),), {"mask_pattern": 3}),
        (OpTypeError, r"tile\.gather_mask: output_dtype must be a dtype of FP32's width \(32 bits\), got 'FP16'",
         "tile.gather_mask", (tile([8, 16]),), {"mask_pattern": 1, "output_dtype": FP16}),
        (OpTypeError, r"tensor\.scatter_mask: mask_pattern=1 writes one column in 2: dst must be \[8, 16\]",
         "tensor.scatter_mask", (tensor([8, 8]), tensor([8, 8])), {"mask_pattern": 1}),
        (OpValueError, r"tile\.gather_compare: cmp_mode must be one of eq, ne, lt, le, gt, ge", "tile.gather_compare",
         (tile([4, 32], INT32), scalar(INT32)), {"cmp_mode": "around", "out_cols": 4}),
        (OpTypeError, r"tile\.scatter_update: src \[15, 32\] needs one row per element of index \[2, 8\]",
         "tile.scatter_update", (tile([32, 32]), tile([2, 8], INT32), tile([15, 32])), {}),
        (OpValueError, r"tensor\.scatter_update: dim must be -2 \(rows\), got -1", "tensor.scatter_update",
         (tensor([32, 32]), tensor([2, 8], INT32), tensor([16, 32])), {"dim": -1}),
        (OpTypeError, r"tile\.mscatter: operand 'output_tensor' dtype FP16 does not match 'src' dtype FP32",
         "tile.mscatter", (tile([8, 32]), tile([8, 32], INT32), tensor([256], FP16)), {}),
        (OpTypeError, r"tile\.gatherb: operand 'offset' dtype INT32 is not supported; expected one of UINT32",
         "tile.gatherb", (tile([1, 256]), tile([4, 8], INT32)), {}),
        (OpTypeError, r"tile\.gatherb: offset rows must hold a positive multiple of 8 offsets \(32-byte rows\), got 12",
         "tile.gatherb", (tile([1, 256]), tile([4, 12], UINT32)), {}),
        (OpTypeError, r"tile\.gatherb: output_dtype must be one of INT8, .*FP32, got 'BOOL'",
         "tile.gatherb", (tile([1, 256]), tile([4, 8], UINT32)), {"output_dtype": BOOL}),
        (OpTypeError, r"tile\.gatherb: operand 'src' must have rank 2, got rank 1",
         "tile.gatherb", (tile([256]), tile([4, 8], UINT32)), {}),
        (OpValueError, r"tile\.mgather: coalesce must be 'row', 'elem', 0 or 1, got 'col'",
         "tile.mgather", (tensor([64, 32]), tile([1, 16], INT32)), {"coalesce": "col"}),
        (OpValueError, r"tile\.mgather: gather_oob must be 'undefined', 'clamp', 'wrap', 'zero' or 0\.\.3, got 4",
         "tile.mgather", (tensor([64, 32]), tile([1, 16], INT32)), {"gather_oob": 4}),
        (OpTypeError, r"tile\.mgather: row mode takes idx of shape \[1, R\] or \[R, 1\], got \[4, 4\]",
         "tile.mgather", (tensor([64, 32]), tile([4, 4], INT32)), {}),
        (OpTypeError, r"tile\.mgather: row mode needs mem of rank >= 2 with a static row length, got \[64\]",
         "tile.mgather", (tensor([64]), tile([1, 16], INT32)), {}),
        (OpTypeError, r"tile\.mgather: operand 'idx' must be a DDR tensor for MemorySpace\.Mat output, got tile",
         "tile.mgather", (tensor([64, 32]), tile([1, 16], INT32)), {"target_memory": MemorySpace.Mat}),
        (OpTypeError, r"tile\.mgather: operand 'idx' must be a tile for MemorySpace\.Vec output, got tensor",
         "tile.mgather", (tensor([64, 32]), tensor([1, 16], INT32)), {}),
        (OpTypeError, r"tile\.mgather: Mat output \[24, 32\] must be static, with rows a multiple of 16 and columns a "
                      r"multiple of 8 \(32 bytes of FP32\)",
         "tile.mgather", (tensor([64, 32]), tensor([1, 24], INT32)), {"target_memory": MemorySpace.Mat}),
        (OpTypeError, r"tile\.mgather: the Mat element gather needs a DDR scratch tensor \(scratch=\) of mem's dtype",
         "tile.mgather", (tensor([1024]), tensor([32, 32], INT32)),
         {"coalesce": "elem", "target_memory": MemorySpace.Mat}),
        (OpTypeError, r"tile\.mgather: scratch \[512\] needs at least 1024 elements",
         "tile.mgather", (tensor([1024]), tensor([32, 32], INT32)),
         {"coalesce": "elem", "target_memory": MemorySpace.Mat, "scratch": tensor([512])}),
        (OpTypeError, r"tile\.mgather: operand 'scratch' is taken only by the Mat element gather",
         "tile.mgather", (tensor([64, 32]), tile([1, 16], INT32)), {"scratch": tensor([512])}),
        (OpValueError, r"tile\.mgather: valid_shape must be two constants in \(0, 32\] and \(0, 32\], got \[40, 32\]",
         "tile.mgather", (tensor([64, 32]), tensor([1, 32], INT32)),
         {"target_memory": MemorySpace.Mat, "valid_shape": [40, 32]}),
        (OpTypeError, r"tile\.mgather: valid_shape is taken only by Mat output",
         "tile.mgather", (tensor([64, 32]), tile([1, 16], INT32)), {"valid_shape": [8, 32]}),
        (OpTypeError, r"tile\.sort32: operand 'src' \[8, 40\] needs a static column count that is a multiple of 32",
         "tile.sort32", (tile([8, 40]), tile([8, 40], INT32)), {}),
        (OpValueError, r"tensor\.mrgsort: block_len must be a positive multiple of 64 columns, got 48",
         "tensor.mrgsort", (tensor([1, 256]),), {"block_len": 48}),
        (OpTypeError, r"tile\.mrgsort: mrgsort needs block_len= \(format 1\) or 2 to 4 values", "tile.mrgsort",
         (tile([1, 256]),), {}),
        (OpValueError, r"tile\.random: rounds must be 7 or 10, got 8", "tile.random", (1, 2, 3, 4, 5, 6, [4, 32]),
         {"rounds": 8}),
        (OpTypeError, r"prefetch\.async_prefetch: src must be a flat 1D region", "prefetch.async_prefetch",
         (tensor([2, 64]), handle("PrefetchAsyncContext")), {}),
        (OpTypeError, r"prefetch\.async_prefetch: expects ctx to be a pl\.PrefetchAsyncContext \(the result of "
         r"prefetch\.make_context\), got Scalar\[INT64\]", "prefetch.async_prefetch",
         (tensor([64]), scalar(INT64)), {}),
        (OpTypeError, r"prefetch\.wait: expects event to be a pl\.AsyncEvent \(the result of "
         r"prefetch\.async_prefetch\), got AsyncSession", "prefetch.wait",
         (handle("AsyncSession"), handle("AsyncSession")), {}),
        (OpTypeError, r"prefetch\.wait: expects session to be a pl\.AsyncSession \(the result of "
         r"prefetch\.session\), got PrefetchAsyncContext", "prefetch.wait",
         (handle("AsyncEvent"), handle("PrefetchAsyncContext")), {}),
    ],
}


@pytest.mark.parametrize("family", sorted(CASES))
def test_family_has_at_least_three_errors(family):
    assert len(CASES[family]) >= 3


@pytest.mark.parametrize("exc,pattern,name,args,kwargs",
                         [c for cs in CASES.values() for c in cs],
                         ids=[f"{f}-{i}" for f, cs in CASES.items() for i in range(len(cs))])
def test_invalid(exc, pattern, name, args, kwargs):
    with pytest.raises(exc, match=pattern):
        deduce(name, *args, **kwargs)


def test_errors_are_builtin_type_and_value_errors():
    assert issubclass(OpTypeError, TypeError) and issubclass(OpValueError, ValueError)


def test_scalar_int_literal_accepted_on_float_tile():
    assert deduce("tile.muls", tile([4, 4], FP32), 2) == "Tile[[4, 4], FP32]"
    assert deduce("tile.muls", tile([4, 4], INT32), 2) == "Tile[[4, 4], INT32]"
