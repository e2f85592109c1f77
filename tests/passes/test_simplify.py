"""Simplify: constant folding, constant / copy propagation, dead pure bindings."""

from __future__ import annotations

from pass_testing import check_pass, parse

from plang.ir import assert_structural_equal
from plang.passes import simplify

VERIFY = ("SSAForm", "UseAfterDef", "TypeCheck")


def test_folds_propagates_and_removes_dead_code_with_dynamic_dims():
    check_pass("simplify", """
        M = pl.dynamic("M")

        @pl.program
        class P:
            @pl.function
            def main(self, a: pl.Tensor[[M, 64], pl.FP32],
                     n: pl.Scalar[pl.INDEX]) -> pl.Tensor[[M, 64], pl.FP32]:
                k: pl.Scalar[pl.INDEX] = 4
                b: pl.Tensor[[M, 64], pl.FP32] = a
                dead: pl.Tensor[[M, 64], pl.FP32] = pl.exp(a)
                m: pl.Scalar[pl.INDEX] = k * 16 + n * 1
                for i in pl.range(0, m, k // 2):
                    b2: pl.Tensor[[M, 64], pl.FP32] = pl.add(b, a)
                c: pl.Tensor[[M, 64], pl.FP32] = pl.tensor.muls(b, 2.0 * 0.5)
                return c
    """, """
        M = pl.dynamic("M")

        @pl.program
        class P:
            @pl.function
            def main(self, a: pl.Tensor[[M, 64], pl.FP32],
                     n: pl.Scalar[pl.INDEX]) -> pl.Tensor[[M, 64], pl.FP32]:
                c: pl.Tensor[[M, 64], pl.FP32] = pl.tensor.muls(a, 1.0)
                return c
    """, VERIFY)


def test_constant_branch_and_zero_trip_loop_fold_away():
    check_pass("simplify", """
        @pl.program
        class P:
            @pl.function
            def main(self, a: pl.Tensor[[64], pl.FP32]) -> pl.Tensor[[64], pl.FP32]:
                flag: pl.Scalar[pl.BOOL] = 3 > 2
                if flag:
                    x: pl.Tensor[[64], pl.FP32] = pl.exp(a)
                    r: pl.Tensor[[64], pl.FP32] = pl.yield_(x)
                else:
                    r: pl.Tensor[[64], pl.FP32] = pl.yield_(a)
                for i, (acc,) in pl.range(5, 2, init_values=(r,)):
                    acc2: pl.Tensor[[64], pl.FP32] = pl.add(acc, a)
                    res: pl.Tensor[[64], pl.FP32] = pl.yield_(acc2)
                return res
    """, """
        @pl.program
        class P:
            @pl.function
            def main(self, a: pl.Tensor[[64], pl.FP32]) -> pl.Tensor[[64], pl.FP32]:
                x: pl.Tensor[[64], pl.FP32] = pl.exp(a)
                return x
    """, VERIFY)


def test_propagated_extent_refolds_shapes_of_calls_and_variables():
    check_pass("simplify", """
        @pl.program
        class P:
            @pl.function
            def main(self, a: pl.Tensor[[64, 64], pl.FP32],
                     out: pl.Tensor[[64, 64], pl.FP32]) -> pl.Tensor[[64, 64], pl.FP32]:
                rows: pl.Scalar[pl.INDEX] = 16
                t: pl.Tensor[[rows, 64], pl.FP32] = pl.slice(a, [rows, 64], [rows * 2, 0])
                out2: pl.Tensor[[64, 64], pl.FP32] = pl.assemble(out, t, [rows - 16, 0])
                return out2
    """, """
        @pl.program
        class P:
            @pl.function
            def main(self, a: pl.Tensor[[64, 64], pl.FP32],
                     out: pl.Tensor[[64, 64], pl.FP32]) -> pl.Tensor[[64, 64], pl.FP32]:
                t: pl.Tensor[[16, 64], pl.FP32] = pl.slice(a, [16, 64], [32, 0])
                out2: pl.Tensor[[64, 64], pl.FP32] = pl.assemble(out, t, [0, 0])
                return out2
    """, VERIFY)


