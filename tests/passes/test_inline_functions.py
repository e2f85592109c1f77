"""InlineFunctions: splice Inline functions at their call sites."""

from __future__ import annotations

import pytest
from pass_testing import check_pass, line_of, parse

from plang import ParserTypeError
from plang.passes import PassError, inline_functions


def test_nested_call_argument_is_bound_and_locals_renamed_per_site():
    check_pass("inline_functions", """
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.Inline)
            def scale(self, x: pl.Tensor[[64], pl.FP32]) -> pl.Tensor[[64], pl.FP32]:
                y: pl.Tensor[[64], pl.FP32] = pl.add(x, x)
                y = pl.exp(y)
                return y

            @pl.function
            def main(self, a: pl.Tensor[[64], pl.FP32]) -> pl.Tensor[[64], pl.FP32]:
                y: pl.Tensor[[64], pl.FP32] = self.scale(pl.mul(a, a))
                z: pl.Tensor[[64], pl.FP32] = pl.add(self.scale(y), a)
                return z
    """, """
        @pl.program
        class P:
            @pl.function
            def main(self, a: pl.Tensor[[64], pl.FP32]) -> pl.Tensor[[64], pl.FP32]:
                x: pl.Tensor[[64], pl.FP32] = pl.mul(a, a)
                y1: pl.Tensor[[64], pl.FP32] = pl.add(x, x)
                y1 = pl.exp(y1)
                y: pl.Tensor[[64], pl.FP32] = y1
                y2: pl.Tensor[[64], pl.FP32] = pl.add(y, y)
                y2 = pl.exp(y2)
                z: pl.Tensor[[64], pl.FP32] = pl.add(y2, a)
                return z
    """, ("NoInlineFunctions", "TypeCheck"))


def test_inline_calling_inline_is_expanded_to_the_fixpoint():
    check_pass("inline_functions", """
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.Inline)
            def sq(self, x: pl.Tensor[[64], pl.FP32]) -> pl.Tensor[[64], pl.FP32]:
                return pl.mul(x, x)

            @pl.function(type=pl.FunctionType.Inline)
            def quad(self, x: pl.Tensor[[64], pl.FP32]) -> pl.Tensor[[64], pl.FP32]:
                y: pl.Tensor[[64], pl.FP32] = self.sq(x)
                return self.sq(y)

            @pl.function
            def main(self, a: pl.Tensor[[64], pl.FP32]) -> pl.Tensor[[64], pl.FP32]:
                r: pl.Tensor[[64], pl.FP32] = self.quad(a)
                return r
    """, """
        @pl.program
        class P:
            @pl.function
            def main(self, a: pl.Tensor[[64], pl.FP32]) -> pl.Tensor[[64], pl.FP32]:
                y: pl.Tensor[[64], pl.FP32] = pl.mul(a, a)
                r: pl.Tensor[[64], pl.FP32] = pl.mul(y, y)
                return r
    """, ("NoInlineFunctions", "TypeCheck"))


def test_multiple_outputs_become_a_tuple():
    check_pass("inline_functions", """
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.Inline)
            def stats(self, x: pl.Tensor[[64, 64], pl.FP32]
                      ) -> tuple[pl.Tensor[[64, 1], pl.FP32], pl.Tensor[[64, 1], pl.FP32]]:
                mx: pl.Tensor[[64, 1], pl.FP32] = pl.row_max(x)
                sm: pl.Tensor[[64, 1], pl.FP32] = pl.row_sum(x)
                return mx, sm

            @pl.function
            def main(self, a: pl.Tensor[[64, 64], pl.FP32]) -> pl.Tensor[[64, 1], pl.FP32]:
                m, s = self.stats(a)
                r: pl.Tensor[[64, 1], pl.FP32] = pl.add(m, s)
                return r
    """, """
        @pl.program
        class P:
            @pl.function
            def main(self, a: pl.Tensor[[64, 64], pl.FP32]) -> pl.Tensor[[64, 1], pl.FP32]:
                mx: pl.Tensor[[64, 1], pl.FP32] = pl.row_max(a)
                sm: pl.Tensor[[64, 1], pl.FP32] = pl.row_sum(a)
                m_s: pl.Tuple[pl.Tensor[[64, 1], pl.FP32], pl.Tensor[[64, 1], pl.FP32]] = (mx, sm)
                m: pl.Tensor[[64, 1], pl.FP32] = m_s[0]
                s: pl.Tensor[[64, 1], pl.FP32] = m_s[1]
                r: pl.Tensor[[64, 1], pl.FP32] = pl.add(m, s)
                return r
    """, ("NoInlineFunctions", "TypeCheck"))


