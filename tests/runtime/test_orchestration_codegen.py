"""Orchestration IR (built with the IR constructors) -> generated Python -> runs on a
ChipWorker with Python kernels; results checked against plain torch."""

import numpy as np
import pytest
import torch

from plang.codegen.orchestration import OrchestrationCodegenError, generate_orchestration
from plang.dtypes import FP32, INDEX, INT32
from plang.ir import (
    Assign,
    Call,
    ConstInt,
    Eval,
    For,
    Function,
    FunctionType,
    GlobalVar,
    Gt,
    IterArg,
    Mul,
    ParamDirection,
    Program,
    Return,
    ScalarType,
    Scope,
    ScopeKind,
    ScopeMode,
    TensorType,
    TupleGetItem,
    TupleType,
    Var,
    Yield,
    seq,
)
from plang.ir.ops.registry import make_call
from plang.runtime import ChipWorker, CompiledProgram, ParamSpec, RunConfig

In, Out, InOut = ParamDirection.In, ParamDirection.Out, ParamDirection.InOut
T4 = TensorType([4, 4], FP32)
TASK = ScalarType(INDEX)


def kernel_fn(name, params, dirs, ftype=FunctionType.InCore, returns=None, attrs=None, body=None):
    ret = [params[i] for i in (returns or [])]
    return Function(name, params, dirs, [p.type for p in ret], body or Return(ret), ftype, attrs=attrs)


def call(fn, *args, **kwargs):
    ret = [p.type for p in fn.params if p.name.startswith("out")]
    return Call(GlobalVar(fn.name), args, kwargs, ret[0] if ret else TupleType([]))


def build_program():
    a, b, o = Var("a", T4), Var("b", T4), Var("out", T4)
    add = kernel_fn("add", [a, b, o], [In, In, Out], returns=[2])
    x, o2 = Var("x", T4), Var("out", T4)
    scale = kernel_fn("scale", [x, o2], [In, Out], returns=[1])
    gx, go = Var("x", T4), Var("out", T4)
    grid = kernel_fn("scale_grid", [gx, go], [In, Out], FunctionType.Spmd, returns=[1],
                     attrs={"core_num": ConstInt(4)},
                     body=seq([Eval(call(scale, gx, go)), Return([go])]))

    # orchestration(a, b, out, n): tmp = a + b; repeat n times tmp = tmp + b; out = 2 * tmp
    pa, pb, po, n = Var("a", T4), Var("b", T4), Var("out", T4), Var("n", ScalarType(INDEX))
    tmp, res, t1, tid = Var("tmp", T4), Var("res", TupleType([T4, TASK])), Var("t1", T4), Var("tid", TASK)
    i, acc = Var("i", ScalarType(INDEX)), IterArg("acc", T4, t1)
    acc_next, acc_out = Var("acc2", T4), Var("acc3", T4)
    y = Var("y", T4)
    body = seq([
        Assign(tmp, make_call("tensor.create", [[4, 4]], {"dtype": FP32})),
        Assign(res, call(add, pa, pb, tmp, submit=True)),
        Assign(t1, TupleGetItem(res, 0)),
        Assign(tid, TupleGetItem(res, 1)),
        For(i, ConstInt(0), n, ConstInt(1),
            Scope(ScopeKind.Runtime, seq([
                Assign(acc_next, call(add, acc, pb, acc, arg_directions=(In, In, InOut))),
                Yield([acc_next])])),
            iter_args=[acc], return_vars=[acc_out]),
        Assign(y, call(grid, acc_out, po, deps=(tid,))),
        Return([y]),
    ])
    orch = Function("orch", [pa, pb, po, n], [In, In, Out, In], [T4], body, FunctionType.Orchestration)
    return Program("prog", [add, scale, grid, orch])


def python_kernels():
    def add(a, b, out):
        torch.add(a, b, out=out)

    def scale(x, out, block_idx, block_num):
        out[block_idx] = x[block_idx] * 2

    return {"add": add, "scale": scale}


