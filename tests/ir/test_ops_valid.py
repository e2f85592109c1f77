"""Every registered op deduces the documented result type on valid input."""
# ruff: noqa: E501  (expected messages and types read best on one line)

from __future__ import annotations

import pytest
from _distributed_cases import DISTRIBUTED_CASES
from _ops_util import array, deduce, handle, scalar, tensor, tile

from plang.dtypes import BF16, BOOL, FP16, FP32, INDEX, INT8, INT16, INT32, INT64, TASK_ID, UINT32
from plang.ir import MemorySpace, PipeType, SplitMode
from plang.ir.ops import REGISTRY, make_call
from plang.ir.ops.composite import COMPOSITES

A = tile([64, 128], FP32, name="a")
B = tile([64, 128], FP32, name="b")
TA = tensor([64, 128], FP32, name="ta")
TB = tensor([64, 128], FP32, name="tb")
IA, IB = tile([64, 128], INT32), tile([64, 128], INT32)
TIA, TIB = tensor([64, 128], INT32), tensor([64, 128], INT32)
MASK = tile([64, 128], BOOL)
COL = tile([1, 128], FP32)
ROW = tile([64, 1], FP32)

CASES: dict[str, tuple[tuple, dict, str]] = {}


def case(name, *args, expect, **kwargs):
    assert name not in CASES, name
    CASES[name] = (args, kwargs, expect)


T_FULL, TILE_FULL = "Tensor[[64, 128], FP32]", "Tile[[64, 128], FP32]"
for ns, (x, y, ix, iy) in {"tensor": (TA, TB, TIA, TIB), "tile": (A, B, IA, IB)}.items():
    full = T_FULL if ns == "tensor" else TILE_FULL
    kind = "Tensor" if ns == "tensor" else "Tile"
    for op in ("add", "sub", "mul", "div", "maximum", "minimum", "fmod"):
        case(f"{ns}.{op}", x, y, expect=full)
    for op in ("adds", "subs", "muls", "divs", "maximums", "minimums", "fmods"):
        case(f"{ns}.{op}", x, 2.0, expect=full)
    tmp = {"tmp": tile([64, 128], INT32)} if ns == "tile" else {}
    for op in ("and_", "or_", "shl", "shr"):
        case(f"{ns}.{op}", ix, iy, expect=f"{kind}[[64, 128], INT32]")
        case(f"{ns}.{op.rstrip('_')}s", ix, 3, expect=f"{kind}[[64, 128], INT32]")
    case(f"{ns}.xor", ix, iy, **tmp, expect=f"{kind}[[64, 128], INT32]")
    case(f"{ns}.xors", ix, 3, **tmp, expect=f"{kind}[[64, 128], INT32]")
    for op in ("exp", "log", "sqrt", "rsqrt", "recip", "sin", "cos", "tanh", "sigmoid", "neg", "abs",
               *COMPOSITES):
        case(f"{ns}.{op}", x, expect=full)
    case(f"{ns}.relu", x, expect=full)
    case(f"{ns}.not_", tile([8, 8], INT16) if ns == "tile" else tensor([8, 8], INT16),
         expect=f"{kind}[[8, 8], INT16]")
    mask = f"{kind}[[64, 128], BOOL]" if ns == "tensor" else "Tile[[64, 32], UINT8]"  # tile: packed bits
    case(f"{ns}.cmp", x, y, cmp_type=2, expect=mask)
    case(f"{ns}.cmps", x, 0.5, cmp_type="ge", expect=mask)
    case(f"{ns}.cast", x, BF16, mode="rint", expect=f"{kind}[[64, 128], BF16]")
    case(f"{ns}.expands", x, 1.0, expect=full)
    red_tmp = {"tmp_tile": tile([64, 128], FP32)} if ns == "tile" else {}
    for op in ("sum", "max", "min", "prod"):
        case(f"{ns}.row_{op}", x, **red_tmp, expect=f"{kind}[[64, 1], FP32]")
        case(f"{ns}.col_{op}", x, expect=f"{kind}[[1, 128], FP32]")
    for op in ("row_argmax", "row_argmin"):
        case(f"{ns}.{op}", x, **red_tmp, expect=f"{kind}[[64, 1], INT32]")
    for op in ("col_argmax", "col_argmin"):
        case(f"{ns}.{op}", x, **red_tmp, expect=f"{kind}[[1, 128], INT32]")
    row = ROW if ns == "tile" else tensor([64, 1])
    col = COL if ns == "tile" else tensor([1, 128])
    for op in ("add", "sub", "mul", "div", "max", "min", "expdif"):
        case(f"{ns}.row_expand_{op}", x, row, expect=full)
        case(f"{ns}.col_expand_{op}", x, col, expect=full)
    case(f"{ns}.row_expand", x, row, expect=full)
    case(f"{ns}.col_expand", x, col, expect=full)
    case(f"{ns}.reshape", x, [128, 64], expect=f"{kind}[[128, 64], FP32]")
    case(f"{ns}.transpose", x, 0, -1, expect=f"{kind}[[128, 64], FP32]")
    case(f"{ns}.slice", x, [16, 32], [8, 0], expect=f"{kind}[[16, 32], FP32]")
    src = tile([16, 32]) if ns == "tile" else tensor([16, 32])
    case(f"{ns}.assemble", x, src, [48, 96], expect=full)
    case(f"{ns}.concat", x, y, expect=f"{kind}[[64, 256], FP32]")
    case(f"{ns}.read", x, [3, 4], expect="Scalar[FP32]")
    case(f"{ns}.write", x, [3, 4], 1.5, expect=full)
    for q in ("get_block_idx", "get_block_num", "get_subblock_idx"):
        case(f"{ns}.{q}", expect="Scalar[INDEX]")
    case(f"{ns}.aiv_shard", x, mode=SplitMode.UP_DOWN, expect=f"{kind}[[32, 128], FP32]")
    case(f"{ns}.aic_gather", x, mode=SplitMode.LEFT_RIGHT, expect=f"{kind}[[64, 256], FP32]")

