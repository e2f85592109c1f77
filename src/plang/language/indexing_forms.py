"""The forms of `pl.gather` / `pl.scatter` (and `pl.scatter_update`): the index form (`dim`,
`index`[, `src`]), the mask form (`mask_pattern=`, routed to `gather_mask` / `scatter_mask`) and
the compare form of gather (`kvalue=`, `cmp_mode=`, `out_cols=`[, `offset=`,
`count_dtype=`]), which yields two values: `gather_compare` (the matching indices) and
`gather_count` (matches per row)."""

from __future__ import annotations

from typing import Any

from ..errors import ParserTypeError
from ..ir.ops import REGISTRY, Op
from ..ir.types import TileType

Form = tuple[Op, list, dict[str, Any]]

_FORMS = {
    "gather": {"index": {"dim", "index"}, "mask": {"mask_pattern", "output_dtype"},
               "compare": {"kvalue", "cmp_mode", "out_cols", "offset", "count_dtype"}},
    "scatter": {"index": {"dim", "index", "src"}, "mask": {"mask_pattern", "dst"}},
    "scatter_update": {"index": {"dim", "index", "src"}},
}
_REQUIRED = {"mask": ("mask_pattern",), "compare": ("kvalue", "cmp_mode", "out_cols")}


def indexing_form(op: Op, args: list, kwargs: dict[str, Any]) -> list[Form]:
    """The op calls one `gather` / `scatter` / `scatter_update` call stands for (two for the compare form).

    `pl.gather(x, 1, idx)` / `pl.scatter(x, -1, idx, src)` / `pl.scatter_update(x, -2, idx,
    src)`: a positional int is the axis. The reference's `pl.tile.gather(src, idx, tmp)` (flat
    form with a workspace tile, third positionally or `tmp=`) drops the workspace, which the
    CPU does not need.
    `pl.gather(x, mask_pattern=p[, output_dtype=d])` is `gather_mask(x, p, d)` and
    `pl.scatter(x, mask_pattern=p, dst=d)` is `scatter_mask` writing x into d."""
    short, ns = op.short_name, op.namespace
    spelling = f"pl.{ns}.{short}"
    used = {name: keys & kwargs.keys() for name, keys in _FORMS[short].items()}
    special = [name for name in ("mask", "compare") if used.get(name)]
    if not special:
        workspace = len(args) == 3 and not isinstance(args[1], int) and isinstance(
            getattr(args[2], "type", None), TileType)
        if short == "gather" and (workspace or "tmp" in kwargs):
            args, kwargs = args[:2], {k: v for k, v in kwargs.items() if k != "tmp"}  # reference's workspace
        axis = args[1] if len(args) >= 2 else None
        if isinstance(axis, int) and not isinstance(axis, bool) and "dim" not in kwargs:
            kwargs = {**kwargs, "dim": args[1]}
            args = [args[0], *args[2:]]
        return [(op, args, kwargs)]
    form = special[0]
    others = set().union(*(keys for name, keys in used.items() if name != form))
    if others or len(args) > 1:
        got = ", ".join(sorted(others)) or f"{len(args)} positional arguments"
        raise ParserTypeError(f"{spelling}: the {form} form ({', '.join(sorted(_FORMS[short][form]))}) takes "
                              f"only the input positionally and no other form's arguments; got {got}")
    need = _REQUIRED[form] + (("dst",) if short == "scatter" else ())
    missing = [k for k in need if k not in kwargs]
    if missing:
        raise ParserTypeError(f"{spelling}: the {form} form needs {', '.join(k + '=' for k in missing)}")
    data = args[0] if args else kwargs.get("input")
    rest = {k: v for k, v in kwargs.items() if k != "input"}
    if form == "compare":
        count = rest.pop("count_dtype", None)
        counted = {**rest, "count_dtype": count} if count is not None else rest
        return [(REGISTRY[f"{ns}.gather_compare"], [data], rest),
                (REGISTRY[f"{ns}.gather_count"], [data], counted)]
    masked = REGISTRY[f"{ns}.{short}_mask"]
    if short == "scatter" and ns == "tile":  # tile.scatter_mask(dst, src, mask_pattern)
        return [(masked, [], {**rest, "src": data})]
    return [(masked, [data], rest)]
