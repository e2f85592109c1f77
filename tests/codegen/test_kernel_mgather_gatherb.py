# ruff: noqa: E501  (DSL source text)
"""`pl.tile.mgather` (rows or elements of a DDR tensor gathered into a Vec or Mat tile, with
the out-of-bounds policies) and `pl.tile.gatherb` (32-byte blocks of a tile by byte offset),
written as the reference's programs write them, on the chip and through the torch
reference, each against an expected result computed here with numpy."""

import numpy as np
import pytest
import torch

import plang as pl
from plang.debug import run_torch_ref

PAYLOADS = ["INT8", "UINT8", "INT16", "UINT16", "INT32", "UINT32", "BF16", "FP16", "FP32"]


def run_both(program, inputs: list[torch.Tensor], out: torch.Tensor) -> torch.Tensor:
    """The output on the chip; the torch reference must agree bit for bit."""
    chip = out.clone()
    pl.compile(program)(*inputs, chip)
    ref = run_torch_ref(program, *inputs, out.clone())
    assert torch.equal(chip.view(torch.uint8), ref.view(torch.uint8))
    return chip


def table(shape, name: str) -> torch.Tensor:
    n = int(np.prod(shape))
    return torch.arange(n).remainder(97).reshape(shape).to(getattr(pl, name).to_torch())


def as_bytes(t: torch.Tensor) -> np.ndarray:
    return t.contiguous().view(torch.uint8).numpy()


# -- gatherb --------------------------------------------------------------------------------

def gatherb_program(src_shape, src_dtype, offsets_shape, out_dtype, valid):
    out_cols = offsets_shape[1] * 32 // out_dtype.itemsize
    rows, src_cols = src_shape

    @pl.program
    class GatherB:
        @pl.function(type=pl.FunctionType.InCore)
        def kernel(self, src: pl.Tensor[src_shape, src_dtype], offset: pl.Tensor[offsets_shape, pl.UINT32],
                   out: pl.InOut[pl.Tensor[[offsets_shape[0], out_cols], out_dtype]]
                   ) -> pl.Tensor[[offsets_shape[0], out_cols], out_dtype]:
            s: pl.Tile[src_shape, src_dtype] = pl.load(src, [0, 0], src_shape)
            o: pl.Tile[offsets_shape, pl.UINT32] = pl.load(offset, [0, 0], offsets_shape, valid_shape=valid)
            g: pl.Tile[[offsets_shape[0], out_cols], out_dtype] = pl.tile.gatherb(s, o, output_dtype=out_dtype)
            return pl.store(g, [0, 0], out)

        @pl.function(type=pl.FunctionType.Orchestration)
        def orchestrator(self, src: pl.Tensor[src_shape, src_dtype], offset: pl.Tensor[offsets_shape, pl.UINT32],
                         out: pl.InOut[pl.Tensor[[offsets_shape[0], out_cols], out_dtype]]
                         ) -> pl.Tensor[[offsets_shape[0], out_cols], out_dtype]:
            return self.kernel(src, offset, out)

    return GatherB


