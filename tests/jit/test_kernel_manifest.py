"""`ir.compile` writes `kernel_config.py`, the reference's build manifest: it names the
orchestration source and every kernel (a `pl.at` scope's kernel by its ``name_hint``) with
the file holding its MLIR and the core that runs it, and the build it describes computes
the right result."""

import runpy

import torch

import plang as pl
from plang.backend import BackendType

M, K, N = 32, 64, 32


@pl.program
class NamedScopes:
    @pl.function(type=pl.FunctionType.Opaque)
    def main(self, a: pl.Tensor[[M, K], pl.FP32], b: pl.Tensor[[K, N], pl.FP32],
             out: pl.Out[pl.Tensor[[M, N], pl.FP32]]) -> pl.Tensor[[M, N], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="Product"):
            p = pl.matmul(a, b)
            out = pl.assemble(out, p, [0, 0])
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="Shift"):
            t = pl.add(pl.load(out, [0, 0], [M, N]), 1.0)
            out = pl.store(t, [0, 0], out)
        return out


def test_manifest_names_the_kernels_their_files_and_cores(tmp_path):
    compiled = pl.ir.compile(NamedScopes, output_dir=str(tmp_path), dump_passes=False,
                             backend_type=BackendType.Ascend910B)
    manifest = runpy.run_path(str(tmp_path / "kernel_config.py"))
    orch = manifest["ORCHESTRATION"]
    assert orch["function_name"] == "main"
    assert open(orch["source"]).read() == compiled.source
    kernels = {k["name"]: k for k in manifest["KERNELS"]}
    assert {n: k["core_type"] for n, k in kernels.items()} == {"Product": "aic", "Shift": "aiv"}
    assert sorted(k["func_id"] for k in kernels.values()) == [0, 1]
    for name, k in kernels.items():
        assert open(k["source"]).read() == compiled.mlir[name]
    assert manifest["RUNTIME_CONFIG"] == {"platform": "cpu"}

    a, b, out = torch.randn(M, K), torch.randn(K, N), torch.zeros(M, N)
    compiled(a, b, out)
    torch.testing.assert_close(out, a @ b + 1.0, rtol=1e-4, atol=1e-4)
