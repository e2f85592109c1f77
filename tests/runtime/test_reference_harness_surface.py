"""What the reference's system-test harness needs from plang: its import paths
(`plang.pypto_core`, `plang.runtime.tensor_spec`, `RunResult`), a RunConfig whose tolerances a
test case assigns, host tensors for INDEX / unsigned parameters, annotations that name a
symbolic extent where the value has a static one (and back), and SPMD launches passing a
literal scalar to their kernel."""

import pytest
import torch

import plang as pl
from plang.pypto_core import LogLevel, _clear_thread_log_level, _set_thread_log_level, get_log_level
from plang.pypto_core.passes import MemoryPlanner
from plang.runtime import ChipWorker, RunConfig, run
from plang.runtime.runner import _SWIMLANE_FULL_LEVEL, RunResult
from plang.runtime.tensor_spec import ScalarSpec, TensorSpec

M = pl.dynamic("M")
N = pl.dynamic("N")


def test_reference_core_module_names():
    assert [p.name for p in MemoryPlanner] == ["PYPTO", "DSA_RP", "PTOAS"]
    assert RunConfig(memory_planner=MemoryPlanner.PTOAS) == RunConfig()  # no effect on the chip
    _set_thread_log_level(LogLevel.DEBUG)  # the calling thread's threshold; get reads the process's
    assert get_log_level() is not LogLevel.DEBUG
    _clear_thread_log_level()
    assert ScalarSpec("n", 3).ctype == "int64"
    assert TensorSpec("x", [2], torch.float32, init_value=1.0).create_tensor().tolist() == [1.0, 1.0]
    assert _SWIMLANE_FULL_LEVEL == 4
    assert str(RunResult(False, "case", "boom")) == "FAIL: case - boom"
    assert str(RunResult(True, "case")) == "PASS: case"


@pl.program
class _Add:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[16, 16], pl.FP32], b: pl.Tensor[[16, 16], pl.FP32],
             out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP):
            out = pl.store(pl.add(pl.load(a, [0, 0], [16, 16]), pl.load(b, [0, 0], [16, 16])), [0, 0], out)
        return out


def test_run_config_fields_are_assignable_like_the_reference():
    cfg = RunConfig(platform="a2a3sim")
    cfg.rtol = 2e-3  # what a PTOTestCase does in its __init__
    cfg.atol = 2e-3
    assert (cfg.rtol, cfg.atol) == (2e-3, 2e-3)
    a, b = torch.randn(16, 16), torch.randn(16, 16)
    out = torch.zeros(16, 16)
    run(_Add, a, b, out, config=cfg)
    torch.testing.assert_close(out, a + b)
    # the default worker of a config is keyed by its values when first used
    assert ChipWorker.for_call(cfg) is ChipWorker.for_call(cfg)


@pl.program
class _ValidFromIndexTensor:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, a: pl.Tensor[[32, 32], pl.FP32], c: pl.Out[pl.Tensor[[32, 32], pl.FP32]],
               m: pl.Scalar[pl.INDEX], n: pl.Scalar[pl.INDEX]) -> pl.Tensor[[32, 32], pl.FP32]:
        t = pl.load(a, [0, 0], [32, 32], valid_shape=[m, n])
        return pl.store(pl.mul(t, 2.0), [0, 0], c)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[32, 32], pl.FP32], vs: pl.Tensor[[2], pl.INDEX],
             c: pl.Out[pl.Tensor[[32, 32], pl.FP32]]) -> pl.Tensor[[32, 32], pl.FP32]:
        m: pl.Scalar[pl.INDEX] = pl.tensor.read(vs, [0])
        n: pl.Scalar[pl.INDEX] = pl.tensor.read(vs, [1])
        c = self.kernel(a, c, m, n)
        return c


def test_index_tensor_parameter_takes_a_torch_int64_tensor():
    a = torch.randn(32, 32)
    c = torch.zeros(32, 32)
    run(_ValidFromIndexTensor, a, torch.tensor([8, 20], dtype=torch.int64), c,
        config=RunConfig(platform="a2a3sim"))
    torch.testing.assert_close(c[:8, :20], a[:8, :20] * 2.0)
    with pytest.raises(TypeError, match="expects dtype"):
        run(_ValidFromIndexTensor, a, torch.tensor([8, 20], dtype=torch.int32), c)


