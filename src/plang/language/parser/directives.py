"""Statement-level directives: `pl.cond` misuse, `pl.func_attr`, `pl.static_assert`,
`pl.static_print`, `pl.dump_tag`, `pl.set_cache_policy`, and `@pl.inline` expansion."""

from __future__ import annotations

import ast
from typing import Any

from ...errors import ParserError, ParserNameError, ParserSyntaxError, ParserTypeError
from ...ir.enums import CachePolicy, FunctionType
from ...ir.expr import Var
from ...ir.stmt import Stmt
from ...ir.types import TensorType, Type, describe_type
from ..values import DSLValue
from .expressions import ExprEvaluator


class DirectiveParser(ExprEvaluator):
    blocks: list[list[Stmt]]
    block_kinds: list[str]
    scope_stack: list[tuple[str, Any, dict]]
    func_type: FunctionType
    prologue_open: bool
    func_attrs: dict[str, Any]
    dump_tags: list[Var]
    declared_returns: list[Type] | None
    seen_returns: list[Type] | None
    inline_stack: list[str]

    def parse_stmt(self, node: ast.stmt) -> None:  # provided by StatementParser
        raise NotImplementedError

    def construct_cond(self, call: ast.Call, node: ast.stmt) -> None:
        raise self.error(
            ParserSyntaxError,
            "pl.cond must be the first statement of a pl.while_ body",
            node,
            hint="write `for (x,) in pl.while_(init_values=(x0,)):` then `pl.cond(x < n)`",
        )

    def construct_func_attr(self, call: ast.Call, node: ast.stmt) -> None:
        if not self.prologue_open or len(self.blocks) != 1:
            raise self.error(
                ParserSyntaxError,
                "pl.func_attr must come before every other statement of the function body",
                node,
            )
        if len(call.args) != 1 or not isinstance(call.args[0], ast.Dict) or call.keywords:
            raise self.error(
                ParserSyntaxError, 'pl.func_attr takes one dict literal: pl.func_attr({"key": param})', call
            )
        for k, v in zip(call.args[0].keys, call.args[0].values):
            if not (isinstance(k, ast.Constant) and isinstance(k.value, str)):
                raise self.error(ParserSyntaxError, "pl.func_attr keys must be string literals", k or call)
            if k.value in self.func_attrs:
                raise self.error(ParserSyntaxError, f"function attribute {k.value!r} is given twice", k)
            if isinstance(v, ast.Name):
                param = self.local_var(v.id)
                if param is None:
                    raise self.error(ParserNameError, f"pl.func_attr value {v.id!r} is not a parameter", v)
                self.func_attrs[k.value] = param
            else:
                self.func_attrs[k.value] = self.eval_static(v)

    def construct_static_assert(self, call: ast.Call, node: ast.stmt) -> None:
        if not call.args or len(call.args) > 2 or call.keywords:
            raise self.error(ParserSyntaxError, 'pl.static_assert takes (condition, "message")', call)
        msg = ""
        if len(call.args) == 2:
            m = call.args[1]
            if not (isinstance(m, ast.Constant) and isinstance(m.value, str)):
                raise self.error(
                    ParserSyntaxError, "the pl.static_assert message must be a string literal", m
                )
            msg = m.value
        cond = self.eval_static(call.args[0])
        if not cond:
            raise self.error(
                ParserError,
                f"static assertion failed: {msg or ast.unparse(call.args[0])}",
                call.args[0],
                code="PL600",
            )

    def construct_static_print(self, call: ast.Call, node: ast.stmt) -> None:
        parts = []
        for a in call.args:
            v = self.eval(a)
            parts.append(
                v
                if isinstance(v, str)
                else f"{ast.unparse(a)}: {describe_type(v.type)}"
                if isinstance(v, DSLValue)
                else repr(v)
            )
        sp = self.src.span(node)
        print(f"{sp.filename}:{sp.begin_line}: static_print: " + " ".join(map(str, parts)))

    # --- inline helpers -------------------------------------------------------------------
    def expand_inline(self, fn: Any, node: ast.Call) -> Any:
        """Splice an `@pl.inline` body into the current block; its return value is the result."""
        inline = fn.pl_inline()
        fdef = inline.func_def
        params = [a.arg for a in fdef.args.args]
        if node.keywords or len(node.args) != len(params):
            raise self.error(
                ParserTypeError,
                f"{fdef.name}() takes {len(params)} positional arguments, got {len(node.args)}",
                node,
            )
        args = [self.eval(a) for a in node.args]
        if fdef.name in self.inline_stack:
            raise self.error(ParserSyntaxError, f"@pl.inline {fdef.name!r} calls itself", node)
        saved = (self.src, self.env, self.globals, self.closure, self.declared_returns, self.seen_returns)
        self.src, self.globals, self.closure = inline.source, inline.globals, inline.closure
        self.env = [dict(zip(params, args))]
        self.inline_stack.append(fdef.name)
        self.declared_returns, self.seen_returns = None, None
        try:
            body = list(fdef.body)
            ret = body.pop() if body and isinstance(body[-1], ast.Return) else None
            early = next((n for s in body for n in ast.walk(s) if isinstance(n, ast.Return)), None)
            if early is not None:
                raise self.error(ParserSyntaxError, "an @pl.inline helper may only return at its end", early)
            for s in body:
                self.parse_stmt(s)
            result = None if ret is None or ret.value is None else self.eval(ret.value)
        finally:
            self.inline_stack.pop()
            (self.src, self.env, self.globals, self.closure, self.declared_returns, self.seen_returns) = saved
        return result

    def tagged_tensor(self, call: ast.Call, what: str) -> Var:
        if not call.args:
            raise self.error(ParserSyntaxError, f"{what} needs a tensor argument", call)
        v = self.eval(call.args[0])
        e = v.unwrap() if isinstance(v, DSLValue) else None
        if not (isinstance(e, Var) and isinstance(e.type, TensorType)):
            raise self.error(ParserTypeError, f"{what} takes a tensor variable", call.args[0])
        return e

    def construct_dump_tag(self, call: ast.Call, node: ast.stmt) -> None:
        if self.func_type.is_core or self.func_type.name in ("Group", "Spmd"):
            raise self.error(
                ParserSyntaxError, "pl.dump_tag is only valid in an Orchestration or Inline function", node
            )
        if len(call.args) != 1 or call.keywords:
            raise self.error(ParserSyntaxError, "pl.dump_tag takes one tensor", call)
        var = self.tagged_tensor(call, "pl.dump_tag")
        if all(v is not var for v in self.dump_tags):
            self.dump_tags.append(var)

    def construct_set_cache_policy(self, call: ast.Call, node: ast.stmt) -> None:
        if not self.block_kinds or self.block_kinds[-1] not in ("InCore", "Spmd"):
            raise self.error(
                ParserSyntaxError,
                "pl.set_cache_policy must be a statement directly inside a "
                "pl.at(level=CORE_GROUP) or pl.spmd scope body",
                node,
            )
        if len(call.args) != 2 or call.keywords:
            raise self.error(ParserSyntaxError, "pl.set_cache_policy takes (tensor, policy)", call)
        var = self.tagged_tensor(call, "pl.set_cache_policy")
        policy = self.eval_static(call.args[1])
        if not isinstance(policy, CachePolicy):
            raise self.error(
                ParserTypeError, f"the policy must be a pl.CachePolicy, got {policy!r}", call.args[1]
            )
        attrs = self.scope_stack[-1][2]
        attrs["cache_policies"] = tuple(attrs.get("cache_policies", ())) + ((var, policy),)