# tensor-only
case("tensor.create", [64, 128], FP16, expect="Tensor[[64, 128], FP16]")
case("tensor.full", [4, 8], INT32, 7, expect="Tensor[[4, 8], INT32]")
case("tensor.dim", TA, -1, expect="Scalar[INT64]")
case("tensor.matmul", tensor([32, 64], BF16), tensor([128, 64], BF16), b_trans=True, out_dtype=BF16,
     expect="Tensor[[32, 128], BF16]")
case("tensor.matmul_acc", tensor([32, 16]), tensor([64, 32], FP16), tensor([64, 16], FP16), a_trans=True,
     expect="Tensor[[32, 16], FP32]")
# tile-only
case("tile.create", [64, 64], FP16, target_memory=MemorySpace.Vec, expect="Tile[[64, 64], FP16, Vec]")
case("tile.full", [8, 8], FP32, 0.0, valid_shape=[4, 8], expect="Tile[[8, 8], FP32, valid=[4, 8]]")
case("tile.load", TA, [0, 64], [64, 64], target_memory=MemorySpace.Vec, expect="Tile[[64, 64], FP32, Vec]")
case("tile.store", A, [0, 0], tensor([64, 256]), expect="Tensor[[64, 256], FP32]")
case("tile.move", A, MemorySpace.Mat, expect="Tile[[64, 128], FP32, Mat]")
case("tile.fillpad", tile([8, 8], valid=[4, 8]), expect="Tile[[8, 8], FP32]")
case("tile.lrelu", A, 0.1, expect=TILE_FULL)
case("tile.sel", MASK, A, B, tile([1, 16], UINT32), expect=TILE_FULL)
case("tile.sels", MASK, A, tile([1, 16], UINT32), 0.0, expect=TILE_FULL)
case("tile.matmul", tile([64, 32], FP16), tile([32, 16], FP16), expect="Tile[[64, 16], FP32]")
case("tile.matmul_acc", tile([64, 16], INT32), tile([64, 32], INT8), tile([32, 16], INT8),
     init_cond=True, expect="Tile[[64, 16], INT32]")
