"""IR node basics: immutability, copy-on-write replace, constructor checks, repr of every kind."""

from __future__ import annotations

import pytest
from ir_samples import every_statement_program

from plang.dtypes import FP32, INDEX, INT32
from plang.ir import (
    BINARY_OPS,
    Add,
    ArrayType,
    AsyncHandleType,
    Cast,
    CommCtxType,
    ConstInt,
    DistributedTensorType,
    Function,
    GlobalVar,
    InlineStmt,
    IterArg,
    MakeTuple,
    MemorySpace,
    MemRef,
    Neg,
    Node,
    Not,
    Program,
    PtrType,
    Return,
    ScalarType,
    SeqStmts,
    TensorView,
    TileType,
    TileView,
    TupleGetItem,
    UnknownType,
    Var,
)
from plang.ir.visitor import IRVisitor

IDX = ScalarType(INDEX)


def test_nodes_are_immutable_and_replace_copies():
    x = Var("x", IDX)
    e = Add(x, ConstInt(1))
    with pytest.raises(AttributeError, match=r"Add is immutable; use \.replace\(lhs=\.\.\.\)"):
        e.lhs = x
    e2 = e.replace(rhs=ConstInt(2))
    assert e2.lhs is x and e2.rhs.value == 2 and e.rhs.value == 1 and e2.type.dtype is e.type.dtype
    with pytest.raises(TypeError, match=r"Add has no field\(s\) \['rhs2'\]"):
        e.replace(rhs2=x)


def test_derived_types_follow_replace():
    x, y = Var("x", IDX), Var("y", ScalarType(FP32))
    t = MakeTuple([x, x])
    t2 = t.replace(elements=(x, y))
    assert t2.type.types[1].dtype is FP32
    g = TupleGetItem(t2, 1)
    assert g.type.dtype is FP32 and g.replace(index=0).type.dtype is INDEX


def test_replace_reruns_the_constructor_derivations():
    x, y = Var("x", IDX), Var("y", ScalarType(FP32))
    e = Add(x, ConstInt(1))
    assert e.replace(rhs=y).type.dtype is FP32  # an operand of another dtype retypes the expr
    assert Add(x, x, INT32).replace(rhs=y).dtype is FP32  # an explicit dtype is re-derived too
    assert e.replace(type=ScalarType(INT32)).dtype is INT32  # unless replace gives it
    c = ConstInt(3, INT32)
    assert c.replace(value=True).value == 1 and type(c.replace(value=True).value) is int
    assert c.replace(value=4).dtype is INT32 and c.replace(type=IDX).dtype is INDEX
    assert Cast(x, FP32).replace(operand=y).dtype is FP32
    assert Neg(x).replace(operand=y).type.dtype is FP32
    tile = TileType([8, 8], FP32, None, [4, 8])
    assert tile.replace(shape=(ConstInt(4), ConstInt(8))).valid_shape is None  # normalised again
    with pytest.raises(TypeError, match=r"Neg: \['type'\] derived by the constructor"):
        Neg(x).replace(type=IDX)


def test_fields_are_declared_once():
    from plang.ir import For, If

    assert If._fields == ("cond", "then_body", "else_body", "return_vars") == If.__slots__
    assert IterArg._fields == ("name", "type", "init") and IterArg.__slots__ == ("init",)
    i = Var("i", IDX)
    loop = For(i, ConstInt(0), ConstInt(4), ConstInt(1), SeqStmts([]), [], [], attrs={"a": 1})
    assert loop.iter_args == () and type(loop.attrs).__name__ == "mappingproxy"
    with pytest.raises(TypeError):
        loop.attrs["b"] = 2
    assert If(i, SeqStmts([])).else_body is None
    with_dict = {c.__name__ for c in _all_node_classes() if c.__dictoffset__}
    assert not with_dict, f"declare these node classes with @node (or __slots__): {with_dict}"


def test_constructor_checks():
    with pytest.raises(TypeError, match="cannot index a non-tuple"):
        TupleGetItem(Var("x", IDX), 0)
    with pytest.raises(IndexError, match="tuple index 2 out of range for a 2-tuple"):
        TupleGetItem(MakeTuple([ConstInt(1), ConstInt(2)]), 2)
    f = Function("f", [], None, [], Return([]))
    with pytest.raises(ValueError, match="stored as 'g' is named 'f'"):
        Program("P", {"g": f})
    with pytest.raises(ValueError, match="1 params but 0 directions"):
        Function("f", [Var("a", IDX)], [], [], Return([]))
    assert TileType([8, 8], FP32, None, [8, 8]).valid_shape is None  # full valid shape normalises


def _all_node_classes():
    seen, todo = set(), [Node]
    while todo:
        for sub in todo.pop().__subclasses__():
            if sub not in seen:
                seen.add(sub)
                todo.append(sub)
    return seen


def test_repr_of_every_node_kind_in_a_program():
    kinds = set()

    class Collect(IRVisitor):
        def generic_visit(self, node):
            kinds.add(type(node))
            super().generic_visit(node)

        def visit_Var(self, var):
            kinds.add(type(var))
            super().visit_Var(var)

    x = Var("x", IDX)
    extra = [Cast(x, INT32), GlobalVar("k"), IterArg("a", IDX, ConstInt(0)), SeqStmts([]), Neg(x), Not(x),
             TupleGetItem(MakeTuple([x]), 0), ArrayType(4, INT32), PtrType(), UnknownType(),
             CommCtxType(), AsyncHandleType("AsyncEvent"),
             DistributedTensorType([8], FP32, view=TensorView([1], [4])),
             TileType([8, 8], FP32, MemorySpace.Vec, view=TileView(fractal=512),
                      memref=MemRef("buf", x, 256)),
             InlineStmt("f[:] = torch.add(a, b)", "Python"),
             *(cls(x, Var("y", IDX)) for cls in BINARY_OPS)]
    Collect().visit(every_statement_program())
    for node in extra:
        Collect().visit(node)
    for node_cls in kinds:
        assert issubclass(node_cls, Node)
    concrete = {c for c in _all_node_classes()
                if c.__module__.startswith("plang.ir") and c.__subclasses__() == []}
    missing = {c.__name__ for c in concrete - kinds}
    assert not missing, f"node kinds not covered by the repr test: {missing}"
    prog = every_statement_program()
    for node in [prog, *prog.functions.values(), *extra]:
        text = repr(node)
        assert text.startswith(f"<{type(node).__name__} ") and text.endswith(">")
