"""`@pl.jit` signature forms from the reference's manual: a body on the `def` (or closing
`):`) line, and `pld.DistributedTensor` parameters, bare or subscripted, with or without
`pl.Out` / `pl.InOut`."""

from __future__ import annotations

import inspect

import pytest
import torch

import plang as pl
import plang.distributed as pld
from plang.ir import DistributedTensorType
from plang.jit.specializer import specialize_source

N = 16
M = pl.dynamic("M")


@pl.jit.incore
def add_one(a: pl.Tensor, out: pl.Out[pl.Tensor]): return pl.store(pl.add(pl.load(a, [0, 0], [N, N]), 1.0), [0, 0], out)  # noqa: E501, E704


@pl.jit
def passthrough(a: pl.Tensor[[N, N], pl.FP32], out: pl.Out[pl.Tensor[[N, N], pl.FP32]]): return out  # noqa: E704


@pl.jit
def one_line_call(a: pl.Tensor[[N, N], pl.FP32], out: pl.Out[pl.Tensor[[N, N], pl.FP32]]): return add_one(a, out)  # noqa: E501, E704


@pl.jit
def one_line_pair(a: pl.Tensor[[N, N], pl.FP32], o1: pl.Out[pl.Tensor[[N, N], pl.FP32]],
                  o2: pl.Out[pl.Tensor[[N, N], pl.FP32]]): o2 = add_one(a, o2); o1 = add_one(a, o1); return o1  # noqa: E501, E702, E704


@pl.jit
def prefill_fwd(
    hidden: pl.Tensor[[M, 64], pl.BF16],
    lm_head: pl.Tensor[[128, 64], pl.BF16],
    out: pl.Out[pl.Tensor[[M, 128], pl.FP32]],
): ...


@pl.jit
def one_line_error(a: pl.Tensor[[N, N], pl.FP32]): return pl.no_such_op(a)  # noqa: E704


def test_a_one_line_body_that_returns_lowers():
    a, out = torch.randn(N, N), torch.zeros(N, N)
    passthrough.lower(a, out)
    assert passthrough(a, out) is out


def test_a_one_line_body_calling_a_kernel_runs():
    a, out = torch.randn(N, N), torch.zeros(N, N)
    text = specialize_source(one_line_call, one_line_call._bind((a, out), {})).source
    assert "): return self.add_one(a, out)" not in text and " return self.add_one(a, out)" in text
    one_line_call(a, out)
    torch.testing.assert_close(out, a + 1)


def test_one_line_statements_before_a_return_keep_their_outputs():
    a, o1, o2 = torch.randn(N, N), torch.zeros(N, N), torch.zeros(N, N)
    assert one_line_pair(a, o1, o2) is o1
    torch.testing.assert_close(o1, a + 1)
    torch.testing.assert_close(o2, a + 1)


def test_an_ellipsis_body_with_a_dynamic_dim_compiles_from_its_signature():
    compiled = prefill_fwd.compile()
    assert [p.name for p in compiled.signature] == ["hidden", "lm_head", "out"]
    hidden = torch.zeros(8, 64, dtype=torch.bfloat16)
    prefill_fwd.lower(hidden, torch.zeros(128, 64, dtype=torch.bfloat16), torch.zeros(8, 128))


def test_errors_in_a_one_line_body_point_at_the_users_line_and_column():
    with pytest.raises(pl.ParserError) as info:
        one_line_error.lower(torch.zeros(N, N))
    lines, first = inspect.getsourcelines(one_line_error.__wrapped__)
    span = info.value.span
    assert span.filename == __file__ and span.begin_line == first + 1
    assert lines[1][span.begin_col:].startswith("pl.no_such_op(a)")


# -- pld.DistributedTensor parameters ---------------------------------------------------------

@pl.jit.incore
def stage_kernel(x: pl.Tensor, data: pl.InOut[pld.DistributedTensor]):
    return pl.store(pl.load(x, [0, 0], [1, N]), [0, 0], data)


@pl.jit
def stage(x: pl.Tensor, data: pl.Out[pld.DistributedTensor], spare: pld.DistributedTensor):
    return stage_kernel(x, data)


@pl.jit
def stage_sized(x: pl.Tensor[[1, N], pl.FP32], data: pl.InOut[pld.DistributedTensor[[1, N], pl.FP32]]):
    return stage_kernel(x, data)


