"""Regression tests for the wrong answers and internal / unlocated errors the safety probe
(issue 12) found: each program runs through the public API and matches torch, or raises a
documented plang error located at the user's line."""

from __future__ import annotations

import importlib.util
import textwrap
from pathlib import Path

import pytest
import torch

import plang as pl
from plang.debug import run_torch_ref
from plang.ir.enums import ParamDirection
from plang.passes import PassError

HEAD = "import torch\nimport plang as pl\n\n"


def load(tmp_path: Path, body: str, name: str = "user_mod") -> dict:
    """Import `body` (dedented, after HEAD) from a real file, so spans have a file and line."""
    path = tmp_path / f"{name}.py"
    path.write_text(HEAD + textwrap.dedent(body))
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return vars(module)


def kernel(body: str) -> str:
    """An indented `@pl.jit.incore` kernel `k` and the `entry` that calls it."""
    return textwrap.dedent(body) + KERNEL_CALL


def line_of(tmp_path: Path, text: str, name: str = "user_mod") -> int:
    lines = (tmp_path / f"{name}.py").read_text().splitlines()
    return next(i for i, line in enumerate(lines, 1) if text in line)


def assert_located(err: pl.Error, tmp_path: Path, text: str, name: str = "user_mod") -> None:
    assert err.span.filename == str(tmp_path / f"{name}.py"), str(err)
    assert err.span.begin_line == line_of(tmp_path, text, name), str(err)
    assert " object at 0x" not in str(err)


KERNEL_CALL = """
@pl.jit
def entry(a: pl.Tensor, c: pl.Out[pl.Tensor]):
    c = k(a, c)
    return c
"""


def test_statements_after_an_early_return_do_not_run(tmp_path):
    ns = load(tmp_path, kernel("""
    @pl.jit.incore
    def k(a: pl.Tensor, c: pl.Out[pl.Tensor]):
        t = pl.load(a, [0, 0], [16, 16])
        c = pl.store(t, [0, 0], c)
        return c
        c = pl.store(pl.add(t, t), [0, 0], c)
        return c
    """))
    a, c = torch.randn(16, 16), torch.zeros(16, 16)
    ns["entry"](a, c)
    torch.testing.assert_close(c, a)


@pytest.mark.parametrize("n", [0, 1])
def test_a_branch_that_returns_leaves_the_rest_to_the_other_branch(tmp_path, n):
    ns = load(tmp_path, """
    @pl.jit.incore
    def k(a: pl.Tensor, c: pl.Out[pl.Tensor], n: pl.Scalar[pl.INDEX]):
        t = pl.load(a, [0, 0], [16, 16])
        if n > 0:
            c = pl.store(t, [0, 0], c)
            return c
        c = pl.store(pl.add(t, t), [0, 0], c)
        return c

    @pl.jit
    def entry(a: pl.Tensor, c: pl.Out[pl.Tensor], n: pl.Scalar[pl.INDEX]):
        c = k(a, c, n)
        return c
    """, name=f"branch{n}")
    a, c = torch.randn(16, 16), torch.zeros(16, 16)
    ns["entry"](a, c, n)
    torch.testing.assert_close(c, a if n else a + a)


@pytest.mark.parametrize("body", [
    """
    @pl.jit
    def entry(a: pl.Tensor, c: pl.Out[pl.Tensor]):
        with pl.at(level=pl.Level.CORE_GROUP):
            c = pl.assemble(c, pl.add(a, a), [0, 0])
            return c
            c = pl.assemble(c, pl.add(a, 1.0), [0, 0])
        return c
    """,
    kernel("""
    @pl.jit.incore
    def k(a: pl.Tensor, c: pl.Out[pl.Tensor]):
        for i in pl.range(2):
            t = pl.load(a, [0, 0], [16, 16])
            c = pl.store(t, [0, 0], c)
            return c
        return c
    """),
], ids=["inside-pl.at", "inside-a-loop"])
def test_a_return_that_cannot_leave_its_scope_is_a_located_error(tmp_path, body):
    ns = load(tmp_path, body)
    with pytest.raises(pl.UnsupportedConstructError, match="return inside") as info:
        ns["entry"](torch.randn(16, 16), torch.zeros(16, 16))
    lines = (tmp_path / "user_mod.py").read_text().splitlines()
    assert lines[info.value.span.begin_line - 1] == "        return c"  # the nested one


