"""`tune`: timed candidates, rejections with reasons, the memory and disk cache (also from a
second process), corrupt entries, `Unresolvable`, the progress line."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from tuning_ops import DoubleInPlace, Refused, SmallSoftmax, WrongAtEight, sample

from plang.operators import COUNTERS, TUNING_CACHE, Unresolvable, tune, tune_report, tuning_key
from plang.runtime import RunConfig
from plang.target import Device

DEV = Device(clusters=2)
COSTS = {(8, 1): 5.0, (16, 1): 3.0, (8, 2): 1.0, (16, 2): 2.0}


def by_cost(op):
    return COSTS[(op.rows, op.blocks)]


def test_picks_the_cheapest_legal_candidate_and_reports_the_rest():
    x = sample()
    report = tune_report(WrongAtEight(M=64, N=128), x, device=DEV, measure=by_cost)
    assert report.source == "search" and report.tunables == {"rows": 16, "blocks": 2}
    assert repr(report.best) == "WrongAtEight(M=64, N=128, rows=16, blocks=2)" and report.best.is_resolved
    reasons = {(c.values["rows"], c.values["blocks"]): c.reason for c in report.skipped}
    assert set(reasons) == {(8, 1), (8, 2), (32, 1), (32, 2)}
    assert reasons[(8, 2)].startswith("wrong result: ")
    assert "rows=32 is refused" in reasons[(32, 1)]
    assert "skipped: wrong result" in str(report)


def test_second_tune_is_a_cache_hit_and_calls_use_it():
    x = sample()
    op = SmallSoftmax(M=64, N=128)
    first = tune(op, x, device=DEV, measure=by_cost)
    assert (first.rows, first.blocks) == (8, 2)
    hits, timed = COUNTERS["cache_hits"], COUNTERS["timed"]
    again = tune(op, x, device=DEV, measure=by_cost)
    assert again.design_key() == first.design_key()
    assert COUNTERS["cache_hits"] == hits + 1 and COUNTERS["timed"] == timed
    assert op._for(DEV, tuned=True).design_key() == first.design_key()
    with pytest.raises(ValueError, match="rows=32 is refused"):  # what resolve() alone picks
        op._for(DEV, tuned=False)
    torch.testing.assert_close(op(x, config=RunConfig(device=DEV)), torch.softmax(x, -1))


def test_a_new_process_reads_the_disk_cache():
    x = sample()
    tune(SmallSoftmax(M=64, N=128), x, device=DEV, measure=by_cost)
    code = ("import sys; sys.path.insert(0, sys.argv[1]);"
            "from tuning_ops import SmallSoftmax, sample;"
            "from plang.operators import COUNTERS, tune_report; from plang.target import Device;"
            "r = tune_report(SmallSoftmax(M=64, N=128), sample(), device=Device(clusters=2),"
            " measure=lambda op: 1 / 0);"
            "print(r.source, r.tunables['rows'], r.tunables['blocks'], COUNTERS['timed'],"
            " COUNTERS['disk_hits'])")
    out = subprocess.run([sys.executable, "-c", code, str(Path(__file__).parent)], check=True,
                         capture_output=True, text=True, env=dict(os.environ)).stdout.split()
    assert out == ["disk", "8", "2", "0", "1"]


def test_a_corrupt_entry_is_ignored_and_rewritten():
    x = sample()
    op = SmallSoftmax(M=64, N=128)
    tune(op, x, device=DEV, measure=by_cost)
    path = TUNING_CACHE.path(tuning_key(op, DEV))
    path.write_text("{not json")
    TUNING_CACHE.clear()
    timed = COUNTERS["timed"]
    assert tune(op, x, device=DEV, measure=by_cost).rows == 8
    assert COUNTERS["timed"] > timed
    assert "data" in json.loads(path.read_text())


def test_a_tampered_entry_is_a_miss():
    x = sample()
    op = SmallSoftmax(M=64, N=128)
    tune(op, x, device=DEV, measure=by_cost)
    path = TUNING_CACHE.path(tuning_key(op, DEV))
    sealed = json.loads(path.read_text())
    sealed["data"] = sealed["data"].replace('"rows": 8', '"rows": 16')
    path.write_text(json.dumps(sealed))
    TUNING_CACHE.clear()
    assert TUNING_CACHE.get(op, DEV) is None


def test_no_legal_candidate_is_unresolvable():
    with pytest.raises(Unresolvable, match=r"tune\(Refused\): no candidate runs on cpu-2x1c2v: "
                                           r".*never legal"):
        tune(Refused(M=64, N=128), sample(), device=DEV, measure=by_cost)


def test_real_timing_and_the_progress_line(capsys):
    report = tune_report(SmallSoftmax(M=64, N=128, blocks=2), sample(), device=DEV, repeat=2,
                         progress=True, cache=False)
    timed = [c for c in report.candidates if c.seconds is not None]
    assert [c.values for c in report.candidates] == [{"rows": 8}, {"rows": 16}, {"rows": 32}]
    assert len(timed) == 2 and all(c.seconds > 0 for c in timed)
    assert "tune SmallSoftmax: 3/3" in capsys.readouterr().err
    assert TUNING_CACHE.get(SmallSoftmax(M=64, N=128, blocks=2), DEV) is None


def test_bad_arguments():
    with pytest.raises(TypeError, match="tune\\(\\) takes a JitOperator"):
        tune(object(), sample())
    with pytest.raises(ValueError, match="repeat >= 1"):
        tune(SmallSoftmax(M=64, N=128), sample(), repeat=0)


def test_an_in_place_operator_is_checked_on_an_untouched_copy_of_its_inputs():
    """Each run of an InOut operator changes its input; every candidate's result is still
    checked against the reference of the inputs as given, and the caller's inputs are left
    as they were."""
    x = sample()
    before = x.clone()
    report = tune_report(DoubleInPlace(M=64, N=128), x, device=Device(), repeat=2, cache=False)
    assert not report.skipped, report
    assert torch.equal(x, before)


@pytest.mark.parametrize("other, wins", [(0.98, False), (0.90, True)])
def test_resolve_pick_stays_unless_beaten_by_more_than_the_noise(monkeypatch, other, wins):
    """Timed by real runs, a candidate replaces the one `resolve` picks only when it is more
    than `MARGIN` faster in the final round (timings faked: each op takes its seconds)."""
    from plang.operators import tuner
    from plang.operators.kernels import RowSoftmax

    op = RowSoftmax(M=64, N=128, blocks=2)
    picked = op.resolved(DEV).rows
    monkeypatch.setattr(tuner, "_time", lambda ops, *a: [1.0 if o.rows == picked else other for o in ops])
    report = tune_report(op, sample(), device=DEV, cache=False)
    assert (report.tunables["rows"] != picked) == wins


@pytest.mark.parametrize("seconds, rounds", [(1.0, 10), (0.05, 10), (0.02, 13), (1e-4, 40)])
def test_the_final_round_fills_its_time_for_fast_candidates(monkeypatch, seconds, rounds):
    """Twice `repeat` final rounds, or as many as fill `FINAL_SECONDS` (up to `FINAL_ROUNDS`)
    when the finalists are fast (timings faked: every candidate takes `seconds`)."""
    from plang.operators import tuner
    from plang.operators.kernels import RowSoftmax

    asked = []

    def fake(ops, inputs, config, repeat, *rest):
        asked.append(repeat)
        return [seconds] * len(ops)
    monkeypatch.setattr(tuner, "_time", fake)
    tune_report(RowSoftmax(M=64, N=128), sample(), device=DEV, repeat=5, cache=False)
    assert asked[:-1] == [5] * (len(asked) - 1) and asked[-1] == rounds


def test_the_candidates_that_pass_are_timed_together(monkeypatch):
    """Every candidate that builds and gives the right result is timed in one set of rounds
    (a change of load on the machine hits them alike), the rejected ones not at all; the
    final round follows (timings faked)."""
    from plang.operators import tuner

    calls = []

    def fake(ops, *rest):
        calls.append(sorted((o.rows, o.blocks) for o in ops))
        return [o.rows + o.blocks for o in ops]
    monkeypatch.setattr(tuner, "_time", fake)
    report = tune_report(WrongAtEight(M=64, N=128), sample(), device=DEV, cache=False)
    assert calls == [[(16, 1), (16, 2)]] * 2
    assert report.tunables == {"rows": 16, "blocks": 1}


def test_the_timed_candidates_write_one_shared_output(monkeypatch):
    """Each timing (the search's, the final round's) has its runs write into the output its
    first run allocated, one for all its candidates: no candidate's time includes faulting in
    fresh memory, and a search of many candidates holds one output, not one each."""
    from plang.operators import tuner
    from plang.operators.library import JitOperator

    written: list[set] = []  # per `_time` call: the outputs its runs were given
    call, time_them = JitOperator.__call__, tuner._time

    def spy(self, *inputs, out=None, **kw):
        if out is not None:
            written[-1].add(out.data_ptr())
        return call(self, *inputs, out=out, **kw)

    def timing(ops, *args, **kw):
        written.append(set())
        return time_them(ops, *args, **kw)

    monkeypatch.setattr(JitOperator, "__call__", spy)
    monkeypatch.setattr(tuner, "_time", timing)
    report = tune_report(SmallSoftmax(M=64, N=128), sample(), device=DEV, repeat=2, cache=False)
    assert len([c for c in report.candidates if c.seconds is not None]) > 1
    assert written and all(len(outputs) == 1 for outputs in written)
