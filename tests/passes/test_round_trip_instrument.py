"""RoundTripInstrument: every pass's output must print, parse back equal and print the same."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

import plang as pl
from plang.passes import PassContext, PassError, PassManager, RoundTripInstrument

PROGRAMS = Path(__file__).parent / "programs"


def _program(name: str = "softmax"):
    return pl.parse((PROGRAMS / f"{name}.py").read_text())


def _run(parse, strategy="Default"):
    with PassContext(instruments=[RoundTripInstrument(parse)]):
        return PassManager(strategy).run(_program())


def test_the_default_pipeline_round_trips_and_unchanged_programs_are_not_rechecked():
    parses: list[str] = []

    def parse(text, filename):
        parses.append(filename)
        return pl.parse(text, filename)

    _run(parse)
    assert parses[0] == "<round trip after pass InlineFunctions>"
    assert 1 < len(parses) < len(PassManager().passes)  # verifiers change nothing


def test_a_printer_that_loses_information_is_caught_with_the_pass_and_the_path():
    def lossy(text, filename):  # as if the printer dropped a tile's extent
        return pl.parse(text.replace("pl.FP32]", "pl.FP16]"), filename)

    with pytest.raises(PassError, match=r"\[InlineFunctions\].*after pass InlineFunctions, the re-parsed IR "
                                        r"differs from the pass's output at functions\['main'\]"):
        _run(lossy)


def test_unparsable_output_is_caught():
    with pytest.raises(PassError, match="after pass InlineFunctions, the printed IR does not parse back"):
        _run(lambda text, filename: pl.parse(text.replace("def ", "def def "), filename))


def test_printing_must_be_a_fixpoint():
    def renaming(text, filename):  # equal modulo renaming, but prints differently
        return pl.parse(text.replace(" mx", " row_max_value").replace("(mx", "(row_max_value"), filename)

    with pytest.raises(PassError, match=r"after pass InlineFunctions, printing is not a fixpoint: line \d+"):
        _run(renaming, ["InlineFunctions"])


def test_one_instrument_serves_threads_compiling_at_once():
    inst = RoundTripInstrument(pl.parse)
    barrier, errors, results = threading.Barrier(2), [], {}

    def work(name):
        try:
            program = _program(name)
            barrier.wait()
            with PassContext(instruments=[inst]):
                results[name] = PassManager().run(program)
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(n,)) for n in ("softmax", "flash_attention")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and set(results) == {"softmax", "flash_attention"}