@pytest.mark.parametrize("loop, expected", [
    ("for i in pl.range(3):\n        x = x", lambda a: a + 1),
    ("y = x\n    for i in pl.range(3):\n        y = pl.add(y, x)\n    x = y", lambda a: 4 * a + 1),
], ids=["carried-unchanged", "rebound-then-updated"])
def test_loop_carried_tiles(tmp_path, loop, expected):
    ns = load(tmp_path, f"""
@pl.jit.incore
def k(a: pl.Tensor, c: pl.Out[pl.Tensor]):
    x = pl.load(a, [0, 0], [16, 16])
    c = pl.store(x, [0, 0], c)
    {loop}
    c = pl.store(pl.add(x, 1.0), [0, 0], c)
    return c
""" + KERNEL_CALL)
    a, c = torch.randn(16, 16), torch.zeros(16, 16)
    ns["entry"](a, c)
    torch.testing.assert_close(c, expected(a))


def test_a_store_into_an_in_parameter_makes_it_in_out_and_orders_its_readers():
    src = """
import plang as pl
@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k1(self, a: pl.Tensor[[64, 64], pl.FP32],
           c: pl.Tensor[[64, 64], pl.FP32]) -> pl.Tensor[[64, 64], pl.FP32]:
        for i in pl.range(8):
            c = pl.store(pl.exp(pl.load(a, [0, 0], [64, 64])), [0, 0], c)
        return c

    @pl.function(type=pl.FunctionType.InCore)
    def k2(self, c: pl.Tensor[[64, 64], pl.FP32],
           d: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
        d = pl.store(pl.add(pl.load(c, [0, 0], [64, 64]), 1.0), [0, 0], d)
        return d

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[64, 64], pl.FP32],
             c: pl.Tensor[[64, 64], pl.FP32]) -> pl.Tensor[[64, 64], pl.FP32]:
        d = pl.create_tensor([64, 64], dtype=pl.FP32)
        c = self.k1(a, c)
        d = self.k2(c, d)
        return d
"""
    prog = pl.parse(src)
    compiled = pl.compile(prog, entry="main")
    assert compiled.lowered.get("k1").param_directions[1] is ParamDirection.InOut
    for _ in range(10):
        a, c = torch.randn(64, 64), torch.zeros(64, 64)
        expected = run_torch_ref(prog, a.clone(), c.clone())
        torch.testing.assert_close(compiled(a, c), expected)


@pytest.mark.parametrize("stmt, text", [
    ("s: pl.Scalar[pl.INT8] = 128", "s: pl.Scalar"),
    ("s = pl.const(128, pl.INT8)", "pl.const"),
    ("t = pl.full([16, 16], dtype=pl.INT8, value=128)", "pl.full"),
    ("t = pl.add(a, 128)", "pl.add(a, 128)"),
    ("t = pl.mul(a, 10**30)", "10**30"),
])
def test_an_integer_literal_outside_its_dtype_is_a_located_error(tmp_path, stmt, text):
    ns = load(tmp_path, f"""
@pl.jit
def entry(a: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        {stmt}
        c = pl.assemble(c, a, [0, 0])
    return c
""")
    with pytest.raises(pl.ParserTypeError, match="out of the range of") as info:
        ns["entry"](torch.zeros(16, 16, dtype=torch.int8), torch.zeros(16, 16, dtype=torch.int8))
    assert_located(info.value, tmp_path, text)


@pytest.mark.parametrize("stmt, text, cls", [
    ("t = pl.load(a, [0, 0], [-16, 16])", "pl.load", pl.ParserTypeError),
    ("t = pl.full([-1, 16], dtype=pl.FP32, value=0.0)", "pl.full", pl.ParserTypeError),
    ("t = pl.load(a, [0, 0], [16, 16])\n    for i in pl.range(10**30):\n        t = pl.add(t, t)", "10**30",
     pl.ParserTypeError),
    ("n = a.shape[1]\n    t = pl.load(a, [0, 7], [16, n])", "[0, 7]", PassError),
])
def test_bad_extents_are_located_errors(tmp_path, stmt, text, cls):
    ns = load(tmp_path, f"""
@pl.jit.incore
def k(a: pl.Tensor, c: pl.Out[pl.Tensor]):
    {stmt}
    c = pl.store(t, [0, 0], c)
    return c
""" + KERNEL_CALL)
    with pytest.raises(cls) as info:
        ns["entry"](torch.zeros(16, 16), torch.zeros(16, 16))
    assert_located(info.value, tmp_path, text)