def expected_gatherb(src: torch.Tensor, offsets: torch.Tensor, valid, out: torch.Tensor) -> torch.Tensor:
    """Each valid offset's 32 bytes of src's rows padded to 32 bytes (0 past the end)."""
    rows = src.shape[0]
    row_bytes = src.shape[1] * src.element_size()
    padded = np.zeros((rows, -(-row_bytes // 32) * 32), np.uint8)
    padded[:, :row_bytes] = as_bytes(src).reshape(rows, row_bytes)
    flat = padded.reshape(-1)
    got = np.zeros((offsets.shape[0], offsets.shape[1] * 32), np.uint8)
    for r in range(valid[0]):
        for j in range(valid[1]):
            at = int(offsets[r, j]) & 0xFFFFFFFF
            block = flat[at:at + 32]
            got[r, 32 * j:32 * j + block.size] = block
    return torch.from_numpy(got).view(out.dtype)


def check_gatherb(src_shape, src_name, offsets, out_name=None, valid=None):
    src_dtype, out_dtype = getattr(pl, src_name), getattr(pl, out_name or src_name)
    offsets = offsets.to(torch.int32)
    valid = list(valid or offsets.shape)
    program = gatherb_program(list(src_shape), src_dtype, list(offsets.shape), out_dtype, valid)
    src = table(src_shape, src_name)
    out = torch.zeros(offsets.shape[0], offsets.shape[1] * 32 // out_dtype.itemsize, dtype=out_dtype.to_torch())
    got = run_both(program, [src, offsets], out)
    assert torch.equal(got.view(torch.uint8), expected_gatherb(src, offsets, valid, got).view(torch.uint8))


def block_offsets(rows: int, per_row: int, pattern: str = "reverse") -> torch.Tensor:
    k = torch.arange(rows * per_row)
    blocks = rows * per_row - 1 - k if pattern == "reverse" else (k + 3) % (rows * per_row)
    return (blocks * 32).reshape(rows, per_row)


@pytest.mark.parametrize("name", PAYLOADS)
def test_gatherb_moves_blocks_of_every_payload(name):
    item = getattr(pl, name).itemsize
    check_gatherb((1, 32 * 32 // item), name, block_offsets(4, 8))


@pytest.mark.parametrize("pattern", ["reverse", "roll3"])
def test_gatherb_byte_offset_patterns(pattern):
    check_gatherb((1, 32 * 32), "UINT8", block_offsets(4, 8, pattern))


@pytest.mark.parametrize("src, out", [("INT16", "INT32"), ("UINT8", "UINT16"), ("INT32", "INT8"),
                                      ("FP32", "UINT8"), ("UINT32", "FP16")])
def test_gatherb_output_dtype_reads_the_same_bytes(src, out):
    check_gatherb((1, 32 * 32 // getattr(pl, src).itemsize), src, block_offsets(4, 8), out)


@pytest.mark.parametrize("valid", [(3, 8), (4, 5), (3, 5), (1, 1)])
def test_gatherb_valid_region_of_the_offsets(valid):
    check_gatherb((1, 256), "FP32", block_offsets(4, 8), valid=valid)


@pytest.mark.parametrize("shape", [(1, 8), (2, 16)])
def test_gatherb_offset_tile_shapes(shape):
    check_gatherb((1, shape[0] * shape[1] * 8), "FP32", block_offsets(*shape))


def test_gatherb_padded_rows_unaligned_offsets_and_the_end_of_the_source():
    # [3, 10] FP32: 40-byte rows padded to 64; offsets inside the padding, across rows, off any
    # element boundary, overlapping the end (its bytes past the end read 0) and far past it
    offsets = torch.tensor([[0, 40, 60, 64, 130, 3, 150, 0xFFFFFFE0 - (1 << 32)]])
    check_gatherb((3, 10), "FP32", offsets, "UINT8")


# -- mgather, Vec output --------------------------------------------------------------------

def mgather_vec_program(mem_shape, dtype, idx_shape, out_shape, valid, coalesce, oob):
    @pl.program
    class MGather:
        @pl.function(type=pl.FunctionType.InCore)
        def kernel(self, mem: pl.Tensor[mem_shape, dtype], idx: pl.Tensor[idx_shape, pl.INT32],
                   out: pl.InOut[pl.Tensor[out_shape, dtype]]) -> pl.Tensor[out_shape, dtype]:
            it: pl.Tile[idx_shape, pl.INT32] = pl.load(idx, [0, 0], idx_shape, valid_shape=valid)
            g: pl.Tile[out_shape, dtype] = pl.tile.mgather(mem, it, coalesce=coalesce, gather_oob=oob)
            return pl.store(g, [0, 0], out)

        @pl.function(type=pl.FunctionType.Orchestration)
        def orchestrator(self, mem: pl.Tensor[mem_shape, dtype], idx: pl.Tensor[idx_shape, pl.INT32],
                         out: pl.InOut[pl.Tensor[out_shape, dtype]]) -> pl.Tensor[out_shape, dtype]:
            return self.kernel(mem, idx, out)

    return MGather


def policy(keys: np.ndarray, extent: int, oob: str) -> tuple[np.ndarray, np.ndarray]:
    """(indices to read, whether each reads) of unsigned keys under an out-of-bounds policy."""
    keys = keys.astype(np.int64) & 0xFFFFFFFF
    if oob == "clamp":
        keys = np.minimum(keys, extent - 1)
    elif oob == "wrap":
        keys = keys % extent
    inside = keys < extent
    return np.where(inside, keys, 0), inside


ROW_KEYS = [63, 2, 41, 7, 31, 0, 18, 55, 4, 29, 13, 47, 8, 38, 22, 60]
OOB_KEYS = [-1, 64, 65, 7, 80, 0, 18, 55, 4, 70, 13, 47, 8, 38, 22, 60]


def check_mgather_rows(name="FP32", valid_rows=16, column=False, oob="undefined", mem_shape=(64, 32)):
    dtype = getattr(pl, name)
    keys = OOB_KEYS if oob != "undefined" else ROW_KEYS
    idx_shape = [16, 1] if column else [1, 16]
    valid = [valid_rows, 1] if column else [1, valid_rows]
    cols = mem_shape[-1]
    program = mgather_vec_program(list(mem_shape), dtype, idx_shape, [16, cols], valid, "row", oob)
    mem = table(mem_shape, name)
    idx = torch.tensor(keys, dtype=torch.int32).reshape(idx_shape)
    got = run_both(program, [mem, idx], torch.zeros(16, cols, dtype=dtype.to_torch()))
    rows = mem.reshape(-1, cols)
    at, inside = policy(np.array(keys[:valid_rows]), rows.shape[0], oob)
    expected = torch.zeros_like(got)
    for r in range(valid_rows):
        if inside[r]:
            expected[r] = rows[int(at[r])]
    assert torch.equal(got.view(torch.uint8), expected.view(torch.uint8))


@pytest.mark.parametrize("name", PAYLOADS)
def test_mgather_rows_of_every_payload(name):
    check_mgather_rows(name)


@pytest.mark.parametrize("valid_rows", [1, 9, 16])
def test_mgather_rows_follow_the_index_valid_region(valid_rows):
    check_mgather_rows(valid_rows=valid_rows)


@pytest.mark.parametrize("oob", ["clamp", "wrap", "zero", "undefined"])
def test_mgather_rows_out_of_bounds_policies(oob):
    check_mgather_rows(oob=oob, valid_rows=16 if oob != "undefined" else 9)


def test_mgather_rows_from_a_column_index_and_a_rank3_table():
    check_mgather_rows(column=True, valid_rows=11)
    check_mgather_rows("BF16", mem_shape=(4, 16, 24), oob="wrap")


def check_mgather_elems(name="FP32", valid=(8, 32), oob="undefined"):
    dtype = getattr(pl, name)
    n = 8 * 32
    keys = np.arange(n - 1, -1, -1) if oob == "undefined" else np.arange(n) - 4
    if oob != "undefined":
        keys[:4] = [-1, n, n + 1, 2 * n + 3]
    keys = keys.reshape(8, 32)
    program = mgather_vec_program([n], dtype, [8, 32], [8, 32], list(valid), "elem", oob)
    mem = table([n], name)
    got = run_both(program, [mem, torch.from_numpy(keys.astype(np.int32))],
                   torch.zeros(8, 32, dtype=dtype.to_torch()))
    at, inside = policy(keys, n, oob)
    inside[valid[0]:], inside[:, valid[1]:] = False, False
    expected = as_bytes(mem).reshape(n, -1)[at]  # [8, 32, itemsize]
    expected[~inside] = 0
    assert np.array_equal(as_bytes(got).reshape(expected.shape), expected)


@pytest.mark.parametrize("valid", [(8, 32), (5, 32), (8, 19), (5, 19), (1, 1)])
def test_mgather_elements_follow_the_index_valid_region(valid):
    check_mgather_elems(valid=valid)


@pytest.mark.parametrize("name", PAYLOADS)
def test_mgather_elements_of_every_payload(name):
    check_mgather_elems(name)


@pytest.mark.parametrize("oob", ["clamp", "wrap", "zero"])
def test_mgather_elements_out_of_bounds_policies(oob):
    check_mgather_elems(oob=oob)


# -- mgather, Mat output (read by the cube: eye @ gathered) ----------------------------------

MAT_PROGRAM = """
import plang as pl


@pl.program
class Mat:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, mem: pl.Tensor[MEM, pl.DT], idx: pl.Tensor[IDX, pl.INT32], SCRATCH_PARAM
               eye: pl.Tensor[[32, 32], pl.DT], out: pl.InOut[pl.Tensor[[ROWS, 32], pl.ACC]]
               ) -> pl.Tensor[[ROWS, 32], pl.ACC]:
        g: pl.Tile[[32, 32], pl.DT] = pl.tile.mgather(mem, idx, coalesce="COALESCE", gather_oob="OOB",
                                                      target_memory=pl.MemorySpace.Mat, SCRATCH_ARG
                                                      valid_shape=VALID)
        e: pl.Tile[[32, 32], pl.DT] = pl.load(eye, [0, 0], [32, 32], valid_shape=[32, ROWS],
                                              target_memory=pl.MemorySpace.Mat)
        p: pl.Tile[[32, 32], pl.ACC] = pl.matmul(e, g)
        v: pl.Tile[[ROWS, 32], pl.ACC] = pl.tile.slice(p, [ROWS, 32], [0, 0])
        return pl.store(v, [0, 0], out)

    @pl.function(type=pl.FunctionType.Orchestration)
    def orchestrator(self, mem: pl.Tensor[MEM, pl.DT], idx: pl.Tensor[IDX, pl.INT32], SCRATCH_PARAM
                     eye: pl.Tensor[[32, 32], pl.DT], out: pl.InOut[pl.Tensor[[ROWS, 32], pl.ACC]]
                     ) -> pl.Tensor[[ROWS, 32], pl.ACC]:
        return self.kernel(mem, idx, SCRATCH_PASS eye, out)
"""


def mgather_mat_program(dtype, acc, coalesce, oob, valid, scratch_n):
    """`eye @ mgather(..., target_memory=Mat)`, sliced to the valid rows: the cube reads the
    gathered tile (the reference's hardware test of the Mat form)."""
    by_row = coalesce == "row"
    text = MAT_PROGRAM
    for key, value in (("SCRATCH_PARAM", "" if by_row else f"scratch: pl.Tensor[[{scratch_n}], pl.DT],"),
                       ("SCRATCH_ARG", "" if by_row else "scratch=scratch,"),
                       ("SCRATCH_PASS", "" if by_row else "scratch,"),
                       ("MEM", "[64, 32]" if by_row else "[1024]"), ("IDX", "[1, 32]" if by_row else "[32, 32]"),
                       ("ROWS", str(valid[0])), ("VALID", str(list(valid))), ("COALESCE", coalesce),
                       ("OOB", oob), ("pl.DT", f"pl.{dtype.name}"), ("pl.ACC", f"pl.{acc.name}")):
        text = text.replace(key, value)
    return pl.parse(text)


def check_mgather_mat(coalesce, name="FP16", oob="undefined", valid=(32, 32), scratch_n=32 * 32):
    dtype = getattr(pl, name)
    acc = pl.INT32 if name == "INT8" else pl.FP32
    program = mgather_mat_program(dtype, acc, coalesce, oob, list(valid), scratch_n)
    if coalesce == "row":
        mem = table([64, 32], name)
        keys = ([-1, 64, 65, 7, 80, 0] + [(i * 29 + 11) % 64 for i in range(26)] if oob != "undefined"
                else [(i * 29 + 7) % 64 for i in range(32)])
        keys = np.array([keys])
        extra = []
    else:
        mem = table([32 * 32], name)
        keys = np.arange(1023, -1, -1) if oob == "undefined" else np.arange(1024) - 4
        if oob != "undefined":
            keys[:4] = [-1, 1024, 1025, 2051]
        keys = keys.reshape(32, 32)
        extra = [torch.full((scratch_n,), 7).to(dtype.to_torch())]
    eye = torch.eye(32).to(dtype.to_torch())
    inputs = [mem, torch.from_numpy(keys.astype(np.int32)), *extra, eye]
    got = run_both(program, inputs, torch.zeros(valid[0], 32, dtype=acc.to_torch()))
    if extra:
        assert torch.equal(extra[0], torch.full((scratch_n,), 7).to(dtype.to_torch()))  # untouched on the CPU
    values = mem.reshape(64, 32) if coalesce == "row" else mem
    at, inside = policy(keys.reshape(-1) if coalesce == "row" else keys, values.shape[0], oob)
    gathered = values[torch.from_numpy(at)].to(acc.to_torch())
    gathered[torch.from_numpy(~inside)] = 0
    expected = torch.zeros(valid[0], 32, dtype=acc.to_torch())
    expected[:, :valid[1]] = gathered[:valid[0], :valid[1]]
    assert torch.equal(got, expected)


@pytest.mark.parametrize("coalesce", ["row", "elem"])
@pytest.mark.parametrize("name", ["INT8", "BF16", "FP16", "FP32"])
def test_mgather_into_mat_feeds_the_cube(coalesce, name):
    check_mgather_mat(coalesce, name)


@pytest.mark.parametrize("coalesce", ["row", "elem"])
@pytest.mark.parametrize("oob", ["clamp", "wrap", "zero"])
def test_mgather_into_mat_out_of_bounds_policies(coalesce, oob):
    check_mgather_mat(coalesce, oob=oob)


@pytest.mark.parametrize("coalesce", ["row", "elem"])
@pytest.mark.parametrize("valid", [(16, 32), (32, 21), (16, 21)])
def test_mgather_into_mat_valid_region(coalesce, valid):
    check_mgather_mat(coalesce, valid=valid)


def test_mgather_into_mat_takes_a_larger_scratch():
    check_mgather_mat("elem", scratch_n=32 * 32 + 32)


def test_programs_print_and_parse_back():
    rows = mgather_vec_program([64, 32], pl.FP32, [1, 16], [16, 32], [1, 9], "row", "wrap")
    mat = mgather_mat_program(pl.BF16, pl.FP32, "elem", "clamp", [16, 21], 1024)
    blocks = gatherb_program([1, 256], pl.FP32, [4, 8], pl.INT16, [3, 5])
    for program, spelled in ((rows, "pl.tile.mgather(mem, it, gather_oob='wrap')"),
                             (mat, "scratch=scratch, valid_shape=[16, 21]"),
                             (blocks, "pl.tile.gatherb(s, o, output_dtype=pl.INT16)")):
        text = program.as_python()
        assert spelled in text
        pl.ir.assert_structural_equal(program, pl.parse(text))


def test_the_unified_spellings_reach_the_tile_ops():
    @pl.program
    class Unified:
        @pl.function(type=pl.FunctionType.InCore)
        def kernel(self, mem: pl.Tensor[[64, 8], pl.FP32], idx: pl.Tensor[[1, 8], pl.INT32],
                   offset: pl.Tensor[[1, 8], pl.UINT32], out: pl.InOut[pl.Tensor[[1, 64], pl.FP32]]
                   ) -> pl.Tensor[[1, 64], pl.FP32]:
            rows = pl.mgather(mem, pl.load(idx, [0, 0], [1, 8]))  # [8, 8] FP32: 32-byte rows
            blocks = pl.gatherb(rows, pl.load(offset, [0, 0], [1, 8]))
            return pl.store(blocks, [0, 0], out)

        @pl.function(type=pl.FunctionType.Orchestration)
        def orchestrator(self, mem: pl.Tensor[[64, 8], pl.FP32], idx: pl.Tensor[[1, 8], pl.INT32],
                         offset: pl.Tensor[[1, 8], pl.UINT32], out: pl.InOut[pl.Tensor[[1, 64], pl.FP32]]
                         ) -> pl.Tensor[[1, 64], pl.FP32]:
            return self.kernel(mem, idx, offset, out)

    assert "pl.tile.mgather(" in Unified.as_python() and "pl.tile.gatherb(" in Unified.as_python()
    mem = torch.randn(64, 8)
    idx = torch.randperm(64)[:8].to(torch.int32).reshape(1, 8)
    offset = (torch.arange(7, -1, -1) * 32).to(torch.int32).reshape(1, 8)  # the rows reversed
    got = run_both(Unified, [mem, idx, offset], torch.zeros(1, 64))
    assert torch.equal(got, mem[idx[0].long().flip(0)].reshape(1, 64))
