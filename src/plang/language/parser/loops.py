"""Loops: `pl.range / parallel / unroll / pipeline`, `pl.while_`, natural `while`,
`for i in pl.spmd(n)`, `for lane in pl.split_aiv(2, mode=...)`."""

from __future__ import annotations

import ast
import inspect
from typing import TYPE_CHECKING, Any

from ...dtypes import INDEX
from ...errors import ParserSyntaxError, ParserTypeError, UnsupportedConstructError
from ...ir.enums import ForKind, ScopeKind, SplitMode
from ...ir.expr import Expr, IterArg, Var
from ...ir.stmt import For, Scope, SplitAivScope, While
from ...ir.types import ScalarType, describe_type
from .. import constructs
from .body import YieldSlot
from .types import merge_annotation

if TYPE_CHECKING:
    from .statements import StatementParser

_KINDS = {
    "range": ForKind.Sequential,
    "parallel": ForKind.Parallel,
    "unroll": ForKind.Unroll,
    "pipeline": ForKind.Pipeline,
}


class LoopParser:
    """`for` statements over `pl.range`-style loops, `pl.while_`, `pl.spmd` and `pl.split_aiv`."""

    def __init__(self, stmts: StatementParser) -> None:
        self.stmts, self.exprs, self.body = stmts, stmts.exprs, stmts.body
        self.source, self.names, self.state, self.calls = (
            stmts.source,
            stmts.names,
            stmts.state,
            stmts.exprs.calls,
        )

    def construct_call(self, call: ast.expr, kinds: tuple[str, ...]) -> tuple[Any, list, dict] | None:
        """(construct, args, kwargs) when `call` is a call of a construct of one of `kinds`."""
        if not isinstance(call, ast.Call):
            return None
        fn = self.exprs.eval(call.func)
        if not constructs.is_construct(fn) or fn.pl_construct not in kinds:
            return None
        for a in call.args:
            if isinstance(a, ast.Starred):
                raise self.source.error(UnsupportedConstructError, "`*args` is not supported here", a)
        args = [self.exprs.eval(a) for a in call.args]
        kwargs = {}
        for kw in call.keywords:
            if kw.arg is None:
                raise self.source.error(
                    UnsupportedConstructError, "`**kwargs` is not supported here", kw.value
                )
            kwargs[kw.arg] = self.exprs.eval(kw.value)
        return fn, args, kwargs

    def bind_args(self, fn: Any, args: list, kwargs: dict, node: ast.Call) -> dict[str, Any]:
        """Bind to the construct's documented signature; unknown keywords are errors."""
        sig = inspect.signature(fn.pl_signature)
        try:
            bound = sig.bind(*args, **kwargs)
        except TypeError as e:
            allowed = ", ".join(p for p in sig.parameters if p != "args")
            raise self.source.error(
                ParserSyntaxError, f"pl.{fn.__name__}: {e}", node, hint=f"pl.{fn.__name__} accepts: {allowed}"
            ) from None
        return dict(bound.arguments)

    def stmt_For(self, node: ast.For) -> None:
        if node.orelse:
            raise self.source.error(UnsupportedConstructError, "for-else is not supported", node.orelse[0])
        found = self.construct_call(node.iter, ("loop", "while", "spmd", "split_aiv"))
        if found is None:
            raise self.source.error(
                UnsupportedConstructError,
                f"cannot loop over {ast.unparse(node.iter)}",
                node.iter,
                hint="loop with pl.range / pl.parallel / pl.unroll / pl.pipeline / pl.while_",
            )
        fn, args, kwargs = found
        kind = fn.pl_construct
        if kind == "while":
            self.while_loop(node, fn, args, kwargs)
        elif kind == "spmd":
            self.spmd_loop(node, fn, args, kwargs)
        elif kind == "split_aiv":
            self.split_aiv_loop(node, fn, args, kwargs)
        else:
            self.counted_loop(node, fn, args, kwargs)

    def _loop_index(self, target: ast.expr, what: str) -> ast.Name:
        if not isinstance(target, ast.Name):
            raise self.source.error(
                ParserSyntaxError, f"the {what} loop variable must be a single name", target
            )
        return target

    def range_bound(self, v: Any, node: ast.AST) -> Expr:
        e = self.exprs.as_expr(v, node)
        if not (isinstance(e.type, ScalarType) and e.type.dtype.is_int):
            raise self.source.error(
                ParserTypeError, f"loop bounds must be integers, got {describe_type(e.type)}", node
            )
        return e

    def counted_loop(self, node: ast.For, fn: Any, args: list, kwargs: dict) -> None:
        call = node.iter
        b = self.bind_args(fn, args, kwargs, call)
        pos = b.get("args", ())
        if not 1 <= len(pos) <= 3:
            raise self.source.error(
                ParserSyntaxError,
                f"pl.{fn.__name__} takes (stop), (start, stop) or "
                f"(start, stop, step), got {len(pos)} arguments",
                call,
            )
        bounds = [self.range_bound(v, call) for v in pos]
        if len(bounds) == 1:
            bounds.insert(0, self.range_bound(0, call))
        if len(bounds) == 2:
            bounds.append(self.range_bound(1, call))
        start, stop, step = bounds
        attrs: dict[str, Any] = {}
        if fn.__name__ == "pipeline":
            stage = b.get("stage")
            if isinstance(stage, bool) or not isinstance(stage, int) or stage <= 0:
                raise self.source.error(
                    ParserSyntaxError, f"pl.pipeline needs stage=<positive int>, got {stage!r}", call
                )
            attrs["stage"] = stage
        extra = b.get("attrs")
        if extra is not None:
            if not (isinstance(extra, dict) and all(isinstance(k, str) and k != "stage" for k in extra)
                    and all(isinstance(v, (bool, int, float, str)) for v in extra.values())):
                raise self.source.error(
                    ParserSyntaxError, f"pl.{fn.__name__} attrs= takes a dict of string keys (not 'stage') "
                    f"to bool / int / float / str values, got {extra!r}", call)
            attrs.update(extra)
        inits = b.get("init_values")
        if isinstance(node.target, ast.Tuple) and inits is None:
            raise self.source.error(
                ParserSyntaxError, "a loop target `i, (a, b)` needs init_values=(...)", node.target
            )
        if inits is None:
            loop_name = self._loop_index(node.target, f"pl.{fn.__name__}")
            body, slot, loop_var = self.loop_body(node, loop_name, [], None, kind=fn.__name__)
            if slot.node is not None:
                raise self.source.error(
                    ParserSyntaxError,
                    "pl.yield_ in a loop without init_values",
                    slot.node,
                    hint="carry values with init_values=(...)",
                )
            self.body.emit(
                For(
                    loop_var,
                    start,
                    stop,
                    step,
                    body,
                    kind=_KINDS[fn.__name__],
                    attrs=attrs,
                    span=self.source.span(node),
                )
            )
            return
        t = node.target
        if not (isinstance(t, ast.Tuple) and len(t.elts) == 2 and isinstance(t.elts[0], ast.Name)):
            raise self.source.error(
                ParserSyntaxError, "a loop with init_values is written `for i, (a, b) in ...`", node.target
            )
        names = self.iter_names(t.elts[1])
        iter_args = self.iter_args(names, inits, call)
        body, slot, loop_var = self.loop_body(node, t.elts[0], iter_args, names, kind=fn.__name__)
        return_vars = self.return_vars(slot, iter_args, node)
        self.body.emit(
            For(
                loop_var,
                start,
                stop,
                step,
                body,
                iter_args,
                return_vars,
                _KINDS[fn.__name__],
                attrs,
                self.source.span(node),
            )
        )
        self.declare_returns(slot, return_vars)

    def iter_names(self, target: ast.expr) -> list[ast.Name]:
        elts = target.elts if isinstance(target, (ast.Tuple, ast.List)) else [target]
        for e in elts:
            if not isinstance(e, ast.Name):
                raise self.source.error(ParserSyntaxError, "carried values must be plain names", e)
        return elts  # type: ignore[return-value]

    def iter_args(self, names: list[ast.Name], inits: Any, node: ast.AST) -> list[IterArg]:
        if not isinstance(inits, (tuple, list)):
            raise self.source.error(
                ParserSyntaxError, "init_values must be a tuple, e.g. init_values=(x,)", node
            )
        if len(inits) != len(names):
            raise self.source.error(
                ParserSyntaxError, f"{len(names)} carried names but {len(inits)} init_values", node
            )
        return [
            IterArg(n.id, self.exprs.as_expr(v, node).type, self.exprs.as_expr(v, node), self.source.span(n))
            for n, v in zip(names, inits)
        ]

    def loop_body(
        self,
        node: ast.For | ast.While,
        index: ast.Name | None,
        iter_args: list[IterArg],
        names: list[ast.Name] | None,
        index_var: Var | None = None,
        kind: str = "while",
    ) -> tuple[Any, YieldSlot, Var | None]:
        slot = YieldSlot()
        self.names.push_frame()
        loop_var = None
        if index is not None:
            loop_var = self.names.bind_local(index.id, ScalarType(INDEX), index, index_var)
        for ia in iter_args:
            self.names.bind_local(ia.name, ia.type, node, ia)
        self.body.loop_kinds.append(kind)
        try:
            body = self.stmts.parse_block(node.body, "for", slot, new_frame=False)
        finally:
            self.body.loop_kinds.pop()
            self.names.pop_frame()
        return body, slot, loop_var

    def return_vars(self, slot: YieldSlot, iter_args: list[IterArg], node: ast.AST) -> list[Var]:
        if slot.node is None:
            raise self.source.error(
                ParserSyntaxError,
                "a loop with init_values must end with `a, b = pl.yield_(...)`",
                node.body[-1] if node.body else node,
            )
        if len(slot.values) != len(iter_args):
            raise self.source.error(
                ParserSyntaxError,
                f"pl.yield_ yields {len(slot.values)} values but the loop "
                f"carries {len(iter_args)} (init_values)",
                slot.node,
            )
        if not slot.targets:
            return []
        out = []
        for (name, ann, tnode), v, ia in zip(slot.targets, slot.values, iter_args):
            if merge_annotation(ia.type, v.type) is None:
                raise self.source.error(
                    ParserTypeError,
                    f"pl.yield_ value for {ia.name!r} has type "
                    f"{describe_type(v.type)} but the carried value is {describe_type(ia.type)}",
                    slot.node,
                )
            out.append(Var(name, ann or ia.type, self.source.span(tnode)))
        return out

    def declare_returns(self, slot: YieldSlot, return_vars: list[Var]) -> None:
        for (name, _, tnode), rv in zip(slot.targets, return_vars):
            self.names.declare(name, rv, tnode)

    def while_loop(self, node: ast.For, fn: Any, args: list, kwargs: dict) -> None:
        b = self.bind_args(fn, args, kwargs, node.iter)
        if b.get("init_values") is None:
            raise self.source.error(ParserSyntaxError, "pl.while_ needs init_values=(...)", node.iter)
        names = self.iter_names(node.target)
        iter_args = self.iter_args(names, b["init_values"], node.iter)
        first = node.body[0]
        if not self.stmts.is_construct_call(first, "cond"):
            raise self.source.error(
                ParserSyntaxError,
                "pl.cond(...) must be the first statement of a pl.while_ body",
                first,
                hint="start the body with `pl.cond(<condition>)`",
            )
        self.names.push_frame()
        for ia in iter_args:
            self.names.bind_local(ia.name, ia.type, node, ia)
        cond_call = first.value  # type: ignore[attr-defined]
        if len(cond_call.args) != 1 or cond_call.keywords:
            raise self.source.error(ParserSyntaxError, "pl.cond takes one condition", cond_call)
        cond = self.exprs.as_expr(self.exprs.eval(cond_call.args[0]), cond_call.args[0])
        if not isinstance(cond.type, ScalarType):
            raise self.source.error(ParserTypeError, "pl.cond needs a scalar condition", cond_call.args[0])
        slot = YieldSlot()
        self.body.loop_kinds.append("while_")
        try:
            body = self.stmts.parse_block(node.body[1:], "for", slot, new_frame=False)
        finally:
            self.body.loop_kinds.pop()
            self.names.pop_frame(keep=False)
        return_vars = self.return_vars(slot, iter_args, node)
        self.body.emit(While(cond, iter_args, body, return_vars, self.source.span(node)))
        self.declare_returns(slot, return_vars)

    def stmt_While(self, node: ast.While) -> None:
        """`while cond:` — a While with no iter args; ConvertToSSA carries what the body re-binds."""
        if node.orelse:
            raise self.source.error(UnsupportedConstructError, "while-else is not supported", node.orelse[0])
        cond = self.exprs.as_expr(self.exprs.eval(node.test), node.test)
        if not isinstance(cond.type, ScalarType):
            msg = f"a while condition must be a scalar, got {describe_type(cond.type)}"
            raise self.source.error(ParserTypeError, msg, node.test)
        body, slot, _ = self.loop_body(node, None, [], None)
        if slot.node is not None:
            raise self.source.error(
                ParserSyntaxError,
                "pl.yield_ in a natural while loop",
                slot.node,
                hint="re-bind the names instead, or carry them with pl.while_(init_values=(...))",
            )
        self.body.emit(While(cond, [], body, [], self.source.span(node)))

    def spmd_loop(self, node: ast.For, fn: Any, args: list, kwargs: dict) -> None:
        index = self._loop_index(node.target, "pl.spmd")
        attrs = self.spmd_attrs(fn, args, kwargs, node.iter)
        index_var = Var(index.id, ScalarType(INDEX), self.source.span(index))
        body, slot, _ = self.loop_body(node, index, [], None, index_var, kind="spmd")
        if slot.node is not None:
            raise self.source.error(ParserSyntaxError, "pl.yield_ is not valid in a pl.spmd body", slot.node)
        self.body.emit(Scope(ScopeKind.Spmd, body, attrs, index_var=index_var, span=self.source.span(node)))

    def split_aiv_loop(self, node: ast.For, fn: Any, args: list, kwargs: dict) -> None:
        if "mode" not in kwargs:
            raise self.source.error(
                ParserSyntaxError,
                "pl.split_aiv needs mode=pl.SplitMode.NONE / UP_DOWN / LEFT_RIGHT",
                node.iter,
                hint="there is no default mode: choose how the two AIV lanes share the work",
            )
        b = self.bind_args(fn, args, kwargs, node.iter)
        if b.get("n") != 2 or isinstance(b.get("n"), bool):
            raise self.source.error(
                ParserSyntaxError,
                f"pl.split_aiv takes n=2 (the two AIV lanes), got {b.get('n')!r}",
                node.iter.args[0] if node.iter.args else node.iter,
            )
        mode = b.get("mode")
        if not isinstance(mode, SplitMode):
            raise self.source.error(
                ParserSyntaxError,
                "pl.split_aiv needs mode=pl.SplitMode.NONE / UP_DOWN / LEFT_RIGHT",
                node.iter,
            )
        lane = self._loop_index(node.target, "pl.split_aiv")
        lane_var = Var(lane.id, ScalarType(INDEX), self.source.span(lane))
        outer_mode, self.state.split_mode = self.state.split_mode, mode
        try:
            body, slot, _ = self.loop_body(node, lane, [], None, lane_var, kind="split_aiv")
        finally:
            self.state.split_mode = outer_mode
        if slot.node is not None:
            raise self.source.error(
                ParserSyntaxError, "pl.yield_ is not valid in a pl.split_aiv body", slot.node
            )
        self.body.emit(SplitAivScope(mode, lane_var, body, self.source.span(node)))

    def optimization_attrs(self, opts: Any, node: ast.AST) -> dict[str, Any]:
        """`optimizations=[pl.split(mode), pl.cross_core_slot(slot_num=n)]` → split / slot_num attrs."""
        if opts is None:
            return {}
        if not isinstance(opts, list):
            raise self.source.error(ParserSyntaxError, "optimizations= must be a list literal", node)
        out: dict[str, Any] = {}
        for o in opts:
            if isinstance(o, constructs.Split):
                out["split"] = o.mode
                if o.slot_num is not None:
                    out["slot_num"] = o.slot_num
            elif isinstance(o, constructs.CrossCoreSlot):
                out["slot_num"] = o.slot_num
            else:
                raise self.source.error(
                    ParserSyntaxError,
                    f"unknown optimization entry {o!r}",
                    node,
                    hint="use pl.split(mode) or pl.cross_core_slot(slot_num=n)",
                )
        return out

    def spmd_attrs(self, fn: Any, args: list, kwargs: dict, node: ast.Call) -> dict[str, Any]:
        b = self.bind_args(fn, args, kwargs, node)
        attrs: dict[str, Any] = {"core_num": self.calls.scope_attr_value("core_num", b["core_num"], node)}
        if isinstance(attrs["core_num"], int) and attrs["core_num"] <= 0:
            raise self.source.error(
                ParserSyntaxError, f"pl.spmd core_num must be positive, got {attrs['core_num']}", node
            )
        for key in ("sync_start", "name_hint", "deps", "allow_early_resolve", "predicate", "cache_policies"):
            if given(b.get(key)):
                attrs[key] = self.calls.scope_attr_value(key, b[key], node)
        attrs.update(self.optimization_attrs(b.get("optimizations"), node))
        return attrs


def given(v: Any) -> bool:
    """A keyword was given a non-default value (identity checks: DSL values overload ==)."""
    return v is not None and v is not False and not (isinstance(v, str) and not v)
