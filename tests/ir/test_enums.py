"""Enums of plang.ir.enums: members of the reference and Level aliases."""

from plang.ir import enums as E


def test_level_aliases_resolve_to_primary_members():
    assert E.Level.L2CACHE is E.Level.CHIP_DIE
    assert E.Level.PROCESSOR is E.Level.CHIP and E.Level.UMA is E.Level.CHIP
    assert E.Level.NODE is E.Level.HOST
    assert (E.Level.POD, E.Level.CLOS1, E.Level.CLOS2) == (
        E.Level.CLUSTER_0, E.Level.CLUSTER_1, E.Level.CLUSTER_2)


def test_reference_members_and_values():
    assert [m.name for m in E.SplitMode] == ["NONE", "UP_DOWN", "LEFT_RIGHT"]
    assert [m.value for m in E.SplitMode] == [0, 1, 2]
    assert {m.name for m in E.FunctionType} == {"Opaque", "Orchestration", "InCore", "AIC", "AIV", "Group",
                                                 "Spmd", "Inline", "Graph"}
    assert [m.name for m in E.MemorySpace][:7] == ["DDR", "Vec", "Mat", "Left", "Right", "Acc", "Bias"]
    assert (E.AtomicType.None_, E.AtomicType.Add) == (0, 1)
    assert (E.AccPhase.Partial, E.AccPhase.Final, E.STPhase.Final) == (2, 3, 3)
    assert (E.ScopeMode.AUTO.value, E.ScopeMode.MANUAL.value) == (0, 1)
    assert E.SyncAllMode.SOFT.value == "soft"
    assert [m.name for m in E.PipeType] == ["MTE1", "MTE2", "MTE3", "M", "V", "S", "FIX", "ALL"]


def test_core_function_types():
    core = {t for t in E.FunctionType if t.is_core}
    assert core == {E.FunctionType.InCore, E.FunctionType.AIC, E.FunctionType.AIV}
