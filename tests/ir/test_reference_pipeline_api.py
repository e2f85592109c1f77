"""The reference's pass-pipeline surface: `plang.ir.pass_manager`, its enums on `plang.ir`,
and a `SyntaxError` for `pl.parse` of invalid Python."""

import pytest

import plang as pl
from plang.ir.pass_manager import OptimizationStrategy, PassDumpLevel, PassManager, coerce_dump_level

FN = """
@pl.function
def f(x: pl.Tensor[[32], pl.FP32]) -> pl.Tensor[[32], pl.FP32]:
    y: pl.Tensor[[32], pl.FP32] = pl.add(x, 1.0)
    return y
"""


def test_enums_are_the_ones_on_plang_ir():
    assert pl.ir.OptimizationStrategy is OptimizationStrategy and pl.ir.PassDumpLevel is PassDumpLevel
    assert [coerce_dump_level(v) for v in (True, False, PassDumpLevel.EXPLICIT)] == \
        [PassDumpLevel.CONCISE, PassDumpLevel.NONE, PassDumpLevel.EXPLICIT]


def test_pass_manager_reference_surface(tmp_path):
    pm = PassManager.get_strategy(OptimizationStrategy.Default, analyze_auto_scopes_for_deps=True)
    assert pm.pass_names == pm.get_pass_names() == PassManager("Default").pass_names
    program = pl.ir.Program("p", [pl.parse(FN)])
    plain = pm.run_passes(program)
    dumped = pm.run_passes(program, dump_ir=True, output_dir=str(tmp_path))
    pl.ir.assert_structural_equal(plain, dumped)
    assert len(list(tmp_path.iterdir())) >= len(pm.pass_names)
    with pytest.raises(ValueError, match="output_dir"):
        pm.run_passes(program, dump_ir=PassDumpLevel.CONCISE)


def test_invalid_python_is_a_syntax_error_too():
    with pytest.raises(SyntaxError) as info:
        pl.parse(FN.replace("pl.add(x, 1.0)", "pl.add(x, 1.0"))
    err = info.value
    assert isinstance(err, pl.ParserSyntaxError)
    assert err.filename == "<string>" and err.lineno == 4 and "pl.add" in err.text
    assert "ParserSyntaxError [PL100]: invalid Python syntax" in str(err)
