"""`@pl.jit.incore(single_core=True)`: a kernel mixing cube and vector work runs on one core
of the simulated chip — no AIC / AIV split, no pipes — with the same result as the split
kernel and as torch."""

import pytest
import torch

import plang as pl


def _scores(single_core: bool):
    """exp(a @ b^T) * 0.5 + c: a cube matmul, then vector work on its result."""

    @pl.jit.incore(single_core=single_core)
    def block(a: pl.Tensor, b: pl.Tensor, c: pl.Tensor, out: pl.Out[pl.Tensor]):
        s = pl.matmul(pl.slice(a, [64, 32], [0, 0]), pl.slice(b, [128, 32], [0, 0]), b_trans=True,
                      out_dtype=pl.FP32)
        out = pl.assemble(out, pl.add(pl.mul(pl.exp(s), 0.5), pl.slice(c, [64, 128], [0, 0])), [0, 0])
        return out

    @pl.jit
    def scores(a: pl.Tensor, b: pl.Tensor, c: pl.Tensor, out: pl.Out[pl.Tensor]):
        out = block(a, b, c, out)
        return out

    return scores


@pytest.mark.parametrize("single_core", [True, False])
def test_a_mixed_kernel_matches_torch_on_one_core_or_split(single_core: bool) -> None:
    scores = _scores(single_core)
    a, b, c = torch.randn(64, 32), torch.randn(128, 32), torch.randn(64, 128)
    out = torch.full((64, 128), float("nan"))
    scores(a, b, c, out)
    torch.testing.assert_close(out, (a @ b.T).exp() * 0.5 + c, rtol=1e-5, atol=1e-5)
    lowered = scores.lower(a, b, c, out)
    kinds = sorted(f.func_type.value for f in lowered.functions.values())
    text = lowered.as_python()
    if single_core:
        assert kinds == ["InCore", "Orchestration"]
        assert "attrs={'single_core': True}" in text and "tpush" not in text
    else:
        assert kinds == ["AIC", "AIV", "Group", "Orchestration"]
        assert "tpush_to_aiv" in text


def test_the_flag_is_part_of_the_compile_key() -> None:
    """The same source with and without the flag compiles twice (two programs)."""
    a, b, c = torch.randn(64, 32), torch.randn(128, 32), torch.randn(64, 128)
    out = torch.empty(64, 128)
    whole, split = _scores(True), _scores(False)
    assert whole.compile(a, b, c, out).kernels != split.compile(a, b, c, out).kernels


def test_the_printed_kernel_parses_back_single_core() -> None:
    a, b, c = torch.randn(64, 32), torch.randn(128, 32), torch.randn(64, 128)
    lowered = _scores(True).lower(a, b, c, torch.empty(64, 128))
    again = pl.parse(lowered.as_python())
    assert again.get("block").attrs["single_core"] is True


def test_a_single_core_kernel_reading_its_lane_is_an_error() -> None:
    @pl.jit.incore(single_core=True)
    def lanes(a: pl.Tensor, out: pl.Out[pl.Tensor]):
        lane = pl.tile.get_subblock_idx()
        out = pl.assemble(out, pl.mul(pl.slice(a, [16, 16], [lane * 16, 0]), 2.0), [lane * 16, 0])
        return out

    @pl.jit
    def entry(a: pl.Tensor, out: pl.Out[pl.Tensor]):
        out = lanes(a, out)
        return out

    with pytest.raises(Exception, match="single-core kernel 'lanes' uses AIV lanes"):
        entry(torch.randn(32, 16), torch.empty(32, 16))
