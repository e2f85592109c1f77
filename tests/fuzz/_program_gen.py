"""A seeded generator of random well-typed plang programs for the differential test.

A `Case` is one small computation with its own inputs and outputs: a tensor-level chain in a
`pl.at` scope (elementwise ops, scalar operands, row / column reductions and broadcasts), a
tile kernel with a loop (carried through `init_values=` / `pl.yield_`, by rebinding, or
unchanged), or a matmul (tensor level, or tile level with a `matmul_acc` K loop). `program`
groups cases into one `@pl.program` whose orchestration `main` takes every case's inputs,
scalars and `pl.Out` outputs, so one compile covers several cases; every scalar is a runtime
parameter, so one compiled program runs on several draws of its inputs.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

import torch

T32 = "pl.FP32"


@dataclass
class Arg:
    """One parameter of `main`: a tensor (`shape`, `dtype` a `pl.` name) or a scalar (`shape` None)."""

    name: str
    shape: tuple[int, ...] | None
    dtype: str
    out: bool = False

    def annotation(self) -> str:
        if self.shape is None:
            return f"pl.Scalar[{self.dtype}]"
        t = f"pl.Tensor[[{', '.join(map(str, self.shape))}], {self.dtype}]"
        return f"pl.Out[{t}]" if self.out else t


@dataclass
class Case:
    args: list[Arg] = field(default_factory=list)
    kernels: list[str] = field(default_factory=list)  # InCore methods, each a list of lines joined
    body: list[str] = field(default_factory=list)  # lines of `main`
    trips: int = 0  # the largest runtime trip count an INDEX scalar of this case may take

    @property
    def outs(self) -> list[Arg]:
        return [a for a in self.args if a.out]


class Generator:
    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.count = 0

    def fresh(self, hint: str) -> str:
        self.count += 1
        return f"{hint}{self.count}"

    # ------------------------------------------------------------------ cases
    def case(self) -> Case:
        kind = self.rng.choices(["chain", "loop", "matmul"], weights=[5, 3, 2])[0]
        return getattr(self, kind)()

    def chain(self) -> Case:
        """Tensor-level statements in a `pl.at` scope; the output is the last value, or its row sum."""
        r = self.rng
        m, n = r.choice((1, 4, 8, 16)), r.choice((16, 32, 64))
        c = Case()
        pool = []
        for _ in range(r.randint(1, 3)):
            a = Arg(self.fresh("x"), (m, n), T32)
            c.args.append(a)
            pool.append(a.name)
        scalar = Arg(self.fresh("s"), None, T32) if r.random() < 0.5 else None
        if scalar:
            c.args.append(scalar)
        lines = []
        for _ in range(r.randint(1, 3)):
            v = self.fresh("t")
            lines.append(f"{v} = {self.expr(pool, scalar, r.randint(1, 3), exps=1)}")
            pool.append(v)
        reduce = r.random() < 0.25
        out = Arg(self.fresh("o"), (m, 1) if reduce else (m, n), T32, out=True)
        c.args.append(out)
        value = f"pl.row_{r.choice(('sum', 'max', 'min'))}({pool[-1]})" if reduce else pool[-1]
        c.body = ["with pl.at(level=pl.Level.CORE_GROUP):",
                  *(f"    {line}" for line in lines),
                  f"    {out.name} = pl.assemble({out.name}, {value}, [0, 0])"]
        return c

    def expr(self, pool: list[str], scalar: Arg | None, depth: int, exps: int) -> str:
        """A random [m, n] FP32 expression over the names in `pool` (at most `exps` pl.exp)."""
        r = self.rng
        if depth == 0 or r.random() < 0.2:
            return r.choice(pool)
        sub = lambda: self.expr(pool, scalar, depth - 1, exps)  # noqa: E731
        kind = r.choice(["bin", "bin", "op", "un", "lit", "scalar", "row", "col"])
        if kind == "bin":
            return f"pl.{r.choice(('add', 'sub', 'mul', 'maximum', 'minimum'))}({sub()}, {sub()})"
        if kind == "op":
            return f"({sub()} {r.choice('+-*')} {sub()})"
        if kind == "un":
            ops = ("abs", "neg", "relu") + (("exp",) if exps > 0 else ())
            op = r.choice(ops)
            if op == "exp":
                return f"pl.exp({self.expr(pool, scalar, depth - 1, exps - 1)})"
            return f"pl.{op}({sub()})"
        if kind == "lit":
            return f"pl.{r.choice(('add', 'mul', 'sub'))}({sub()}, {r.choice((0.5, -1.25, 2.0, 3))})"
        if kind == "scalar" and scalar is not None:
            return f"pl.{r.choice(('add', 'mul'))}({sub()}, {scalar.name})"
        if kind == "row":
            red = r.choice(("sum", "max", "min"))
            return f"pl.row_expand_{r.choice(('add', 'sub', 'mul'))}({sub()}, pl.row_{red}({sub()}))"
        if kind == "col":
            red = r.choice(("sum", "max", "min"))
            return f"pl.col_expand_{r.choice(('add', 'sub', 'mul'))}({sub()}, pl.col_{red}({sub()}))"
        return sub()

    def loop(self) -> Case:
        """A tile kernel walking `rows`-row blocks of its input in a `pl.range` loop."""
        r = self.rng
        rows, n, blocks = r.choice((1, 8)), r.choice((16, 32)), r.randint(1, 4)
        c = Case(trips=blocks)
        a, b = Arg(self.fresh("a"), (rows * blocks, n), T32), Arg(self.fresh("b"), (rows, n), T32)
        trips = Arg(self.fresh("n"), None, "pl.INDEX")
        out = Arg(self.fresh("o"), (rows, n), T32, out=True)
        c.args += [a, b, trips, out]
        k = self.fresh("k")
        op = r.choice(["pl.add(acc, {t})", "pl.maximum(acc, {t})", "pl.add(pl.mul(acc, 0.5), {t})",
                       "pl.sub({t}, acc)"])
        step = op.format(t=r.choice(["t", "pl.exp(t)", "pl.abs(t)", "pl.mul(t, acc)"]))
        load = f"t = pl.load(a, [i * {rows}, 0], [{rows}, {n}])"
        form = r.choice(["yield", "rebind", "unchanged", "stepped"])
        bound = "n" if r.random() < 0.7 else str(blocks)
        head = [f"acc0 = pl.load(b, [0, 0], [{rows}, {n}])"]
        if form == "yield":
            loop = [f"for i, (acc,) in pl.range({bound}, init_values=(acc0,)):", f"    {load}",
                    f"    acc2 = {step}", "    res = pl.yield_(acc2)"]
        elif form == "rebind":
            loop = ["acc = acc0", f"for i in pl.range({bound}):", f"    {load}", f"    acc = {step}",
                    "res = acc"]
        elif form == "stepped":
            loop = ["acc = acc0", f"for j in pl.range(0, {bound} * {rows}, {rows}):",
                    f"    t = pl.load(a, [j, 0], [{rows}, {n}])", f"    acc = {step}", "res = acc"]
        else:
            loop = ["o = pl.store(acc0, [0, 0], o)", "x = acc0", f"for i in pl.range({bound}):",
                    "    x = x", "res = pl.add(x, 1.0)"]
        sig = (f"def {k}(self, a: {a.annotation()}, b: {b.annotation()}, n: pl.Scalar[pl.INDEX], "
               f"o: {out.annotation()}) -> pl.Tensor[[{rows}, {n}], {T32}]:")
        c.kernels.append("\n".join(["@pl.function(type=pl.FunctionType.InCore)", sig,
                                    *(f"    {line}" for line in [*head, *loop, "o = pl.store(res, [0, 0], o)",
                                                                 "return o"])]))
        c.body = [f"{out.name} = self.{k}({a.name}, {b.name}, {trips.name}, {out.name})"]
        return c

    def matmul(self) -> Case:
        r = self.rng
        m, k, n = r.choice((16, 32)), r.choice((16, 32, 64)), r.choice((16, 32))
        c = Case()
        dtype = r.choice(("pl.FP16", "pl.BF16"))
        a, b = Arg(self.fresh("a"), (m, k), dtype), Arg(self.fresh("b"), (k, n), dtype)
        bias = Arg(self.fresh("c"), (m, n), T32)
        out = Arg(self.fresh("o"), (m, n), T32, out=True)
        c.args += [a, b, bias, out]
        if r.random() < 0.5 or k == 16:
            post = r.choice(["mm", "pl.add(mm, {c})", "pl.relu(pl.sub(mm, {c}))", "pl.row_expand_mul(mm, "
                             "pl.row_max({c}))"]).format(c=bias.name)
            mm = self.fresh("mm")
            c.body = ["with pl.at(level=pl.Level.CORE_GROUP):",
                      f"    {mm} = pl.matmul({a.name}, {b.name})",
                      f"    {out.name} = pl.assemble({out.name}, {post.replace('mm', mm)}, [0, 0])"]
            return c
        kern = self.fresh("mk")
        sig = (f"def {kern}(self, a: {a.annotation()}, b: {b.annotation()}, "
               f"o: {out.annotation()}) -> pl.Tensor[[{m}, {n}], {T32}]:")
        lines = [f"acc0 = pl.matmul(pl.load(a, [0, 0], [{m}, 16]), pl.load(b, [0, 0], [16, {n}]))",
                 f"for kk, (acc,) in pl.range(16, {k}, 16, init_values=(acc0,)):",
                 f"    ak = pl.load(a, [0, kk], [{m}, 16])",
                 f"    bk = pl.load(b, [kk, 0], [16, {n}])",
                 "    res = pl.yield_(pl.matmul_acc(acc, ak, bk))",
                 "o = pl.store(res, [0, 0], o)", "return o"]
        c.kernels.append("\n".join(["@pl.function(type=pl.FunctionType.InCore)", sig,
                                    *(f"    {line}" for line in lines)]))
        c.args.remove(bias)
        c.body = [f"{out.name} = self.{kern}({a.name}, {b.name}, {out.name})"]
        return c


def program(name: str, cases: list[Case]) -> str:
    """The source of one `@pl.program` running every case of `cases` from its `main`."""
    args = [a for c in cases for a in c.args]
    outs = [a for a in args if a.out]
    rets = ", ".join(a.annotation().removeprefix("pl.Out[")[:-1] for a in outs)
    lines = ["import plang as pl", "", "", "@pl.program", f"class {name}:"]
    for c in cases:
        for kern in c.kernels:
            lines += [f"    {line}" for line in kern.splitlines()] + [""]
    lines.append("    @pl.function(type=pl.FunctionType.Orchestration)")
    lines.append(f"    def main(self, {', '.join(f'{a.name}: {a.annotation()}' for a in args)}) "
                 f"-> tuple[{rets}]:")
    for c in cases:
        lines += [f"        {line}" for line in c.body]
    lines.append(f"        return {', '.join(a.name for a in outs)}")
    return "\n".join(lines) + "\n"


def draw(cases: list[Case], g: torch.Generator) -> list:
    """One draw of `main`'s arguments: tensors in [-1, 1) (matmul operands on a 1/8 grid, so
    their products and sums are exact), FP32 scalars in [-2, 2), trip counts in [0, trips]."""
    values: list = []
    for c in cases:
        for a in c.args:
            if a.shape is None:
                if a.dtype == "pl.INDEX":
                    values.append(int(torch.randint(0, c.trips + 1, (), generator=g)))
                else:
                    values.append(float(torch.rand((), generator=g)) * 4 - 2)
            elif a.dtype == T32:
                values.append(torch.rand(*a.shape, generator=g) * 2 - 1)
            else:
                grid = torch.randint(-8, 9, a.shape, generator=g).float() / 8
                values.append(grid.to(torch.float16 if a.dtype == "pl.FP16" else torch.bfloat16))
    return values
