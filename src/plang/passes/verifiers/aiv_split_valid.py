"""AivSplitValid: every function obeys the `split_aiv` placement rules
(see `analysis/aiv_split_rules.py`)."""

from __future__ import annotations

from ...ir.function import Program
from ..analysis.aiv_split_rules import check_aiv_split
from ..framework import define_verifier


def check_aiv_split_valid(program: Program) -> None:
    for fn in program.functions.values():
        check_aiv_split(fn, core=fn.func_type.is_core)


AivSplitValid = define_verifier("AivSplitValid", check_aiv_split_valid,
                                "split_aiv regions place vector / cube work and name their crossings.")
