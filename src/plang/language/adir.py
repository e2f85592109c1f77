"""`pl.adir`: how a call site passes each argument, written in a kernel call's
`attrs={"arg_directions": [pl.adir.input, pl.adir.inout, ...]}` (call metadata the printer keeps;
the callee's `pl.Out` / `pl.InOut` parameters remain its contract)."""

# ruff: noqa: A001  (`input` is the reference's marker name)

from ..ir.enums import ArgDirection

input = ArgDirection.Input
output = ArgDirection.Output
output_existing = ArgDirection.OutputExisting
inout = ArgDirection.InOut
no_dep = ArgDirection.NoDep
scalar = ArgDirection.Scalar

__all__ = ["ArgDirection", "inout", "input", "no_dep", "output", "output_existing", "scalar"]
