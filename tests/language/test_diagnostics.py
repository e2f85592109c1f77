# ruff: noqa: E501  (tables of DSL source text)
"""User mistakes: each raises the right ParserError subclass, names the problem, and points
at the offending line and column."""

from __future__ import annotations

import textwrap

import pytest

import plang as pl

HEADER = """import plang as pl


def helper(x):
    return x


@pl.function(type=pl.FunctionType.{ftype})
def f(a: pl.Tensor[[64, 64], pl.FP32], t: pl.Tile[[64, 64], pl.FP32], u: pl.Tile[[32, 64], pl.FP32],
      h: pl.Tile[[64, 64], pl.FP16], n: pl.Scalar[pl.INDEX]) -> pl.Tensor[[64, 64], pl.FP32]:
"""
FIRST_BODY_LINE = HEADER.count("\n") + 1

PROGRAM = """import plang as pl


@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[64, 64], pl.FP32], out: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[64, 64], pl.FP32]) -> pl.Tensor[[64, 64], pl.FP32]:
"""
FIRST_PROGRAM_LINE = PROGRAM.count("\n") + 1


def _raises(source: str, first_line: int, indent: int, body: str, cls: type, message: str, at: str):
    lines = textwrap.dedent(body).strip("\n").splitlines()
    with pytest.raises(cls) as info:
        pl.parse(source + textwrap.indent("\n".join(lines), " " * indent) + "\n")
    err = info.value
    assert message in err.message, err.message
    row = next(i for i, ln in enumerate(lines) if at in ln)
    assert (err.line, err.column) == (first_line + row, indent + lines[row].index(at)), str(err)
    rendered = str(err)
    assert f"<string>:{err.line}:{err.column + 1}" in rendered and "^" in rendered
    assert lines[row].strip() in rendered
    return err


def check(body: str, cls: type, message: str, at: str, ftype: str = "Opaque"):
    return _raises(HEADER.format(ftype=ftype), FIRST_BODY_LINE, 4, body, cls, message, at)


def check_program(body: str, cls: type, message: str, at: str):
    return _raises(PROGRAM, FIRST_PROGRAM_LINE, 8, body, cls, message, at)


