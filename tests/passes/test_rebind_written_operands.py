"""RebindWrittenOperands: a write op used as a statement rebinds the operand it writes."""

from __future__ import annotations

from pass_testing import check_pass, parse

from plang import passes

T = "pl.Tensor[[64, 64], pl.FP32]"


def test_bare_store_and_assemble_rebind_their_destinations():
    check_pass("rebind_written_operands", f"""
        @pl.program
        class P:
            @pl.function
            def main(self, x: {T}, c: pl.Out[{T}], d: pl.Out[{T}]) -> {T}:
                with pl.at(level=pl.Level.CORE_GROUP):
                    t = pl.load(x, [0, 0], [64, 64])
                    pl.store(t, [0, 0], c)
                    pl.assemble(d, pl.exp(x), [0, 0])
                return c
    """, f"""
        @pl.program
        class P:
            @pl.function
            def main(self, x: {T}, c: pl.Out[{T}], d: pl.Out[{T}]) -> {T}:
                with pl.at(level=pl.Level.CORE_GROUP):
                    t = pl.load(x, [0, 0], [64, 64])
                    c = pl.store(t, [0, 0], c)
                    d = pl.assemble(d, pl.exp(x), [0, 0])
                return c
    """)


def test_stores_in_loops_and_element_writes_are_rebound_in_place():
    check_pass("rebind_written_operands", f"""
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, x: {T}, c: pl.Out[{T}], s: pl.Out[pl.Tensor[[4], pl.INT32]]) -> {T}:
                for i in pl.parallel(4):
                    t = pl.load(x, [i * 16, 0], [16, 64])
                    pl.store(t, [i * 16, 0], c)
                    s[i] = 1
                return c
    """, f"""
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, x: {T}, c: pl.Out[{T}], s: pl.Out[pl.Tensor[[4], pl.INT32]]) -> {T}:
                for i in pl.parallel(4):
                    t = pl.load(x, [i * 16, 0], [16, 64])
                    c = pl.store(t, [i * 16, 0], c)
                    s = pl.tensor.write(s, [i], 1)
                return c
    """)


def test_calls_of_program_functions_are_left_alone():
    prog = parse(f"""
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, x: {T}, o: pl.Out[{T}]) -> {T}:
                o1 = pl.assemble(o, pl.exp(x), [0, 0])
                return o1

            @pl.function(type=pl.FunctionType.Orchestration)
            def main(self, x: {T}, out: pl.Out[{T}]) -> {T}:
                self.k(x, out)
                return out
    """)
    assert passes.rebind_written_operands()(prog) is prog
