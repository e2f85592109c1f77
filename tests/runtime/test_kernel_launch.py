"""Compiled MLIR kernels run by the runtime through `LaunchableKernel`: plain and SPMD
launches, and Group tasks whose AIC kernel (matmul) and AIV lanes (vector work) talk through
the pipe adapter in both directions and every split mode; pipe failures (tile sizes that
disagree, deadlock, pipes outside a Group) raise instead of crashing or hanging. Results are
checked against torch."""

from __future__ import annotations

import pytest
import torch

from plang.codegen.kernel import compile_kernel
from plang.codegen.kernel.abi import EVENT_CROSSING, TO_AIC, TO_AIV, pipe_id
from plang.dtypes import FP32, INDEX
from plang.ir import FunctionType, ParamDirection, TensorType
from plang.ir.builder import IRBuilder
from plang.ir.expr import Add, Cast, ConstInt, Mul
from plang.ir.ops import make_call
from plang.runtime import ChipWorker, CompiledProgram, ParamSpec, PipeError, PipeSet, RunConfig, TaskError
from plang.runtime.kernel_launch import LaunchableKernel, pipe_name

IN, OUT = ParamDirection.In, ParamDirection.Out


def _program(name, signature, kernels, orchestration):
    return CompiledProgram(name, signature, orchestration,
                           {k: LaunchableKernel(v) for k, v in kernels.items()})


# ------------------------------------------------------------------ MLIR kernels, no pipes

def _axpy_kernel(shape):
    """out = 2 * x + y over one tile of `shape`."""
    b = IRBuilder()
    with b.function("axpy", type=FunctionType.InCore) as f:
        x = f.param("x", TensorType(list(shape), FP32))
        y = f.param("y", TensorType(list(shape), FP32))
        out = f.param("out", TensorType(list(shape), FP32), OUT)
        tx = b.let("tx", make_call("tile.load", [x, [0, 0], list(shape)]))
        ty = b.let("ty", make_call("tile.load", [y, [0, 0], list(shape)]))
        r = b.let("r", make_call("tile.add", [b.let("sx", make_call("tile.muls", [tx, 2.0])), ty]))
        b.eval(make_call("tile.store", [r, [0, 0], out]))
    return compile_kernel(f.function)


def test_plain_kernel_on_strided_views_through_chip_worker():
    shape = (4, 8)
    prog = _program("axpy", [ParamSpec("x", FP32, shape), ParamSpec("y", FP32, shape),
                             ParamSpec("out", FP32, shape, OUT)], {"axpy": _axpy_kernel(shape)},
                    lambda rt, x, y, out: rt.submit("axpy", (x, y, out), (IN, IN, OUT)))
    big_x, big_out = torch.randn(9, 20), torch.zeros(7, 13)
    x, y, out = big_x[2:6, 5:13], torch.randn(shape), big_out[1:5, 3:11]  # row-strided views
    with ChipWorker(RunConfig(clusters=2)) as worker:
        worker.run(prog, x, y, out)
    torch.testing.assert_close(out, 2 * x + y)
    untouched = big_out.clone()
    untouched[1:5, 3:11] = 0
    assert not untouched.any(), "the kernel wrote outside its view"


def _block_rows_kernel(rows_per_block, cols, blocks):
    """Block i writes rows [i * rows_per_block, ...) of out: x * 3 + block index."""
    shape = [rows_per_block * blocks, cols]
    b = IRBuilder()
    with b.function("block_rows", type=FunctionType.InCore) as f:
        x = f.param("x", TensorType(shape, FP32))
        out = f.param("out", TensorType(shape, FP32), OUT)
        bi = b.let("bi", make_call("tile.get_block_idx", []))
        r0 = b.let("r0", Mul(bi, ConstInt(rows_per_block, INDEX)))
        t = b.let("t", make_call("tile.load", [x, [r0, 0], [rows_per_block, cols]]))
        s = b.let("s", make_call("tile.muls", [t, 3.0]))
        fb = b.let("fb", make_call("tile.full", [[rows_per_block, cols], FP32, 0.0]))
        marker = b.let("marker", make_call("tile.adds", [fb, make_call("tile.get_block_idx", [])]))
        r = b.let("r", make_call("tile.add", [s, marker]))
        b.eval(make_call("tile.store", [r, [r0, 0], out]))
    return compile_kernel(f.function)


def test_spmd_kernel_blocks_write_disjoint_rows():
    rows, cols, blocks = 3, 10, 5
    shape = (rows * blocks, cols)
    kernel = _block_rows_kernel(rows, cols, blocks)
    prog = _program("rows", [ParamSpec("x", FP32, shape), ParamSpec("out", FP32, shape, OUT)],
                    {"block_rows": kernel},
                    lambda rt, x, out: rt.submit("block_rows", (x, out), (IN, OUT), core_num=blocks))
    x = torch.randn(shape)
    out = torch.full(shape, float("nan"))
    with ChipWorker(RunConfig(clusters=2)) as worker:
        worker.run(prog, x, out)
    expected = x * 3 + torch.arange(blocks, dtype=torch.float32).repeat_interleave(rows)[:, None]
    torch.testing.assert_close(out, expected)


