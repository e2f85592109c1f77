"""`Isa`: the instruction set kernels are generated for, chosen once per compile.

A level is named like the x86-64 psABI micro-architecture levels — `x86-64` (SSE2),
`x86-64-v2` (SSE4.2), `x86-64-v3` (AVX2, FMA, F16C), `x86-64-v4` (AVX-512 F/BW/CD/DQ/VL, plus
BF16, VNNI and AMX-BF16 tiles where the host has them) — or `aarch64` (NEON). A spec may add or drop LLVM
features after the level: `"x86-64-v4,-avx512bf16"` is AVX-512 without BF16 instructions.

The default is `$PLANG_ISA`, else the host's best level. Lowerings read the facts below
(vector width, register count, which instructions exist); the LLVM functions of a kernel
carry `cpu` and `features` as their target attributes, so an AVX-512 host builds and runs
the AVX2 and SSE2 code of the lower levels. `key()` is part of every compile and cache key.
"""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass

from ..errors import Error
from . import host

ENV_VAR = "PLANG_ISA"

# LLVM feature name -> the host CPU flag (/proc/cpuinfo) that says it is there
_X86_FLAG = {
    "sse": "sse", "sse2": "sse2", "cx16": "cx16", "sahf": "lahf_lm", "popcnt": "popcnt",
    "sse3": "pni", "ssse3": "ssse3", "sse4.1": "sse4_1", "sse4.2": "sse4_2", "avx": "avx",
    "avx2": "avx2", "bmi": "bmi1", "bmi2": "bmi2", "f16c": "f16c", "fma": "fma", "lzcnt": "abm",
    "movbe": "movbe", "xsave": "xsave", "avx512f": "avx512f", "avx512bw": "avx512bw",
    "avx512cd": "avx512cd", "avx512dq": "avx512dq", "avx512vl": "avx512vl",
    "evex512": "avx512f", "avx512bf16": "avx512_bf16", "avx512vnni": "avx512_vnni",
    "amx-tile": "amx_tile", "amx-bf16": "amx_bf16",
}
_AARCH64_FLAG = {"neon": "asimd", "fullfp16": "asimdhp", "bf16": "bf16"}

# level -> (LLVM target-cpu, features added to the level below, optional host extras)
_LEVELS: dict[str, tuple[str, tuple[str, ...], tuple[str, ...]]] = {
    "x86-64": ("x86-64", ("sse", "sse2"), ()),
    "x86-64-v2": ("x86-64-v2", ("cx16", "sahf", "popcnt", "sse3", "ssse3", "sse4.1", "sse4.2"), ()),
    "x86-64-v3": ("x86-64-v3", ("avx", "avx2", "bmi", "bmi2", "f16c", "fma", "lzcnt", "movbe", "xsave"),
                  ()),
    "x86-64-v4": ("x86-64-v4", ("avx512f", "avx512bw", "avx512cd", "avx512dq", "avx512vl", "evex512"),
                  ("avx512bf16", "avx512vnni", "amx-tile", "amx-bf16")),
    "aarch64": ("generic", ("neon",), ("fullfp16", "bf16")),
}
_X86_LEVELS = ("x86-64", "x86-64-v2", "x86-64-v3", "x86-64-v4")


class IsaError(Error, ValueError):
    """An unknown ISA spec, or one this host cannot run."""


