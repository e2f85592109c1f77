"""Statement-level directives: `pl.cond` misuse, `pl.func_attr`, `pl.static_assert`,
`pl.static_print`, `pl.dump_tag`, `pl.set_cache_policy`, and `@pl.inline` expansion."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Any

from ...errors import ParserError, ParserNameError, ParserSyntaxError, ParserTypeError
from ...ir.enums import CachePolicy
from ...ir.expr import Var
from ...ir.types import TensorType, describe_type
from ..values import DSLValue

if TYPE_CHECKING:
    from .statements import StatementParser


class Directives:
    """Handlers of directive statements (`construct_<kind>(call, stmt)`) and inline expansion."""

    def __init__(self, stmts: StatementParser) -> None:
        self.stmts, self.exprs, self.body = stmts, stmts.exprs, stmts.body
        self.source, self.names = stmts.source, stmts.names

    def construct_cond(self, call: ast.Call, node: ast.stmt) -> None:
        raise self.source.error(
            ParserSyntaxError,
            "pl.cond must be the first statement of a pl.while_ body",
            node,
            hint="write `for (x,) in pl.while_(init_values=(x0,)):` then `pl.cond(x < n)`",
        )

    def construct_func_attr(self, call: ast.Call, node: ast.stmt) -> None:
        if not self.body.prologue_open or len(self.body.blocks) != 1:
            raise self.source.error(
                ParserSyntaxError,
                "pl.func_attr must come before every other statement of the function body",
                node,
            )
        if len(call.args) != 1 or not isinstance(call.args[0], ast.Dict) or call.keywords:
            raise self.source.error(
                ParserSyntaxError, 'pl.func_attr takes one dict literal: pl.func_attr({"key": param})', call
            )
        for k, v in zip(call.args[0].keys, call.args[0].values):
            if not (isinstance(k, ast.Constant) and isinstance(k.value, str)):
                raise self.source.error(
                    ParserSyntaxError, "pl.func_attr keys must be string literals", k or call
                )
            if k.value in self.body.func_attrs:
                raise self.source.error(
                    ParserSyntaxError, f"function attribute {k.value!r} is given twice", k
                )
            if isinstance(v, ast.Name):
                param = self.names.local_var(v.id)
                if param is None:
                    raise self.source.error(
                        ParserNameError, f"pl.func_attr value {v.id!r} is not a parameter", v
                    )
                self.body.func_attrs[k.value] = param
            else:
                self.body.func_attrs[k.value] = self.exprs.eval_static(v)

    def construct_static_assert(self, call: ast.Call, node: ast.stmt) -> None:
        if not call.args or len(call.args) > 2 or call.keywords:
            raise self.source.error(ParserSyntaxError, 'pl.static_assert takes (condition, "message")', call)
        msg = ""
        if len(call.args) == 2:
            m = call.args[1]
            if not (isinstance(m, ast.Constant) and isinstance(m.value, str)):
                raise self.source.error(
                    ParserSyntaxError, "the pl.static_assert message must be a string literal", m
                )
            msg = m.value
        cond = self.exprs.eval_static(call.args[0])
        if not cond:
            raise self.source.error(
                ParserError,
                f"static assertion failed: {msg or ast.unparse(call.args[0])}",
                call.args[0],
                code="PL600",
            )

    def construct_static_print(self, call: ast.Call, node: ast.stmt) -> None:
        if not call.args:
            raise self.source.error(ParserSyntaxError, "pl.static_print needs at least 1 argument", call)
        parts = []
        for a in call.args:
            v = self.exprs.eval(a)
            parts.append(
                v
                if isinstance(v, str)
                else f"{ast.unparse(a)}: {describe_type(v.type)}"
                if isinstance(v, DSLValue)
                else repr(v)
            )
        sp = self.source.span(node)
        print(f"{sp.filename}:{sp.begin_line}: static_print: " + " ".join(map(str, parts)))

    # --- inline helpers -------------------------------------------------------------------
    def expand_inline(self, fn: Any, node: ast.Call) -> Any:
        """Splice an `@pl.inline` body into the current block; its return value is the result."""
        inline = fn.pl_inline()
        fdef = inline.func_def
        params = [a.arg for a in fdef.args.args]
        if node.keywords or len(node.args) != len(params):
            raise self.source.error(
                ParserTypeError,
                f"{fdef.name}() takes {len(params)} positional arguments, got {len(node.args)}",
                node,
            )
        args = [self.exprs.eval(a) for a in node.args]
        if fdef.name in self.body.inline_stack:
            raise self.source.error(ParserSyntaxError, f"@pl.inline {fdef.name!r} calls itself", node)
        with (
            self.source.reading(inline.source),
            self.names.inline_body(inline.globals, inline.closure, dict(zip(params, args))),
            self.body.inline(fdef.name),
        ):
            body = list(fdef.body)
            ret = body.pop() if body and isinstance(body[-1], ast.Return) else None
            early = next((n for s in body for n in ast.walk(s) if isinstance(n, ast.Return)), None)
            if early is not None:
                raise self.source.error(
                    ParserSyntaxError, "an @pl.inline helper may only return at its end", early
                )
            for s in body:
                self.stmts.parse_stmt(s)
            return None if ret is None or ret.value is None else self.exprs.eval(ret.value)

    def tagged_tensor(self, call: ast.Call, what: str) -> Var:
        if not call.args:
            raise self.source.error(ParserSyntaxError, f"{what} needs a tensor argument", call)
        v = self.exprs.eval(call.args[0])
        e = v.unwrap() if isinstance(v, DSLValue) else None
        if not (isinstance(e, Var) and isinstance(e.type, TensorType)):
            raise self.source.error(ParserTypeError, f"{what} takes a tensor variable", call.args[0])
        return e

    def construct_dump_tag(self, call: ast.Call, node: ast.stmt) -> None:
        if self.body.func_type.is_core or self.body.func_type.name in ("Group", "Spmd"):
            raise self.source.error(
                ParserSyntaxError, "pl.dump_tag is only valid in an Orchestration or Inline function", node
            )
        if len(call.args) != 1 or call.keywords:
            raise self.source.error(ParserSyntaxError, "pl.dump_tag takes one tensor", call)
        var = self.tagged_tensor(call, "pl.dump_tag")
        if all(v is not var for v in self.body.dump_tags):
            self.body.dump_tags.append(var)

    def construct_set_cache_policy(self, call: ast.Call, node: ast.stmt) -> None:
        if not self.body.block_kinds or self.body.block_kinds[-1] not in ("InCore", "Spmd"):
            raise self.source.error(
                ParserSyntaxError,
                "pl.set_cache_policy must be a statement directly inside a "
                "pl.at(level=CORE_GROUP) or pl.spmd scope body",
                node,
            )
        if len(call.args) != 2 or call.keywords:
            raise self.source.error(ParserSyntaxError, "pl.set_cache_policy takes (tensor, policy)", call)
        var = self.tagged_tensor(call, "pl.set_cache_policy")
        policy = self.exprs.eval_static(call.args[1])
        if not isinstance(policy, CachePolicy):
            raise self.source.error(
                ParserTypeError, f"the policy must be a pl.CachePolicy, got {policy!r}", call.args[1]
            )
        attrs = self.body.scope_stack[-1][2]
        attrs["cache_policies"] = tuple(attrs.get("cache_policies", ())) + ((var, policy),)
