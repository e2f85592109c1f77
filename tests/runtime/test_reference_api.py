"""The reference's runtime surface under plang's names: RunConfig's fields and platforms,
`run`, `TensorSpec`, return-style calls, path-like compiled programs, raw worker memory."""

import ctypes
import os

import pytest
import torch

import plang as pl
from plang.backend import BackendType
from plang.ir import MemorySpace
from plang.ir.pass_manager import OptimizationStrategy, PassDumpLevel
from plang.runtime import ChipWorker, RunConfig, ScalarSpec, TensorSpec, run
from plang.runtime.config import REFERENCE_ONLY
from plang.target import KIB

ADD = """
import plang as pl


@pl.program
class Add:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[16, 16], pl.FP32], b: pl.Tensor[[16, 16], pl.FP32],
             out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP):
            t = pl.add(pl.load(a, [0, 0], [16, 16]), pl.load(b, [0, 0], [16, 16]))
            out = pl.store(t, [0, 0], out)
        return out
"""


@pytest.fixture(scope="module")
def program():
    return pl.parse(ADD)


def test_every_reference_field_is_accepted():
    cfg = RunConfig(platform="a2a3", device_id=11, rtol=2e-2, atol=2e-2,
                    strategy=OptimizationStrategy.Default, backend_type=BackendType.Ascend910B,
                    dump_passes=PassDumpLevel.NONE, save_kernels=False, save_kernels_dir=None,
                    codegen_only=False, enable_chip_swimlane=False, enable_dump_args=0,
                    **{name: None for name in REFERENCE_ONLY if name.startswith(("ring_", "diag"))})
    assert (cfg.rtol, cfg.device_id, cfg.strategy_name) == (2e-2, 11, "Default")
    hash(cfg)
    with pytest.raises(TypeError, match="bogus"):
        RunConfig(bogus=1)


@pytest.mark.parametrize("platform, groups, vec, acc, backend", [
    ("a2a3", 24, 184, 128, BackendType.Ascend910B), ("a2a3sim", 24, 184, 128, BackendType.Ascend910B),
    ("a5", 36, 240, 256, BackendType.Ascend950), ("a5sim", 36, 240, 256, BackendType.Ascend950),
])
def test_reference_platforms_have_their_geometry(platform, groups, vec, acc, backend):
    cfg = RunConfig(platform=platform, backend_type=BackendType.Ascend910B)
    device = cfg.resolved_device()
    assert (device.clusters, device.aic_per_cluster, device.aiv_per_cluster) == (groups, 1, 2)
    assert device.capacity(MemorySpace.Vec) == vec * KIB and device.capacity(MemorySpace.Acc) == acc * KIB
    assert cfg.backend_type is backend  # the platform decides, as in the reference
    assert RunConfig(platform=platform, clusters=2).resolved_device().clusters == 2


def test_platform_capacities_reach_the_passes():
    src = ADD.replace("16, 16", "256, 232")  # 232 KiB fp32 tiles: over a2a3's Vec, within a5's
    prog = pl.parse(src)
    with pytest.raises(pl.Error, match="Vec"):
        pl.compile(prog, RunConfig(platform="a2a3sim", clusters=1))
    a, b = torch.randn(256, 232), torch.randn(256, 232)
    out = pl.compile(prog, RunConfig(platform="a5sim", clusters=1))(a, b, torch.zeros(256, 232))
    torch.testing.assert_close(out, a + b)


@pytest.mark.parametrize("kwargs, error", [
    ({"enable_chip_swimlane": 5}, ValueError), ({"ring_heap": 1000}, ValueError),
    ({"ring_task_window": [4, 8, 0]}, ValueError), ({"dump_passes": 3}, TypeError),
])
def test_reference_validation(kwargs, error):
    with pytest.raises(error):
        RunConfig(**kwargs)


def test_normalised_values():
    assert RunConfig(enable_chip_swimlane=True).enable_chip_swimlane == 4
    assert RunConfig(enable_chip_swimlane=1).profiling
    assert RunConfig(ring_task_window=[4, 0, 8, 16]).ring_task_window == (4, 0, 8, 16)


def test_run_compiles_and_runs(program):
    a, b, out = torch.randn(16, 16), torch.randn(16, 16), torch.zeros(16, 16)
    compiled = run(program, a, b, out, config=RunConfig(clusters=1))
    torch.testing.assert_close(out, a + b)
    out2 = compiled(b, b)  # return style: the Out tensor is allocated and returned
    torch.testing.assert_close(out2, b + b)


def test_codegen_only_and_saved_kernels(program, tmp_path):
    out = torch.zeros(16, 16)
    cfg = RunConfig(clusters=1, codegen_only=True, save_kernels=True, save_kernels_dir=str(tmp_path),
                    dump_passes=True)
    compiled = run(program, torch.ones(16, 16), torch.ones(16, 16), out, config=cfg)
    assert not out.any()
    assert os.fspath(compiled) == str(tmp_path)
    assert (tmp_path / "orchestration" / "main.py").read_text() == compiled.source
    assert list((tmp_path / "kernels").glob("*.mlir")) and list((tmp_path / "passes_dump").iterdir())


def test_ir_compile_is_path_like(program, tmp_path):
    compiled = pl.ir.compile(program, output_dir=str(tmp_path), strategy=pl.ir.OptimizationStrategy.Default,
                             dump_passes=False, backend_type=BackendType.Ascend910B, skip_ptoas=True)
    assert str(compiled) == str(tmp_path) and (tmp_path / "orchestration").is_dir()
    with pytest.raises(TypeError, match="unexpected keyword"):
        pl.ir.compile(program, output_dir=str(tmp_path), bogus=True)


def test_tensor_spec_initialisers():
    base = torch.arange(4.0)
    specs = [TensorSpec("z", [2, 2], torch.float32), TensorSpec("f", [2], torch.int32, init_value=3),
             TensorSpec("t", [4], torch.bfloat16, init_value=base),
             TensorSpec("r", [3, 3], torch.float32, init_value=torch.randn),
             TensorSpec("c", [2], torch.int64, init_value=lambda: [5, 6], is_output=True)]
    z, f, t, r, c = (s.create_tensor() for s in specs)
    assert not z.any() and f.tolist() == [3, 3] and t.dtype == torch.bfloat16
    assert r.shape == (3, 3) and c.tolist() == [5, 6] and specs[-1].is_output
    with pytest.raises(ValueError, match="ctype"):
        ScalarSpec("s", 1, "int8")


def test_worker_raw_memory_round_trip():
    host_in = torch.arange(256, dtype=torch.float32).view(16, 16)
    host_out = torch.zeros_like(host_in)
    with ChipWorker(config=RunConfig(clusters=1, platform="a2a3sim", device_id=3)) as w:
        w.init()
        assert (w.platform, w.device_id, w.initialized) == ("a2a3sim", 3, True)
        t = w.alloc_tensor((16, 16), torch.float32, init=host_in)
        w.copy_from(host_out.data_ptr(), t.data_ptr, t.nbytes)
        ptr = w.malloc(64)
        w.copy_to(ptr, host_in.data_ptr(), 64)
        assert ctypes.string_at(ptr, 64) == host_in.numpy().tobytes()[:64]
        with pytest.raises(ValueError, match="inside memory"):
            w.copy_from(host_out.data_ptr(), ptr, 65)
        w.free(ptr)
        with pytest.raises(ValueError, match="not an address"):
            w.free(ptr)
    assert torch.equal(host_out, host_in)