def test_generated_program_runs_and_matches_torch():
    program = build_program()
    gen = generate_orchestration(program)
    assert "rt.submit('scale', " in gen.source and "core_num=4" in gen.source
    assert "with rt.scope(ScopeMode.AUTO):" in gen.source and "(In, In, InOut, )" in gen.source
    sig = [ParamSpec("a", FP32, (4, 4)), ParamSpec("b", FP32, (4, 4)), ParamSpec("out", FP32, (4, 4), Out),
           ParamSpec("n", INDEX)]
    compiled = CompiledProgram("prog", sig, gen.fn, python_kernels(), source=gen.source, program=program)
    a, b = torch.randn(4, 4), torch.randn(4, 4)
    for n in (0, 3):
        out = torch.zeros(4, 4)
        with ChipWorker(RunConfig(workers=2)) as worker:
            result = worker.run(compiled, a, b, out, n)
        assert result is out
        torch.testing.assert_close(out, 2 * (a + b + n * b))


def test_manual_scope_deps_and_predicate():
    rc, out = Var("rc", TensorType([1], INT32)), Var("out", T4)
    gate_out = Var("rc", TensorType([1], INT32))
    gate = kernel_fn("gate", [gate_out], [Out], returns=[0])
    fo = Var("out", T4)
    fill = kernel_fn("fill", [fo], [Out], returns=[0])
    r1, r2 = Var("r1", TupleType([rc.type, TASK])), Var("r2", TupleType([T4, TASK]))
    pred = Gt(make_call("tensor.read", [rc, [0]]), ConstInt(0, INT32))
    body = seq([
        Scope(ScopeKind.Runtime, seq([
            Assign(r1, call(gate, rc, submit=True)),
            Assign(r2, call(fill, out, submit=True, deps=(TupleGetItem(r1, 1),), predicate=pred)),
        ]), attrs={"mode": ScopeMode.MANUAL}),
        Return([out]),
    ])
    orch = Function("orch", [rc, out], [InOut, Out], [T4], body, FunctionType.Orchestration)
    gen = generate_orchestration(Program("p", [gate, fill, orch]))
    assert "with rt.scope(ScopeMode.MANUAL):" in gen.source and "predicate=lambda" in gen.source
    sig = [ParamSpec("rc", INT32, (1,), InOut), ParamSpec("out", FP32, (4, 4), Out)]
    for value, filled in ((0, False), (5, True)):
        kernels = {"gate": lambda r, v=value: r.fill_(v), "fill": lambda o: o.fill_(1.0)}
        compiled = CompiledProgram("p", sig, gen.fn, kernels)
        out_t = torch.zeros(4, 4)
        with ChipWorker() as worker:
            worker.run(compiled, torch.zeros(1, dtype=torch.int32), out_t)
        assert bool(out_t.sum() > 0) is filled


def test_group_call_launches_aic_and_both_aiv_lanes():
    x, o = Var("x", T4), Var("out", T4)
    aic = kernel_fn("cube", [Var("x", T4), Var("out", T4)], [In, Out], FunctionType.AIC)
    aiv = kernel_fn("vec", [Var("x", T4), Var("out", T4)], [In, Out], FunctionType.AIV)
    group = kernel_fn("grp", [x, o], [In, Out], FunctionType.Group, returns=[1],
                      body=seq([Eval(call(aic, x, o)), Eval(call(aiv, x, o)), Return([o])]))
    px, po, y = Var("x", T4), Var("out", T4), Var("y", T4)
    orch = Function("orch", [px, po], [In, Out], [T4],
                    seq([Assign(y, call(group, px, po)), Return([y])]), FunctionType.Orchestration)
    gen = generate_orchestration(Program("p", [aic, aiv, group, orch]))

    def cube(x, out, pipes, subblock_idx, block_idx, block_num):
        for lane in range(2):
            pipes.get(lane, 32).push(np.ascontiguousarray(x[2 * lane:2 * lane + 2].numpy() * 10))

    def vec(x, out, pipes, subblock_idx, block_idx, block_num):
        half = np.empty((2, 4), np.float32)
        pipes.get(subblock_idx, 32).pop(half)
        out[2 * subblock_idx:2 * subblock_idx + 2] = torch.from_numpy(half) + 1
        pipes.get(subblock_idx, 32).free()

    sig = [ParamSpec("x", FP32, (4, 4)), ParamSpec("out", FP32, (4, 4), Out)]
    compiled = CompiledProgram("p", sig, gen.fn, {"cube": cube, "vec": vec})
    x_t, out_t = torch.randn(4, 4), torch.zeros(4, 4)
    with ChipWorker() as worker:
        worker.run(compiled, x_t, out_t)
    torch.testing.assert_close(out_t, x_t * 10 + 1)


