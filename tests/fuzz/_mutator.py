"""Seeded AST mutations of the DSL functions of a Python module (the examples).

Only the bodies and signatures of functions decorated with a `pl.` decorator are mutated (the
script around them, which builds the inputs and checks the result, stays as written): numeric
constants, op names, statements deleted / duplicated / swapped / made to return early, names
exchanged (in bodies only: Python itself evaluates annotations and decorators), call
arguments dropped or repeated, loop kinds and keyword values changed,
parameter directions, and binary operators.
"""

from __future__ import annotations

import ast
import copy
import random

CONSTANTS = (0, 1, -1, 2, 3, 7, 16, 128, 255, -8, 100000, 10**30, 0.5, -2.5, 1e38)
OPS = ("add", "sub", "mul", "div", "exp", "neg", "abs", "relu", "sqrt", "rsqrt", "matmul", "matmul_acc",
       "row_sum", "row_max", "col_sum", "load", "store", "full", "maximum", "minimum", "row_expand_mul",
       "row_expand_sub", "cast", "reshape", "transpose", "assemble", "slice", "create_tensor", "recip")
LOOPS = ("range", "pipeline", "parallel", "unroll", "spmd")
BINOPS = (ast.Add, ast.Sub, ast.Mult, ast.FloorDiv, ast.Mod, ast.Pow, ast.Div)
DIRECTIONS = ("Out", "InOut", "In")


def _is_dsl(fn: ast.FunctionDef) -> bool:
    return any("pl." in ast.unparse(d) for d in fn.decorator_list)


def _bodies(fn: ast.FunctionDef) -> list[list[ast.stmt]]:
    """Every statement list inside `fn` (its body, loop / branch / with bodies)."""
    out = [fn.body]
    for node in ast.walk(fn):
        for name in ("body", "orelse"):
            block = getattr(node, name, None)
            if node is not fn and isinstance(block, list) and block and isinstance(block[0], ast.stmt):
                out.append(block)
    return out


class Mutator:
    def __init__(self, source: str, seed: int) -> None:
        self.source = source
        self.rng = random.Random(seed)
        self.has_dsl = any(isinstance(n, ast.FunctionDef) and _is_dsl(n) for n in ast.walk(ast.parse(source)))

    def mutant(self) -> str:
        """The module with one or two random mutations applied to its DSL functions."""
        self.tree = ast.parse(self.source)
        self.fns = [n for n in ast.walk(self.tree) if isinstance(n, ast.FunctionDef) and _is_dsl(n)]
        for _ in range(self.rng.choice((1, 1, 2))):
            for _attempt in range(20):
                fn = self.rng.choice(self.fns)
                if getattr(self, "m_" + self.rng.choice(MUTATIONS))(fn):
                    break
        return ast.unparse(ast.fix_missing_locations(self.tree))

    def pick(self, fn: ast.FunctionDef, kind: type | tuple[type, ...], where=lambda n: True):
        nodes = [n for n in ast.walk(fn) if isinstance(n, kind) and where(n)]
        return self.rng.choice(nodes) if nodes else None

    # ------------------------------------------------------------------ mutations
    def m_constant(self, fn) -> bool:
        n = self.pick(fn, ast.Constant, lambda n: type(n.value) in (int, float))
        if n is not None:
            n.value = self.rng.choice(CONSTANTS)
        return n is not None

    def m_op(self, fn) -> bool:
        n = self.pick(fn, ast.Attribute, lambda n: isinstance(n.value, ast.Name) and n.value.id == "pl"
                      and n.attr in OPS)
        if n is not None:
            n.attr = self.rng.choice(OPS)
        return n is not None

    def m_loop(self, fn) -> bool:
        n = self.pick(fn, ast.Call, lambda n: isinstance(n.func, ast.Attribute) and n.func.attr in LOOPS)
        if n is not None:
            n.func.attr = self.rng.choice(LOOPS)
        return n is not None

    def m_keyword(self, fn) -> bool:
        n = self.pick(fn, ast.keyword, lambda k: isinstance(k.value, ast.Constant))
        if n is not None:
            n.value = ast.Constant(self.rng.choice(CONSTANTS + (True, None, "x")))
        return n is not None

    def m_delete(self, fn) -> bool:
        blocks = [b for b in _bodies(fn) if len(b) > 1]
        if blocks:
            b = self.rng.choice(blocks)
            del b[self.rng.randrange(len(b))]
        return bool(blocks)

    def m_duplicate(self, fn) -> bool:
        b = self.rng.choice(_bodies(fn))
        i = self.rng.randrange(len(b))
        b.insert(i, copy.deepcopy(b[i]))
        return True

    def m_swap(self, fn) -> bool:
        blocks = [b for b in _bodies(fn) if len(b) > 1]
        if blocks:
            b = self.rng.choice(blocks)
            i = self.rng.randrange(len(b) - 1)
            b[i], b[i + 1] = b[i + 1], b[i]
        return bool(blocks)

    def m_early_return(self, fn) -> bool:
        stored = {n.id for n in ast.walk(fn) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
        names = sorted(stored | {a.arg for a in fn.args.args if a.arg != "self"})
        b = self.rng.choice(_bodies(fn))
        value = ast.Name(self.rng.choice(names), ast.Load()) if names else None
        b.insert(self.rng.randrange(len(b) + 1), ast.Return(value))
        return True

    def m_name(self, fn) -> bool:
        loads = [n for s in fn.body for n in ast.walk(s)
                 if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)]
        names = sorted({n.id for n in loads} | {a.arg for a in fn.args.args})
        if not loads:
            return False
        self.rng.choice(loads).id = self.rng.choice(names)
        return True

    def m_argument(self, fn) -> bool:
        n = self.pick(fn, ast.Call, lambda n: bool(n.args))
        if n is None:
            return False
        if self.rng.random() < 0.5:
            del n.args[self.rng.randrange(len(n.args))]
        else:
            n.args.append(copy.deepcopy(self.rng.choice(n.args)))
        return True

    def m_direction(self, fn) -> bool:
        n = self.pick(fn, ast.Attribute, lambda n: isinstance(n.value, ast.Name) and n.value.id == "pl"
                      and n.attr in DIRECTIONS)
        if n is not None:
            n.attr = self.rng.choice(DIRECTIONS)
        return n is not None

    def m_binop(self, fn) -> bool:
        n = self.pick(fn, ast.BinOp)
        if n is not None:
            n.op = self.rng.choice(BINOPS)()
        return n is not None


MUTATIONS = tuple(name[2:] for name in vars(Mutator) if name.startswith("m_"))