def test_a_recursive_program_is_a_located_error():
    src = """
import plang as pl
@pl.program
class P:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[16, 16], pl.FP32]) -> pl.Tensor[[16, 16], pl.FP32]:
        b = self.main(a)
        return b
"""
    with pytest.raises(PassError, match=r"called recursively \(main -> main\)") as info:
        pl.compile(pl.parse(src, filename="rec.py"), entry="main")
    assert (info.value.span.filename, info.value.span.begin_line) == ("rec.py", 7)


def test_integer_power_of_an_index_runs(tmp_path):
    ns = load(tmp_path, """
@pl.jit.incore
def k(a: pl.Tensor, c: pl.Out[pl.Tensor], p: pl.Scalar[pl.INDEX]):
    for i in pl.range(3):
        t = pl.load(a, [i ** 2 + i ** p - 1, 0], [1, 16])
        c = pl.store(t, [i, 0], c)
    return c

@pl.jit
def entry(a: pl.Tensor, c: pl.Out[pl.Tensor], p: pl.Scalar[pl.INDEX]):
    c = k(a, c, p)
    return c
""")
    a, c = torch.randn(16, 16), torch.zeros(3, 16)
    ns["entry"](a, c, 0)
    torch.testing.assert_close(c, a[[i * i for i in range(3)]])


def test_a_sliced_argument_under_spmd_runs():
    src = """
import plang as pl
@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[16, 16], pl.FP32],
          y: pl.Out[pl.Tensor[[32, 16], pl.FP32]]) -> pl.Tensor[[32, 16], pl.FP32]:
        r = pl.tile.get_block_idx() * 8
        y = pl.store(pl.load(x, [r, 0], [8, 16]), [r, 0], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[32, 16], pl.FP32]) -> pl.Tensor[[32, 16], pl.FP32]:
        y = pl.create_tensor([32, 16], dtype=pl.FP32)
        with pl.spmd(2):
            y = self.k(x[16:32, :], y)
        return y
"""
    x = torch.randn(32, 16)
    y = pl.compile(pl.parse(src), entry="main")(x)
    torch.testing.assert_close(y[:16], x[16:])


def test_a_pipeline_with_more_stages_than_iterations_runs(tmp_path):
    ns = load(tmp_path, """
@pl.jit.incore
def k(a: pl.Tensor, c: pl.Out[pl.Tensor]):
    for i in pl.pipeline(8, stage=100000):
        c = pl.store(pl.exp(pl.load(a, [i * 2, 0], [2, 16])), [i * 2, 0], c)
    return c
""" + KERNEL_CALL)
    a, c = torch.randn(16, 16), torch.zeros(16, 16)
    ns["entry"](a, c)
    torch.testing.assert_close(c, a.exp())


def test_messages_name_values_without_internals():
    src = """
import plang as pl
@pl.program
class P:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[16, 16], pl.FP32]) -> pl.Tensor[[16, 16], pl.FP32]:
        c = pl.add(self, a)
        return c
"""
    with pytest.raises(pl.ParserTypeError, match="the program 'P' itself") as info:
        pl.parse(src)
    assert " object at 0x" not in str(info.value)


def test_a_helper_whose_shape_cannot_be_inferred_is_a_located_error(tmp_path):
    ns = load(tmp_path, """
@pl.jit.incore
def k(a: pl.Tensor, c: pl.Out[pl.Tensor]):
    c = pl.store(pl.load(a, [0, 0], [16, 16]), [0, 0], c)
    return c

@pl.jit
def entry(a: pl.Tensor, c: pl.Out[pl.Tensor]):
    c = k(pl.add(a, a), c)
    return c
""")
    with pytest.raises(pl.errors.JitSignatureError, match="cannot infer the shape of parameter 'a'") as info:
        ns["entry"](torch.zeros(16, 16), torch.zeros(16, 16))
    assert isinstance(info.value, TypeError)
    assert_located(info.value, tmp_path, "def k(")