def test_group_returning_its_aiv_members_result_yields_the_output_argument():
    # ExpandMixedKernel's Group returns what its AIV member returns: the Out parameter it was
    # handed, so the orchestration's result is the caller's output tensor
    vx, vo = Var("x", T4), Var("out", T4)
    aic = kernel_fn("cube", [Var("x", T4), Var("out", T4)], [In, Out], FunctionType.AIC)
    aiv = kernel_fn("vec", [vx, vo], [In, Out], FunctionType.AIV, returns=[1])
    x, o, r = Var("x", T4), Var("out", T4), Var("vec_out", T4)
    group = kernel_fn("grp", [x, o], [In, Out], FunctionType.Group,
                      body=seq([Eval(call(aic, x, o)), Assign(r, call(aiv, x, o)), Return([r])]))
    px, po, y = Var("x", T4), Var("out", T4), Var("y", T4)
    orch = Function("orch", [px, po], [In, Out], [T4],
                    seq([Assign(y, call(group, px, po)), Return([y])]), FunctionType.Orchestration)
    gen = generate_orchestration(Program("p", [aic, aiv, group, orch]))

    def vec(x, out, pipes, subblock_idx, block_idx, block_num):
        out[2 * subblock_idx:2 * subblock_idx + 2] = x[2 * subblock_idx:2 * subblock_idx + 2] + 1

    sig = [ParamSpec("x", FP32, (4, 4)), ParamSpec("out", FP32, (4, 4), Out)]
    compiled = CompiledProgram("p", sig, gen.fn, {"cube": lambda *a, **k: None, "vec": vec})
    x_t, out_t = torch.randn(4, 4), torch.zeros(4, 4)
    with ChipWorker() as worker:
        result = worker.run(compiled, x_t, out_t)
    assert result is out_t
    torch.testing.assert_close(out_t, x_t + 1)


def test_external_kernel_returns_its_output_argument():
    # an external_source= kernel has no body to trace; its result is its Out parameter
    ext = kernel_fn("ext", [Var("x", T4), Var("out", T4)], [In, Out], FunctionType.AIV,
                    attrs={"external_source": "ext.cpp"}, body=seq([]))
    ext = ext.replace(return_types=(T4,))
    a, b, o = Var("a", T4), Var("b", T4), Var("out", T4)
    add = kernel_fn("add", [a, b, o], [In, In, Out], returns=[2])
    px, po, tmp, t1, y = Var("x", T4), Var("out", T4), Var("tmp", T4), Var("t1", T4), Var("y", T4)
    orch = Function("orch", [px, po], [In, Out], [T4], seq([
        Assign(tmp, make_call("tensor.create", [[4, 4]], {"dtype": FP32})),
        Assign(t1, call(ext, px, tmp)),
        Assign(y, call(add, px, t1, po)),
        Return([y])]), FunctionType.Orchestration)
    gen = generate_orchestration(Program("p", [ext, add, orch]))
    kernels = {"ext": lambda x, out: out.copy_(2 * x), "add": lambda a, b, out: torch.add(a, b, out=out)}
    sig = [ParamSpec("x", FP32, (4, 4)), ParamSpec("out", FP32, (4, 4), Out)]
    x_t, out_t = torch.randn(4, 4), torch.zeros(4, 4)
    with ChipWorker() as worker:
        worker.run(CompiledProgram("p", sig, gen.fn, kernels), x_t, out_t)
    torch.testing.assert_close(out_t, 3 * x_t)


def test_kernel_returning_a_non_parameter_is_rejected():
    a, local = Var("a", T4), Var("local", T4)
    bad = Function("bad", [a], [In], [T4], Return([local]), FunctionType.InCore)
    pa, y = Var("a", T4), Var("y", T4)
    orch = Function("orch", [pa], [In], [T4], seq([Assign(y, call(bad, pa)), Return([y])]),
                    FunctionType.Orchestration)
    with pytest.raises(OrchestrationCodegenError, match="returns 'local'"):
        generate_orchestration(Program("p", [bad, orch]))