@pl.jit
def stage_window(x: pl.Tensor[[1, N], pl.FP32]):
    buf = pld.alloc_window_buffer([1, N], dtype=pl.FP32)
    data = pld.window(buf, [1, N], dtype=pl.FP32)
    stage_kernel(x, data)


@pl.jit
def stage_created(x: pl.Tensor[[1, N], pl.FP32]):
    stage_kernel(x, pl.create_tensor([1, N], dtype=pl.FP32))


def _params(program, name: str) -> dict:
    return {p.name: p.type for p in program.functions[name].params}


def test_bare_distributed_tensor_parameters_take_the_call_s_shape():
    x, data = torch.randn(1, N), torch.zeros(1, N)
    text = specialize_source(stage, stage._bind((x, data, data), {})).source
    assert "import plang.distributed as pld" in text
    assert f"data: pl.Out[pld.DistributedTensor[[1, {N}], pl.FP32]]" in text
    assert f"spare: pld.DistributedTensor[[1, {N}], pl.FP32]" in text
    assert f"data: pl.InOut[pld.DistributedTensor[[1, {N}], pl.FP32]]" in text  # the kernel's
    program = stage.specialize(x, data, data)
    for fn, name in (("stage", "data"), ("stage", "spare"), ("stage_kernel", "data")):
        t = _params(program, fn)[name]
        assert type(t) is DistributedTensorType and [int(d.value) for d in t.shape] == [1, N]
    assert stage.output_param_names == ["data"]


@pytest.mark.parametrize("entry, args", [(stage_sized, (torch.randn(1, N), torch.zeros(1, N))),
                                         (stage_window, (torch.randn(1, N),))],
                         ids=["caller-parameter", "pld.window-local"])
def test_a_bare_distributed_kernel_parameter_is_inferred_from_its_call_site(entry, args):
    t = _params(entry.specialize(*args), "stage_kernel")["data"]
    assert type(t) is DistributedTensorType and [int(d.value) for d in t.shape] == [1, N]


def test_a_bare_distributed_parameter_that_cannot_be_inferred_is_named():
    with pytest.raises(pl.errors.JitSignatureError, match=r"parameter 'data' of stage_kernel.*"
                       r"pld\.DistributedTensor\[\[dims\], dtype\]") as info:
        stage_created.specialize(torch.randn(1, N))
    assert info.value.span.begin_line == inspect.getsourcelines(stage_kernel.__wrapped__)[1] + 1


def test_direction_wrappers_accept_the_distributed_tensor_class():
    assert pl.Out[pld.DistributedTensor] is pl.Out and pl.InOut[pld.DistributedTensor] is pl.InOut
    with pytest.raises(pl.ParserTypeError, match=r"wraps a type"):
        pl.Out[int]


@pl.jit
def scale(data: pld.DistributedTensor, y: pl.Out[pl.Tensor], rank: pl.Scalar[pl.INT32]):
    return scale_kernel(data, y, rank)


@pl.jit.incore
def scale_kernel(data: pld.DistributedTensor, y: pl.Out[pl.Tensor], rank: pl.Scalar[pl.INT32]):
    t = pl.load(data, [0, 0], [1, N])
    return pl.store(pl.add(t, pl.cast(rank, target_type=pl.FP32)), [0, 0], y)


@pl.jit.host
def host_allreduce(x: pld.DistributedTensor, y: pl.Out[pld.DistributedTensor]):
    buf = pld.alloc_window_buffer([1, N], dtype=pl.FP32)
    data = pld.window(buf, [1, N], dtype=pl.FP32)
    for r in pl.range(pld.world_size()):
        stage(x[r], data, data, device=r)
    data = pld.tensor.allreduce(data, op=pld.ReduceOp.Sum)
    for r in pl.range(pld.world_size()):
        scale(data, y[r], r + 2, device=r)


def test_a_host_program_with_bare_distributed_chip_parameters_runs_on_one_rank():
    pytest.importorskip("mpi4py")
    from plang.ir.distributed_compiled_program import DistributedConfig
    from plang.runtime import RunConfig

    x, y = torch.randn(1, 1, N), torch.zeros(1, 1, N)
    host_allreduce(x, y, config=RunConfig(distributed_config=DistributedConfig(device_ids=[0])))
    torch.testing.assert_close(y, x + 2)
