import pytest

from plang.runtime.config import RunConfig
from plang.target import Device


def test_unknown_key_names_it():
    with pytest.raises(TypeError, match="bogus"):
        RunConfig(bogus=1)


def test_geometry_override_and_workers_default():
    cfg = RunConfig(clusters=3)
    assert cfg.resolved_device().clusters == 3
    assert cfg.worker_count() == 3
    assert RunConfig(device=Device(clusters=5), workers=2).worker_count() == 2


def test_compile_key_only_has_compile_fields():
    assert RunConfig(profiling=True, workers=4).compile_key() == RunConfig().compile_key()
    assert RunConfig(clusters=7).compile_key() != RunConfig(clusters=8).compile_key()
    assert RunConfig(strategy="Other").compile_key() != RunConfig().compile_key()


@pytest.mark.parametrize("kwargs, message", [
    ({"platform": "ascend"}, "unknown platform"),
    ({"device_id": -1}, "device_id"),
    ({"clusters": 2, "device": Device(clusters=2)}, "either"),
    ({"workers": 0}, "workers"),
])
def test_bad_values(kwargs, message):
    with pytest.raises(ValueError, match=message):
        RunConfig(**kwargs)


def test_a_config_that_ran_a_program_still_pickles_and_finds_its_worker():
    """A config's default worker is memoized on it; a launched distributed job's ranks get
    the config pickled, and an assignment picks another worker."""
    import pickle

    from plang.runtime.worker import ChipWorker

    config = RunConfig(device=Device(clusters=2))
    worker = ChipWorker.for_call(config)
    assert ChipWorker.for_call(config) is worker
    config.kernel_timeout = 5.0
    assert ChipWorker.for_call(config) is not worker
    config.kernel_timeout = None
    assert ChipWorker.for_call(config) is worker
    plain = RunConfig()
    ChipWorker.for_call(plain)
    assert pickle.loads(pickle.dumps(plain)) == plain
