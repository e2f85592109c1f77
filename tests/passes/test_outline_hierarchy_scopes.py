"""OutlineHierarchyScopes: `pl.at(level=HOST/CHIP/...)` regions become functions with level/role."""

from __future__ import annotations

from pass_testing import check_pass

SIG = "x: pl.Tensor[[64], pl.FP32]"
T = "pl.Tensor[[64], pl.FP32]"


def test_host_scope_becomes_a_function_carrying_level_and_role():
    check_pass("outline_hierarchy_scopes", f"""
        @pl.program
        class P:
            @pl.function
            def main(self, {SIG}) -> {T}:
                with pl.at(level=pl.Level.HOST, role=pl.Role.Orchestrator):
                    y = pl.add(x, x)
                z = pl.exp(y)
                return z
    """, f"""
        @pl.program
        class P:
            @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
            def main_host_0(self, {SIG}) -> {T}:
                y = pl.add(x, x)
                return y

            @pl.function
            def main(self, {SIG}) -> {T}:
                y = self.main_host_0(x)
                z = pl.exp(y)
                return z
    """, ("HierarchyOutlined", "TypeCheck", "UseAfterDef"))


def test_name_hint_and_core_scope_left_for_incore_outlining():
    check_pass("outline_hierarchy_scopes", f"""
        @pl.program
        class P:
            @pl.function
            def main(self, {SIG}, out: pl.Out[{T}]) -> {T}:
                with pl.at(level=pl.Level.CHIP, name_hint="chip_part"):
                    with pl.at(level=pl.Level.CORE_GROUP):
                        o1 = pl.assemble(out, pl.exp(x), [0])
                return o1
    """, f"""
        @pl.program
        class P:
            @pl.function(level=pl.Level.CHIP)
            def chip_part(self, out: pl.Out[{T}], {SIG}) -> {T}:
                with pl.at(level=pl.Level.CORE_GROUP):
                    o1 = pl.assemble(out, pl.exp(x), [0])
                return o1

            @pl.function
            def main(self, {SIG}, out: pl.Out[{T}]) -> {T}:
                o1 = self.chip_part(out, x)
                return o1
    """)


def test_nested_hierarchy_scopes_outline_inner_first():
    check_pass("outline_hierarchy_scopes", f"""
        @pl.program
        class P:
            @pl.function
            def main(self, {SIG}) -> {T}:
                with pl.at(level=pl.Level.HOST):
                    a = pl.add(x, x)
                    with pl.at(level=pl.Level.CHIP):
                        b = pl.exp(a)
                return b
    """, f"""
        @pl.program
        class P:
            @pl.function(level=pl.Level.CHIP)
            def main_chip_1(self, a: {T}) -> {T}:
                b = pl.exp(a)
                return b

            @pl.function(level=pl.Level.HOST)
            def main_host_0(self, {SIG}) -> {T}:
                a = pl.add(x, x)
                b = self.main_chip_1(a)
                return b

            @pl.function
            def main(self, {SIG}) -> {T}:
                b = self.main_host_0(x)
                return b
    """)


def test_scope_inside_loop_with_carried_value_and_scalar_capture():
    check_pass("outline_hierarchy_scopes", f"""
        @pl.program
        class P:
            @pl.function
            def main(self, {SIG}, s: pl.Scalar[pl.FP32]) -> {T}:
                for i, (acc,) in pl.range(3, init_values=(x,)):
                    with pl.at(level=pl.Level.HOST):
                        nxt = pl.add(acc, s)
                    r = pl.yield_(nxt)
                return r
    """, f"""
        @pl.program
        class P:
            @pl.function(level=pl.Level.HOST)
            def main_host_0(self, acc: {T}, s: pl.Scalar[pl.FP32]) -> {T}:
                nxt = pl.add(acc, s)
                return nxt

            @pl.function
            def main(self, {SIG}, s: pl.Scalar[pl.FP32]) -> {T}:
                for i, (acc,) in pl.range(3, init_values=(x,)):
                    nxt = self.main_host_0(acc, s)
                    r = pl.yield_(nxt)
                return r
    """)


def test_two_results_with_dynamic_dims():
    check_pass("outline_hierarchy_scopes", """
        N = pl.dynamic("N")

        @pl.program
        class P:
            @pl.function
            def main(self, x: pl.Tensor[[N], pl.FP32]) -> pl.Tensor[[N], pl.FP32]:
                with pl.at(level=pl.Level.HOST):
                    a = pl.exp(x)
                    b = pl.neg(x)
                c = pl.add(a, b)
                return c
    """, """
        N = pl.dynamic("N")

        @pl.program
        class P:
            @pl.function(level=pl.Level.HOST)
            def main_host_0(self, x: pl.Tensor[[N], pl.FP32]) -> tuple[pl.Tensor[[N], pl.FP32],
                                                                       pl.Tensor[[N], pl.FP32]]:
                a = pl.exp(x)
                b = pl.neg(x)
                return a, b

            @pl.function
            def main(self, x: pl.Tensor[[N], pl.FP32]) -> pl.Tensor[[N], pl.FP32]:
                ret = self.main_host_0(x)
                a = ret[0]
                b = ret[1]
                c = pl.add(a, b)
                return c
    """)
