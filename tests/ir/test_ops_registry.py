"""Registry-wide facts: docs, units, reads/writes, binding and kwargs."""
# ruff: noqa: E501  (expected messages and types read best on one line)

from __future__ import annotations

from _ops_util import tensor, tile

from plang.dtypes import FP16
from plang.ir import MakeTuple, MemorySpace
from plang.ir.ops import REGISTRY, get_op, make_call

UNITS = {"vector", "cube", "memory", "scalar", "pipe", "sync", "alloc", "system"}


def test_every_op_has_doc_and_valid_unit():
    for name, op in REGISTRY.items():
        assert op.doc.strip(), name
        assert op.facts.unit in UNITS, name
        assert set(op.facts.reads) | set(op.facts.writes) <= {p.name for p in op.params}, name


def test_units_by_family():
    assert get_op("tile.matmul").facts.unit == "cube"
    assert get_op("tile.gemv_acc").facts.unit == "cube"
    assert get_op("tensor.matmul").facts.unit == "cube"
    assert get_op("tile.load").facts.unit == "memory"
    assert get_op("tile.move").facts.unit == "memory"
    assert get_op("tile.tpush_to_aiv").facts.unit == "pipe"
    assert get_op("tile.aiv_shard").facts.unit == "pipe"
    assert get_op("system.sync_wait").facts.unit == "sync"
    assert get_op("tensor.create").facts.unit == "alloc"
    assert get_op("tile.exp").facts.unit == "vector"


def test_reads_and_writes():
    store = get_op("tile.store").facts
    assert store.writes == ("output_tensor",) and store.reads == ("tile",) and not store.pure
    assert get_op("tensor.assemble").facts.writes == ("target",)
    assert get_op("tensor.write").facts.writes == ("dst",)
    assert get_op("tile.add").facts.reads == ("lhs", "rhs") and get_op("tile.add").facts.pure
    assert get_op("tile.expands").facts.reads == ()
    assert not get_op("system.syncall").facts.pure


def test_binding_splits_args_and_kwargs():
    t = tensor([64, 128])
    call = make_call("tile.load", [t, [0, 0], [64, 64]], {"target_memory": MemorySpace.Vec})
    assert call.args[0] is t and isinstance(call.args[1], MakeTuple) and len(call.args) == 3
    assert dict(call.kwargs) == {"target_memory": MemorySpace.Vec}
    # defaults are not stored
    assert dict(make_call("tile.cast", [tile([4, 4]), FP16], {"mode": "round"}).kwargs) == {"target_type": FP16}