def test_tensor_op_in_orchestration_is_rejected():
    a, y = Var("a", T4), Var("y", T4)
    orch = Function("orch", [a], [In], [T4], seq([Assign(y, make_call("tensor.add", [a, a])), Return([y])]),
                    FunctionType.Orchestration)
    with pytest.raises(OrchestrationCodegenError, match="tensor.add can not run in orchestration"):
        generate_orchestration(Program("p", [orch]))


def test_scalar_arithmetic_is_emitted():
    n, m = Var("n", ScalarType(INDEX)), Var("m", ScalarType(INDEX))
    orch = Function("orch", [n], [In], [ScalarType(INDEX)],
                    seq([Assign(m, Mul(n, ConstInt(3))), Return([m])]), FunctionType.Orchestration)
    gen = generate_orchestration(Program("p", [orch]))
    assert gen.fn(None, 7) == 21


def test_dynamic_dims_are_read_from_tensor_parameters():
    m = Var("M", ScalarType(INDEX))
    tm = TensorType([m, 4], FP32)
    x, o = Var("x", tm), Var("out", tm)
    kern = kernel_fn("double", [Var("x", tm), Var("out", tm)], [In, Out], returns=[1])
    i, acc = Var("i", ScalarType(INDEX)), IterArg("acc", tm, o)
    acc2, res = Var("acc2", tm), Var("res", tm)
    body = seq([
        For(i, ConstInt(0), m, ConstInt(1), seq([Assign(acc2, call(kern, x, acc)), Yield([acc2])]),
            iter_args=[acc], return_vars=[res]),
        Return([res]),
    ])
    orch = Function("orch", [x, o], [In, Out], [tm], body, FunctionType.Orchestration)
    gen = generate_orchestration(Program("p", [kern, orch]))
    assert "M = x.shape[0]" in gen.source
    launches = []
    sig = [ParamSpec("x", FP32, ("M", 4)), ParamSpec("out", FP32, ("M", 4), Out)]
    compiled = CompiledProgram("p", sig, gen.fn, {"double": lambda x, out: launches.append(1)})
    with ChipWorker() as worker:
        worker.run(compiled, torch.zeros(3, 4), torch.zeros(3, 4))
    assert len(launches) == 3  # one launch per row of the dynamic dim


def test_cluster_group_around_a_group_launches_its_members_on_every_block():
    # pl.cluster + pl.spmd around a mixed kernel: a Group with core_num calls the kernel's Group
    aiv = kernel_fn("vec", [Var("x", T4), Var("out", T4)], [In, Out], FunctionType.AIV, returns=[1])
    aic = kernel_fn("cube", [Var("x", T4), Var("out", T4)], [In, Out], FunctionType.AIC)
    gx, go, gr = Var("x", T4), Var("out", T4), Var("r", T4)
    inner = kernel_fn("grp", [gx, go], [In, Out], FunctionType.Group,
                      body=seq([Eval(call(aic, gx, go)), Assign(gr, call(aiv, gx, go)), Return([gr])]))
    cx, co, cr = Var("x", T4), Var("out", T4), Var("r", T4)
    cluster = kernel_fn("cluster", [cx, co], [In, Out], FunctionType.Group,
                        attrs={"core_num": ConstInt(2), "sync_start": True},
                        body=seq([Assign(cr, call(inner, cx, co)), Return([cr])]))
    px, po, y = Var("x", T4), Var("out", T4), Var("y", T4)
    orch = Function("orch", [px, po], [In, Out], [T4],
                    seq([Assign(y, call(cluster, px, po)), Return([y])]), FunctionType.Orchestration)
    gen = generate_orchestration(Program("p", [aic, aiv, inner, cluster, orch]))
    assert "core_num=2" in gen.source and "sync_start=True" in gen.source

    def vec(x, out, pipes, subblock_idx, block_idx, block_num):
        rows = slice(2 * block_idx + subblock_idx, 2 * block_idx + subblock_idx + 1)
        out[rows] = x[rows] * block_num

    sig = [ParamSpec("x", FP32, (4, 4)), ParamSpec("out", FP32, (4, 4), Out)]
    compiled = CompiledProgram("p", sig, gen.fn, {"cube": lambda *a, **k: None, "vec": vec})
    x_t, out_t = torch.randn(4, 4), torch.zeros(4, 4)
    with ChipWorker() as worker:
        assert worker.run(compiled, x_t, out_t) is out_t
    torch.testing.assert_close(out_t, x_t * 2)
