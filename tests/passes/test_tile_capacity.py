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


def test_each_space_has_its_own_capacity():
    src = """
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.AIC)
            def k(self, a: pl.Tensor[[256, 256], pl.BF16],
                  out: pl.Out[pl.Tensor[[256, 256], pl.BF16]]) -> pl.Tensor[[256, 256], pl.BF16]:
                t: pl.Tile[[256, 256], pl.BF16, pl.Mem.Mat] = pl.tile.load(a, [0, 0], [256, 256],
                                                                            target_memory=pl.MemorySpace.Mat)
                left: pl.Tile[[256, 256], pl.BF16, pl.Mem.Left] = pl.tile.move(
                    t, target_memory=pl.MemorySpace.Left)
                o = pl.tile.store(t, [0, 0], out)
                return o
    """
    with pytest.raises(PassError) as err:
        tile_capacity()(parse(src))  # 128 KiB fits Mat (512 KiB) but not Left (64 KiB)
    assert "tile 'left'" in err.value.message and "Left buffer's 65536 bytes" in err.value.message


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