case("tile.matmul_bias", tile([64, 32], BF16), tile([32, 16], BF16), tile([1, 16], FP32),
     expect="Tile[[64, 16], FP32]")
case("tile.gemv", tile([1, 32], FP16), tile([32, 16], FP16), expect="Tile[[1, 16], FP32]")
case("tile.gemv_acc", tile([1, 16]), tile([1, 32]), tile([32, 16]), expect="Tile[[1, 16], FP32]")
case("tile.gemv_bias", tile([1, 32], INT8), tile([32, 16], INT8), tile([1, 16], INT32),
     expect="Tile[[1, 16], INT32]")
case("tile.tpush_to_aiv", A, split=1, expect="()")
case("tile.tpush_to_aic", A, split=0, id=2, expect="()")
case("tile.tpop_from_aic", shape=[32, 128], dtype=FP32, split=1, expect="Tile[[32, 128], FP32, Vec]")
case("tile.tpop_from_aiv", shape=[64, 128], dtype=FP16, expect="Tile[[64, 128], FP16, Mat]")
case("tile.tfree_to_aic", A, expect="()")
case("tile.tfree_to_aiv", A, expect="()")
# system
case("system.sync_set", 3, expect="()")
case("system.sync_wait", 3, expect="()")
case("system.syncall", expect="()")
case("system.available_cluster_count", expect="Scalar[INDEX]")
case("system.available_aiv_count", expect="Scalar[INDEX]")
case("system.sync_src", set_pipe=PipeType.MTE2, wait_pipe=PipeType.V, event_id=0, expect="()")
case("system.sync_dst", set_pipe=PipeType.MTE2, wait_pipe=PipeType.V, event_id=0, expect="()")
case("system.bar_v", expect="()")
case("system.bar_m", expect="()")
case("system.bar_all", expect="()")
case("system.fence", expect="()")
case("system.cacheinvalid", TA, [16, 16], [0, 0], expect="()")
case("system.set_ffts", tensor([256], INT64), expect="()")
case("system.task_invalid", expect="Scalar[TASK_ID]")
case("system.task_dummy", deps=(scalar(TASK_ID), array(4, TASK_ID), None), expect="Scalar[TASK_ID]")
# remainder, carry arithmetic, prelu, batched matmul, generated values, indexing
case("tile.rem", A, B, tile([2, 128]), expect=TILE_FULL)
case("tile.rems", IA, 3, tile([1, 128], INT32), expect="Tile[[64, 128], INT32]")
case("tile.addc", A, B, A, expect=TILE_FULL)
case("tile.subc", IA, IB, IA, expect="Tile[[64, 128], INT32]")
case("tile.addsc", A, 1.0, B, expect=TILE_FULL)
case("tile.subsc", IA, scalar(INT32), IB, expect="Tile[[64, 128], INT32]")
case("tile.prelu", A, B, A, expect=TILE_FULL)
case("tile.batch_matmul", tile([4, 16, 32], FP16), tile([32, 8], FP16), expect="Tile[[4, 16, 8], FP32]")
case("tensor.expand_clone", tensor([1, 16, 8]), tensor([4, 16, 8]), expect="Tensor[[4, 16, 8], FP32]")
case("tile.batch_matmul_acc", tile([4, 16, 8]), tile([4, 16, 32], FP16), tile([32, 8], FP16),
     expect="Tile[[4, 16, 8], FP32]")
