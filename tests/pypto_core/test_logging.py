"""The reference's logging framework at plang's top level: levels and their thresholds, the
lines the log functions write, and the check functions' errors (the reference's
`tests/ut/core/test_logging.py` and the `check` / `internal_check` bindings)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import threading

import pytest

import plang
from plang import LogLevel, get_log_level, set_log_level
from plang.pypto_core import _clear_thread_log_level, _set_thread_log_level, logging

LINE = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3} ([DIWEFV]) \| (.*)$")
LOGS = [plang.log_debug, plang.log_info, plang.log_warn, plang.log_error, plang.log_fatal, plang.log_event]


@pytest.fixture(autouse=True)
def _restore_the_level():
    saved = get_log_level()
    yield
    _clear_thread_log_level()
    set_log_level(saved)


def _logged(capfd) -> list[tuple[str, str]]:
    err = capfd.readouterr().err
    return [LINE.match(line).groups() for line in err.splitlines()]


def test_the_levels_are_the_references() -> None:
    assert [(level.name, int(level)) for level in LogLevel] == [
        ("DEBUG", 0), ("INFO", 1), ("WARN", 2), ("ERROR", 3), ("FATAL", 4), ("EVENT", 5), ("NONE", 6)]
    assert str(LogLevel.WARN) == "LogLevel.WARN" and plang.pypto_core.LogLevel is LogLevel


@pytest.mark.parametrize("env, level", [(None, "INFO"), ("Warn", "WARN"), ("none", "NONE"), ("loud", "INFO")])
def test_the_default_threshold_is_info_or_the_environments(monkeypatch, env, level) -> None:
    monkeypatch.delenv("PLANG_LOG_LEVEL", raising=False)
    if env is not None:
        monkeypatch.setenv("PLANG_LOG_LEVEL", env)
    assert logging._default_level().name == level


def test_a_new_process_starts_at_the_environments_level() -> None:
    out = subprocess.run([sys.executable, "-c", "import plang; print(plang.get_log_level())"],
                         env={**os.environ, "PLANG_LOG_LEVEL": "error"}, capture_output=True, text=True)
    assert out.stdout.strip() == "LogLevel.ERROR", out.stderr


def test_set_and_get_round_trip_every_level_and_take_ints() -> None:
    for level in LogLevel:
        set_log_level(level)
        assert get_log_level() is level
    set_log_level(3)
    assert get_log_level() is LogLevel.ERROR


def test_each_function_writes_one_line_at_its_level(capfd) -> None:
    set_log_level(LogLevel.DEBUG)
    for fn in LOGS:
        fn(f"from {fn.__name__}: 'quotes' and !@#$%^&*()")
    plang.log_info("")
    assert _logged(capfd) == [(mark, f"from {fn.__name__}: 'quotes' and !@#$%^&*()")
                              for mark, fn in zip("DIWEFV", LOGS)] + [("I", "")]


@pytest.mark.parametrize("threshold, shown", [(LogLevel.DEBUG, "DIWEFV"), (LogLevel.INFO, "IWEFV"),
                                              (LogLevel.ERROR, "EFV"), (LogLevel.EVENT, "V"),
                                              (LogLevel.NONE, "")])
def test_messages_below_the_threshold_are_dropped(capfd, threshold, shown) -> None:
    set_log_level(threshold)
    for fn in LOGS:
        fn("m")
    assert "".join(mark for mark, _ in _logged(capfd)) == shown


def test_a_thread_override_filters_that_thread_and_get_reads_the_process_level(capfd) -> None:
    set_log_level(LogLevel.INFO)
    _set_thread_log_level(LogLevel.ERROR)
    assert get_log_level() is LogLevel.INFO  # a get / set pair restores the process level
    plang.log_warn("here: filtered")
    other = threading.Thread(target=plang.log_warn, args=("other thread: shown",))
    other.start()
    other.join()
    _clear_thread_log_level()
    plang.log_warn("here again: shown")
    assert _logged(capfd) == [("W", "other thread: shown"), ("W", "here again: shown")]


def test_check_raises_value_error_naming_the_caller() -> None:
    plang.check(True, "never raised")
    where = r"\nCheck failed: condition at .*test_logging.py:\d+$"
    with pytest.raises(ValueError, match=r"^x must be positive" + where):
        plang.check(1 > 2, "x must be positive")


def test_internal_checks_raise_internal_error_with_the_span() -> None:
    plang.internal_check(True, "never raised")
    with pytest.raises(plang.InternalError, match=r"^pointer is None\nCheck failed: condition at "):
        plang.internal_check(False, "pointer is None")
    with pytest.raises(RuntimeError, match=r"^shape mismatch \[user_model.py:42:5\]\nCheck failed: ") as e:
        plang.internal_check_span(False, "shape mismatch", plang.ir.Span("user_model.py", 42, 5))
    assert not isinstance(e.value, plang.Error)  # a RuntimeError beside plang.Error, as the reference's
    with pytest.raises(plang.InternalError, match=r"^no span\nCheck failed: "):
        plang.internal_check_span(False, "no span", plang.ir.Span())


def test_the_references_top_level_names() -> None:
    names = ["Error", "InternalError", "LogLevel", "set_log_level", "get_log_level", "log_debug",
             "log_info", "log_warn", "log_error", "log_fatal", "log_event", "check", "internal_check",
             "internal_check_span", "DataType", "codegen", "ir", "language", "passes", "runtime"]
    assert [n for n in names if not hasattr(plang, n)] == []
    dtypes = {"BOOL", "INT4", "INT8", "INT16", "INT32", "INT64", "UINT4", "UINT8", "UINT16", "UINT32",
              "UINT64", "FP4", "FP8E4M3FN", "FP8E5M2", "FP8E8M0", "FP16", "FP32", "BF16", "HF4", "HF8",
              "INDEX"}
    assert {n[3:] for n in dir(plang) if n.startswith("DT_")} == dtypes
    assert all(getattr(plang, f"DT_{n}") is getattr(plang, n) for n in dtypes)


def test_a_dsl_body_may_not_call_them(capfd) -> None:
    """They act on the host process: in a DSL body they would run once, at parse time."""
    refused = r"calling plang.log_warn \(a Python function\) inside a DSL function is not supported"
    with pytest.raises(plang.UnsupportedConstructError, match=refused):
        @plang.function(type=plang.FunctionType.InCore)
        def k(a: plang.Tensor[[4], plang.FP32]) -> plang.Tensor[[4], plang.FP32]:
            plang.log_warn("parsed")
            return a
    assert _logged(capfd) == []
