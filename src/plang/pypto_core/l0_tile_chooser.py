"""`l0_tile_chooser`: the cube L0 design point of an `M x K x N` GEMM, under the reference's names.

A design point is an `[m, k] x [k, n]` block matmul, the operand that stays resident
(stationarity) and whether the L0C accumulator is double-buffered. The chooser scores every
legal point with the reference's documented roofline (its configuration fields and calibrated
a2a3 defaults) and returns the lowest wall-clock estimate, so the reference's harnesses that
assert a named K-split / A-stationary / B-stationary / double-buffered-C schedule see the same
choice. The terms, in core cycles:

- load: operand bytes over the L1->L0A / L0B bandwidths; a resident operand moves once, a
  streamed one once per tile of the other output axis. A full-K output-stationary point holds
  whichever operand is cheaper (`os_holds_a`); a split-K one streams both.
- mad: a head per block matmul plus `ceil(m/16) * k-fractals * ceil(n/16)` cube passes (fp32
  takes `mad_fp32_passes` per fractal); a K tail that is not a whole block counts at its width.
- drain: per output tile a fixed head plus, per row, the larger of a floor and the row's bytes
  over the FIXPIPE bandwidth, plus a penalty when the tile's count of 8-wide fractals is not a
  power of two.
- wall: `max(load, mad) + drain`; with a double-buffered L0C the drain overlaps the next
  tile's compute: `max(compute, drain) + min(compute, drain) / tiles`.

Ties break on padded volume, K steps, load, larger area, larger k. Richer schedules
(operand-stationary, double-buffered C) are considered only when the output-stationary
optimum tiles the problem at all, and replace it only when strictly faster. The simulated chip
itself runs cube kernels as native CPU code and does not use this design point.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum


class Stationarity(Enum):
    """Which GEMM operand stays in L0 across the tiling loops."""

    OutputStationary = 0
    AStationary = 1
    BStationary = 2


class L0TileConfig:
    """The problem, the L0 capacities, the cost-model coefficients (a2a3 defaults) and the gates
    selecting which schedules the caller can lower."""

    def __init__(self) -> None:
        self.M = self.N = self.K = 0
        self.l0a_bytes = self.l0b_bytes = self.l0c_bytes = 0
        self.bytes_a = self.bytes_b = 2
        self.bytes_c = 4
        self.min_m = self.min_n = self.min_k = 16
        self.align_m = self.align_n = self.align_k = 16
        self.l0c_align_m = 16  # physical accumulator rows are allocated in steps of this
        self.box_align_m = self.box_align_n = 1  # the caller's boxed Mat layout granularity
        self.max_n = self.max_n_pipelined = self.max_n_nested_pipelined = 0  # 0: unbounded
        self.allow_a_stationary = self.allow_b_stationary = False
        self.allow_double_buffer_c = False
        self.c_read = False
        self.bw_a, self.bw_b, self.bw_drain = 129.7, 85.4, 118.0  # bytes per cycle
        self.drain_fixed_cycles = 164.0
        self.drain_row_cycles = 4.45
        self.drain_penalty_cycles = 2.6
        self.drain_c0_bytes = 32
        self.mad_head = 21
        self.mad_k_fractal_bytes = 32
        self.mad_fp32_passes = 2
        self.allow_padding = False
        self.allow_k_boundary = False


@dataclass
class L0TileResult:
    """The chosen design point and its estimates."""

    m: int = 0
    n: int = 0
    k: int = 0
    estimated_traffic_bytes: int = 0
    estimated_cost_cycles: int = 0
    padded_compute_volume: int = 0
    stationarity: Stationarity = Stationarity.OutputStationary
    os_holds_a: bool = True
    double_buffer_c: bool = False
    perf_hint: str = ""


def _up(x: int, a: int) -> int:
    return -(-x // a) * a


def _cdiv(a: int, b: int) -> int:
    return -(-a // b)


def _odd_part(x: int) -> int:
    while x % 2 == 0:
        x //= 2
    return x


class _Model:
    """The roofline terms of one configuration."""

    def __init__(self, c: L0TileConfig) -> None:
        self.c = c

    def l0c_elements(self, m: int, n: int) -> int:
        c = self.c
        return _up(_up(m, c.box_align_m), c.l0c_align_m) * _up(n, c.box_align_n)

    def held_loads(self, m: int, n: int) -> tuple[float, float]:
        """Load cycles holding A (B streamed per m tile) and holding B (A streamed per n tile)."""
        c = self.c
        a, b = c.bytes_a * c.M * c.K / c.bw_a, c.bytes_b * c.K * c.N / c.bw_b
        return a + b * _cdiv(c.M, m), a * _cdiv(c.N, n) + b

    def holds_a(self, m: int, n: int) -> bool:
        held_a, held_b = self.held_loads(m, n)
        return held_a <= held_b

    def load(self, m: int, n: int, k: int, stat: Stationarity) -> float:
        c = self.c
        held_a, held_b = self.held_loads(m, n)
        if stat is Stationarity.AStationary:
            return held_a
        if stat is Stationarity.BStationary:
            return held_b
        if k >= c.K:
            return held_a if held_a <= held_b else held_b
        return (c.bytes_a * c.M * c.K * _cdiv(c.N, n) / c.bw_a
                + c.bytes_b * c.K * c.N * _cdiv(c.M, m) / c.bw_b)

    def traffic(self, m: int, n: int, k: int, stat: Stationarity) -> int:
        c = self.c
        a, b = c.bytes_a * c.M * c.K, c.bytes_b * c.K * c.N
        a_once = stat is Stationarity.AStationary or (
            stat is Stationarity.OutputStationary and k >= c.K and self.holds_a(m, n))
        b_once = stat is Stationarity.BStationary or (
            stat is Stationarity.OutputStationary and k >= c.K and not self.holds_a(m, n))
        return (a * (1 if a_once else _cdiv(c.N, n)) + b * (1 if b_once else _cdiv(c.M, m))
                + (2 if c.c_read else 1) * c.bytes_c * c.M * c.N)

    def mad(self, m: int, n: int, k: int) -> int:
        c = self.c
        kt = max(1, c.mad_k_fractal_bytes // c.bytes_a)
        passes = max(1, c.mad_fp32_passes) if c.bytes_a == 4 else max(1, c.bytes_a // 2)
        full, tail = divmod(c.K, k)
        fractals = full * _cdiv(k, kt) + (_cdiv(tail, kt) if tail else 0)
        per_tile = (full + (1 if tail else 0)) * c.mad_head \
            + passes * _cdiv(m, c.align_m) * fractals * _cdiv(n, c.align_n)
        return _cdiv(c.M, m) * _cdiv(c.N, n) * per_tile

    def drain(self, m: int, n: int) -> float:
        c = self.c
        fractals = _cdiv(n, max(1, c.drain_c0_bytes // c.bytes_c))
        row = max(c.drain_row_cycles, c.bytes_c * n / c.bw_drain) \
            + c.drain_penalty_cycles * (_odd_part(fractals) - 1)
        return _cdiv(c.M, m) * _cdiv(c.N, n) * (c.drain_fixed_cycles + m * row)

    def wall(self, m: int, n: int, k: int, stat: Stationarity, dbc: bool) -> int:
        compute = max(self.load(m, n, k, stat), float(self.mad(m, n, k)))
        drain = self.drain(m, n)
        if not dbc:
            return int(compute + drain + 0.5)
        tiles = _cdiv(self.c.M, m) * _cdiv(self.c.N, n)
        return int(max(compute, drain) + min(compute, drain) / tiles + 0.5)


def _legal_ks(c: L0TileConfig, m: int, n: int, a_elems: int, b_elems: int) -> range | list[int]:
    """Every aligned k whose `[m, k]` / `[k, n]` blocks fit the operand budgets; without
    padding or a K-boundary peel, divisors of K only."""
    cap = min(a_elems // _up(m, c.box_align_m), b_elems // _up(n, c.box_align_n))
    problem = max(_up(c.K, c.align_k), c.min_k) if c.allow_padding else c.K
    top = min(cap, problem) // c.align_k * c.align_k
    ks = range(c.min_k, top + 1, c.align_k)
    if c.allow_padding or (c.allow_k_boundary and c.K % c.align_k == 0):
        return ks
    return [k for k in ks if c.K % k == 0]


def _search(model: _Model, stat: Stationarity, dbc: bool, full_k: bool):
    """The best `(key, result)` of one schedule, or None when no tile is legal."""
    c = model.c
    moving_a = stat is not Stationarity.AStationary
    moving_b = stat is not Stationarity.BStationary
    a_elems = c.l0a_bytes // (c.bytes_a * (2 if moving_a else 1))
    b_elems = c.l0b_bytes // (c.bytes_b * (2 if moving_b else 1))
    c_elems = c.l0c_bytes // (c.bytes_c * (2 if dbc else 1))
    m_top = _up(c.M, c.align_m) if c.allow_padding else c.M
    n_top = _up(c.N, c.align_n) if c.allow_padding else c.N
    if c.max_n:
        n_top = min(n_top, c.max_n)
    best = None
    for m in range(c.min_m, m_top + 1, c.align_m):
        for n in range(c.min_n, n_top + 1, c.align_n):
            if model.l0c_elements(m, n) > c_elems:
                break
            rows_outer = stat is Stationarity.AStationary or (
                stat is Stationarity.OutputStationary and model.holds_a(m, n))
            if dbc and (c.N // n if rows_outer else c.M // m) < 2:
                continue  # the double-buffered loop needs two full tiles on its moving axis
            for k in _legal_ks(c, m, n, a_elems, b_elems):
                if (full_k and k != c.K) or not _n_fits(c, model, m, n, k, stat):
                    continue
                load = model.load(m, n, k, stat)
                wall = model.wall(m, n, k, stat, dbc)
                volume = _cdiv(c.M, m) * m * _cdiv(c.N, n) * n * _cdiv(c.K, k) * k
                key = (wall, volume, _cdiv(c.K, k), load, -m * n, -k)
                if best is None or key < best[0]:
                    best = (key, L0TileResult(m, n, k, model.traffic(m, n, k, stat), wall, volume, stat,
                                              model.holds_a(m, n), dbc))
    return best


def _n_fits(c: L0TileConfig, model: _Model, m: int, n: int, k: int, stat: Stationarity) -> bool:
    """The caller's N bounds for a full-K output grid whose N resource sits under a pipeline."""
    if not (k == c.K and (m != c.M or n != c.N)):
        return True
    pipelined = stat is not Stationarity.BStationary
    nested = stat is Stationarity.OutputStationary and model.holds_a(m, n)
    return not ((c.max_n_pipelined and pipelined and n > c.max_n_pipelined)
                or (c.max_n_nested_pipelined and nested and n > c.max_n_nested_pipelined))


