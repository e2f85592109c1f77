"""MaterializeRuntimeScopes: AUTO runtime scopes around orchestration bodies and loop / if
bodies (auto_scope=True); nothing added with auto_scope=False or inside a manual scope."""

from __future__ import annotations

from pass_testing import check_pass

T = "pl.Tensor[[64], pl.FP32]"
KERNEL = f"""
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, x: {T}, o: pl.Out[{T}]) -> {T}:
                o1 = pl.assemble(o, pl.exp(x), [0])
                return o1
"""


def test_body_and_loop_body_get_auto_scopes_outside_return_and_yield():
    check_pass("materialize_runtime_scopes", f"""
        @pl.program
        class P:{KERNEL}
            @pl.function(type=pl.FunctionType.Orchestration)
            def main(self, x: {T}, out: pl.Out[{T}]) -> {T}:
                for i, (acc,) in pl.range(3, init_values=(out,)):
                    o = self.k(x, acc)
                    r = pl.yield_(o)
                return r
    """, f"""
        @pl.program
        class P:{KERNEL}
            @pl.function(type=pl.FunctionType.Orchestration)
            def main(self, x: {T}, out: pl.Out[{T}]) -> {T}:
                with pl.scope():
                    for i, (acc,) in pl.range(3, init_values=(out,)):
                        with pl.scope():
                            o = self.k(x, acc)
                        r = pl.yield_(o)
                return r
    """, ("RuntimeScopesMaterialized", "TypeCheck", "UseAfterDef"))


def test_if_branches_get_scopes():
    check_pass("materialize_runtime_scopes", f"""
        @pl.program
        class P:{KERNEL}
            @pl.function(type=pl.FunctionType.Orchestration)
            def main(self, x: {T}, out: pl.Out[{T}], c: pl.Scalar[pl.BOOL]) -> {T}:
                if c:
                    a = self.k(x, out)
                    r = pl.yield_(a)
                else:
                    b = self.k(x, out)
                    r = pl.yield_(b)
                return r
    """, f"""
        @pl.program
        class P:{KERNEL}
            @pl.function(type=pl.FunctionType.Orchestration)
            def main(self, x: {T}, out: pl.Out[{T}], c: pl.Scalar[pl.BOOL]) -> {T}:
                with pl.scope():
                    if c:
                        with pl.scope():
                            a = self.k(x, out)
                        r = pl.yield_(a)
                    else:
                        with pl.scope():
                            b = self.k(x, out)
                        r = pl.yield_(b)
                return r
    """)


def test_auto_scope_false_keeps_only_the_authors_scopes():
    src = f"""
        @pl.program
        class P:{KERNEL}
            @pl.function(type=pl.FunctionType.Orchestration, auto_scope=False)
            def main(self, x: {T}, out: pl.Out[{T}]) -> {T}:
                with pl.scope():
                    o = self.k(x, out)
                for i in pl.range(2):
                    o2 = self.k(x, o)
                return o2
    """
    check_pass("materialize_runtime_scopes", src, src)


def test_manual_scope_is_kept_and_not_filled():
    check_pass("materialize_runtime_scopes", f"""
        @pl.program
        class P:{KERNEL}
            @pl.function(type=pl.FunctionType.Orchestration)
            def main(self, x: {T}, out: pl.Out[{T}]) -> {T}:
                with pl.manual_scope():
                    for i in pl.range(2):
                        o = self.k(x, out)
                o2 = self.k(x, out)
                return o2
    """, f"""
        @pl.program
        class P:{KERNEL}
            @pl.function(type=pl.FunctionType.Orchestration)
            def main(self, x: {T}, out: pl.Out[{T}]) -> {T}:
                with pl.scope():
                    with pl.manual_scope():
                        for i in pl.range(2):
                            o = self.k(x, out)
                    o2 = self.k(x, out)
                return o2
    """)


def test_kernels_and_already_scoped_bodies_are_unchanged():
    src = f"""
        @pl.program
        class P:{KERNEL}
            @pl.function(type=pl.FunctionType.Orchestration)
            def main(self, x: {T}, out: pl.Out[{T}]) -> {T}:
                with pl.scope():
                    o = self.k(x, out)
                return o
    """
    check_pass("materialize_runtime_scopes", src, src)
