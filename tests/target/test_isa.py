"""`plang.target.Isa`: level specs, feature modifiers, host checks, and where a target is
chosen (`$PLANG_ISA`, `Device(isa=)`, `RunConfig(isa=)`) and keyed."""

from __future__ import annotations

import pytest

from plang.runtime.config import RunConfig
from plang.target import Device, Isa, IsaError, host_level, runnable_levels
from plang.target import host as host_facts

X86_HOST = host_facts.machine() == "x86_64"


def test_levels_add_features_in_order() -> None:
    base, v2, v3, v4 = (Isa.parse(n) for n in ("x86-64", "x86-64-v2", "x86-64-v3", "x86-64-v4"))
    assert base.features < v2.features < v3.features < v4.features
    assert (base.vector_bits, v2.vector_bits, v3.vector_bits, v4.vector_bits) == (128, 128, 256, 512)
    assert not base.fma and not v2.fma and v3.fma and v4.fma
    assert not base.round_instructions and v2.round_instructions
    assert not v2.f16_conversions and v3.f16_conversions
    assert v3.cpu == "x86-64-v3" and "+avx2" in v3.llvm_features and "+avx512f" not in v3.llvm_features
    assert not v3.bf16_dot and not v3.scalef and v4.scalef


def test_feature_modifiers_and_round_trip_of_the_spec() -> None:
    isa = Isa.parse("x86-64-v4,-avx512bf16,-avx512vnni")
    assert not isa.bf16_dot and isa.vector_bits == 512
    assert Isa.parse(isa.spec()) == isa
    assert Isa.parse("x86-64-v3,+avx512f").vector_bits == 512
    assert str(Isa.parse("x86-64-v2")) == "x86-64-v2"


def test_amx_tiles_only_at_v4_where_the_host_and_the_os_allow_them() -> None:
    """AMX needs the CPU flags and the OS's grant of the tile state to this process."""
    v3, v4 = Isa.parse("x86-64-v3"), Isa.parse("x86-64-v4")
    host_has = X86_HOST and {"amx_tile", "amx_bf16"} <= host_facts.cpu_flags() and host_facts.amx_permitted()
    assert not v3.amx_bf16 and v4.amx_bf16 == host_has
    off = Isa.parse("x86-64-v4,-amx-bf16")
    assert not off.amx_bf16 and Isa.parse(off.spec()) == off
    assert ("amx-bf16" in v4.describe()) == host_has


@pytest.mark.parametrize("spec, message", [
    ("x86-64-v5", "unknown ISA level 'x86-64-v5'; levels: x86-64, x86-64-v2, x86-64-v3, x86-64-v4, aarch64"),
    ("x86-64-v3,avx2", "'avx2' is not +feature / -feature"),
    ("x86-64-v3,+sse5", "'+sse5' is not +feature / -feature"),
    ("", "empty ISA spec"),
])
def test_bad_specs_are_clear_errors(spec: str, message: str) -> None:
    with pytest.raises(IsaError, match=message.replace("+", r"\+").replace("(", r"\(")):
        Isa.parse(spec)


def test_a_level_the_host_cannot_run_is_refused(monkeypatch) -> None:
    foreign = "aarch64" if X86_HOST else "x86-64"
    with pytest.raises(IsaError, match=f"this host cannot run {foreign} code .* levels it runs: "):
        Device(isa=foreign)
    monkeypatch.setenv("PLANG_ISA", foreign)
    with pytest.raises(IsaError, match=f"PLANG_ISA={foreign}: this host cannot run"):
        Isa.default()


def test_the_default_is_the_environment_else_the_host(monkeypatch) -> None:
    monkeypatch.delenv("PLANG_ISA", raising=False)
    assert Isa.default().name == host_level() == runnable_levels()[-1]
    monkeypatch.setenv("PLANG_ISA", runnable_levels()[0])
    assert Isa.default().name == runnable_levels()[0]
    assert Device().isa.name == runnable_levels()[0]


@pytest.mark.skipif(not X86_HOST, reason="x86 levels")
def test_every_x86_host_runs_the_baseline() -> None:
    assert runnable_levels()[0] == "x86-64"


def test_the_isa_is_part_of_the_device_and_compile_keys() -> None:
    low, high = runnable_levels()[0], runnable_levels()[-1]
    assert Device(isa=low).isa.name == low
    assert RunConfig(isa=low).resolved_device().isa == Isa.parse(low)
    if low != high:
        assert Device(isa=low).key() != Device(isa=high).key()
        assert RunConfig(isa=low).compile_key() != RunConfig(isa=high).compile_key()
    with pytest.raises(ValueError, match="give either device= or clusters= / isa="):
        RunConfig(device=Device(), isa=low)
