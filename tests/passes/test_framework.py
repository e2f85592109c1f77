"""The pass framework: registry, property tracking, pipelines and instruments."""

from __future__ import annotations

import pytest

from plang.dtypes import INDEX
from plang.ir import Assign, ConstInt, Function, Program, Return, ScalarType, Var, flatten, seq
from plang.ir.span import Span
from plang.passes import (
    PASSES,
    PIPELINES,
    Pass,
    PassError,
    PassManager,
    TimingInstrument,
    get_pass,
    register_property,
    snake_name,
)
from plang.passes.properties import PROPERTIES


def _program(n_assigns: int) -> Program:
    x = Var("x", ScalarType(INDEX))
    body = [Assign(x, ConstInt(i), Span("f.py", 10 + i, 4)) for i in range(n_assigns)]
    return Program("p", [Function("main", [], None, [ScalarType(INDEX)], seq(body + [Return([x])]))])


def _assign_count(program: Program) -> int:
    return sum(isinstance(s, Assign) for s in flatten(program.get("main").body))


@pytest.fixture
def single_assign_property():
    """A test property: `main` assigns at most once."""

    def check(program: Program) -> None:
        stmts = [s for s in flatten(program.get("main").body) if isinstance(s, Assign)]
        if len(stmts) > 1:
            raise PassError("main assigns more than once", stmts[1].span)

    register_property("TestSingleAssign", check)
    yield "TestSingleAssign"
    del PROPERTIES["TestSingleAssign"]


def _dedupe_pass(produces: bool):
    class KeepLastAssign(Pass):
        name = "KeepLastAssign"
        produced = frozenset({"TestSingleAssign"}) if produces else frozenset()

        def run(self, program: Program) -> Program:
            fn = program.get("main")
            stmts = flatten(fn.body)
            assigns = [s for s in stmts if isinstance(s, Assign)]
            kept = [s for s in stmts if not isinstance(s, Assign) or s is assigns[-1]]
            return program.with_functions([fn.replace(body=seq(kept))])

    return KeepLastAssign()


class _NeedsSingleAssign(Pass):
    name = "NeedsSingleAssign"
    required = frozenset({"TestSingleAssign"})

    def run(self, program: Program) -> Program:
        return program


def test_snake_names():
    assert snake_name("ConvertToSSA") == "convert_to_ssa"
    assert snake_name("SSAForm") == "ssa_form"
    assert snake_name("InOutUseValid") == "in_out_use_valid"
    assert snake_name("FlattenCallExpr") == "flatten_call_expr"


def test_missing_required_property_names_pass_and_property(single_assign_property):
    with pytest.raises(PassError) as err:
        _NeedsSingleAssign()(_program(2))
    msg = str(err.value)
    assert "pass NeedsSingleAssign requires property TestSingleAssign" in msg
    assert "main assigns more than once" in msg
    assert err.value.line == 11


def test_required_property_verified_on_demand_and_tracked(single_assign_property):
    # Holds on the input although nothing produced it: verified, then the pass runs.
    assert _NeedsSingleAssign()(_program(1)) is not None
    # Produced by an earlier pass: the manager trusts it.
    out = PassManager([_dedupe_pass(produces=True), _NeedsSingleAssign()]).run(_program(3))
    assert _assign_count(out) == 1
    # Not declared as produced: verified before the second pass, and it holds.
    out = PassManager([_dedupe_pass(produces=False), _NeedsSingleAssign()]).run(_program(3))
    assert _assign_count(out) == 1


def test_verify_instrument_catches_a_pass_breaking_a_held_property(single_assign_property):
    class Duplicate(Pass):
        name = "Duplicate"

        def run(self, program: Program) -> Program:
            fn = program.get("main")
            x = Var("y", ScalarType(INDEX))
            return program.with_functions([fn.replace(body=seq([Assign(x, ConstInt(1)), fn.body]))])

    pm = PassManager([_NeedsSingleAssign(), Duplicate()], verify=True)
    with pytest.raises(PassError, match="after pass Duplicate, property TestSingleAssign no longer holds"):
        pm.run(_program(1))
    # Without verification the broken property goes unnoticed until something requires it.
    PassManager([_NeedsSingleAssign(), Duplicate()]).run(_program(1))


def test_unknown_pipeline_pass_and_stop_after():
    with pytest.raises(ValueError, match="unknown pass pipeline 'Nope'"):
        PassManager("Nope")
    with pytest.raises(KeyError, match="no pass named 'NotAPass'"):
        PassManager(["NotAPass"])
    with pytest.raises(ValueError, match="stop_after='Bogus' is not in the pipeline"):
        PassManager(stop_after="Bogus")


def test_default_pipeline_order_and_registry():
    default = PIPELINES["Default"]
    assert default[:7] == ("InlineFunctions", "UnrollLoops", "CtrlFlowTransform", "RebindWrittenOperands",
                           "ConvertToSSA", "Simplify", "FlattenCallExpr")
    assert default.index("OutlineIncoreScopes") < default.index("ConvertTensorToTileOps") \
        < default.index("MaterializeRuntimeScopes") < default.index("TypeCheck")
    for name in PASSES:
        assert get_pass(snake_name(name)) is PASSES[name]


def test_timing_instrument_table(single_assign_property):
    timing = TimingInstrument()
    PassManager([_dedupe_pass(produces=True), _NeedsSingleAssign()], instruments=[timing]).run(_program(2))
    assert [n for n, _ in timing.timings] == ["KeepLastAssign", "NeedsSingleAssign"]
    assert all(t >= 0 for _, t in timing.timings)
    table = timing.table().splitlines()
    assert table[0].split() == ["pass", "ms", "%"]
    assert table[1].startswith("KeepLastAssign") and table[-1].startswith("total")


def test_real_pass_rejects_ir_lacking_its_required_property():
    import plang as pl
    from plang import passes

    prog = pl.parse('''
import plang as pl

@pl.program
class P:
    @pl.function
    def main(self, a: pl.Tensor[[64], pl.FP32]) -> pl.Tensor[[64], pl.FP32]:
        x: pl.Tensor[[64], pl.FP32] = pl.add(a, a)
        x = pl.mul(x, a)
        return x
''')
    with pytest.raises(PassError, match="pass Simplify requires property SSAForm, which the IR lacks: "
                                        "variable 'x' is assigned more than once") as err:
        passes.simplify()(prog)
    assert err.value.line == 9 and err.value.pass_name == "Simplify"
    # Through the manager, ConvertToSSA produces the property first.
    PassManager(stop_after="Simplify").run(prog)


def test_every_registered_pass_is_a_package_attribute_by_snake_name():
    from plang import passes

    for name, cls in PASSES.items():
        assert getattr(passes, snake_name(name)) is cls
        assert issubclass(cls, Pass) and cls.name == name