MISTAKES = [
    ("unknown_name", "y = pl.add(a, undefined_thing)\nreturn a", pl.ParserNameError,
     "name 'undefined_thing' is not defined", "undefined_thing"),
    ("unknown_pl_attribute", "y = pl.addd(a, a)\nreturn a", pl.ParserNameError, "pl has no attribute 'addd'",
     "pl.addd"),
    ("op_wrong_arity", "y = pl.tile.add(t)\nreturn a", pl.ParserTypeError, "missing required argument 'rhs'",
     "pl.tile.add(t)"),
    ("add_shape_mismatch", "y = pl.add(t, u)\nreturn a", pl.ParserTypeError, "shape [32, 64] does not match",
     "pl.add(t, u)"),
    ("matmul_dtype_mismatch", "m = pl.matmul(t, h)\nreturn a", pl.ParserTypeError, "dtype", "pl.matmul(t, h)"),
    ("cond_not_first", "for (x,) in pl.while_(init_values=(0,)):\n    y = x + 1\n    pl.cond(x < 3)\n"
     "    xo = pl.yield_(y)\nreturn a", pl.ParserSyntaxError, "pl.cond(...) must be the first statement",
     "y = x + 1"),
    ("func_attr_after_statement", "y = n + 1\npl.func_attr({'k': a})\nreturn a", pl.ParserSyntaxError,
     "pl.func_attr must come before every other statement", "pl.func_attr"),
    ("split_aiv_three_lanes", "for lane in pl.split_aiv(3, mode=pl.SplitMode.UP_DOWN):\n    y = lane\nreturn a",
     pl.ParserSyntaxError, "pl.split_aiv takes n=2", "3"),
    ("split_aiv_missing_mode", "for lane in pl.split_aiv(2):\n    y = lane\nreturn a", pl.ParserSyntaxError,
     "pl.split_aiv needs mode=", "pl.split_aiv(2)"),
    ("yield_count_mismatch", "for i, (x, y) in pl.range(4, init_values=(0, 1)):\n    xo = pl.yield_(x)\nreturn a",
     pl.ParserSyntaxError, "pl.yield_ yields 1 values but the loop carries 2", "xo = pl.yield_(x)"),
    ("try_statement", "try:\n    y = n + 1\nexcept Exception:\n    pass\nreturn a", pl.UnsupportedConstructError,
     "try/except is not supported", "try:"),
    ("lambda_expression", "g = lambda q: q\nreturn a", pl.UnsupportedConstructError, "lambda is not supported",
     "lambda"),
    ("while_else", "while n > 0:\n    n = n - 1\nelse:\n    n = 1\nreturn a", pl.UnsupportedConstructError,
     "while-else is not supported", "n = 1"),
    ("float_subscript", "y = a[1.5, 0]\nreturn a", pl.ParserTypeError, "an index must be an integer", "a[1.5, 0]"),
    ("at_unknown_keyword", "with pl.at(level=pl.Level.CORE_GROUP, fancy=1):\n    y = n + 1\nreturn a",
     pl.ParserSyntaxError, "unexpected keyword argument 'fancy'", "pl.at("),
    ("annotation_mismatch", "x: pl.Tensor[[32, 64], pl.FP32] = a\nreturn a", pl.ParserTypeError,
     "'x' is annotated Tensor[[32, 64], FP32]", "a\n".strip()),
    ("init_values_without_yield", "for i, (x,) in pl.range(4, init_values=(0,)):\n    y = x + 1\nreturn a",
     pl.ParserSyntaxError, "must end with", "y = x + 1"),
    ("yield_outside_loop", "y = pl.yield_(n)\nreturn a", pl.ParserSyntaxError,
     "pl.yield_ is only valid as the last statement", "y = pl.yield_(n)"),
    ("yield_not_last", "for i, (x,) in pl.range(4, init_values=(0,)):\n    xo = pl.yield_(x)\n    z = x\nreturn a",
     pl.ParserSyntaxError, "pl.yield_ must be the last statement", "z = x"),
    ("break_outside_loop", "break\nreturn a", pl.ParserSyntaxError, "break outside a loop", "break"),
    ("range_as_value", "r = pl.range(4)\nreturn a", pl.ParserSyntaxError, "pl.range can only be used",
     "pl.range(4)"),
    ("python_range_loop", "for i in range(4):\n    y = i\nreturn a", pl.UnsupportedConstructError,
     "the Python builtin 'range' is not supported", "range"),
    ("at_bad_level", "with pl.at(level=3):\n    y = n\nreturn a", pl.ParserSyntaxError,
     "pl.at needs level=pl.Level.<X>", "pl.at(level=3)"),
    ("graph_in_kernel", "with pl.graph('g'):\n    y = n\nreturn a", pl.ParserSyntaxError,
     "pl.graph is not valid in a device-kernel body", "pl.graph('g')", "InCore"),
    ("static_assert_fails", "pl.static_assert(64 % 3 == 0, 'tile must divide')\nreturn a", pl.ParserError,
     "static assertion failed: tile must divide", "64 % 3 == 0"),
    ("return_count_mismatch", "return a, a", pl.ParserTypeError, "return gives 2 values but the function declares 1",
     "return a, a"),
    ("python_function_call", "y = helper(n)\nreturn a", pl.UnsupportedConstructError,
     "calling helper (a Python function) inside a DSL function is not supported", "helper(n)"),
    ("cache_policy_outside_scope", "pl.set_cache_policy(a, pl.CachePolicy.BYPASS)\nreturn a", pl.ParserSyntaxError,
     "pl.set_cache_policy must be a statement directly inside", "pl.set_cache_policy"),
    ("dump_tag_in_kernel", "pl.dump_tag(a)\nreturn a", pl.ParserSyntaxError,
     "pl.dump_tag is only valid in an Orchestration", "pl.dump_tag(a)", "AIV"),
    ("unpack_count_mismatch", "x, y, z = n, n\nreturn a", pl.ParserTypeError, "cannot unpack 2 values into 3 names",
     "x, y, z"),
    ("if_yield_one_branch", "if n > 1:\n    r = pl.yield_(n)\nelse:\n    q = n\nreturn a", pl.ParserSyntaxError,
     "needs pl.yield_ at the end of both branches", "r = pl.yield_(n)"),
    ("inline_subworker_scope", "with pl.at(level=pl.Level.HOST, role=pl.Role.SubWorker):\n    y = n\nreturn a",
     pl.UnsupportedConstructError, "Inline 'with pl.at(level>=HOST, role=pl.Role.SubWorker)' is not supported",
     "pl.at("),
    ("predicate_on_host_level", "with pl.at(level=pl.Level.HOST, predicate=(n > 0)):\n    y = n\nreturn a",
     pl.ParserSyntaxError, "predicate= is only valid with level=pl.Level.CORE_GROUP", "pl.at("),
    ("list_comprehension", "xs = [i for i in [1, 2]]\nreturn a", pl.UnsupportedConstructError,
     "a list comprehension is not supported", "[i for i in [1, 2]]"),
    ("tile_plus_tensor", "y = t + a\nreturn a", pl.ParserTypeError, "tile", "t + a"),
    ("scalar_condition_on_tile", "if t:\n    y = n\nreturn a", pl.ParserTypeError,
     "an if condition must be a scalar", "t"),
    ("pipeline_without_stage", "for i in pl.pipeline(4):\n    y = i\nreturn a", pl.ParserSyntaxError,
     "stage", "pl.pipeline(4)"),
    ("bad_dtype_in_annotation", "x: pl.Tensor[[64, 64], 3] = a\nreturn a", pl.ParserTypeError,
     "pl.Tensor needs a dtype", "pl.Tensor[[64, 64], 3]"),
    ("break_in_parallel_loop", "for i in pl.parallel(4):\n    if i > n:\n        break\nreturn a",
     pl.InvalidOperationError, "'break' is not supported in a pl.parallel loop", "break"),
    ("continue_in_unrolled_loop", "for i in pl.unroll(4):\n    continue\nreturn a", pl.InvalidOperationError,
     "'continue' is not supported in an unrolled (pl.unroll) loop", "continue"),
    ("break_in_spmd_body", "for b in pl.spmd(4):\n    break\nreturn a", pl.InvalidOperationError,
     "'break' is not supported in a pl.spmd body", "break"),
    ("break_out_of_an_outlined_scope", "for i in pl.range(4):\n    with pl.at(level=pl.Level.CORE_GROUP):\n        break\nreturn a",
     pl.InvalidOperationError, "'break' inside a pl.at scope cannot leave the loop around it", "break"),
    ("static_print_without_arguments", "pl.static_print()\nreturn a", pl.ParserSyntaxError,
     "pl.static_print needs at least 1 argument", "pl.static_print()"),
    ("dumps_of_a_scalar", "with pl.at(level=pl.Level.CORE_GROUP, dumps=[n]):\n    y = n\nreturn a", pl.ParserTypeError,
     "dumps= entry Scalar[INDEX] is not a tensor variable", "pl.at("),
]


