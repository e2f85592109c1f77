"""@pl.jit end to end: calling with torch tensors, specialization, caching, inspection."""

import threading

import jit_kernels as K
import pytest
import torch

import plang as pl
from plang.jit.compiler import COUNTERS


@pytest.fixture(autouse=True)
def _no_disk_cache(monkeypatch, tmp_path):
    monkeypatch.setenv("PLANG_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("PLANG_DISK_CACHE", "0")


def _fresh(fn):
    """A new JITFunction for the same Python function (empty in-memory cache)."""
    return type(fn)(fn.__wrapped__, fn.kind, None if fn.auto_scope else False)


def test_call_writes_out_tensor_and_returns_it():
    a, b, c = torch.randn(32, 64), torch.randn(32, 64), torch.zeros(32, 64)
    result = K.add(a, b, c)
    torch.testing.assert_close(c, a + b)
    assert result is c


def test_strided_views_are_passed_zero_copy():
    base_a, base_b = torch.randn(64, 128), torch.randn(64, 128)
    out = torch.zeros(64, 128)
    a, b, c = base_a[::2, 32:96], base_b[1::2, :64], out[:32, 64:]
    K.add(a, b, c)
    torch.testing.assert_close(out[:32, 64:], a + b)
    assert out[:32, :64].abs().sum() == 0 and out[32:].abs().sum() == 0


def test_compile_returns_the_same_object_for_the_same_specialization():
    a, b, c = torch.randn(32, 64), torch.randn(32, 64), torch.zeros(32, 64)
    first = K.add.compile(a, b, c)
    assert K.add.compile(torch.ones(32, 64), torch.ones(32, 64), torch.ones(32, 64)) is first
    assert first.program is not None and first.lowered is not None
    assert "add_tile" in first.kernels and "func.func" in first.mlir["add_tile"]
    assert "rt.submit" in first.source


def test_new_dtype_respecializes():
    add = _fresh(K.add)
    a32 = add.compile(torch.randn(32, 64), torch.randn(32, 64), torch.zeros(32, 64))
    a16 = add.compile(torch.randn(32, 64).half(), torch.randn(32, 64).half(), torch.zeros(32, 64).half())
    assert a16 is not a32
    x, y, z = torch.randn(32, 64).half(), torch.randn(32, 64).half(), torch.zeros(32, 64).half()
    add(x, y, z)
    torch.testing.assert_close(z, x + y)


def test_dynamic_dim_reuses_one_artifact_across_sizes():
    scale = _fresh(K.scale)
    before = COUNTERS["compiles"]
    for rows in (16, 48, 128):
        x, y = torch.randn(rows, 64), torch.zeros(rows, 64)
        scale(x, y)
        torch.testing.assert_close(y, x * K.SCALE)
    assert COUNTERS["compiles"] - before == 1
    assert scale.compile(torch.randn(16, 64), torch.zeros(16, 64)) is scale.compile(
        torch.randn(64, 64), torch.zeros(64, 64))


def test_changed_closure_constant_invalidates_the_cache(monkeypatch):
    scale = _fresh(K.scale)
    x, y = torch.randn(16, 64), torch.zeros(16, 64)
    scale(x, y)
    torch.testing.assert_close(y, x * 2.0)
    monkeypatch.setattr(K, "SCALE", 3.0)
    scale(x, y)
    torch.testing.assert_close(y, x * 3.0)


def test_specialized_scalar_and_runtime_scalar():
    add_scalar = _fresh(K.add_scalar)
    x, y = torch.randn(16, 64), torch.zeros(16, 64)
    add_scalar(x, y, 1.5)
    torch.testing.assert_close(y, x + 1.5)
    add_scalar(x, y, 2.5)
    torch.testing.assert_close(y, x + 2.5)
    runtime = add_scalar.compile(k=pl.RUNTIME)
    assert [p.name for p in runtime.signature] == ["x", "y", "k"]
    runtime(x, y, 4.0)
    torch.testing.assert_close(y, x + 4.0)
    specialized = add_scalar.compile(k=7.0)
    assert [p.name for p in specialized.signature] == ["x", "y"]


def test_signature_mode_shares_the_sample_specialization():
    scale = _fresh(K.scale)
    from_signature = scale.compile()
    assert scale.compile(torch.randn(32, 64), torch.zeros(32, 64)) is from_signature
    with pytest.raises(TypeError, match="needs a full annotation"):
        K.add.compile()


def test_two_threads_compile_a_cold_kernel_once():
    scale = _fresh(K.scale)
    before = COUNTERS["compiles"]
    results = []
    barrier = threading.Barrier(2)

    def work():
        barrier.wait()
        results.append(scale.compile(torch.randn(16, 64), torch.zeros(16, 64)))

    threads = [threading.Thread(target=work) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results[0] is results[1]
    assert COUNTERS["compiles"] - before == 1


def test_specialize_and_lower_return_ir():
    a, b, c = torch.randn(32, 64), torch.randn(32, 64), torch.zeros(32, 64)
    pre = K.add.specialize(a, b, c)
    post = K.add.lower(a, b, c)
    assert isinstance(pre, pl.ir.Program) and isinstance(post, pl.ir.Program)
    assert pre.get("add_tile").func_type is pl.FunctionType.InCore
    assert {f.func_type for f in post.functions.values()} >= {pl.FunctionType.Orchestration}
    assert pl.parse(post.as_python()) is not None


def test_warmup_compiles_without_running():
    c = torch.full((32, 64), 7.0)
    compiled = _fresh(K.add).warmup(torch.randn(32, 64), torch.randn(32, 64), c)
    assert compiled.kernels and bool((c == 7.0).all())


def test_inline_helper_taking_tiles():
    x, b, y = torch.randn(32, 64), torch.randn(32, 64), torch.zeros(32, 64)
    K.fused_bias_relu(x, b, y)
    torch.testing.assert_close(y, torch.relu(x + b))


def test_inline_helper_shaping_its_tiles_by_a_local_extent():
    x, y = torch.randn(64, 32), torch.zeros(64, 32)
    K.block_sums(x, y)
    blocks = x.reshape(4, 16, 32)
    want = torch.cat([blocks[i:].sum(0) for i in range(4)])
    torch.testing.assert_close(y, want, rtol=1e-5, atol=1e-5)


def test_errors_in_kernels_point_at_the_users_file_and_line():
    import inspect

    with pytest.raises(pl.ParserError) as info:
        K.bad_shapes(torch.zeros(32, 64), torch.zeros(32, 64))
    line = inspect.getsourcelines(K.bad_shapes.__wrapped__)[1] + 2
    err = info.value
    assert err.span.filename.endswith("jit_kernels.py") and err.span.begin_line == line
    assert "c = add_tile(a, a, c, a)" in str(err)


def test_out_tensor_rebound_to_a_new_value_is_written_back():
    x, y = torch.randn(4, 64), torch.zeros(4, 64)
    result = K.rebind_out(x, y)
    torch.testing.assert_close(y, x + x)
    assert result is y


def test_out_tensors_are_written_even_when_not_returned():
    x, y, z = torch.randn(4, 64), torch.zeros(4, 64), torch.zeros(4, 64)
    assert K.rebind_out_no_return(x, y, z) is None
    torch.testing.assert_close(y, x + x)
    torch.testing.assert_close(z, x * x)


def test_annotation_aliases_and_intermediate_tensors():
    x, y = torch.randn(32, 64), torch.zeros(32, 64)
    K.square_plus(x, y)
    torch.testing.assert_close(y, x * x + x)
    assert K.square_plus.compile() is K.square_plus.compile(x, y)


def test_new_static_shape_respecializes():
    double = _fresh(K.double)
    before = COUNTERS["compiles"]
    for shape in ((8, 64), (16, 32), (8, 64)):
        a, c = torch.randn(*shape), torch.zeros(*shape)
        double(a, c)
        torch.testing.assert_close(c, a + a)
    assert COUNTERS["compiles"] - before == 2
    lowered = double.lower(torch.randn(16, 32), torch.zeros(16, 32))
    assert "[16, 32]" in lowered.as_python()


def test_entry_returning_a_kernel_call():
    a, b, c = torch.randn(32, 64), torch.randn(32, 64), torch.zeros(32, 64)
    assert K.add_returning_call(a, b, c) is c
    torch.testing.assert_close(c, a + b)


def test_auto_scope_false_places_no_runtime_scopes():
    a, b, c = torch.randn(32, 64), torch.randn(32, 64), torch.zeros(32, 64)
    assert "with pl.scope()" in K.add.lower(a, b, c).as_python()
    assert "with pl.scope()" not in K.add_manual_scopes.lower(a, b, c).as_python()
    K.add_manual_scopes(a, b, c)
    torch.testing.assert_close(c, a + b)
