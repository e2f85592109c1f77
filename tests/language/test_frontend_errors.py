# ruff: noqa: E501  (DSL source and rendered messages)
"""The front end's error contract: every user-facing error is a `pl.Error`; an unexpected
exception inside plang becomes `pl.InternalCompilerError` at the user's line with the original
chained (`PLANG_FRONTEND_DEBUG=1` re-raises it raw); deliberate user errors keep their messages."""

import inspect
import textwrap

import pytest
import torch

import plang as pl
from plang.codegen.kernel.native import KernelCompileError
from plang.codegen.orchestration import OrchestrationCodegenError
from plang.codegen.torch_ref import TorchCodegenError
from plang.ir.span import Span
from plang.language import dispatch
from plang.passes.diagnostics import PassError
from plang.runtime.graph import GraphReplayError
from plang.runtime.pipes import PipeError
from plang.runtime.scheduler import TaskError, TaskGroupError
from plang.target.isa import IsaError

SOURCE = textwrap.dedent("""\
    import plang as pl


    @pl.function
    def k(n: pl.Scalar[pl.INT32]) -> pl.Scalar[pl.INT32]:
        m = n + 1
        return m
""")
LINE = 6  # `m = n + 1`


@pytest.mark.parametrize("cls, old_base", [
    (pl.ParserError, Exception), (pl.ParserSyntaxError, pl.ParserError), (pl.ParserTypeError, pl.ParserError),
    (pl.ParserNameError, pl.ParserError), (pl.UnsupportedConstructError, pl.ParserError),
    (pl.SSAViolationError, pl.ParserError), (pl.EagerCallError, RuntimeError),
    (pl.InternalCompilerError, Exception), (PassError, Exception), (KernelCompileError, RuntimeError),
    (OrchestrationCodegenError, ValueError), (TorchCodegenError, Exception), (IsaError, ValueError),
    (TaskError, RuntimeError), (TaskGroupError, RuntimeError), (PipeError, RuntimeError),
    (GraphReplayError, RuntimeError),
])
def test_every_user_facing_error_is_a_pl_error(cls, old_base):
    assert issubclass(cls, pl.Error) and issubclass(cls, old_base)


def test_error_renders_its_span_with_the_source_line_and_a_caret():
    assert str(pl.Error("plain")) == "plain"  # no span: the message as is
    this_line, text = inspect.currentframe().f_lineno, "    this_line, text = inspect.currentframe()"
    col = text.index("inspect")
    err = pl.Error("boom", Span(__file__, this_line, col, this_line, col + len("inspect")))
    rendered = str(err).splitlines()
    assert rendered[0] == f"{__file__}:{this_line}:{col + 1}: boom"
    assert rendered[1].startswith(f"{this_line:>5} |     this_line, text = inspect.currentframe()")
    assert rendered[2] == "      | " + " " * col + "^" * len("inspect")
    assert (err.line, err.column) == (this_line, col)


@pytest.mark.parametrize("exc", [TypeError, ValueError, KeyError, AttributeError, IndexError])
def test_an_internal_exception_becomes_an_internal_compiler_error(monkeypatch, exc):
    def broken(*args, **kwargs):
        raise exc("boom")

    monkeypatch.delenv("PLANG_FRONTEND_DEBUG", raising=False)
    monkeypatch.setattr(dispatch, "literal", broken)
    with pytest.raises(pl.InternalCompilerError) as info:
        pl.parse(SOURCE, filename="example.py")
    err = info.value
    assert not isinstance(err, pl.ParserError)
    assert (err.span.filename, err.line) == ("example.py", LINE)
    assert type(err.__cause__) is exc and err.__cause__.__traceback__ is not None
    text = str(err)
    assert text.startswith(f"example.py:{LINE}:9: InternalCompilerError: internal compiler error: {exc.__name__}: ")
    assert "bug in plang" in text and "    m = n + 1" in text and "^^^^^" in text
    assert "PLANG_FRONTEND_DEBUG=1" in text


def test_an_internal_type_error_under_an_op_call_is_not_blamed_on_the_user(monkeypatch):
    def broken(*args, **kwargs):
        raise TypeError("boom")

    monkeypatch.delenv("PLANG_FRONTEND_DEBUG", raising=False)
    monkeypatch.setattr(dispatch, "call_op", broken)  # reached through pl.add's wrapper
    with pytest.raises(pl.InternalCompilerError) as info:
        pl.parse(textwrap.dedent("""\
            import plang as pl


            @pl.function
            def k(a: pl.Tensor[[64, 64], pl.FP32]) -> pl.Tensor[[64, 64], pl.FP32]:
                c = pl.add(a, a)
                return c
        """), filename="example.py")
    assert info.value.line == LINE and str(info.value.__cause__) == "boom"


def test_frontend_debug_reraises_the_raw_exception(monkeypatch):
    def broken(*args, **kwargs):
        raise TypeError("boom")

    monkeypatch.setenv("PLANG_FRONTEND_DEBUG", "1")
    monkeypatch.setattr(dispatch, "literal", broken)
    with pytest.raises(TypeError, match="^boom$") as info:
        pl.parse(SOURCE, filename="example.py")
    assert not isinstance(info.value, pl.Error)


@pl.jit.incore
def shift_tile(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    for i in pl.range(1):
        y = pl.store(pl.load(x, [i * 16, 0], [16, 16]), [0, 0], y)
    return y


@pl.jit
def shift(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    y = shift_tile(x, y)
    return y


def test_an_internal_error_in_a_jit_kernel_points_at_the_users_file(monkeypatch):
    def broken(*args, **kwargs):
        raise TypeError("boom")

    monkeypatch.delenv("PLANG_FRONTEND_DEBUG", raising=False)
    monkeypatch.setattr(dispatch, "literal", broken)
    with pytest.raises(pl.InternalCompilerError) as info:
        shift.specialize(torch.zeros(16, 16), torch.zeros(16, 16))
    lines, first = inspect.getsourcelines(shift_tile.__wrapped__)
    line = first + next(i for i, text in enumerate(lines) if "i * 16" in text)
    assert (info.value.span.filename, info.value.line) == (__file__, line)
    assert isinstance(info.value.__cause__, TypeError)


def test_a_user_type_error_keeps_its_class_code_and_message():
    with pytest.raises(pl.ParserTypeError) as info:
        pl.parse(textwrap.dedent("""\
            import plang as pl


            @pl.function(type=pl.FunctionType.InCore)
            def k(a: pl.Tensor[[64, 64], pl.FP32], b: pl.Tensor[[32, 64], pl.FP32]):
                c = pl.add(a, b)
                return c
        """), filename="example.py")
    assert str(info.value) == (
        "example.py:6:9: ParserTypeError [PL200]: tensor.add: operand 'rhs' shape [32, 64] does not match "
        "'lhs' shape [64, 64]\n"
        "    6 |     c = pl.add(a, b)\n"
        "      |         ^^^^^^^^^^^^"
    )
    assert info.value.__cause__ is None


@pytest.mark.parametrize("expr, message", [
    ("len(3)", "len: object of type 'int' has no len()"),
    ("int('x')", "int: invalid literal for int() with base 10: 'x'"),
    ("pl.dynamic()", "pl.dynamic: dynamic() missing 1 required positional argument: 'name'"),
])
def test_a_python_error_in_the_users_call_stays_a_parser_type_error(expr, message):
    with pytest.raises(pl.ParserTypeError) as info:
        pl.parse(SOURCE.replace("m = n + 1", f"m = {expr}"), filename="example.py")
    assert info.value.message == message and info.value.line == LINE