@pytest.mark.parametrize("case", MISTAKES, ids=[m[0] for m in MISTAKES])
def test_mistake(case):
    name, body, cls, message, at, *ftype = case
    check(body, cls, message, at, *ftype)


def test_at_least_thirty_mistakes():
    assert len(MISTAKES) + 5 >= 30


def test_strict_ssa_second_assignment_points_at_second_line():
    source = HEADER.format(ftype="Opaque").replace("@pl.function(", "@pl.function(strict_ssa=True, ")
    err = _raises(source, FIRST_BODY_LINE, 4, "y = n + 1\ny = n + 2\nreturn a", pl.SSAViolationError,
                  "variable 'y' is assigned twice", "y = n + 2")
    assert f"first assigned at line {FIRST_BODY_LINE}" in err.message


def test_unknown_program_function_has_hint():
    err = check_program("out = self.kk(a, a)\nreturn out", pl.ParserNameError,
                        "program 'P' has no function 'kk'", "self.kk")
    assert "did you mean self.k" in str(err)


def test_program_call_wrong_arity():
    check_program("out = self.k(a)\nreturn out", pl.ParserTypeError, "k() takes 2 arguments (a, out), got 1",
                  "self.k(a)")


def test_program_call_wrong_argument_type():
    check_program("out = self.k(a, 3)\nreturn out", pl.ParserTypeError,
                  "argument 'out' of k() expects Tensor[[64, 64], FP32]", "self.k(a, 3)")


