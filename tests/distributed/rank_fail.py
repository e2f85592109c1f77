"""`python rank_fail.py N BAD`: rank BAD raises while every other rank waits on a signal that
never comes; the run must end on every rank with an error naming rank BAD."""

from __future__ import annotations

import sys

import numpy as np

from plang.distributed.launch import ensure_ranks
from plang.ir.enums import WaitCmp


def main() -> None:
    c = ensure_ranks(int(sys.argv[1]), timeout=60.0)
    sig = c.alloc_window(4, "never").tensor([1], np.int32)
    if c.rank == int(sys.argv[2]):
        raise ValueError("boom on purpose")
    c.wait(sig, [0], 1, WaitCmp.Ge)


if __name__ == "__main__":
    main()
