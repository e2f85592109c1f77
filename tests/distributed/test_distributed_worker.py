"""`DistributedWorker`: two `@pl.jit.host` programs prepared on one worker share a resident
DeviceTensor (a prefill program writes a KV cache, each decode step reads it), on one rank."""

from __future__ import annotations

import pytest
import torch

import plang as pl
from plang.ir.distributed_compiled_program import DistributedConfig
from plang.runtime import DeviceTensor, DistributedWorker, RunConfig

pytest.importorskip("mpi4py")

N = 16


@pl.jit.incore
def double(x: pl.Tensor, kv: pl.Out[pl.Tensor]):
    t = pl.load(x, [0, 0], [N, N])
    return pl.store(pl.add(t, t), [0, 0], kv)


@pl.jit
def prefill_chip(x: pl.Tensor, kv: pl.Out[pl.Tensor]):
    return double(x, kv)


@pl.jit.host
def prefill(x: pl.Tensor, kv: pl.Out[pl.Tensor]):
    return prefill_chip(x, kv)  # one rank: no device= needed


@pl.jit.incore
def add_kv(token: pl.Tensor, kv: pl.Tensor, out: pl.Out[pl.Tensor]):
    t = pl.add(pl.load(token, [0, 0], [N, N]), pl.load(kv, [0, 0], [N, N]))
    return pl.store(t, [0, 0], out)


@pl.jit
def decode_chip(token: pl.Tensor, kv: pl.Tensor, out: pl.Out[pl.Tensor]):
    return add_kv(token, kv, out)


@pl.jit.host
def decode(token: pl.Tensor, kv: pl.Tensor, out: pl.Out[pl.Tensor]):
    return decode_chip(token, kv, out, device=0)


CONFIG = RunConfig(distributed_config=DistributedConfig(device_ids=[0]))


def _compiled():
    x, token, out = torch.randn(N, N), torch.zeros(N, N), torch.zeros(N, N)
    return (prefill.compile(x, torch.zeros(N, N), config=CONFIG),
            decode.compile(token, torch.zeros(N, N), out, config=CONFIG), x, token, out)


def test_two_programs_share_a_resident_kv_cache():
    prefill_c, decode_c, x, token, out = _compiled()
    with DistributedWorker([prefill_c, decode_c]) as rt:
        kv = rt.alloc_tensor((N, N), torch.float32)
        assert isinstance(kv, DeviceTensor)
        rt.run(prefill_c, x, kv)
        for step in range(3):
            token.fill_(float(step))
            rt.run(decode_c, token, kv, out)
            torch.testing.assert_close(out, 2 * x + step)
        with pytest.raises(TypeError, match=r"rt\(\*args\) is ambiguous with 2 prepared programs "
                                               r"\(prefill, decode\)"):
            rt(x, kv)
        rt.free_tensor(kv)
    with pytest.raises(RuntimeError, match=r"DistributedWorker.alloc_tensor\(\) called after close\(\)"):
        rt.alloc_tensor((N, N), torch.float32)


def test_prepare_gives_a_worker_and_one_program_is_callable():
    prefill_c, decode_c, x, token, out = _compiled()
    with prefill_c.prepare(extra_compiled=[decode_c]) as rt:
        kv = rt.alloc_tensor((N, N), torch.float32)
        rt.run(prefill_c, x, kv)
        rt.run(decode_c, token, kv, out)
        torch.testing.assert_close(out, 2 * x)
    with prefill_c.prepare() as rt:
        kv = torch.zeros(N, N)
        rt(x, kv)  # one prepared program: rt(*args) runs it; a host tensor works too
        torch.testing.assert_close(kv, 2 * x)
        with pytest.raises(ValueError, match="decode is not prepared on this worker"):
            rt.run(decode_c, token, kv, out)
        run_decode = rt.register(decode_c)
        run_decode(token.fill_(1.0), kv, out)
        torch.testing.assert_close(out, 2 * x + 1)


def test_worker_arguments_are_checked():
    prefill_c, decode_c, *_ = _compiled()
    with pytest.raises(ValueError, match="requires at least one compiled program"):
        DistributedWorker([])
    with pytest.raises(TypeError, match="takes DistributedCompiledPrograms"):
        DistributedWorker([prefill])
    with pytest.raises(ValueError, match=r"callbacks names \['inspect'\] are not sub-workers"):
        prefill_c.prepare(callbacks={"inspect": print})
    two = RunConfig(distributed_config=DistributedConfig(device_ids=[0, 1]))
    other = decode.compile(torch.zeros(N, N), torch.zeros(N, N), torch.zeros(N, N), config=two)
    with pytest.raises(ValueError, match=r"decode runs on device_ids \[0, 1\], prefill on \[0\]"):
        DistributedWorker([prefill_c, other])


def test_registered_handles_and_submitted_runs():
    """The reference's explicit surface: `register` gives a handle bound to its program,
    `submit` a completed run handle whose `result()` raises what the run raised, and a
    closed worker refuses further use and closes its handles."""
    prefill_c, decode_c, x, token, out = _compiled()
    rt = DistributedWorker([prefill_c, decode_c])
    kv = rt.alloc_tensor((N, N), torch.float32)
    assert len(rt._owned_tensors) == 1
    handle = rt.register(prefill_c)
    assert handle.compiled is prefill_c and not handle.closed
    handle(x, kv)
    done = rt.submit(decode_c, token, kv, out)
    assert done.done and done.result() is None
    torch.testing.assert_close(out, 2 * x)
    failed = rt.submit(decode_c, token, kv)  # one argument short
    with pytest.raises(TypeError):
        failed.result()
    rt.close()
    assert handle.closed and len(rt._owned_tensors) == 0
    with pytest.raises(RuntimeError, match=r"DistributedWorker.register\(\) called after close\(\)"):
        rt.register(prefill_c)