case("tensor.arange", 0, [1, 64], expect="Tensor[[1, 64], INT32]")
case("tile.arange", scalar(INT32), [1, 16], dtype=INT16, descending=True, expect="Tile[[1, 16], INT16]")
case("tile.tri", -1, [8, 16], valid_shape=[4, 16], dtype=FP32, upper=True,
     expect="Tile[[8, 16], FP32, valid=[4, 16]]")
case("tile.gather", A, tile([64, 8], INT32), dim=1, expect="Tile[[64, 8], FP32]")
case("tensor.gather", tensor([64, 32], FP16), tensor([2, 8], INT16), expect="Tensor[[2, 8], FP16]")
case("tile.scatter", A, tile([64, 8], INT32), tile([64, 8]), expect=TILE_FULL)
case("tensor.scatter", tensor([4, 32], BF16), tensor([4, 8], INT16), tensor([4, 8], BF16), dim=1,
     expect="Tensor[[4, 32], BF16]")
case("tensor.gather_mask", tensor([8, 16]), mask_pattern=2, output_dtype=UINT32, expect="Tensor[[8, 8], UINT32]")
case("tile.gather_mask", tile([8, 16], valid=[8, 10]), mask_pattern=3, expect="Tile[[8, 4], FP32, valid=[8, 3]]")
case("tensor.scatter_mask", tensor([8, 4]), tensor([8, 16]), mask_pattern=6, expect="Tensor[[8, 16], FP32]")
case("tile.scatter_mask", tile([8, 16]), tile([8, 16]), mask_pattern=7, expect="Tile[[8, 16], FP32]")
for ns, make in (("tensor", tensor), ("tile", tile)):
    kind = "Tensor" if ns == "tensor" else "Tile"
    case(f"{ns}.gather_compare", make([16, 64], INT32), scalar(INT32), cmp_mode="eq", out_cols=8,
         expect=f"{kind}[[16, 8], INT32]")
    case(f"{ns}.gather_count", make([16, 64], FP16), scalar(FP16), cmp_mode=4, out_cols=8, count_dtype=UINT32,
         expect=f"{kind}[[1, 16], UINT32]")
    case(f"{ns}.scatter_update", make([32, 32]), make([2, 8], INT32), make([16, 32]), expect=f"{kind}[[32, 32], FP32]")
    case(f"{ns}.sort32", make([8, 64]), make([8, 64], UINT32), expect=f"{kind}[[8, 128], FP32]")
    case(f"{ns}.mrgsort", make([1, 256]), block_len=scalar(INT32), expect=f"{kind}[[1, 256], FP32]")
case("tensor.random", 1, 2, 3, 4, 5, 6, [4, 256], expect="Tensor[[4, 256], UINT32]")
case("tile.random", 1, 2, 3, 4, 5, 6, [16, 128], valid_shape=[10, 80], dtype=INT32, rounds=7,
     expect="Tile[[16, 128], INT32, valid=[10, 80]]")
case("tile.mscatter", tile([8, 32]), tile([8, 32], INT32), tensor([256]), expect="Tensor[[256], FP32]")
case("tile.mgather", tensor([64, 32], FP16), tile([16, 1], INT32, valid=[9, 1]),
     expect="Tile[[16, 32], FP16, valid=[9, 32]]")
case("tile.gatherb", tile([1, 256]), tile([4, 8], UINT32, valid=[3, 5]), output_dtype=INT8,
     expect="Tile[[4, 256], INT8, valid=[3, 160]]")