def test_loop_and_scope_in_the_body_keep_their_carried_name():
    check_pass("inline_functions", """
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.Inline)
            def accum(self, x: pl.Tensor[[64], pl.FP32], n: pl.Scalar[pl.INDEX]) -> pl.Tensor[[64], pl.FP32]:
                acc: pl.Tensor[[64], pl.FP32] = pl.add(x, x)
                for i in pl.range(n):
                    with pl.at(level=pl.Level.CORE_GROUP):
                        acc = pl.add(acc, x)
                return acc

            @pl.function
            def main(self, a: pl.Tensor[[64], pl.FP32]) -> pl.Tensor[[64], pl.FP32]:
                r: pl.Tensor[[64], pl.FP32] = self.accum(a, 4)
                return r
    """, """
        @pl.program
        class P:
            @pl.function
            def main(self, a: pl.Tensor[[64], pl.FP32]) -> pl.Tensor[[64], pl.FP32]:
                acc: pl.Tensor[[64], pl.FP32] = pl.add(a, a)
                for i in pl.range(4):
                    with pl.at(level=pl.Level.CORE_GROUP):
                        acc = pl.add(acc, a)
                r: pl.Tensor[[64], pl.FP32] = acc
                return r
    """, ("NoInlineFunctions", "TypeCheck"))


def test_program_without_inline_functions_is_returned_as_is():
    prog = parse("""
        @pl.program
        class P:
            @pl.function
            def main(self, a: pl.Tensor[[64], pl.FP32]) -> pl.Tensor[[64], pl.FP32]:
                return pl.add(a, a)
    """)
    assert inline_functions()(prog) is prog


def test_recursive_inline_functions_are_an_error():
    prog = parse("""
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.Inline)
            def f(self, x: pl.Tensor[[64], pl.FP32]) -> pl.Tensor[[64], pl.FP32]:
                return self.g(x)

            @pl.function(type=pl.FunctionType.Inline)
            def g(self, x: pl.Tensor[[64], pl.FP32]) -> pl.Tensor[[64], pl.FP32]:
                return self.f(x)

            @pl.function
            def main(self, a: pl.Tensor[[64], pl.FP32]) -> pl.Tensor[[64], pl.FP32]:
                return self.f(a)
    """)
    with pytest.raises(PassError, match="call each other recursively: f -> g -> f"):
        inline_functions()(prog)


def test_dynamic_dims_of_the_inlined_body_take_the_callers_shapes():
    check_pass("inline_functions", """
        N = pl.dynamic("N")

        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.Inline)
            def halves(self, x: pl.Tensor[[N, 64], pl.FP32]) -> pl.Tensor[[N, 64], pl.FP32]:
                y: pl.Tensor[[N, 64], pl.FP32] = pl.mul(x, 0.5)
                for i, (acc,) in pl.range(N // 64, init_values=(y,)):
                    a2: pl.Tensor[[N, 64], pl.FP32] = pl.add(acc, x)
                    r: pl.Tensor[[N, 64], pl.FP32] = pl.yield_(a2)
                return r

            @pl.function
            def main(self, a: pl.Tensor[[128, 64], pl.FP32]) -> pl.Tensor[[128, 64], pl.FP32]:
                z: pl.Tensor[[128, 64], pl.FP32] = pl.add(self.halves(a), a)
                return z
    """, """
        @pl.program
        class P:
            @pl.function
            def main(self, a: pl.Tensor[[128, 64], pl.FP32]) -> pl.Tensor[[128, 64], pl.FP32]:
                y: pl.Tensor[[128, 64], pl.FP32] = pl.mul(a, 0.5)
                for i, (acc,) in pl.range(2, init_values=(y,)):
                    a2: pl.Tensor[[128, 64], pl.FP32] = pl.add(acc, a)
                    r: pl.Tensor[[128, 64], pl.FP32] = pl.yield_(a2)
                z: pl.Tensor[[128, 64], pl.FP32] = pl.add(r, a)
                return z
    """, ("NoInlineFunctions", "TypeCheck"))


