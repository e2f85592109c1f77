"""TypeCheck: every op call's type is what its operands deduce, and every binding, yield,
loop bound, condition, function call and return agrees with the types it meets."""

from __future__ import annotations

from ...dtypes import TASK_ID
from ...ir.expr import Call, Expr, GlobalVar, Var
from ...ir.function import Function, Program
from ...ir.ops.registry import Op, OpTypeError, OpValueError
from ...ir.stmt import Assign, For, If, Return, Stmt, While, Yield, flatten
from ...ir.types import ScalarType, TupleType, Type, UnknownType, describe_type
from ..analysis.retype import deduce_call_type, types_compatible
from ..analysis.var_uses import stmt_exprs, walk_expr, walk_stmts
from ..diagnostics import PassError
from ..framework import define_verifier


def check_types(program: Program) -> None:
    for fn in program.functions.values():
        _FunctionTypes(program, fn).run()


def _t(t: Type) -> str:
    return describe_type(t)


class _FunctionTypes:
    def __init__(self, program: Program, fn: Function) -> None:
        self.program, self.fn = program, fn

    def fail(self, message: str, s: Stmt) -> PassError:
        return PassError(f"in function '{self.fn.name}': {message}", s.span)

    def run(self) -> None:
        for s in walk_stmts(self.fn.body):
            for e in stmt_exprs(s):
                walk_expr(e, lambda x, s=s: self.expr(x, s))
            self.stmt(s)

    def expr(self, e: Expr, s: Stmt) -> None:
        if not isinstance(e, Call):
            return
        if isinstance(e.op, Op):
            try:
                deduced = deduce_call_type(e)
            except (OpTypeError, OpValueError) as err:
                raise self.fail(str(err), s) from None
            if not isinstance(deduced, UnknownType) and not types_compatible(deduced, e.type):
                # (an op deducing Unknown, e.g. a tpop, is typed by its binding's annotation)
                raise self.fail(f"call of {e.op.name} is typed {_t(e.type)} but its operands deduce "
                                f"{_t(deduced)}", s)
        elif isinstance(e.op, GlobalVar) and e.op.name in self.program.functions:
            self.function_call(e, self.program.functions[e.op.name], s)

    def function_call(self, call: Call, callee: Function, s: Stmt) -> None:
        if len(call.args) != len(callee.params):
            raise self.fail(f"call of '{callee.name}' passes {len(call.args)} arguments but it takes "
                            f"{len(callee.params)}", s)
        for arg, param in zip(call.args, callee.params):
            if not types_compatible(param.type, arg.type):
                raise self.fail(f"argument for parameter '{param.name}' of '{callee.name}' has type "
                                f"{_t(arg.type)}, expected {_t(param.type)}", s)
        rets = callee.return_types
        expected = rets[0] if len(rets) == 1 else TupleType(rets)
        if call.kwargs.get("submit") or call.kwargs.get("spmd_submit"):  # (result, task id)
            expected = TupleType([expected, ScalarType(TASK_ID)])
        if rets and not types_compatible(expected, call.type):
            raise self.fail(f"call of '{callee.name}' is typed {_t(call.type)} but the function returns "
                            f"{_t(expected)}", s)

    def stmt(self, s: Stmt) -> None:
        if isinstance(s, Assign):
            self.agree(s.var, s.value.type, s, "assigned")
        elif isinstance(s, If):
            self.scalar(s.cond, s, "if condition", bool_=True)
            for branch in (s.then_body, s.else_body):
                self.yields(branch, s.return_vars, s, "if")
        elif isinstance(s, For):
            for name in ("start", "stop", "step"):
                self.scalar(getattr(s, name), s, f"loop {name}")
            self.loop(s)
        elif isinstance(s, While):
            self.scalar(s.cond, s, "while condition", bool_=True)
            self.loop(s)
        elif isinstance(s, Return):
            rets = self.fn.return_types
            if len(s.values) != len(rets):
                raise self.fail(f"returns {len(s.values)} values but the function declares {len(rets)}", s)
            for v, t in zip(s.values, rets):
                if not types_compatible(t, v.type):
                    raise self.fail(f"returns {_t(v.type)} where the function declares {_t(t)}", s)

    def loop(self, s: For | While) -> None:
        for a in s.iter_args:
            self.agree(a, a.init.type, s, "initialised with")
        self.yields(s.body, s.iter_args, s, "loop", every=bool(s.iter_args))
        for rv, a in zip(s.return_vars, s.iter_args):
            self.agree(rv, a.type, s, "bound to the loop result")
        if len(s.return_vars) != len(s.iter_args):
            raise self.fail(f"loop has {len(s.iter_args)} iter args but {len(s.return_vars)} return vars", s)

    def yields(self, body: Stmt | None, targets, s: Stmt, what: str, every: bool = True) -> None:
        last = flatten(body)[-1:] if body is not None else []
        values = last[0].values if last and isinstance(last[0], Yield) else None
        if values is None:
            if targets and every:
                raise self.fail(f"{what} body must end with a yield of {len(targets)} values", s)
            return
        if len(values) != len(targets):
            raise self.fail(f"{what} yields {len(values)} values for {len(targets)} targets", last[0])
        for v, target in zip(values, targets):
            self.agree(target, v.type, last[0], "yielded")

    def agree(self, var: Var, actual: Type, s: Stmt, how: str) -> None:
        if not types_compatible(var.type, actual):
            raise self.fail(f"'{var.name}' is declared {_t(var.type)} but {how} {_t(actual)}", s)

    def scalar(self, e: Expr, s: Stmt, what: str, bool_: bool = False) -> None:
        t = e.type
        ok = isinstance(t, ScalarType) and (t.dtype.is_bool if bool_ else t.dtype.is_int)
        if not ok:
            kind = "a boolean" if bool_ else "an integer"
            raise self.fail(f"{what} must be {kind} scalar, got {_t(t)}", s)


TypeCheck = define_verifier("TypeCheck", check_types,
                            "Op call types match deduction; bindings, yields and returns agree.")