def test_unsigned_parameter_takes_the_signed_torch_type_of_its_width():
    assert pl.UINT32.accepts_storage(pl.INT32) and pl.UINT16.accepts_storage(pl.INT16)
    assert pl.INDEX.accepts_storage(pl.INT64)
    assert not pl.UINT32.accepts_storage(pl.INT16) and not pl.INT32.accepts_storage(pl.UINT32)
    assert not pl.UINT8.accepts_storage(pl.INT8)  # torch has uint8


@pl.program
class _SymbolicAnnotations:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, a: pl.Tensor[[M, N], pl.FP32], c: pl.Out[pl.Tensor[[M, N], pl.FP32]]
               ) -> pl.Tensor[[M, N], pl.FP32]:
        t = pl.load(a, [0, 0], [16, 32])
        return pl.store(pl.add(t, 1.0), [0, 0], c)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[M, N], pl.FP32], c: pl.Out[pl.Tensor[[M, N], pl.FP32]]
             ) -> pl.Tensor[[M, N], pl.FP32]:
        a2: pl.Tensor[[16, 32], pl.FP32] = a  # a static annotation of a symbolic value
        c = self.kernel(a2, c)
        return c


def test_annotations_agree_where_an_extent_is_symbolic():
    a = torch.randn(16, 32)
    c = torch.zeros(16, 32)
    run(_SymbolicAnnotations, a, c, config=RunConfig(platform="a5sim"))
    torch.testing.assert_close(c, a + 1.0)


def test_annotation_with_a_different_static_extent_is_still_an_error():
    with pytest.raises(pl.ParserTypeError, match="is annotated"):
        @pl.program
        class _Bad:
            @pl.function(type=pl.FunctionType.Orchestration)
            def main(self, a: pl.Tensor[[16, 32], pl.FP32]) -> pl.Tensor[[16, 32], pl.FP32]:
                b: pl.Tensor[[32, 16], pl.FP32] = a
                return b


@pl.program
class _SpmdWithOffset:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, a: pl.Tensor[[64, 16], pl.FP32], out: pl.Out[pl.Tensor[[64, 16], pl.FP32]],
               base: pl.Scalar[pl.INDEX]) -> pl.Tensor[[64, 16], pl.FP32]:
        row = (pl.tile.get_block_idx() + base) * 16
        t = pl.load(a, [row, 0], [16, 16])
        return pl.store(pl.mul(t, 3.0), [row, 0], out)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[64, 16], pl.FP32], out: pl.Out[pl.Tensor[[64, 16], pl.FP32]]
             ) -> pl.Tensor[[64, 16], pl.FP32]:
        with pl.spmd(1):
            out = self.kernel(a, out, 0)
        with pl.spmd(3):
            out = self.kernel(a, out, 1)
        return out


def test_spmd_launch_passes_a_literal_scalar_to_its_kernel():
    a = torch.randn(64, 16)
    out = torch.zeros(64, 16)
    run(_SpmdWithOffset, a, out, config=RunConfig(platform="a2a3sim"))
    torch.testing.assert_close(out, a * 3.0)


@pl.program
class _OrchestrationViews:
    @pl.function(type=pl.FunctionType.InCore)
    def add(self, a: pl.Tensor[[8, 16], pl.FP32], b: pl.Tensor[[8, 16], pl.FP32],
            c: pl.Out[pl.Tensor[[8, 16], pl.FP32]]) -> pl.Tensor[[8, 16], pl.FP32]:
        t = pl.add(pl.load(a, [0, 0], [8, 16]), pl.load(b, [0, 0], [8, 16]))
        return pl.store(t, [0, 0], c)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, flat: pl.Tensor[[128], pl.FP32], wide: pl.Tensor[[16, 8], pl.FP32],
             c: pl.Out[pl.Tensor[[8, 16], pl.FP32]]) -> pl.Tensor[[8, 16], pl.FP32]:
        a = pl.reshape(flat, [8, 16])
        b = pl.transpose(wide, axis1=0, axis2=1)
        c = self.add(a, b, c)
        return c


def test_orchestration_reshape_and_transpose():
    flat, wide = torch.randn(128), torch.randn(16, 8)
    c = torch.zeros(8, 16)
    run(_OrchestrationViews, flat, wide, c, config=RunConfig(platform="a2a3sim"))
    torch.testing.assert_close(c, flat.reshape(8, 16) + wide.t())