def _validate(c: L0TileConfig) -> None:
    checks = [
        (min(c.M, c.N, c.K) > 0, f"M, N, K must all be positive (got {c.M}, {c.N}, {c.K})"),
        (min(c.l0a_bytes, c.l0b_bytes, c.l0c_bytes) > 0, "L0 capacities must be positive"),
        (min(c.bytes_a, c.bytes_b, c.bytes_c) > 0, "element byte sizes must be positive"),
        (min(c.min_m, c.min_n, c.min_k) > 0, "minimum tile dimensions must be positive"),
        (c.max_n == 0 or c.max_n >= c.min_n, f"max_n must be 0 (unbounded) or >= min_n (got {c.max_n})"),
        (min(c.align_m, c.align_n, c.align_k, c.l0c_align_m, c.box_align_m, c.box_align_n) > 0,
         "tile and physical L0C alignments must be positive"),
        (min(c.bw_a, c.bw_b, c.bw_drain) > 0, "roofline bandwidths must be strictly positive"),
        (c.allow_padding or (c.M >= c.min_m and c.N >= c.min_n and c.K >= c.min_k),
         f"allow_padding=False but M={c.M}, N={c.N}, K={c.K} is below the cube minimum tile "
         f"({c.min_m}, {c.min_n}, {c.min_k})"),
    ]
    for ok, message in checks:
        if not ok:
            raise ValueError(f"choose_l0_tile: {message}")


