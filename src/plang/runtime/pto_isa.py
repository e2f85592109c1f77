"""`ensure_pto_isa_root()`: the include folder for kernels written against the reference's ABI.

The reference resolves a pinned PTO-ISA checkout (its kernels' headers) and exports it as
``PTO_ISA_ROOT``. plang's kernels need no ISA sources; what it has in their place is the
folder of headers an external kernel in the reference's runtime ABI compiles against on the
CPU (``pto/pto-inst.hpp``, ``tensor.h``, ``intrinsic.h``: see
`plang.codegen.kernel.reference_abi`). This returns that folder (in the process's private
scratch space) and exports it the same way.
"""

from __future__ import annotations

import os

from ..cache_root import scratch
from ..codegen.kernel.reference_abi import write_headers


def ensure_pto_isa_root() -> str:
    """Absolute path of the reference-ABI include folder, also set as ``$PTO_ISA_ROOT``."""
    folder = str(scratch().sub("pto-isa").path)
    write_headers(folder)
    os.environ["PTO_ISA_ROOT"] = folder
    return folder