@dataclass(frozen=True)
class Isa:
    """A kernel target: level name, LLVM `cpu` and `features`, and the host's last-level
    cache size (the non-temporal store threshold)."""

    name: str
    arch: str
    cpu: str
    features: frozenset
    llc_bytes: int | None = None

    # -- construction -------------------------------------------------------------------
    @staticmethod
    @functools.cache
    def parse(spec: str) -> Isa:
        """`"x86-64-v3"`, `"x86-64-v4,-avx512bf16"`, `"host"` (the host's best level)."""
        parts = [p.strip() for p in spec.split(",") if p.strip()]
        if not parts:
            raise IsaError(f"empty ISA spec {spec!r}; levels: {', '.join(_LEVELS)}, host")
        level = host_level() if parts[0] in ("host", "native") else parts[0]
        if level not in _LEVELS:
            raise IsaError(f"unknown ISA level {parts[0]!r}; levels: {', '.join(_LEVELS)}, host")
        arch = "aarch64" if level == "aarch64" else "x86_64"
        flag_of = _AARCH64_FLAG if arch == "aarch64" else _X86_FLAG
        features: set[str] = set()
        for name in (_X86_LEVELS[:_X86_LEVELS.index(level) + 1] if arch == "x86_64" else (level,)):
            features.update(_LEVELS[name][1])
        features.update(f for f in _LEVELS[level][2] if _on_host(arch, f))
        for mod in parts[1:]:
            sign, feat = mod[0], mod[1:]
            if sign not in "+-" or feat not in flag_of:
                raise IsaError(f"ISA spec {spec!r}: {mod!r} is not +feature / -feature "
                               f"(features: {', '.join(sorted(flag_of))})")
            (features.add if sign == "+" else features.discard)(feat)
        return Isa(level, arch, _LEVELS[level][0], frozenset(features), host.last_level_cache_bytes())

    @staticmethod
    def default() -> Isa:
        """`$PLANG_ISA` when set, else the host's level; checked runnable on this host."""
        return _default_for(os.environ.get(ENV_VAR, "").strip() or "host")

    @staticmethod
    def resolve(isa: Isa | str | None) -> Isa:
        """An `Isa` from an `Isa`, a spec string or None (the default), checked runnable."""
        if isa is None:
            return Isa.default()
        if isinstance(isa, str):
            isa = Isa.parse(isa)
        elif not isinstance(isa, Isa):
            raise IsaError(f"isa must be a plang.target.Isa or a spec string, got {type(isa).__name__}")
        isa.check_runnable(f"isa={isa.spec()!r}")
        return isa

    # -- host checks --------------------------------------------------------------------
    def missing_on_host(self) -> list[str]:
        """Features this target uses that the host CPU lacks (all of them on another arch)."""
        if host.machine() != self.arch:
            return [f"the {self.arch} architecture (host: {host.machine()})"]
        return sorted(f for f in self.features if not _on_host(self.arch, f))

    def check_runnable(self, what: str) -> None:
        missing = self.missing_on_host()
        if missing:
            raise IsaError(f"{what}: this host cannot run {self.name} code (it lacks "
                           f"{', '.join(missing)}); levels it runs: {', '.join(runnable_levels())}")

    # -- what lowerings ask -------------------------------------------------------------
    @property
    def vector_bits(self) -> int:
        """Width of one vector register."""
        if "avx512f" in self.features:
            return 512
        return 256 if "avx" in self.features else 128

    @property
    def vector_registers(self) -> int:
        return 32 if "avx512f" in self.features or self.arch == "aarch64" else 16

    @property
    def fma(self) -> bool:
        """Fused multiply-add instructions (else `math.fma` would be a libm call per lane)."""
        return "fma" in self.features or self.arch == "aarch64"

    @property
    def round_instructions(self) -> bool:
        """Vector floor / ceil / round-to-even instructions (SSE4.1 `roundps`, NEON `frint*`)."""
        return "sse4.1" in self.features or self.arch == "aarch64"

    @property
    def f16_conversions(self) -> bool:
        """Hardware FP16 <-> FP32 conversion (F16C, NEON `fcvt`)."""
        return "f16c" in self.features or self.arch == "aarch64"

    @property
    def bf16_conversions(self) -> bool:
        """Hardware FP32 -> BF16 rounding that agrees with IEEE round-to-nearest-even: AArch64
        BF16 `bfcvt`. (x86's `vcvtneps2bf16` reads denormal inputs as zero: see
        `bf16_rounding_daz`.)"""
        return "bf16" in self.features and self.arch == "aarch64"

    @property
    def bf16_rounding_daz(self) -> bool:
        """FP32 -> BF16 rounding to nearest even that reads denormal inputs as zero
        (`vcvtneps2bf16`, x86 AVX512-BF16): kernels take it for vectors with no denormal lane
        and round with integer code otherwise."""
        return "avx512bf16" in self.features

    @property
    def bf16_dot(self) -> bool:
        """The BF16 pair dot product `vdpbf16ps` (x86 AVX512-BF16)."""
        return "avx512bf16" in self.features

    @property
    def amx_bf16(self) -> bool:
        """AMX tiles with the BF16 tile dot product `tdpbf16ps` (x86 AMX-BF16; the OS must
        grant the process the tile state, which `host.amx_permitted` asks for)."""
        return {"amx-tile", "amx-bf16"} <= self.features

    @property
    def scalef(self) -> bool:
        """`vscalefps` (x * 2**n in one instruction, AVX-512)."""
        return "avx512f" in self.features

    @property
    def llvm_features(self) -> list[str]:
        """The `target-features` list of every generated LLVM function."""
        return [f"+{f}" for f in sorted(self.features)]

    @property
    def compiler_flags(self) -> list[str]:
        """gcc / clang flags for C and C++ kernels built for this target (the level, plus its
        added / removed features), so that they too run wherever the target does."""
        if self.arch == "aarch64":
            extra = "".join(f"+{f}" for f, feature in (("fp16", "fullfp16"), ("bf16", "bf16"))
                            if feature in self.features)
            return [f"-march=armv8.2-a{extra}" if extra else "-march=armv8-a"]
        level = Isa.parse(self.name).features
        flags = [f"-march={self.cpu}"]
        flags += [f"-m{f}" for f in sorted(self.features) if f in ("avx512bf16", "avx512vnni")]
        flags += [f"-mno-{f}" for f in sorted(level - self.features) if f != "evex512"]
        return flags

    # -- identity -----------------------------------------------------------------------
    def spec(self) -> str:
        """The spec that `parse` turns back into this target (level plus modifiers)."""
        base = Isa.parse(self.name).features
        mods = [f"+{f}" for f in sorted(self.features - base)]
        mods += [f"-{f}" for f in sorted(base - self.features)]
        return ",".join([self.name, *mods])

    def key(self) -> tuple:
        return (self.name, self.cpu, tuple(sorted(self.features)), self.llc_bytes)

    def describe(self) -> str:
        named = ("avx512bf16", "avx512vnni", "amx-bf16", "fullfp16", "bf16")
        extras = [f for f in named if f in self.features]
        tail = f", {'+'.join(extras)}" if extras else ""
        return f"{self.spec()} ({self.vector_bits}-bit vectors{tail})"

    def __str__(self) -> str:
        return self.spec()


