"""`l0_tile_chooser`: pick a cube L0 design point — an `[m, k] x [k, n]` block matmul and which
operand stays resident — for an `M x K x N` GEMM, under the reference's configuration names.

The cost model is plang's own roofline: each candidate's operand traffic (bytes moved into
L0A / L0B at their bandwidths), plus a fixed head per block matmul and the drain of the
`[m, n]` accumulator, whichever of (operand traffic, compute) is larger. A-stationary keeps a
full-K `[m, K]` lhs block resident while the n loop runs (A moves once), B-stationary the
`[K, n]` rhs block over the m loop, output-stationary reloads both. The simulated chip itself
does not use this design point (its cube kernels are native CPU code); the chooser answers
what the reference's harnesses ask of it.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from enum import Enum


class Stationarity(Enum):
    """Which GEMM operand stays in L0 across the tiling loops."""

    OutputStationary = 0
    AStationary = 1
    BStationary = 2


class L0TileConfig:
    """The problem, the L0 capacities and the gates of `choose_l0_tile` (defaults: a2a3)."""

    def __init__(self) -> None:
        self.M = self.N = self.K = 0
        self.l0a_bytes = self.l0b_bytes = 64 * 1024
        self.l0c_bytes = 128 * 1024
        self.bytes_a = self.bytes_b = 2
        self.bytes_c = 4
        self.min_m = self.min_n = self.min_k = 16
        self.align_m = self.align_n = self.align_k = 16
        self.l0c_align_m = self.box_align_m = self.box_align_n = 16
        self.max_n = self.max_n_pipelined = self.max_n_nested_pipelined = 0  # 0: no bound
        self.allow_a_stationary = self.allow_b_stationary = True
        self.allow_double_buffer_c = False
        self.c_read = False
        self.bw_a = self.bw_b = 64.0  # bytes per cycle
        self.bw_drain = 32.0
        self.drain_fixed_cycles = 64.0
        self.drain_row_cycles = 1.0
        self.drain_penalty_cycles = 0.0
        self.drain_c0_bytes = 32
        self.mad_head = 32
        self.mad_k_fractal_bytes = 32
        self.mad_fp32_passes = 2
        self.allow_padding = True
        self.allow_k_boundary = True


@dataclass
class L0TileResult:
    """The chosen design point and its estimates."""

    m: int
    n: int
    k: int
    estimated_traffic_bytes: int
    estimated_cost_cycles: int
    padded_compute_volume: int
    stationarity: Stationarity
    os_holds_a: bool
    double_buffer_c: bool
    perf_hint: str


def _extents(total: int, align: int, low: int, bound: int, whole_only: bool) -> list[int]:
    """Candidate block extents of one axis: aligned steps up to the (aligned) total, and the
    total itself; without padding only divisors of the total."""
    step = max(1, align)
    top = min(total, bound) if bound else total
    sizes = set(range(max(step, low), top + 1, step)) | ({total} if not bound or total <= bound else set())
    if whole_only:
        sizes = {s for s in sizes if total % s == 0}
    return sorted(s for s in sizes if s > 0)


def choose_l0_tile(config: L0TileConfig) -> L0TileResult:
    """The cheapest design point under the roofline model; ValueError when none fits."""
    c = config
    if min(c.M, c.N, c.K) <= 0:
        raise ValueError(f"choose_l0_tile needs positive M, N, K, got M={c.M} N={c.N} K={c.K}")
    whole = not c.allow_padding
    best: tuple[float, L0TileResult] | None = None
    ks = _extents(c.K, c.align_k, c.min_k, 0, whole or not c.allow_k_boundary)
    for m, n, k in itertools.product(_extents(c.M, c.align_m, c.min_m, 0, whole),
                                     _extents(c.N, c.align_n, c.min_n, c.max_n, whole), ks):
        if m * k * c.bytes_a > c.l0a_bytes or k * n * c.bytes_b > c.l0b_bytes:
            continue
        for double_c in (True, False) if c.allow_double_buffer_c else (False,):
            if m * n * c.bytes_c * (2 if double_c else 1) > c.l0c_bytes:
                continue
            for mode in Stationarity:
                if mode is Stationarity.AStationary and not (c.allow_a_stationary and k == c.K):
                    continue
                if mode is Stationarity.BStationary and not (c.allow_b_stationary and k == c.K):
                    continue
                result = _estimate(c, m, n, k, mode, double_c)
                key = (result.estimated_cost_cycles, result.estimated_traffic_bytes, -m * n * k)
                if best is None or key < best[0]:
                    best = (key, result)
    if best is None:
        raise ValueError(f"no L0 tile of M={c.M} N={c.N} K={c.K} fits L0A={c.l0a_bytes} "
                         f"L0B={c.l0b_bytes} L0C={c.l0c_bytes} bytes")
    return best[1]


def _estimate(c: L0TileConfig, m: int, n: int, k: int, mode: Stationarity, double_c: bool) -> L0TileResult:
    bm, bn, bk = math.ceil(c.M / m), math.ceil(c.N / n), math.ceil(c.K / k)
    a_bytes, b_bytes = bm * m * bk * k * c.bytes_a, bn * n * bk * k * c.bytes_b
    a_moves = 1 if mode is Stationarity.AStationary else bn
    b_moves = 1 if mode is Stationarity.BStationary else bm
    traffic = a_bytes * a_moves + b_bytes * b_moves
    volume = bm * m * bn * n * bk * k
    passes = c.mad_fp32_passes if c.bytes_a >= 4 else 1
    mads = volume * c.bytes_a * passes / (16 * 16 * max(1, c.mad_k_fractal_bytes))
    compute = mads + bm * bn * bk * c.mad_head
    load = a_bytes * a_moves / c.bw_a + b_bytes * b_moves / c.bw_b
    drain_one = c.drain_fixed_cycles + m * c.drain_row_cycles + m * n * c.bytes_c / c.bw_drain
    drain = bm * bn * drain_one * (0.5 if double_c else 1.0) + c.drain_penalty_cycles
    cycles = max(load, compute) + drain
    hint = (f"{mode.name} {m}x{n}x{k}: {bm * bn} output blocks, K in {bk} step(s)"
            + (", double-buffered L0C" if double_c else ""))
    return L0TileResult(m, n, k, int(traffic + c.M * c.N * c.bytes_c), int(cycles), volume, mode,
                        mode is not Stationarity.BStationary, double_c, hint)


__all__ = ["L0TileConfig", "L0TileResult", "Stationarity", "choose_l0_tile"]
