#!/bin/sh
# Run a Python command as on a host without AVX-512: under qemu-user's `-cpu max` (AVX2, FMA,
# F16C; no AVX-512, which QEMU's TCG does not implement) with a /proc/cpuinfo stripped of the
# avx512 / amx flags, so plang's host detection picks x86-64-v3 as on such a host and any
# AVX-512 instruction a kernel still contains is SIGILL. Needs root (a private mount
# namespace) and qemu-user (`apt-get install qemu-user`); about 5-10x slower than native.
#   sudo tools/run_without_avx512.sh -m pytest -q -p no:xdist tests/codegen/test_kernel_isa_levels.py
# Subprocesses (compile workers, xdist workers) run natively: pass -p no:xdist to pytest.
set -e
command -v qemu-x86_64 >/dev/null || { echo "needs qemu-x86_64 (apt-get install qemu-user)" >&2; exit 2; }
root=$(cd "$(dirname "$0")/.." && pwd)
python=${PYTHON:-$root/.venv/bin/python}
cpuinfo=${TMPDIR:-/tmp}/plang-cpuinfo-without-avx512
sed -E 's/ (avx512|amx)[a-z0-9_]*//g' /proc/cpuinfo > "$cpuinfo"
exec unshare -m sh -c 'mount --bind "$0" /proc/cpuinfo && exec qemu-x86_64 -cpu max "$@"' \
    "$cpuinfo" "$python" "$@"
