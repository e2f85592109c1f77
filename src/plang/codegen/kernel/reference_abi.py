"""External kernels written for the reference's runtime ABI, run behind plang's.

A reference kernel source defines ``extern "C" void kernel_entry(int64_t *args)``: ``args[i]``
is a ``ChipTensor *`` for a tensor parameter and the value itself (its bytes in the slot) for a
scalar; ``get_block_idx(args)`` and friends read the launch context. It includes the runtime's
``tensor.h`` / ``intrinsic.h`` and the PTO ISA header ``pto/pto-inst.hpp``. plang provides
those three names here for the CPU: the tensor record and the block / lane queries, and a PTO
header that declares the CPU-stub build (``PTO_CPUSTUB_HPP``, empty ``__gm__`` / ``__aicore__``)
but no PTO instructions — a kernel that uses them fails to compile with the compiler's message
(`KernelCompileError`). A generated entry translates plang's arguments into that payload.
"""

from __future__ import annotations

import ctypes
import os
import re

from .abi import C_HEADER, ScalarArg, Signature, TensorArg, scalar_ctype

CONTEXT_SLOT = 48  # args[48]: the launch context (past any kernel's parameters)
MAX_DIMS = 5

_PTO_INST = """\
#pragma once
/* plang: the reference's PTO header for the CPU stub build (no PTO instructions). */
#include <cstdint>
#define PTO_CPUSTUB_HPP 1
#ifndef __gm__
#define __gm__
#endif
#ifndef __aicore__
#define __aicore__
#endif
"""

_TENSOR_H = f"""\
#pragma once
/* plang: the reference runtime's tensor record, as plang's entry fills it. */
#include <stdint.h>
#define MAX_TENSOR_DIMS {MAX_DIMS}
struct PTOBufferHandle {{ uint64_t addr; uint64_t size; }};
struct ChipTensor {{
  PTOBufferHandle buffer;   /* the storage (bytes) */
  uint64_t start_offset;    /* element offset of the view's origin in buffer */
  uint32_t ndims;
  uint32_t element_bytes;
  uint32_t shapes[MAX_TENSOR_DIMS];
  uint32_t strides[MAX_TENSOR_DIMS];  /* elements */
}};
typedef ChipTensor Tensor;
"""

_INTRINSIC_H = f"""\
#pragma once
/* plang: the reference runtime's block / lane queries over plang's launch context. */
#include <stdint.h>
#include "plang_kernel.h"
#define PLANG_REF_CONTEXT(args) ((plang_launch_context *)(args)[{CONTEXT_SLOT}])
static inline int32_t get_block_idx(int64_t *args) {{ return (int32_t)PLANG_REF_CONTEXT(args)->block_idx; }}
static inline int32_t get_block_num(int64_t *args) {{ return (int32_t)PLANG_REF_CONTEXT(args)->block_num; }}
static inline int32_t get_sub_block_idx(int64_t *args) {{
  return (int32_t)PLANG_REF_CONTEXT(args)->subblock_idx;
}}
static inline int32_t get_sub_block_num(int64_t *args) {{
  return (int32_t)PLANG_REF_CONTEXT(args)->subblock_num;
}}
"""


def uses_reference_abi(source_text: str) -> bool:
    """True when the source defines the reference's ``kernel_entry(int64_t *args)``."""
    return re.search(r"\bkernel_entry\s*\(", source_text) is not None


def write_headers(folder: str) -> None:
    """Write the compatibility headers (and `plang_kernel.h`, which they use) into `folder`."""
    os.makedirs(os.path.join(folder, "pto"), exist_ok=True)
    headers = {"pto/pto-inst.hpp": _PTO_INST, "tensor.h": _TENSOR_H, "intrinsic.h": _INTRINSIC_H,
               "plang_kernel.h": C_HEADER}
    for name, text in headers.items():
        with open(os.path.join(folder, name), "w") as f:
            f.write(text)


def write_reference_entry(build_dir: str, signature: Signature, packed: str) -> str:
    """Write the compatibility headers and the entry translating plang's arguments; returns the
    entry's path."""
    if len(signature.args) >= CONTEXT_SLOT:
        raise ValueError(f"a reference-ABI kernel takes at most {CONTEXT_SLOT} parameters")
    write_headers(build_dir)
    body = []
    for i, a in enumerate(signature.args):
        if isinstance(a, TensorArg):
            if a.rank > MAX_DIMS:
                raise ValueError(f"parameter {a.name!r}: a reference-ABI tensor has at most {MAX_DIMS} dims")
            body.append(f"  plang_ref_tensor(&t[{i}], PLANG_TENSOR_ARG(args, {i}), {a.rank}, "
                        f"{max(1, a.dtype.bits // 8)}); ref[{i}] = (int64_t)(uintptr_t)&t[{i}];")
        else:
            assert isinstance(a, ScalarArg)
            body.append(f"  memcpy(&ref[{i}], (args)[{i}], {ctypes.sizeof(scalar_ctype(a.dtype))});")
    path = os.path.join(build_dir, "plang_reference_entry.cpp")
    with open(path, "w") as f:
        f.write(_ENTRY.format(n=max(1, len(signature.args)), packed=packed, slot=CONTEXT_SLOT,
                              nargs=len(signature.args), body="\n".join(body)))
    return path


_ENTRY = """\
#include <cstring>
#include "plang_kernel.h"
#include "tensor.h"
extern "C" void kernel_entry(int64_t *args);
static void plang_ref_tensor(ChipTensor *t, plang_memref *m, int rank, uint32_t element_bytes) {{
  int64_t extent = 1;
  t->ndims = (uint32_t)rank;
  t->element_bytes = element_bytes;
  for (int d = 0; d < rank; ++d) {{
    t->shapes[d] = (uint32_t)PLANG_SIZE(m, rank, d);
    t->strides[d] = (uint32_t)PLANG_STRIDE(m, rank, d);
    extent += (PLANG_SIZE(m, rank, d) - 1) * PLANG_STRIDE(m, rank, d);
  }}
  t->buffer.addr = (uint64_t)(uintptr_t)m->aligned;
  t->start_offset = (uint64_t)m->offset;
  t->buffer.size = (uint64_t)(m->offset + extent) * element_bytes;
}}
extern "C" void {packed}(void **args) {{
  ChipTensor t[{n}];
  int64_t ref[{slot} + 1] = {{0}};
{body}
  ref[{slot}] = (int64_t)(uintptr_t)PLANG_CONTEXT_ARG(args, {nargs});
  kernel_entry(ref);
}}
"""
