"""TileCapacity: each tile of a core function fits its on-chip buffer."""

from __future__ import annotations

import pytest
from pass_testing import line_of, parse

from plang.passes import PassError, tile_capacity


def test_oversized_vec_tile_names_value_bytes_and_capacity():
    src = """
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.AIV)
            def k(self, x: pl.Tensor[[256, 256], pl.FP32],
                  out: pl.Out[pl.Tensor[[256, 256], pl.FP32]]) -> pl.Tensor[[256, 256], pl.FP32]:
                t: pl.Tile[[256, 256], pl.FP32, pl.Mem.Vec] = pl.tile.load(x, [0, 0], [256, 256],
                                                                            target_memory=pl.MemorySpace.Vec)
                o = pl.tile.store(t, [0, 0], out)
                return o
    """
    with pytest.raises(PassError) as err:
        tile_capacity()(parse(src))
    assert "tile 't' in 'k' is Tile[[256, 256], FP32, Mem.Vec] = 262144 bytes, more than the Vec " \
           "buffer's 196608 bytes" in err.value.message
    assert err.value.line == line_of(src, "t: pl.Tile")


def _left_tile_program(rows: int) -> str:
    return f"""
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.AIC)
            def k(self, a: pl.Tensor[[{rows}, 256], pl.BF16],
                  out: pl.Out[pl.Tensor[[{rows}, 256], pl.BF16]]) -> pl.Tensor[[{rows}, 256], pl.BF16]:
                left: pl.Tile[[{rows}, 256], pl.BF16, pl.Mem.Left] = pl.tile.create(
                    [{rows}, 256], dtype=pl.BF16, target_memory=pl.MemorySpace.Left)
                o = pl.tile.store(left, [0, 0], out)
                return o
    """


def test_l0_tiles_beyond_l0_are_bounded_by_mat():
    prog = parse(_left_tile_program(256))  # 128 KiB: over Left (64 KiB), split at L0; fits Mat
    assert tile_capacity()(prog) is prog
    with pytest.raises(PassError) as err:
        tile_capacity()(parse(_left_tile_program(2048)))  # 1 MiB: over Mat (512 KiB)
    assert "tile 'left' in 'k' is Tile[[2048, 256], BF16, Mem.Left] = 1048576 bytes, more than the " \
           "Mat buffer's 524288 bytes it is staged from" in err.value.message


def test_fitting_tiles_and_host_tensors_pass():
    prog = parse("""
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.AIV)
            def k(self, x: pl.Tensor[[4096, 4096], pl.FP32],
                  out: pl.Out[pl.Tensor[[4096, 4096], pl.FP32]]) -> pl.Tensor[[4096, 4096], pl.FP32]:
                t: pl.Tile[[128, 128], pl.FP32, pl.Mem.Vec] = pl.tile.load(x, [0, 0], [128, 128],
                                                                            target_memory=pl.MemorySpace.Vec)
                o = pl.tile.store(t, [0, 0], out)
                return o
    """)
    assert tile_capacity()(prog) is prog