def test_program_call_wrong_argument_shape():
    check_program("b = pl.create_tensor([32, 64], dtype=pl.FP32)\nout = self.k(b, a)\nreturn out",
                  pl.ParserTypeError, "argument 'a' of k() expects Tensor[[64, 64], FP32], got Tensor[[32, 64], FP32]",
                  "self.k(b, a)")


def test_a_dynamic_dim_binds_one_extent_per_call():
    source = PROGRAM.replace("def k(self, a: pl.Tensor[[64, 64], pl.FP32], out: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]",
                             "def k(self, a: pl.Tensor[[M, 64], pl.FP32], out: pl.Out[pl.Tensor[[M, 64], pl.FP32]]) -> pl.Tensor[[M, 64], pl.FP32]")
    source = source.replace("@pl.program", 'M = pl.dynamic("M")\n\n\n@pl.program')
    _raises(source, FIRST_PROGRAM_LINE + 3, 8, "b = pl.create_tensor([32, 64], dtype=pl.FP32)\nout = self.k(a, b)\nreturn out",
            pl.ParserTypeError, "conflicting bindings for M in k(): 64 from argument 'a', 32 from argument 'out'",
            "self.k(a, b)")


def test_submit_unknown_keyword():
    check_program("r, tid = pl.submit(self.k, a, a, after=[1])\nreturn r", pl.ParserSyntaxError,
                  "pl.submit got an unexpected keyword 'after'", "[1]")


def test_spmd_submit_of_no_blocks():
    check_program("with pl.manual_scope():\n    r, tid = pl.spmd_submit(self.k, a, a, core_num=0)\nreturn r",
                  pl.ParserSyntaxError, "core_num must be positive, got 0", "0)")


def test_submit_dumps_a_tensor_it_does_not_pass():
    check_program("b = pl.create_tensor([64, 64], dtype=pl.FP32)\nwith pl.manual_scope():\n"
                  "    r, tid = pl.submit(self.k, a, a, dumps=[b])\nreturn r",
                  pl.ParserTypeError, "dumps= entry 'b' is not an argument of this pl.submit", "pl.submit")


def test_break_leaves_the_innermost_sequential_loop():
    """A sequential loop nested in a parallel one may break: it leaves only itself."""
    source = HEADER.format(ftype="Opaque") + textwrap.indent(
        "for i in pl.parallel(4):\n    for j in pl.range(8):\n        if j > n:\n            break\nreturn a", "    ")
    assert "break" in pl.parse(source + "\n").as_python()


def test_function_attrs_must_be_a_dict_of_string_keys():
    with pytest.raises(pl.ParserTypeError, match="attrs= must be a dict, got \\[\\]"):
        pl.function(attrs=[])
    with pytest.raises(pl.ParserTypeError, match="attrs= keys must be strings, got 1"):
        pl.function(attrs={1: 2})


def test_invalid_python_syntax_reports_line():
    with pytest.raises(pl.ParserSyntaxError, match="invalid Python syntax") as info:
        pl.parse("import plang as pl\n\n@pl.function\ndef f(a: pl.Scalar[pl.INDEX]):\n    y = = a\n")
    assert info.value.line == 5


def test_decorated_function_error_points_into_this_file():
    with pytest.raises(pl.ParserNameError) as info:
        @pl.function
        def bad(a: pl.Tensor[[64], pl.FP32]) -> pl.Tensor[[64], pl.FP32]:
            return not_defined_anywhere  # noqa: F821

    err = info.value
    assert err.span.filename == __file__
    assert "return not_defined_anywhere" in str(err)
    with open(__file__) as fh:
        expected = next(i for i, ln in enumerate(fh, 1) if "return not_defined_anywhere" in ln)
    assert err.line == expected


def test_hint_is_rendered():
    err = check("y = n + 1\nz = yy + 1\nreturn a", pl.ParserNameError, "name 'yy' is not defined", "yy")
    assert "hint: did you mean 'y'?" in str(err)
