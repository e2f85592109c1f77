"""An operator declared with `plang.operators`, resolved, called, tuned, and its tuning
read back from the disk cache.

`RowSoftmax` (from `plang.operators.kernels`) declares its parameters (M, N), its tunables
(`rows` per step, SPMD `blocks`) and its operands in its class body. `resolved(device)` fills
the tunables the device's way; calling it checks the tensor against the declaration, builds
its `@pl.jit` program and runs it. `tune()` times every candidate of a 4 x 3 search space
(skipping those `compatible()` refuses, checking each against torch) and stores the winner in
the tuning cache next to the JIT cache. Run the script twice: the second process finds the
tuning on disk and times nothing.
"""

import torch

from plang.operators import COUNTERS, TUNING_CACHE, tunable, tune_report, tuning_key
from plang.operators.kernels import RowSoftmax
from plang.runtime import RunConfig
from plang.target import Device


class Softmax(RowSoftmax):
    """RowSoftmax over a smaller search space (12 candidates)."""

    rows = tunable(domain=(8, 16, 32, 64))
    blocks = tunable(domain=(1, 2, 4))


if __name__ == "__main__":
    device = Device(clusters=2)
    config = RunConfig(device=device)
    op = Softmax(M=256, N=512)
    done = op.resolved(device)
    print(f"declared {op}\nresolved {done} for {device.name}; key {done.array_key()[1:]}")

    x = torch.randn(256, 512) * 3
    torch.testing.assert_close(done(x, config=config), torch.softmax(x, -1), rtol=1e-5, atol=1e-6)

    report = tune_report(op, x, device=device, repeat=5)
    if report.source == "search":
        skipped = len(report.skipped)
        print(f"tuned {report.best}: searched {len(report.candidates)} candidates "
              f"({skipped} skipped), {COUNTERS['timed']} timed")
        for c in report.skipped[:3]:
            print(f"  skipped {c.values}: {c.reason}")
    else:
        print(f"tuned {report.best}: from the {report.source} cache, {COUNTERS['timed']} timed")
    again = tune_report(op, x, device=device)
    assert again.source == "memory" and again.best.design_key() == report.best.design_key()
    print(f"second tune in this process: a cache hit from {again.source}; "
          f"cache file {TUNING_CACHE.path(tuning_key(op, device))}")

    y = op(x, config=config)  # an unresolved operator's call takes the tuned choice
    torch.testing.assert_close(y, torch.softmax(x, -1), rtol=1e-5, atol=1e-6)
    print("row softmax resolved, called, tuned and checked against torch: OK")