def _on_host(arch: str, feature: str) -> bool:
    """Whether this host runs `feature` of `arch` (AMX also needs the OS's permission)."""
    if host.machine() != arch:
        return False
    flag_of = _AARCH64_FLAG if arch == "aarch64" else _X86_FLAG
    if feature.startswith("amx-") and not host.amx_permitted():
        return False
    return flag_of[feature] in host.cpu_flags()


@functools.cache
def runnable_levels() -> tuple[str, ...]:
    """The levels this host can run, lowest first."""
    return tuple(name for name in _LEVELS if not Isa.parse(name).missing_on_host())


def host_level() -> str:
    """The best level the host runs (`x86-64` on an x86 host that reports no flags)."""
    if host.machine() == "aarch64":
        return "aarch64"
    best = "x86-64"
    for name in _X86_LEVELS:
        cpu, added, _ = _LEVELS[name]
        if all(_X86_FLAG[f] in host.cpu_flags() for f in added):
            best = name
        else:
            break
    return best


@functools.cache
def _default_for(spec: str) -> Isa:
    """`Isa.default()` for a `$PLANG_ISA` value (parsed and checked once per value)."""
    isa = Isa.parse(spec)
    isa.check_runnable(f"{ENV_VAR}={spec}" if spec != "host" else "the host ISA")
    return isa
