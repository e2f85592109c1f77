"""Distributed benchmark: `pld.tensor.allreduce` on plang's MPI rank runtime vs MPI's own
`Allreduce` and `torch.distributed.all_reduce` (gloo), 1-64 MiB fp32 on 2 and 4 local ranks,
plus the round-trip latency of a `pld.system.notify` / `wait` ping-pong between two ranks.

Run: `python benchmarks/distributed.py [--sizes 1,4,16,64] [--ranks 2,4]`. Each rank count is
one `mpiexec -n P` run of this script (`--rank-run`); in it the three allreduces run on the
same ranks, in turn, on the same sizes. A time is the median over repetitions of the slowest
rank's time (each repetition starts from a barrier). Prints per size: the three times, the
bus bandwidth of plang's (2(P-1)/P x bytes / time) and plang's speed as a ratio to each peer
(above 1: plang faster); then the notify/wait round trip; then the load average.
"""

from __future__ import annotations

import json
import os
import socket
import statistics
import subprocess
import sys
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")

MIB = 1 << 20


def _timed(comm, fn, budget: float = 0.6, least: int = 3, most: int = 50) -> float:
    """Median over repetitions of the slowest rank's seconds for `fn()`."""
    from mpi4py import MPI

    times: list[float] = []
    spent = 0.0
    fn()  # warm-up
    while len(times) < least or (spent < budget and len(times) < most):
        comm.Barrier()
        start = time.perf_counter()
        fn()
        mine = time.perf_counter() - start
        slowest = comm.allreduce(mine, op=MPI.MAX)
        times.append(slowest)
        spent += slowest
        if comm.bcast(len(times) >= least and spent >= budget if comm.rank == 0 else None, root=0):
            break
    return statistics.median(times)


def rank_run(sizes: list[int], port: int) -> None:
    import numpy as np
    import torch
    import torch.distributed as dist
    from mpi4py import MPI

    from plang.distributed.launch import ensure_ranks
    from plang.ir.enums import NotifyOp, ReduceOp, WaitCmp

    torch.set_num_threads(1)
    rc = ensure_ranks(MPI.COMM_WORLD.Get_size())
    comm, rank, n = rc.comm, rc.rank, rc.nranks
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=n)
    window = rc.alloc_window(max(sizes) * MIB, "bench")
    rows = []
    for mib in sizes:
        count = mib * MIB // 4
        data = window.tensor([count], np.float32)
        data.local[:] = 1.0
        plain = np.ones(count, np.float32)
        tensor = torch.ones(count)
        t_plang = _timed(comm, lambda: rc.allreduce(data, ReduceOp.Sum))
        t_mpi = _timed(comm, lambda: comm.Allreduce(MPI.IN_PLACE, plain, op=MPI.SUM))
        t_gloo = _timed(comm, lambda: dist.all_reduce(tensor))
        rows.append({"mib": mib, "plang": t_plang, "mpi": t_mpi, "gloo": t_gloo})
    sig = rc.alloc_window(8, "pingpong").tensor([2], np.int32)
    trips = 500
    comm.Barrier()
    start = time.perf_counter()
    if rank < 2:
        for k in range(1, trips + 1):
            if rank == 0:
                rc.notify(sig, 1, [0], 1, NotifyOp.AtomicAdd)
                rc.wait(sig, [1], k, WaitCmp.Ge)
            else:
                rc.wait(sig, [0], k, WaitCmp.Ge)
                rc.notify(sig, 0, [1], 1, NotifyOp.AtomicAdd)
    round_trip = (time.perf_counter() - start) / trips
    comm.Barrier()
    rc.free_windows()
    dist.destroy_process_group()
    if rank == 0:
        print(json.dumps({"ranks": n, "rows": rows, "round_trip": round_trip}))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main() -> None:
    from plang.distributed.launch import mpiexec

    args = sys.argv[1:]

    def option(name: str, default: str) -> list[int]:
        return [int(s) for s in (args[args.index(name) + 1] if name in args else default).split(",")]

    sizes, ranks = option("--sizes", "1,4,16,64"), option("--ranks", "2,4")
    print("allreduce, fp32, local ranks; times are medians of the slowest rank (ms); "
          "ratio = peer time / plang time")
    header = (f"{'ranks':>5} {'MiB':>4} {'plang ms':>9} {'MPI ms':>8} {'gloo ms':>8} {'plang GB/s':>10} "
              f"{'vs MPI':>7} {'vs gloo':>8}")
    print(header)
    trips = []
    for p in ranks:
        cmd = [mpiexec(), "-n", str(p), sys.executable, __file__, "--rank-run", ",".join(map(str, sizes)),
               str(_free_port())]
        done = subprocess.run(cmd, capture_output=True, text=True, check=True)
        result = json.loads(done.stdout.strip().splitlines()[-1])
        for row in result["rows"]:
            nbytes = row["mib"] * MIB
            bus = 2 * (p - 1) / p * nbytes / row["plang"] / 1e9
            print(f"{p:>5} {row['mib']:>4} {row['plang'] * 1e3:>9.2f} {row['mpi'] * 1e3:>8.2f} "
                  f"{row['gloo'] * 1e3:>8.2f} {bus:>10.2f} {row['mpi'] / row['plang']:>7.2f} "
                  f"{row['gloo'] / row['plang']:>8.2f}")
        trips.append((p, result["round_trip"]))
    for p, rt in trips:
        print(f"notify/wait round trip (ranks 0<->1 of {p}): {rt * 1e6:.1f} us")
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())} on {os.cpu_count()} cpus")


if __name__ == "__main__":
    if "--rank-run" in sys.argv:
        i = sys.argv.index("--rank-run")
        rank_run([int(s) for s in sys.argv[i + 1].split(",")], int(sys.argv[i + 2]))
    else:
        main()
