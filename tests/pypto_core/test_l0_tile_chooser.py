"""The L0 design points the reference's own system tests pin (a2a3 sizes, fp32 operands), and the
chooser's optimum checked against a brute-force scan of the same model."""

from __future__ import annotations

import itertools

import pytest

from plang.pypto_core.l0_tile_chooser import L0TileConfig, Stationarity, choose_l0_tile


def _a2a3(m: int, k: int, n: int, *, bytes_ab: int = 4, double_c: bool = False) -> L0TileConfig:
    cfg = L0TileConfig()
    cfg.M, cfg.K, cfg.N = m, k, n
    cfg.l0a_bytes = cfg.l0b_bytes = 64 * 1024
    cfg.l0c_bytes = 128 * 1024
    cfg.bytes_a = cfg.bytes_b = bytes_ab
    cfg.allow_a_stationary = cfg.allow_b_stationary = cfg.allow_k_boundary = True
    cfg.allow_double_buffer_c = double_c
    return cfg


@pytest.mark.parametrize("m, k, n, tile", [
    (16, 128, 128, (16, 128, 64)), (64, 192, 128, (64, 128, 64)),
    (64, 384, 256, (64, 256, 32)), (128, 384, 64, (128, 64, 64)),
])
def test_k_only_split(m, k, n, tile):
    r = choose_l0_tile(_a2a3(m, k, n))
    assert (r.m, r.n, r.k) == tile
    assert r.stationarity is Stationarity.OutputStationary and not r.double_buffer_c


@pytest.mark.parametrize("m, n, tile, stationarity, holds_a", [
    (160, 160, (80, 128), Stationarity.OutputStationary, None),
    (256, 256, (32, 256), Stationarity.BStationary, None),
    (384, 256, (32, 256), Stationarity.BStationary, None),
    (320, 320, (64, 128), Stationarity.OutputStationary, None),
    (16, 256, (16, 128), Stationarity.OutputStationary, True),
    (256, 16, (128, 16), Stationarity.OutputStationary, False),
])
def test_double_buffered_output_grid(m, n, tile, stationarity, holds_a):
    r = choose_l0_tile(_a2a3(m, 64, n, double_c=True))
    assert (r.m, r.n, r.k) == (*tile, 64) and r.stationarity is stationarity and r.double_buffer_c
    assert holds_a is None or r.os_holds_a is holds_a


def test_an_l0_sized_problem_is_one_block():
    r = choose_l0_tile(_a2a3(64, 64, 64, double_c=True))
    assert (r.m, r.n, r.k, r.double_buffer_c) == (64, 64, 64, False)


@pytest.mark.parametrize("m, k, n, bytes_ab", [(96, 160, 144, 2), (48, 320, 80, 4), (128, 96, 256, 1)])
def test_output_stationary_optimum_is_the_scanned_minimum(m, k, n, bytes_ab):
    cfg = _a2a3(m, k, n, bytes_ab=bytes_ab)
    cfg.allow_a_stationary = cfg.allow_b_stationary = False
    best = choose_l0_tile(cfg)
    walls = []
    for tm, tn, tk in itertools.product(range(16, m + 1, 16), range(16, n + 1, 16), range(16, k + 1, 16)):
        if tm * tk * bytes_ab * 2 > cfg.l0a_bytes or tk * tn * bytes_ab * 2 > cfg.l0b_bytes \
                or tm * tn * 4 > cfg.l0c_bytes:
            continue
        walls.append(_wall_of(cfg, tm, tn, tk))
    assert best.estimated_cost_cycles == min(walls)


def _wall_of(cfg: L0TileConfig, m: int, n: int, k: int) -> int:
    """The model's wall for one output-stationary tile, written out independently."""
    cdiv = lambda a, b: -(-a // b)  # noqa: E731
    tiles = cdiv(cfg.M, m) * cdiv(cfg.N, n)
    kt = cfg.mad_k_fractal_bytes // cfg.bytes_a
    passes = cfg.mad_fp32_passes if cfg.bytes_a == 4 else max(1, cfg.bytes_a // 2)
    full, tail = divmod(cfg.K, k)
    frac = full * cdiv(k, kt) + (cdiv(tail, kt) if tail else 0)
    mad = tiles * (cdiv(cfg.K, k) * cfg.mad_head + passes * cdiv(m, 16) * frac * cdiv(n, 16))
    a = cfg.bytes_a * cfg.M * cfg.K / cfg.bw_a
    b = cfg.bytes_b * cfg.K * cfg.N / cfg.bw_b
    load = min(a + b * cdiv(cfg.M, m), a * cdiv(cfg.N, n) + b) if k >= cfg.K \
        else a * cdiv(cfg.N, n) + b * cdiv(cfg.M, m)
    odd = cdiv(n, 8)
    while odd % 2 == 0:
        odd //= 2
    row = max(cfg.drain_row_cycles, 4 * n / cfg.bw_drain) + cfg.drain_penalty_cycles * (odd - 1)
    drain = tiles * (cfg.drain_fixed_cycles + m * row)
    return int(max(load, mad) + drain + 0.5)


def test_invalid_inputs_are_value_errors():
    with pytest.raises(ValueError, match="must all be positive"):
        choose_l0_tile(_a2a3(0, 64, 64))
    with pytest.raises(ValueError, match="below the cube minimum"):
        choose_l0_tile(_a2a3(8, 64, 64))