CONTEXT = handle("PrefetchAsyncContext", "ctx")
case("prefetch.make_context", expect="PrefetchAsyncContext")
case("prefetch.async_prefetch", tensor([1, 128]), CONTEXT, expect="AsyncEvent")
case("prefetch.session", CONTEXT, expect="AsyncSession")
case("prefetch.wait", handle("AsyncEvent", "evt"), handle("AsyncSession", "ses"), expect="Scalar[BOOL]")
# arrays
case("array.create", 16, INT32, expect="Array[16, INT32]")
case("array.get_element", array(16, TASK_ID), scalar(INT64, "i"), expect="Scalar[TASK_ID]")
case("array.update_element", array(8, FP16), 7, 0.5, expect="Array[8, FP16]")
# views and placement
case("tile.alloc", MemorySpace.Vec, 16384, expect="PtrType")
case("tile.extract", A, 0, 64, [16, 32], target_memory=MemorySpace.Left, expect="Tile[[16, 32], FP32, Left]")
case("tile.transpose_view", tile([1, 64, 128], BF16, mem=MemorySpace.Mat), expect="Tile[[1, 128, 64], BF16, Mat]")
case("tile.reinterpret_view", A, INT16, expect="Tile[[64, 256], INT16]")
case("tile.set_validshape", A, 32, scalar(INDEX), expect="Tile[[64, 128], FP32, valid=[32, s]]")
case("tensor.set_validshape", tensor([64, 128], FP32), 32, 128, expect="Tensor[[64, 128], FP32]")
case("tensor.view", tensor([2, 4, 8], FP32), [8, 8], expect="Tensor[[8, 8], FP32]")
case("tensor.fillpad", tensor([8, 8], FP32), expect="Tensor[[8, 8], FP32]")
case("tensor.fillpad_expand", tensor([8, 8], FP32), [16, 8], expect="Tensor[[16, 8], FP32]")
case("tile.fillpad_expand", tile([8, 8], valid=[4, 8]), [16, 8], expect="Tile[[16, 8], FP32]")
CASES["system.reserve_buffer"] = ((), {"name": "c2v", "size": 4096, "base": 0x1000}, "Scalar[INT32]")
CASES["system.import_peer_buffer"] = ((), {"name": "c2v", "peer_func": "aic_kernel"}, "Scalar[INT32]")
case("system.aic_initialize_pipe", dir_mask=1, slot_size=4096, slot_num=8, expect="()")
case("system.aiv_initialize_pipe", scalar(INT32), dir_mask=3, slot_size=512, local_slot_num=2, slot_num=4,
     expect="()")
CASES.update(DISTRIBUTED_CASES)


def test_every_registered_op_has_a_case():
    assert set(CASES) == set(REGISTRY), sorted(set(REGISTRY) ^ set(CASES))


@pytest.mark.parametrize("name", sorted(CASES))
def test_deduced_type(name):
    args, kwargs, expect = CASES[name]
    assert deduce(name, *args, **kwargs) == expect


@pytest.mark.parametrize("dtype,acc", [(FP16, FP32), (BF16, FP32), (FP32, FP32), (INT8, INT32)])
def test_tile_matmul_accumulates_wide(dtype, acc):
    assert deduce("tile.matmul", tile([16, 8], dtype), tile([8, 4], dtype)) == f"Tile[[16, 4], {acc.name}]"


def test_tensor_matmul_forms():
    assert deduce("tensor.matmul", tensor([8, 16]), tensor([16])) == "Tensor[[8], FP32]"
    assert deduce("tensor.matmul", tensor([16]), tensor([16, 4])) == "Tensor[[4], FP32]"
    assert deduce("tensor.matmul", tensor([16, 8]), tensor([16]), a_trans=True) == "Tensor[[8], FP32]"
    assert deduce("tensor.matmul", tensor([3, 1, 8, 16]), tensor([5, 16, 4])) == "Tensor[[3, 5, 8, 4], FP32]"
    assert deduce("tensor.matmul", tensor([8, 16], INT8), tensor([16, 4], INT8)) == "Tensor[[8, 4], INT32]"