def test_a_local_extent_in_the_bodys_types_is_renamed_with_it():
    """`@pl.jit.inline` bodies read extents into locals (`d = x.shape[1]`) and shape their
    tiles by them: the renamed local must be the one the types name, also inside loops."""
    check_pass("inline_functions", """
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.Inline)
            def rows(self, x: pl.Tensor[[128, 64], pl.FP32],
                     o: pl.Tensor[[16, 64], pl.FP32]) -> pl.Tensor[[16, 64], pl.FP32]:
                d: pl.Scalar[pl.INDEX] = 64
                t: pl.Tensor[[16, d], pl.FP32] = pl.slice(x, [16, d], [0, 0])
                for i, (acc,) in pl.range(2, init_values=(t,)):
                    a2: pl.Tensor[[16, d], pl.FP32] = pl.add(acc, t)
                    r: pl.Tensor[[16, d], pl.FP32] = pl.yield_(a2)
                o2: pl.Tensor[[16, 64], pl.FP32] = pl.assemble(o, r, [0, 0])
                return o2

            @pl.function
            def main(self, a: pl.Tensor[[128, 64], pl.FP32],
                     b: pl.Tensor[[16, 64], pl.FP32]) -> pl.Tensor[[16, 64], pl.FP32]:
                z: pl.Tensor[[16, 64], pl.FP32] = self.rows(a, b)
                return z
    """, """
        @pl.program
        class P:
            @pl.function
            def main(self, a: pl.Tensor[[128, 64], pl.FP32],
                     b: pl.Tensor[[16, 64], pl.FP32]) -> pl.Tensor[[16, 64], pl.FP32]:
                d: pl.Scalar[pl.INDEX] = 64
                t: pl.Tensor[[16, d], pl.FP32] = pl.slice(a, [16, d], [0, 0])
                for i, (acc,) in pl.range(2, init_values=(t,)):
                    a2: pl.Tensor[[16, d], pl.FP32] = pl.add(acc, t)
                    r: pl.Tensor[[16, d], pl.FP32] = pl.yield_(a2)
                o2: pl.Tensor[[16, 64], pl.FP32] = pl.assemble(b, r, [0, 0])
                z: pl.Tensor[[16, 64], pl.FP32] = o2
                return z
    """, ("NoInlineFunctions", "TypeCheck"))


def test_one_dynamic_dim_bound_to_two_sizes_is_an_error():
    src = """
        N = pl.dynamic("N")

        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.Inline)
            def both(self, x: pl.Tensor[[N, 64], pl.FP32],
                     y: pl.Tensor[[N, 64], pl.FP32]) -> pl.Scalar[pl.INDEX]:
                return N

            @pl.function
            def main(self, a: pl.Tensor[[128, 64], pl.FP32],
                     b: pl.Tensor[[64, 64], pl.FP32]) -> pl.Scalar[pl.INDEX]:
                n = self.both(a, b)
                return n
    """
    with pytest.raises(ParserTypeError) as err:  # the parser already sees it at the call
        parse(src)
    assert "conflicting bindings for N in both(): 128 from argument 'x', 64 from argument 'y'" \
        in err.value.message
    assert err.value.line == line_of(src, "n = self.both(a, b)")


def test_inline_calls_in_iter_arg_initial_values_are_spliced_before_the_loop():
    check_pass("inline_functions", """
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.Inline)
            def sq(self, x: pl.Tensor[[64], pl.FP32]) -> pl.Tensor[[64], pl.FP32]:
                y: pl.Tensor[[64], pl.FP32] = pl.mul(x, x)
                return y

            @pl.function
            def main(self, a: pl.Tensor[[64], pl.FP32], n: pl.Scalar[pl.INDEX]) -> pl.Tensor[[64], pl.FP32]:
                for i, (acc,) in pl.range(4, init_values=(self.sq(a),)):
                    s: pl.Tensor[[64], pl.FP32] = pl.add(acc, a)
                    r: pl.Tensor[[64], pl.FP32] = pl.yield_(s)
                for (k, w) in pl.while_(init_values=(0, self.sq(r))):
                    pl.cond(k < n)
                    w2: pl.Tensor[[64], pl.FP32] = pl.exp(w)
                    k2, w3 = pl.yield_(k + 1, w2)
                return w3
    """, """
        @pl.program
        class P:
            @pl.function
            def main(self, a: pl.Tensor[[64], pl.FP32], n: pl.Scalar[pl.INDEX]) -> pl.Tensor[[64], pl.FP32]:
                t: pl.Tensor[[64], pl.FP32] = pl.mul(a, a)
                for i, (acc,) in pl.range(4, init_values=(t,)):
                    s: pl.Tensor[[64], pl.FP32] = pl.add(acc, a)
                    r: pl.Tensor[[64], pl.FP32] = pl.yield_(s)
                t2: pl.Tensor[[64], pl.FP32] = pl.mul(r, r)
                for (k, w) in pl.while_(init_values=(0, t2)):
                    pl.cond(k < n)
                    w2: pl.Tensor[[64], pl.FP32] = pl.exp(w)
                    k2, w3 = pl.yield_(k + 1, w2)
                return w3
    """, ("NoInlineFunctions", "TypeCheck"))