def test_same_bodies_in_two_files_keep_their_own_annotations(tmp_path):
    body = """
@pl.function(type=pl.FunctionType.InCore)
def f(a: pl.Tensor[[{n}, 16], pl.FP32]) -> pl.Tensor[[{n}, 16], pl.FP32]:
    return a
"""
    f16 = load(tmp_path, body.format(n=16), name="first")["f"]
    f32 = load(tmp_path, body.format(n=32), name="second")["f"]
    assert [str(p.type) for p in f16.params] != [str(p.type) for p in f32.params]
    assert f32.span.filename.endswith("second.py")


@pytest.mark.parametrize("body, match, text", [
    ("c = k(a, c)\n    return k", "cannot assign the function 'k'", "return k"),
    ("s = pl.neg([16, 16])\n    c = k(a, c)\n    return c", "cannot evaluate neg of list", "pl.neg"),
])
def test_python_values_in_dsl_positions_are_described_plainly(tmp_path, body, match, text):
    ns = load(tmp_path, f"""
@pl.jit.incore
def k(a: pl.Tensor, c: pl.Out[pl.Tensor]):
    c = pl.store(pl.load(a, [0, 0], [16, 16]), [0, 0], c)
    return c

@pl.jit
def entry(a: pl.Tensor, c: pl.Out[pl.Tensor]):
    {body}
""")
    with pytest.raises(pl.ParserTypeError, match=match) as info:
        ns["entry"](torch.zeros(16, 16), torch.zeros(16, 16))
    assert_located(info.value, tmp_path, text)


def test_a_function_declaring_a_result_must_return_it():
    src = """
import plang as pl
@pl.function(type=pl.FunctionType.InCore)
def k(a: pl.Tensor[[16, 16], pl.FP32],
      c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
    c = pl.store(pl.load(a, [0, 0], [16, 16]), [0, 0], c)
"""
    with pytest.raises(pl.ParserTypeError, match="does not return on every path") as info:
        pl.parse(src, filename="noret.py")
    assert info.value.span.begin_line == 4


@pytest.mark.parametrize("body, cls, text", [
    ("n = a.shape[0]\n    for i in pl.range(n ** 64):\n"
     "        c = pl.store(pl.load(a, [0, 0], [16, 16]), [0, 0], c)", PassError, "n ** 64"),
    ("n = a.shape[1]\n    for i in pl.range(1):\n"
     "        c = pl.store(pl.load(a, [0, 0], [16, n - i]), [0, 0], c)", pl.Error, "n - i"),
], ids=["folded-overflow", "dynamic-tile-shape"])
def test_lowering_errors_point_at_the_users_line(tmp_path, body, cls, text):
    ns = load(tmp_path, f"""
@pl.jit.incore
def k(a: pl.Tensor, c: pl.Out[pl.Tensor]):
    {body}
    return c
""" + KERNEL_CALL)
    with pytest.raises(cls) as info:
        ns["entry"](torch.zeros(16, 16), torch.zeros(16, 16))
    assert_located(info.value, tmp_path, text)


def test_an_assemble_with_a_stray_argument_is_a_located_error(tmp_path):
    ns = load(tmp_path, """
@pl.jit
def entry(a: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        c = pl.assemble(c, pl.add(a, a), [0, 0], [0, 0])
    return c
""")
    with pytest.raises(pl.ParserTypeError, match="atomic must be a pl.AtomicType") as info:
        ns["entry"](torch.zeros(16, 16), torch.zeros(16, 16))
    assert_located(info.value, tmp_path, "pl.assemble")


def test_an_output_bound_to_a_value_of_another_shape_is_a_located_error(tmp_path):
    ns = load(tmp_path, """
@pl.jit.incore
def k(a: pl.Tensor, c: pl.Out[pl.Tensor]):
    c = pl.store(pl.load(a, [0, 0], [16, 16]), [0, 0], c)
    return c

@pl.jit
def entry(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    c = k(b, a)
    return c
""")
    with pytest.raises(pl.Error, match="final value of output parameter 'c'") as info:
        ns["entry"](torch.zeros(16, 16), torch.zeros(16, 16), torch.zeros(8, 16))
    lines = (tmp_path / "user_mod.py").read_text().splitlines()
    span = info.value.span
    assert (span.filename, span.begin_line) == (str(tmp_path / "user_mod.py"), len(lines))
