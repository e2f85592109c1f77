"""`serialize` / `deserialize`: any IR node (a Program, a Function, a statement, an expression,
a type) as compact bytes and back, structurally equal to the original.

The encoding is zlib-compressed JSON of the node tree: each node is its class name, its
fields and its span; a variable is written once with an id and referenced by that id after,
so the restored IR shares variables exactly as the original does; ops are written by
registry name, enums by class and member, dtypes by name. Restoring sets the recorded
fields directly (they were consistent when written), so no type deduction reruns.
"""

from __future__ import annotations

import json
import zlib
from enum import Enum
from types import MappingProxyType
from typing import Any

from ..dtypes import DataType
from . import enums, expr, function, stmt, types
from .node import Node
from .ops.registry import Op, get_op
from .span import Span

FORMAT = 1
_NODES = {c.__name__: c for m in (types, expr, stmt, function) for c in vars(m).values()
          if isinstance(c, type) and issubclass(c, Node) and c.__module__ == m.__name__}
_ENUMS = {e.__name__: e for e in vars(enums).values()
          if isinstance(e, type) and issubclass(e, Enum) and e.__module__ == enums.__name__}


def serialize(node: Node) -> bytes:
    """`node` as bytes that `deserialize` turns back into a structurally equal node."""
    ids: dict[int, int] = {}
    doc = {"plang-ir": FORMAT, "root": _encode(node, ids)}
    return zlib.compress(json.dumps(doc, separators=(",", ":")).encode())


def deserialize(data: bytes) -> Node:
    """The node `serialize` wrote."""
    try:
        doc = json.loads(zlib.decompress(data))
    except (zlib.error, ValueError) as e:
        raise ValueError(f"not serialized plang IR: {e}") from None
    if not isinstance(doc, dict) or doc.get("plang-ir") != FORMAT:
        raise ValueError(f"not serialized plang IR of format {FORMAT}")
    return _decode(doc["root"], {})


def _encode(v: Any, ids: dict[int, int]) -> Any:
    if v is None or isinstance(v, (bool, int, float, str)):
        return v
    if isinstance(v, Node):
        if isinstance(v, expr.Var):
            if id(v) in ids:
                return {"ref": ids[id(v)]}
            ids[id(v)] = len(ids)
        out = {"node": type(v).__name__, "fields": {f: _encode(getattr(v, f), ids) for f in v._fields},
               "span": _span(v.span)}
        if isinstance(v, expr.Var):
            out["id"] = ids[id(v)]
        return out
    if isinstance(v, Op):
        return {"op": v.name}
    if isinstance(v, Enum):
        return {"enum": type(v).__name__, "member": v.name}
    if isinstance(v, DataType):
        return {"dtype": v.name}
    if isinstance(v, (tuple, list)):
        return {"tuple" if isinstance(v, tuple) else "list": [_encode(x, ids) for x in v]}
    if isinstance(v, (dict, MappingProxyType)):
        return {"map": [[_encode(k, ids), _encode(x, ids)] for k, x in v.items()]}
    raise TypeError(f"serialize: cannot encode a {type(v).__name__} ({v!r})")


def _span(s: Span) -> list:
    return [s.filename, s.begin_line, s.begin_col, s.end_line, s.end_col]


def _decode(v: Any, vars_: dict[int, Node]) -> Any:
    if not isinstance(v, dict):
        return v
    if "ref" in v:
        return vars_[v["ref"]]
    if "node" in v:
        cls = _NODES[v["node"]]
        node = object.__new__(cls)
        if "id" in v:
            vars_[v["id"]] = node  # before its fields: an IterArg's init never refers to itself
        fields = {f: _decode(x, vars_) for f, x in v["fields"].items()}
        node._set(Span(*v["span"]), **fields)
        return node
    if "op" in v:
        return get_op(v["op"])
    if "enum" in v:
        return _ENUMS[v["enum"]][v["member"]]
    if "dtype" in v:
        return DataType.from_name(v["dtype"])
    if "tuple" in v:
        return tuple(_decode(x, vars_) for x in v["tuple"])
    if "list" in v:
        return [_decode(x, vars_) for x in v["list"]]
    if "map" in v:
        return MappingProxyType({_decode(k, vars_): _decode(x, vars_) for k, x in v["map"]})
    raise ValueError(f"deserialize: unknown entry {sorted(v)}")
