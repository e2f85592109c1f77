"""Fixtures of the plang.iron tests (shared designs live in iron_designs.py)."""

from __future__ import annotations

import pytest


@pytest.fixture
def scale_src() -> str:
    return r"""
#include <stdint.h>
extern "C" void scale_i32(const int32_t *in, int32_t *out, int32_t factor, int32_t n) {
    for (int32_t i = 0; i < n; ++i) out[i] = in[i] * factor;
}
"""
