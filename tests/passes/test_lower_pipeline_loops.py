"""LowerPipelineLoops: pl.pipeline(stage=F) loops become F-way replicated bodies plus a tail."""

from __future__ import annotations

from pass_testing import check_pass

T = "pl.Tensor[[256, 64], pl.FP32]"


def test_stage_divides_trip_count_no_tail():
    check_pass("lower_pipeline_loops", f"""
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, x: {T}, out: pl.Out[{T}]) -> {T}:
                for i, (o,) in pl.pipeline(4, stage=2, init_values=(out,)):
                    t = pl.load(x, [i * 32, 0], [32, 64])
                    o2 = pl.store(t, [i * 32, 0], o)
                    r = pl.yield_(o2)
                return r
    """, f"""
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, x: {T}, out: pl.Out[{T}]) -> {T}:
                for i, (o,) in pl.range(0, 4, 2, init_values=(out,)):
                    t = pl.load(x, [i * 32, 0], [32, 64])
                    o2 = pl.store(t, [i * 32, 0], o)
                    t1 = pl.load(x, [(i + 1) * 32, 0], [32, 64])
                    o3 = pl.store(t1, [(i + 1) * 32, 0], o2)
                    r = pl.yield_(o3)
                return r
    """, ("PipelineLoopsLowered", "SSAForm", "TypeCheck", "UseAfterDef"))


def test_tail_loop_for_remaining_iterations_carries_values_on():
    check_pass("lower_pipeline_loops", f"""
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, x: {T}, out: pl.Out[{T}]) -> {T}:
                for i, (o,) in pl.pipeline(5, stage=3, init_values=(out,)):
                    t = pl.load(x, [i * 32, 0], [32, 64])
                    o2 = pl.store(t, [i * 32, 0], o)
                    r = pl.yield_(o2)
                return r
    """, f"""
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, x: {T}, out: pl.Out[{T}]) -> {T}:
                for i, (o,) in pl.range(0, 3, 3, init_values=(out,)):
                    t = pl.load(x, [i * 32, 0], [32, 64])
                    o2 = pl.store(t, [i * 32, 0], o)
                    t1 = pl.load(x, [(i + 1) * 32, 0], [32, 64])
                    o3 = pl.store(t1, [(i + 1) * 32, 0], o2)
                    t2 = pl.load(x, [(i + 2) * 32, 0], [32, 64])
                    o4 = pl.store(t2, [(i + 2) * 32, 0], o3)
                    m = pl.yield_(o4)
                for j, (p,) in pl.range(3, 5, 1, init_values=(m,)):
                    u = pl.load(x, [j * 32, 0], [32, 64])
                    p2 = pl.store(u, [j * 32, 0], p)
                    r = pl.yield_(p2)
                return r
    """)


def test_start_and_step_scale_the_stage_offsets():
    check_pass("lower_pipeline_loops", f"""
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, x: {T}, out: pl.Out[{T}]) -> {T}:
                for i, (o,) in pl.pipeline(2, 8, 3, stage=2, init_values=(out,)):
                    t = pl.load(x, [i * 32, 0], [32, 64])
                    o2 = pl.store(t, [i * 32, 0], o)
                    r = pl.yield_(o2)
                return r
    """, f"""
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, x: {T}, out: pl.Out[{T}]) -> {T}:
                for i, (o,) in pl.range(2, 8, 6, init_values=(out,)):
                    t = pl.load(x, [i * 32, 0], [32, 64])
                    o2 = pl.store(t, [i * 32, 0], o)
                    t1 = pl.load(x, [(i + 3) * 32, 0], [32, 64])
                    o3 = pl.store(t1, [(i + 3) * 32, 0], o2)
                    r = pl.yield_(o3)
                return r
    """)


def test_dynamic_trip_count_always_gets_a_tail():
    check_pass("lower_pipeline_loops", f"""
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, x: {T}, out: pl.Out[{T}], n: pl.Scalar[pl.INDEX]) -> {T}:
                for i, (o,) in pl.pipeline(n, stage=2, init_values=(out,)):
                    t = pl.load(x, [i * 32, 0], [32, 64])
                    o2 = pl.store(t, [i * 32, 0], o)
                    r = pl.yield_(o2)
                return r
    """, f"""
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, x: {T}, out: pl.Out[{T}], n: pl.Scalar[pl.INDEX]) -> {T}:
                for i, (o,) in pl.range(0, n // 2 * 2, 2, init_values=(out,)):
                    t = pl.load(x, [i * 32, 0], [32, 64])
                    o2 = pl.store(t, [i * 32, 0], o)
                    t1 = pl.load(x, [(i + 1) * 32, 0], [32, 64])
                    o3 = pl.store(t1, [(i + 1) * 32, 0], o2)
                    m = pl.yield_(o3)
                for j, (p,) in pl.range(n // 2 * 2, n, 1, init_values=(m,)):
                    u = pl.load(x, [j * 32, 0], [32, 64])
                    p2 = pl.store(u, [j * 32, 0], p)
                    r = pl.yield_(p2)
                return r
    """)


def test_loop_without_carried_values_and_orchestration_loops():
    check_pass("lower_pipeline_loops", """
        @pl.program
        class P:
            @pl.function
            def main(self, x: pl.Tensor[[64], pl.FP32]) -> pl.Tensor[[64], pl.FP32]:
                for i in pl.pipeline(2, stage=2):
                    y = pl.add(x, x)
                return x
    """, """
        @pl.program
        class P:
            @pl.function
            def main(self, x: pl.Tensor[[64], pl.FP32]) -> pl.Tensor[[64], pl.FP32]:
                for i in pl.range(0, 2, 2):
                    y = pl.add(x, x)
                    y2 = pl.add(x, x)
                return x
    """)
