"""A DDR tensor the cube stores and the vector lanes load inside one mixed `pl.at` scope (the
AIC and AIV kernels run concurrently) is ordered by a fence token on a pipe: the vector lanes
wait for it before the loop that loads the tensor, and the result matches torch on every
run. A handoff the fence cannot order (a load before the store, or two stores) is a located
error, not a silent wrong answer. The same program split into two scopes runs, ordered by the
task graph."""

from __future__ import annotations

import pytest
import torch

import plang as pl
from plang.passes import PassError

B, H, CACHE = 8, 64, 16


@pl.jit
def one_scope(x: pl.Tensor[[B, H], pl.BF16], w: pl.Tensor[[H, H], pl.BF16],
              cache: pl.InOut[pl.Tensor[[B * CACHE, H], pl.BF16]]):
    kv = pl.create_tensor([B, H], dtype=pl.FP32)
    with pl.at(level=pl.Level.CORE_GROUP):
        kv[:, :] = pl.matmul(x, w, out_dtype=pl.FP32)
        for b in pl.range(B):
            cache[b * CACHE : b * CACHE + 1, :] = pl.cast(kv[b : b + 1, :], target_type=pl.BF16)
    return cache


@pl.jit
def load_before_store(x: pl.Tensor[[B, H], pl.BF16], w: pl.Tensor[[H, H], pl.BF16],
                      cache: pl.InOut[pl.Tensor[[B * CACHE, H], pl.BF16]]):
    kv = pl.create_tensor([B, H], dtype=pl.FP32)
    with pl.at(level=pl.Level.CORE_GROUP):
        for b in pl.range(B):
            cache[b * CACHE : b * CACHE + 1, :] = pl.cast(kv[b : b + 1, :], target_type=pl.BF16)
        kv[:, :] = pl.matmul(x, w, out_dtype=pl.FP32)
    return cache


@pl.jit
def two_scopes(x: pl.Tensor[[B, H], pl.BF16], w: pl.Tensor[[H, H], pl.BF16],
               cache: pl.InOut[pl.Tensor[[B * CACHE, H], pl.BF16]]):
    kv = pl.create_tensor([B, H], dtype=pl.FP32)
    with pl.at(level=pl.Level.CORE_GROUP):
        kv[:, :] = pl.matmul(x, w, out_dtype=pl.FP32)
    with pl.at(level=pl.Level.CORE_GROUP):
        for b in pl.range(B):
            cache[b * CACHE : b * CACHE + 1, :] = pl.cast(kv[b : b + 1, :], target_type=pl.BF16)
    return cache


def _inputs():
    x = (torch.arange(B, dtype=torch.float32)[:, None] + 1).expand(B, H).to(torch.bfloat16)
    cache = torch.zeros(B * CACHE, H, dtype=torch.bfloat16)
    return x.contiguous(), torch.ones(H, H, dtype=torch.bfloat16), cache


def _check(fn) -> None:
    x, w, cache = _inputs()
    for _ in range(5):
        cache.zero_()
        fn(x, w, cache)
        want = torch.zeros_like(cache)
        want[::CACHE] = (x.float() @ w.float()).to(torch.bfloat16)
        assert torch.equal(cache, want)


def test_a_store_and_load_across_the_cores_of_one_scope_is_fenced():
    _check(one_scope)
    aiv = [f for f in one_scope.lower(*_inputs()).functions.values() if f.func_type is pl.FunctionType.AIV]
    assert len(aiv) == 1 and "tile.tpop_from_aic" in str(aiv[0])


def test_a_load_the_fence_cannot_order_is_an_error():
    with pytest.raises(PassError, match=r"tensor 'kv' is stored by AIC work .* and loaded by AIV work.*"
                                        r"outside the statements that follow the store"):
        load_before_store(*_inputs())


def test_the_handoff_split_into_two_scopes_is_ordered():
    _check(two_scopes)
