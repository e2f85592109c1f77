"""pytest set-up for the reference's system tests on plang (copied next to them by run.py):
the options and fixtures they use, and the runner that executes a `PTOTestCase`."""

from __future__ import annotations

import time
from typing import Any

import pytest
import torch

import plang as pl
from plang.runtime import RunConfig
from plang.runtime.runner import RunResult
from plang.runtime.runner import TensorSpec as ArgumentSpec

#: the chips plang simulates for these tests (the same chip: a case given both runs once)
RUN_PLATFORMS = ("a2a3sim", "a2a3")


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--platform", default=",".join(RUN_PLATFORMS),
                     help="comma-separated platforms whose cases run (plang simulates a2a3 / a2a3sim)")
    parser.addoption("--device", default="0",
                     help="device ids as the reference spells them (0, 0-3, 0,2,5): the ranks a "
                          "distributed case may use; every id is a simulated chip")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "platforms(*names): the platforms a test runs on")
    config.addinivalue_line("markers", "a5: an A5-only test")


def _allowed(config: pytest.Config, item: pytest.Item) -> bool:
    """As the reference's harness: a case runs where its `platforms` marker and `--platform`
    agree, a platform-parametrized one only on its own platform; plus plang's chips only."""
    cli = {p.strip() for p in config.getoption("--platform").split(",")} & set(RUN_PLATFORMS)
    marker = item.get_closest_marker("platforms")
    allowed = cli & set(marker.args) if marker is not None else cli
    param = item.callspec.params.get("platform") if hasattr(item, "callspec") else None
    return bool(allowed) and item.get_closest_marker("a5") is None and (param is None or param in allowed)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    keep = [item for item in items if _allowed(config, item)]
    ids = {item.nodeid for item in keep}
    keep = [item for item in keep if "a2a3sim" not in item.nodeid or item.nodeid.replace("a2a3sim", "a2a3")
            not in ids]
    config.hook.pytest_deselected(items=[item for item in items if item not in keep])
    items[:] = keep


def _compare(name: str, got: torch.Tensor, want: torch.Tensor, rtol: float, atol: float) -> str | None:
    """Why `got` does not match the golden `want` (None: it does); NaN golden cells are
    undefined by the case's contract and skipped, as the reference's harness does."""
    g, w = got.to(torch.float64), want.to(torch.float64)
    keep = ~torch.isnan(w)
    if torch.allclose(g[keep], w[keep], rtol=rtol, atol=atol, equal_nan=True):
        return None
    worst = (g[keep] - w[keep]).abs().nan_to_num(float("inf")).max().item()
    return f"output {name!r} differs from the golden: max abs diff {worst:.6g} (rtol={rtol}, atol={atol})"


class Runner:
    """Runs a case: its tensors and scalars, the golden from `compute_expected`, the program
    through `plang.runtime.run`, then every output compared with the golden. `config` is the
    session's `RunConfig`."""

    def __init__(self, config: RunConfig) -> None:
        self.config = config

    def run(self, case: Any) -> RunResult:
        specs = case.define_tensors()
        tensors = {s.name: ArgumentSpec(s.name, s.shape, s.dtype.torch_dtype, s.init_value, s.is_output)
                   .create_tensor() for s in specs}
        scalars = case.define_scalars()
        golden = {k: v.clone() for k, v in tensors.items()}
        params = {s.name: s.value for s in scalars}
        case.compute_expected(golden, params or None)
        start = time.perf_counter()
        pl.runtime.run(case.get_program(), *tensors.values(), *params.values(), config=case.config)
        elapsed = time.perf_counter() - start
        for s in specs:
            if s.is_output:
                why = _compare(s.name, tensors[s.name], golden[s.name], case.config.rtol, case.config.atol)
                if why is not None:
                    return RunResult(False, case.get_name(), why, elapsed)
        return RunResult(True, case.get_name(), None, elapsed)


@pytest.fixture(scope="session")
def test_config(request: pytest.FixtureRequest) -> RunConfig:
    return RunConfig(platform=request.config.getoption("--platform").split(",")[0].strip())


@pytest.fixture(scope="session")
def test_runner(test_config: RunConfig) -> Runner:
    return Runner(test_config)


def _device_ids(raw: str) -> list[int]:
    """`--device` read as the reference reads it: ids and inclusive ranges, comma-separated,
    in the order given, each once."""
    ids: list[int] = []
    for token in filter(None, (t.strip() for t in raw.split(","))):
        try:
            first, _, last = token.partition("-")
            ids.extend(range(int(first), int(last or first) + 1))
        except ValueError:
            raise pytest.UsageError(f"--device: {token!r} is not an id or a range of ids") from None
    if not ids:
        raise pytest.UsageError(f"--device names no device: {raw!r}")
    return list(dict.fromkeys(ids))


@pytest.fixture(scope="session")
def device_ids(request: pytest.FixtureRequest) -> list[int]:
    return _device_ids(request.config.getoption("--device"))