def choose_l0_tile(config: L0TileConfig) -> L0TileResult:
    """The lowest-wall design point; ValueError on invalid inputs or when no tile fits."""
    c = config
    _validate(c)
    model = _Model(c)
    found = _search(model, Stationarity.OutputStationary, False, False)
    if found is None:
        raise ValueError(f"choose_l0_tile: no legal (m, n, k) tile for M={c.M} N={c.N} K={c.K} in "
                         f"L0A={c.l0a_bytes} L0B={c.l0b_bytes} L0C={c.l0c_bytes} bytes")
    best = found[1]
    if (best.m, best.n, best.k) != (c.M, c.N, c.K):
        stats = [Stationarity.OutputStationary]
        stats += [Stationarity.AStationary] if c.allow_a_stationary else []
        stats += [Stationarity.BStationary] if c.allow_b_stationary else []
        for stat in stats:
            for dbc in (False, True) if c.allow_double_buffer_c else (False,):
                if stat is Stationarity.OutputStationary and not dbc:
                    continue
                other = _search(model, stat, dbc, full_k=True)
                if other is not None and other[1].estimated_cost_cycles < best.estimated_cost_cycles:
                    best = other[1]
    if c.M < c.min_m or c.N < c.min_n or c.K < c.min_k:
        best.perf_hint = (f"Matmul shape (M={c.M}, N={c.N}, K={c.K}) is below the cube minimum tile "
                          f"dimension {c.min_m}; tile padded up to ({best.m}, {best.n}, {best.k})")
    return best


__all__ = ["L0TileConfig", "L0TileResult", "Stationarity", "choose_l0_tile"]
