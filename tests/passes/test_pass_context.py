"""PassContext: context instruments, nesting, per-thread state, disabled passes, verify levels."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from pass_testing import parse

import plang as pl
from plang.passes import (
    Instrument,
    Pass,
    PassContext,
    PassError,
    PassManager,
    VerifyLevel,
    VerifyPropertiesInstrument,
    convert_to_ssa,
)

PROGRAMS = Path(__file__).parent / "programs"
REBINDS = """
    @pl.program
    class P:
        @pl.function
        def main(self, a: pl.Tensor[[64], pl.FP32]) -> pl.Tensor[[64], pl.FP32]:
            x: pl.Tensor[[64], pl.FP32] = pl.add(a, a)
            x = pl.mul(x, a)
            return x
"""


class Record(Instrument):
    def __init__(self, log: list, tag: str = "") -> None:
        self.log, self.tag = log, tag

    def after_pass(self, pass_, program, held):
        self.log.append(self.tag + pass_.name)


def _program():
    return pl.parse((PROGRAMS / "softmax.py").read_text())


def test_context_instruments_run_after_the_managers_own():
    log: list = []
    with PassContext(instruments=[Record(log, "ctx:")]):
        PassManager(["InlineFunctions", "UnrollLoops"], instruments=[Record(log, "own:")]).run(_program())
    assert log == ["own:InlineFunctions", "ctx:InlineFunctions", "own:UnrollLoops", "ctx:UnrollLoops"]
    log.clear()
    PassManager(["InlineFunctions"]).run(_program())  # outside the context: nothing extra
    assert log == []


def test_standalone_pass_calls_run_the_context_instruments():
    log: list = []
    with PassContext(instruments=[Record(log)]):
        convert_to_ssa()(parse(REBINDS))
    assert log == ["ConvertToSSA"]


def test_nested_contexts_inherit_and_override():
    a, b = Record([]), Record([])
    outer = PassContext.current().instruments  # the suite's round-trip instrument (conftest.py)
    with PassContext(instruments=[a], verify=VerifyLevel.PROPERTIES, config={"x": 1, "y": 2},
                     disabled_passes={"Simplify"}):
        with PassContext(instruments=[b], config={"y": 3}, disabled_passes={"unroll_loops"}) as inner:
            assert inner is PassContext.current()
            assert inner.instruments == (*outer, a, b) and inner.verify_level is VerifyLevel.PROPERTIES
            assert dict(inner.config) == {"x": 1, "y": 3}
            assert inner.disabled_passes == {"Simplify", "unroll_loops"}
            with PassContext(verify=False):
                assert PassContext.current().verify_level is VerifyLevel.NONE
        assert PassContext.current().instruments == (*outer, a) and PassContext.current().config["y"] == 2
    assert PassContext.current().instruments == outer and not PassContext.current().config


def test_the_context_is_per_thread():
    seen = []
    with PassContext(instruments=[Record([])], config={"k": 1}):
        t = threading.Thread(target=lambda: seen.append(PassContext.current()))
        t.start()
        t.join()
    assert seen[0].instruments == () and not seen[0].config


def test_disabled_passes_are_skipped():
    log: list = []
    with PassContext(instruments=[Record(log)], disabled_passes={"unroll_loops", "Simplify"}):
        PassManager(stop_after="FlattenCallExpr").run(_program())
    assert log == ["InlineFunctions", "CtrlFlowTransform", "RebindWrittenOperands", "ConvertToSSA",
                   "FlattenCallExpr"]


def test_unknown_disabled_pass_is_an_error():
    with PassContext(disabled_passes={"NoSuchPass"}), pytest.raises(KeyError, match="NoSuchPass"):
        PassManager(["InlineFunctions"]).run(_program())


def test_a_disabled_pass_whose_property_is_required_later_is_named():
    with PassContext(disabled_passes={"ConvertToSSA"}):
        with pytest.raises(PassError, match=r"pass Simplify requires property SSAForm, which the IR lacks; "
                                            r"pass ConvertToSSA, which produces it, is disabled"):
            PassManager(stop_after="FlattenCallExpr").run(parse(REBINDS))
        # an input that already has the property is fine
        PassManager(stop_after="FlattenCallExpr").run(parse(REBINDS.replace("x = pl.mul", "y = pl.mul")
                                                             .replace("return x", "return y")))


class _ClaimsSSA(Pass):
    """Claims SSAForm but leaves re-bindings in place."""

    name = "ClaimsSSA"
    produced = frozenset({"SSAForm"})

    def run(self, program):
        return program


def test_verify_level_properties_reverifies_held_properties_after_every_pass():
    PassManager([_ClaimsSSA()]).run(parse(REBINDS))  # off by default
    assert any(isinstance(i, VerifyPropertiesInstrument)
               for i in PassContext(verify=VerifyLevel.PROPERTIES).instruments_with(()))
    with PassContext(verify=VerifyLevel.PROPERTIES):
        with pytest.raises(PassError, match="after pass ClaimsSSA, property SSAForm no longer holds"):
            PassManager([_ClaimsSSA()]).run(parse(REBINDS))


def test_verify_level_all_runs_the_default_verifiers_a_run_left_out():
    prefix = ["InlineFunctions", "UnrollLoops"]
    PassManager(prefix).run(parse(REBINDS))
    with PassContext(verify=VerifyLevel.ALL), pytest.raises(PassError, match=r"\[SSAForm\]"):
        PassManager(prefix).run(parse(REBINDS))
    with PassContext(verify=VerifyLevel.ALL):
        PassManager().run(_program())  # the full pipeline holds every property
