"""OutlineHierarchyScopes: `with pl.at(level=HOST/CHIP/..., role=...)` becomes a function.

The new function carries the scope's level and role, is named by `name_hint` or
`<caller>_<level>_<k>`, takes the region's captured values as parameters (directions
from use) and returns what the caller uses afterwards. Core regions inside it stay for
OutlineIncoreScopes.
"""

from __future__ import annotations

from ..ir.enums import FunctionType, Level, ScopeKind
from ..ir.function import Function, Program
from ..ir.stmt import For, If, Scope, SeqStmts, Stmt, While, seq
from .analysis.outliner import global_dims, outline, unique_name, use_counts
from .analysis.var_uses import walk_stmts
from .diagnostics import PassError
from .framework import Pass, register_pass
from .properties import register_property


def _is_hierarchy(s: Stmt) -> bool:
    return isinstance(s, Scope) and s.kind is ScopeKind.Hierarchy


@register_pass
class OutlineHierarchyScopes(Pass):
    name = "OutlineHierarchyScopes"
    required = frozenset({"SSAForm"})
    produced = frozenset({"HierarchyOutlined"})

    def run(self, program: Program) -> Program:
        taken = set(program.functions)
        out: list[Function] = []
        changed = False
        for fn in program.functions.values():
            if not any(_is_hierarchy(s) for s in walk_stmts(fn.body)):
                out.append(fn)
                continue
            created: list[Function] = []
            body = _Outliner(fn, program, taken, created).stmt(fn.body)
            out.extend(created)
            out.append(fn.replace(body=body))
            changed = True
        return program.with_functions(out) if changed else program


class _Outliner:
    def __init__(self, fn: Function, program: Program, taken: set[str], created: list[Function]) -> None:
        self.fn, self.taken, self.created = fn, taken, created
        self.functions = dict(program.functions)
        self.counts = use_counts(fn.body)
        self.exclude = global_dims(fn)
        self.k = 0

    def stmt(self, s: Stmt) -> Stmt:
        if isinstance(s, SeqStmts):
            return seq([self.stmt(x) for x in s.stmts], s.span)
        if _is_hierarchy(s):
            return self.outline(s)
        if isinstance(s, If):
            return s.replace(then_body=self.stmt(s.then_body),
                             else_body=None if s.else_body is None else self.stmt(s.else_body))
        if isinstance(s, (For, While, Scope)):
            return s.replace(body=self.stmt(s.body))
        return s

    def outline(self, s: Scope) -> Stmt:
        level: Level = s.attrs.get("level", Level.HOST)
        hint = s.attrs.get("name_hint")
        if hint:
            name = unique_name(str(hint), self.taken)
        else:
            name = unique_name(f"{self.fn.name}_{level.name.lower()}_{self.k}", self.taken)
            self.k += 1
        body = self.stmt(s.body)  # nested hierarchy scopes first
        out = outline(body, name=name, outer_uses=self.counts, region_uses=use_counts(s.body),
                      exclude=self.exclude, functions=self.functions, func_type=FunctionType.Opaque,
                      level=level, role=s.attrs.get("role"), span=s.span)
        self.functions[name] = out.function
        self.created.append(out.function)
        return out.replacement


def check_hierarchy_outlined(program: Program) -> None:
    for fn in program.functions.values():
        for s in walk_stmts(fn.body):
            if _is_hierarchy(s):
                raise PassError(f"hierarchy scope in function {fn.name!r} has not been outlined", s.span)


register_property("HierarchyOutlined", check_hierarchy_outlined,
                  "no `pl.at(level=HOST/CHIP/...)` scope is left inline")
