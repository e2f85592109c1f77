"""Inspecting the IR: what plang makes of a kernel, stage by stage.

Nothing here needs a run to be useful:
- `kernel.specialize(*args)` is the program *before* any pass: the `@pl.jit` functions
  specialized to the arguments' shapes and dtypes, parsed into IR;
- `kernel.lower(*args)` is the program *after* the Default pass pipeline;
- `as_python()` prints any of it as DSL source that `pl.parse` reads back;
- `RunConfig(dump_passes=folder)` writes the program after every pass, one file per pass.
The script prints short excerpts of each, then runs the kernel and checks it.
"""

import tempfile
from pathlib import Path

import torch

import plang as pl
from plang.runtime import RunConfig


@pl.jit
def scaled_sum(a: pl.Tensor, b: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        out = pl.assemble(out, pl.mul(pl.add(a, b), 0.5), [0, 0])
    return out


def excerpt(text: str, start: str, lines: int) -> str:
    """`lines` lines of `text` from the first line containing `start`."""
    all_lines = text.splitlines()
    first = next(i for i, line in enumerate(all_lines) if start in line)
    return "\n".join(all_lines[first:first + lines])


if __name__ == "__main__":
    a, b, out = torch.randn(32, 64), torch.randn(32, 64), torch.empty(32, 64)

    # 1. before the passes: the entry, an Orchestration function holding a core scope
    before = scaled_sum.specialize(a, b, out)
    print("--- specialize(): the parsed program, before any pass")
    print(excerpt(before.as_python(), "with pl.at", 2))

    # 2. after the passes: the scope is outlined into an AIV kernel working on tiles
    after = scaled_sum.lower(a, b, out)
    print("--- lower(): functions", {name: fn.func_type.name for name, fn in after.functions.items()})
    print(excerpt(after.as_python(), "pl.FunctionType.AIV", 4))
    assert pl.ir.structural_equal(pl.parse(after.as_python()), after)   # the printout parses back

    # 3. every pass's output, as files
    with tempfile.TemporaryDirectory() as folder:
        scaled_sum.lower(a, b, out, config=RunConfig(dump_passes=folder))
        dumps = sorted(p.name for p in Path(folder).iterdir())
        print(f"--- dump_passes: {len(dumps)} files, {dumps[0]} ... {dumps[-1]}")
        convert = next(Path(folder, name) for name in dumps if "ConvertTensorToTileOps" in name)
        print(f"{convert.name}: the tensor ops became tile ops")
        print(excerpt(convert.read_text(), "pl.tile.load(a", 5))

    # 4. and it runs
    scaled_sum(a, b, out)
    torch.testing.assert_close(out, (a + b) * 0.5, rtol=1e-6, atol=1e-6)
    print(f"inspect IR: specialize / lower / as_python / {len(dumps)} per-pass dumps of "
          f"out = (a + b) * 0.5, then ran it and checked against torch: OK")