def test_propagated_extent_refolds_the_type_of_a_carried_value():
    # the carried tile's type mentions `rows`; ops re-typed from it must not bring `rows` back
    check_pass("simplify", """
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore)
            def main(self, a: pl.Tensor[[64, 64], pl.FP32],
                     out: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
                rows: pl.Scalar[pl.INDEX] = 16
                t0: pl.Tile[[rows, 64], pl.FP32] = pl.tile.load(a, [0, 0], [rows, 64])
                for i, (acc,) in pl.range(1, 4, init_values=(t0,)):
                    t: pl.Tile[[rows, 64], pl.FP32] = pl.tile.load(a, [i * 16, 0], [rows, 64])
                    acc2: pl.Tile[[rows, 64], pl.FP32] = pl.tile.add(acc, t)
                    total: pl.Tile[[rows, 64], pl.FP32] = pl.yield_(acc2)
                out2: pl.Tensor[[64, 64], pl.FP32] = pl.tile.store(total, [0, 0], out)
                return out2
    """, """
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore)
            def main(self, a: pl.Tensor[[64, 64], pl.FP32],
                     out: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
                t0: pl.Tile[[16, 64], pl.FP32] = pl.tile.load(a, [0, 0], [16, 64])
                for i, (acc,) in pl.range(1, 4, init_values=(t0,)):
                    t: pl.Tile[[16, 64], pl.FP32] = pl.tile.load(a, [i * 16, 0], [16, 64])
                    acc2: pl.Tile[[16, 64], pl.FP32] = pl.tile.add(acc, t)
                    total: pl.Tile[[16, 64], pl.FP32] = pl.yield_(acc2)
                out2: pl.Tensor[[64, 64], pl.FP32] = pl.tile.store(total, [0, 0], out)
                return out2
    """, VERIFY)


def test_effects_inside_scopes_and_loops_are_kept_but_dead_temps_go():
    check_pass("simplify", """
        @pl.program
        class P:
            @pl.function
            def main(self, a: pl.Tensor[[64], pl.FP32], out: pl.Tensor[[64], pl.FP32],
                     n: pl.Scalar[pl.INDEX]) -> pl.Tensor[[64], pl.FP32]:
                for i, (o,) in pl.range(n, init_values=(out,)):
                    with pl.at(level=pl.Level.CORE_GROUP):
                        unused: pl.Tensor[[64], pl.FP32] = pl.neg(a)
                        step: pl.Scalar[pl.INDEX] = i * 0 + 1
                        o2: pl.Tensor[[64], pl.FP32] = pl.add(o, a)
                    o3: pl.Tensor[[64], pl.FP32] = pl.yield_(o2)
                return o3
    """, """
        @pl.program
        class P:
            @pl.function
            def main(self, a: pl.Tensor[[64], pl.FP32], out: pl.Tensor[[64], pl.FP32],
                     n: pl.Scalar[pl.INDEX]) -> pl.Tensor[[64], pl.FP32]:
                for i, (o,) in pl.range(n, init_values=(out,)):
                    with pl.at(level=pl.Level.CORE_GROUP):
                        o2: pl.Tensor[[64], pl.FP32] = pl.add(o, a)
                    o3: pl.Tensor[[64], pl.FP32] = pl.yield_(o2)
                return o3
    """, VERIFY)


def test_tuple_of_values_is_forwarded_to_its_element_reads():
    check_pass("simplify", """
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
    """, """
        @pl.program
        class P:
            @pl.function
            def main(self, a: pl.Tensor[[64, 64], pl.FP32]) -> pl.Tensor[[64, 1], pl.FP32]:
                mx: pl.Tensor[[64, 1], pl.FP32] = pl.row_max(a)
                sm: pl.Tensor[[64, 1], pl.FP32] = pl.row_sum(a)
                r: pl.Tensor[[64, 1], pl.FP32] = pl.add(mx, sm)
                return r
    """, VERIFY)


def test_already_simple_program_is_a_fixpoint():
    prog = parse("""
        @pl.program
        class P:
            @pl.function
            def main(self, a: pl.Tensor[[64], pl.FP32], n: pl.Scalar[pl.INDEX]) -> pl.Tensor[[64], pl.FP32]:
                m: pl.Scalar[pl.INDEX] = n * 2 + 1
                r: pl.Tensor[[64], pl.FP32] = pl.tensor.adds(a, pl.cast(m, pl.FP32))
                return r
    """)
    assert_structural_equal(simplify()(prog), prog)
