"""Op facts as data: typed categories on every registered op, validated at registration, and
every backend table covering the registry."""

from __future__ import annotations

import pytest

import plang  # noqa: F401  (registers every op)
from plang.codegen.kernel.lower import LOWERINGS
from plang.codegen.torch_ref_ops import TABLE
from plang.ir.ops import REGISTRY, Param, ParamKind, Pattern, Unit, ops_where, register
from plang.ir.ops.composite import _check
from plang.language.ops import UNIFIED_NAMES

#: tile ops the kernel backend never sees, and why
NOT_LOWERED = {
    "tile.aiv_shard": "ExpandMixedKernel turns it into a cube -> vector pipe push / pop pair",
    "tile.aic_gather": "ExpandMixedKernel turns it into a vector -> cube pipe push / pop pair",
}
CONTEXT_FIELDS = {"tile.get_block_idx", "tile.get_block_num", "tile.get_subblock_idx"}


def test_every_op_has_typed_facts():
    for name, op in REGISTRY.items():
        assert isinstance(op.facts.unit, Unit), name
        assert isinstance(op.facts.pattern, Pattern), name
        assert all(isinstance(p.kind, ParamKind) and p.kind is not ParamKind.FAMILY for p in op.params), name
        params = {p.name for p in op.params}
        assert set(op.facts.reads) <= params and set(op.facts.writes) <= params, name


def test_every_tile_op_has_a_lowering_or_a_reason():
    missing = {n for n in REGISTRY if n.startswith("tile.")} - set(LOWERINGS) - CONTEXT_FIELDS
    assert missing == set(NOT_LOWERED)
    assert not set(NOT_LOWERED) & set(LOWERINGS)


def test_every_op_has_a_torch_reference():
    assert set(REGISTRY) <= set(TABLE)


def test_categories_are_derived_from_the_patterns():
    rows = ops_where(lambda op: op.facts.row_local, "tile")
    assert {"tile.exp", "tile.add", "tile.row_sum", "tile.row_expand_sub", "tile.col_expand_sub",
            "tile.load", "tile.store"} <= rows
    assert not {"tile.col_sum", "tile.matmul", "tile.transpose"} & rows
    fusible = ops_where(lambda op: op.facts.fusible, "tile")
    assert {"tile.exp", "tile.col_expand_mul", "tile.load", "tile.silu"} <= fusible
    assert not {"tile.row_sum", "tile.store", "tile.matmul"} & fusible
    assert REGISTRY["tile.matmul_acc"].facts.accumulator == "acc"
    assert REGISTRY["tile.row_max"].facts.reduction == "max"
    assert "silu" in UNIFIED_NAMES and "adds" not in UNIFIED_NAMES


@pytest.mark.parametrize("kwargs, message", [
    ({"unit": "gpu"}, "unknown unit 'gpu'"),
    ({"unit": "vector", "pattern": "elementwise"}, "pattern must be a Pattern"),
    ({"unit": "vector", "writes": ("out",)}, "writes names unknown parameter"),
    ({"unit": "vector", "semantics": lambda m, x: x}, "need the ELEMENTWISE pattern"),
])
def test_registration_is_validated(kwargs, message):
    with pytest.raises(ValueError, match=message):
        register("tile.test_only_op", [Param("input", "tile")], lambda b: b.input.type, **kwargs)
    assert "tile.test_only_op" not in REGISTRY


def test_param_kinds_are_validated():
    with pytest.raises(ValueError, match="unknown kind 'tiles'"):
        Param("x", "tiles")


def test_composite_semantics_may_only_use_primitives():
    _check("ok", lambda m, x: m.add(m.exp(x), m.const(1.0)))
    with pytest.raises(ValueError, match="only call the primitives"):
        _check("bad", lambda m, x: m.erf(x))
    with pytest.raises(ValueError, match="takes 2 operand"):
        _check("bad", lambda m, x: m.add(x))