def test_valid_shape_propagation():
    part = tile([64, 128], valid=[32, 128])
    assert deduce("tile.exp", part) == "Tile[[64, 128], FP32, valid=[32, 128]]"
    assert deduce("tile.add", part, tile([64, 128], valid=[64, 100])) == "Tile[[64, 128], FP32, valid=[32, 100]]"
    assert deduce("tile.row_sum", part, tile([64, 128])) == "Tile[[64, 1], FP32, valid=[32, 1]]"
    assert deduce("tile.transpose", part, 0, 1) == "Tile[[128, 64], FP32, valid=[128, 32]]"
    # a contiguous-prefix valid region survives a repartition
    assert deduce("tile.reshape", part, [128, 64]) == "Tile[[128, 64], FP32, valid=[64, 64]]"
    assert deduce("tile.reshape", tile([1, 64], valid=[1, 10]), [64]) == "Tile[[64], FP32, valid=[10]]"
    assert deduce("tile.slice", part, [16, 16], [24, 0]) == "Tile[[16, 16], FP32, valid=[8, 16]]"
    assert deduce("tile.load", TA, [0, 0], [64, 64], valid_shape=[10, 64]) == "Tile[[64, 64], FP32, valid=[10, 64]]"
    assert deduce("tile.slice", A, [1, 32], [0, 0], drop_dims=[0]) == "Tile[[1, 32], FP32]"  # tiles stay 2-D


def test_split_crossings_halve_rounding_up_and_carry_the_valid_region():
    # lane-agnostic, as the reference: each lane's own share is bound where the lane is known
    odd = tile([15, 16], valid=[13, 11])
    assert deduce("tile.aiv_shard", odd, mode=SplitMode.UP_DOWN) == "Tile[[8, 16], FP32, valid=[7, 11]]"
    assert deduce("tile.aiv_shard", odd, mode=SplitMode.LEFT_RIGHT) == "Tile[[15, 8], FP32, valid=[13, 6]]"
    half = tile([8, 16], valid=[7, 11])
    assert deduce("tile.aic_gather", half, mode=SplitMode.UP_DOWN) == "Tile[[16, 16], FP32, valid=[14, 11]]"


@pytest.mark.parametrize("op, expect", [
    *[(f"row_{r}", "Tile[[64, 1], FP32]") for r in ("sum", "max", "min", "prod")],
    *[(f"col_{r}", "Tile[[1, 128], FP32]") for r in ("sum", "max", "min", "prod")],
    ("row_argmax", "Tile[[64, 1], INT32]"), ("row_argmin", "Tile[[64, 1], INT32]"),
    ("col_argmax", "Tile[[1, 128], INT32]"), ("col_argmin", "Tile[[1, 128], INT32]"),
])
def test_tile_reductions_take_an_optional_scratch_tile(op, expect):
    assert deduce(f"tile.{op}", A) == expect
    assert deduce(f"tile.{op}", A, tmp_tile=None) == expect
    scratch = tile([64, 128], name="tmp")
    with_tmp = make_call(f"tile.{op}", [A, scratch])
    assert with_tmp.args == (A,) and with_tmp.kwargs["tmp_tile"] is scratch
    assert make_call(f"tile.{op}", [A]).kwargs == {}


def test_dynamic_dims_flow_through():
    from plang.ir import Var

    m = Var("M", scalar(INDEX).type)
    t = tensor([m, 64])
    assert deduce("tensor.exp", t) == "Tensor[[M, 64], FP32]"
    assert deduce("tensor.row_sum", t) == "Tensor[[M, 1], FP32]"
    assert deduce("tensor.matmul", t, tensor([64, 8])) == "Tensor[[M, 8], FP32]"
    assert deduce("tile.load", t, [0, 0], [16, 64], valid_shape=[m, 64]) == "Tile[[16, 64], FP32, valid=[M, 64]]"
    assert deduce("tensor.read", t, scalar(INT64, "i")) == "Scalar[FP32]"


def test_assemble_into_ddr_converts_and_fills_trailing_dims():
    """As the reference: a DDR target takes another dtype (converted like a store) and a
    lower-rank source, which fills the trailing dims at the offset."""
    got = deduce("tensor.assemble", tensor([2, 4, 16]), tensor([4, 16], BF16), [1, 0, 0])
    assert got == "Tensor[[2, 4, 16], FP32]"