def test_wrapper_forwards_load_name_and_reuses_its_context():
    kernel = _axpy_kernel((2, 3))
    loads = []
    kernel.load = lambda: loads.append(1)
    wrapped = LaunchableKernel(kernel)
    prog = CompiledProgram("p", [], lambda rt: None, {"axpy": wrapped})
    with ChipWorker(RunConfig(clusters=1)) as worker:
        worker.register(prog)
    assert loads == [1] and wrapped.kernel_name == "axpy"
    out = torch.zeros(2, 3)
    wrapped(torch.ones(2, 3), torch.ones(2, 3), out)
    ctx = wrapped._local.launch.ctx
    wrapped(torch.ones(2, 3), out, out)
    assert wrapped._local.launch.ctx is ctx
    torch.testing.assert_close(out, torch.full((2, 3), 5.0))


# ------------------------------------------------------------------ Group tasks with pipes

M, K, N, BLOCKS = 8, 12, 16, 4


def _idx(v: int) -> ConstInt:
    return ConstInt(v, INDEX)


def _lane_piece(split: int) -> tuple[int, int]:
    return {0: (M, N), 1: (M // 2, N), 2: (M, N // 2)}[split]


def _aic_kernel(split: int, push: bool = True):
    """For each of BLOCKS row blocks: c = a[blk] @ w goes to the AIV lanes; their result
    comes back assembled and is stored to out[blk]."""
    b = IRBuilder()
    with b.function(f"aic_mm_{split}" + ("" if push else "_silent"), type=FunctionType.AIC) as f:
        a = f.param("a", TensorType([BLOCKS * M, K], FP32))
        w = f.param("w", TensorType([K, N], FP32))
        out = f.param("out", TensorType([BLOCKS * M, N], FP32), OUT)
        tw = b.let("tw", make_call("tile.load", [w, [0, 0], [K, N]]))
        with b.for_range("blk", 0, BLOCKS) as loop:
            r0 = b.let("r0", Mul(loop.var, _idx(M)))
            ta = b.let("ta", make_call("tile.load", [a, [r0, 0], [M, K]]))
            c = b.let("c", make_call("tile.matmul", [ta, tw]))
            if push:
                b.eval(make_call("tile.tpush_to_aiv", [c], {"split": split}))
                r = b.let("r", make_call("tile.tpop_from_aiv", [], {"shape": [M, N], "dtype": FP32,
                                                                    "split": split}))
                b.eval(make_call("tile.store", [r, [r0, 0], out]))
                b.eval(make_call("tile.tfree_to_aiv", [r], {"split": split}))
            else:
                b.eval(make_call("tile.store", [c, [r0, 0], out]))
    return compile_kernel(f.function)


def _aiv_kernel(split: int, pop_shape: tuple[int, int] | None = None):
    """Each lane: y = relu(x) + 1 + 100 * lane on its piece of every block (split 0: the
    lane-uniform relu(x) + 1), y stored to its own rows of `lanes_out` and pushed back."""
    rows, cols = pop_shape or _lane_piece(split)
    b = IRBuilder()
    with b.function(f"aiv_post_{split}", type=FunctionType.AIV) as f:
        lanes_out = f.param("lanes_out", TensorType([2 * BLOCKS * rows, cols], FP32), OUT)
        lane = b.let("lane", make_call("tile.get_subblock_idx", []))
        bias = b.let("bias", Mul(lane, _idx(100 if split else 0)))
        with b.for_range("blk", 0, BLOCKS) as loop:
            x = b.let("x", make_call("tile.tpop_from_aic", [], {"shape": [rows, cols], "dtype": FP32,
                                                                "split": split}))
            y = b.let("y", make_call("tile.adds", [b.let("rx", make_call("tile.relu", [x])), 1.0]))
            y = b.let("yb", make_call("tile.adds", [y, Cast(bias, FP32)]))
            b.eval(make_call("tile.tfree_to_aic", [x], {"split": split}))
            r0 = b.let("r0", Mul(Add(Mul(lane, _idx(BLOCKS)), loop.var), _idx(rows)))
            b.eval(make_call("tile.store", [y, [r0, 0], lanes_out]))
            b.eval(make_call("tile.tpush_to_aic", [y], {"split": split}))
    return compile_kernel(f.function)


def _group_program(aic, aiv, lanes_rows: int, lanes_cols: int):
    def orchestration(rt, a, w, out, lanes_out):
        rt.submit_group("mm_post", [("AIC", aic.name, (a, w, out)), ("AIV", aiv.name, (lanes_out,))],
                        (a, w, out, lanes_out), (IN, IN, OUT, OUT))
        return out

    signature = [ParamSpec("a", FP32, (BLOCKS * M, K)), ParamSpec("w", FP32, (K, N)),
                 ParamSpec("out", FP32, (BLOCKS * M, N), OUT),
                 ParamSpec("lanes_out", FP32, (2 * BLOCKS * lanes_rows, lanes_cols), OUT)]
    return _program("mm_post", signature, {aic.name: aic, aiv.name: aiv}, orchestration)


def _lane_pieces(y: torch.Tensor, split: int) -> list[torch.Tensor]:
    """Each lane's piece of every block of `y`, stacked by block."""
    blocks = y.reshape(BLOCKS, M, N)
    if split == 0:
        return [blocks, blocks]
    return list(blocks.chunk(2, dim=1 if split == 1 else 2))


@pytest.mark.parametrize("split", [0, 1, 2])
def test_group_matmul_to_vector_lanes_and_back(split):
    """AIC matmul -> both AIV lanes (whole tile or halves) -> back to the AIC, BLOCKS tiles
    through 2-slot rings; each lane's results are also stored, to check its piece."""
    rows, cols = _lane_piece(split)
    prog = _group_program(_aic_kernel(split), _aiv_kernel(split), rows, cols)
    a, w = torch.randn(BLOCKS * M, K), torch.randn(K, N)
    out, lanes_out = torch.zeros(BLOCKS * M, N), torch.zeros(2 * BLOCKS * rows, cols)
    with ChipWorker(RunConfig(clusters=2, pipe_timeout=20.0)) as worker:
        worker.run(prog, a, w, out, lanes_out)
    y = torch.relu(a @ w) + 1
    pieces = _lane_pieces(y, split)
    for lane in range(2):
        got = lanes_out[lane * BLOCKS * rows:(lane + 1) * BLOCKS * rows].reshape(BLOCKS, rows, cols)
        torch.testing.assert_close(got, pieces[lane] + (100 * lane if split else 0), rtol=1e-5, atol=1e-4)
    expected = y.clone()
    if split:  # lane 1's piece carries its +100
        _lane_pieces(expected, split)[1].add_(100)
    torch.testing.assert_close(out, expected, rtol=1e-5, atol=1e-4)


def test_ends_disagreeing_on_tile_size_raise_instead_of_crashing():
    rows, cols = _lane_piece(1)
    prog = _group_program(_aic_kernel(1), _aiv_kernel(1, pop_shape=(rows, cols // 2)), rows, cols // 2)
    args = (torch.randn(BLOCKS * M, K), torch.randn(K, N), torch.zeros(BLOCKS * M, N),
            torch.zeros(2 * BLOCKS * rows, cols // 2))
    with ChipWorker(RunConfig(clusters=2, pipe_timeout=20.0)) as worker:
        with pytest.raises(TaskError, match=r"pipe [01] \(crossing 0, to AIV, AIV lane [01]\): open failed: "
                                            "the two ends opened it with different slot sizes"):
            worker.run(prog, *args)


def test_deadlock_times_out_naming_the_pipe_and_stores_nothing_after():
    """The AIV lanes wait for tiles the AIC never sends (it stores its own results); after
    the timeout the lanes store nothing of what they did not receive (zeros, not garbage)."""
    rows, cols = _lane_piece(0)
    prog = _group_program(_aic_kernel(0, push=False), _aiv_kernel(0), rows, cols)
    args = (torch.randn(BLOCKS * M, K), torch.randn(K, N), torch.zeros(BLOCKS * M, N),
            torch.zeros(2 * BLOCKS * rows, cols))
    with ChipWorker(RunConfig(clusters=2, pipe_timeout=0.3)) as worker:
        with pytest.raises(TaskError, match=r"crossing 0, to AIV, AIV lane [01]\): pop timed out"):
            worker.run(prog, *args)
    assert not args[3].any()


def test_pipe_use_outside_a_group_and_direct_launch_with_a_pipe_set():
    aiv = LaunchableKernel(_aiv_kernel(0))
    lanes_out = torch.zeros(2 * BLOCKS * M, N)
    with pytest.raises(PipeError, match="outside a Group"):
        aiv(lanes_out)
    pipes = PipeSet(timeout=0.2)
    try:
        with pytest.raises(PipeError, match=r"kernel aiv_post_0: pipe 0 \(crossing 0, to AIV, AIV lane 0\): "
                                             r"pop timed out .*after 0.2 s"):
            aiv(lanes_out, pipes=pipes, subblock_idx=0)
    finally:
        pipes.close()


def test_pipe_names_decode_the_abi_pipe_ids():
    assert pipe_name(pipe_id(3, TO_AIC, 1)) == "pipe 15 (crossing 3, to AIC, AIV lane 1)"
    assert pipe_name(pipe_id(0, TO_AIV, 0)) == "pipe 0 (crossing 0, to AIV, AIV lane 0)"
    assert pipe_name(pipe_id(EVENT_CROSSING + 5, TO_AIV, 1)) == "cross-core event 5 (to AIV, AIV lane 1)"
