"""The reference's manual dispatch (`simpler.worker.Worker` + `compiled.chip_callable`,
`build_orch_args`, `build_call_config`) running the kernels on the simulated chip."""

import pytest
import torch
from add_program import AddProgram

import plang as pl
from simpler.worker import Worker


@pytest.fixture(scope="module")
def compiled():
    return pl.compile(AddProgram)


def _dispatch(compiled, *args, threads=None):
    w = Worker(level=2, device_id=0, platform="a2a3sim", runtime=compiled.runtime_name)
    w.init()
    try:
        orch_args, coerced, return_style = compiled.build_orch_args(*args, worker=w)
        cid = w.register(compiled.chip_callable)
        w.run(cid, orch_args, compiled.build_call_config(aicpu_thread_num=threads))
        chips = [chip.config.workers for chip in w._chips.values()]
        w.unregister(cid)
    finally:
        w.close()
    return coerced, return_style, chips


def test_return_style_allocates_and_fills_the_output(compiled):
    a, b = torch.randn(32, 64), torch.randn(32, 64)
    coerced, return_style, _ = _dispatch(compiled, a, b)
    assert return_style is True and coerced[0] is a
    torch.testing.assert_close(coerced[compiled.output_indices[0]], a + b)


def test_in_place_and_thread_override(compiled):
    a, b, c = torch.randn(32, 64), torch.randn(32, 64), torch.zeros(32, 64)
    coerced, return_style, chips = _dispatch(compiled, a, b, c, threads=3)
    assert return_style is False and coerced[2] is c and chips == [3]
    torch.testing.assert_close(c, a + b)
    assert compiled.chip_callable is compiled.chip_callable


def test_misuse_is_a_clear_error(compiled):
    w = Worker(platform="a2a3sim", runtime=compiled.runtime_name)
    with pytest.raises(RuntimeError, match="after init"):
        w.register(compiled.chip_callable)
    w.init()
    other = Worker(platform="a2a3sim")
    orch_args, _, _ = compiled.build_orch_args(torch.zeros(32, 64), torch.zeros(32, 64), worker=other)
    cid = w.register(compiled.chip_callable)
    with pytest.raises(TypeError, match="worker=<this one>"):
        w.run(cid, orch_args)
    with pytest.raises(TypeError, match="takes 3 arguments"):
        compiled.build_orch_args(torch.zeros(32, 64), worker=w)
    with pytest.raises(ValueError, match="aicpu_thread_num must be a positive int"):
        compiled.build_call_config(aicpu_thread_num=-1)
    with pytest.raises(ValueError, match="runtime 'other'"):
        Worker(runtime="other")
    w.close()
