"""Specialization: a `@pl.jit` entry and its `@pl.jit.*` dependencies → one `@pl.program` source.

Bodies are copied line for line (so every line maps back to the user's file through the
returned source map); signatures are rewritten with concrete annotations from the call;
calls to dependencies become `self.dep(...)`; closure/global constants the bodies read are
emitted as module-level assignments (and reported, so they take part in the cache key).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .. import pyast
from ..distributed import MODULE_NAMES
from ..errors import JitSignatureError
from ..ir.enums import ParamDirection
from ..ir.span import Span
from .binding import Binding, TensorShape
from .output_rebinding import check_output_rebinding
from .signature import RUNTIME, ParamSpec
from .source import FunctionSource, python_literal

if TYPE_CHECKING:
    from .function import JITFunction

SourceMap = dict[int, tuple[str, int, int]]  # generated line -> (file, line, column shift)

_KIND_TYPE = {"orchestration": "Orchestration", "incore": "InCore", "inline": "Inline"}


@dataclass(frozen=True)
class ReturnPlan:
    """How the entry's program result maps back to the user: the first `arity` values are what
    the user's `return` gives (-1: pass the result through unchanged), and each
    (position, parameter) in `writebacks` is an Out / InOut tensor's final value."""

    arity: int
    writebacks: tuple[tuple[int, str], ...]


@dataclass
class Specialized:
    source: str
    source_map: SourceMap
    constants: tuple[tuple[str, str], ...]  # (name, literal) of closure/global values read
    returns: ReturnPlan


def collect_functions(entry: JITFunction) -> list[JITFunction]:
    """Entry first, then every transitive `@pl.jit.*` dependency in discovery order."""
    order: list[JITFunction] = [entry]
    i = 0
    while i < len(order):
        for dep in order[i].dependencies():
            if dep not in order:
                order.append(dep)
        i += 1
    return order


def specialize_source(entry: JITFunction, binding: Binding) -> Specialized:
    check_output_rebinding(entry.source)
    functions = collect_functions(entry)
    annotations: dict[str, dict[str, str]] = {entry.name: _entry_annotations(entry.source, binding)}
    for fn in functions[1:]:
        annotations[fn.name] = _dep_annotations(fn, functions, annotations)
    dynvars: set[str] = {d for t in binding.tensors.values() for d in t.dims if isinstance(d, str)}
    constants: dict[str, str] = {}
    for name, value in binding.scalars.items():
        if value is not RUNTIME:
            constants[name] = repr(value)
    out = ["import plang as pl", *_distributed_imports(functions, annotations), ""]
    for fn in functions:
        for name, lit in _free_constants(fn, {d.name for d in functions}).items():
            if constants.setdefault(name, lit) != lit:
                raise TypeError(f"@pl.jit: name {name!r} means different values in {fn.name} and "
                                f"another function of this kernel; rename one")
    for fn in functions:
        for local, dyn in fn.source.body_dynvars.items():
            dynvars.add(dyn)
    dyn_lines = [f"{d} = pl.dynamic({d!r})" for d in sorted(dynvars)]
    const_lines = [f"{n} = {lit}" for n, lit in sorted(constants.items()) if n not in dynvars]
    out += dyn_lines + const_lines + ["", "", "@pl.program", f"class {entry.name}:"]
    source_map: SourceMap = {}
    returns = ReturnPlan(-1, ())
    for fn in reversed(functions):  # callees before callers
        plan = _emit_function(fn, annotations[fn.name], {d.name for d in functions}, out, source_map)
        if fn is entry:
            returns = plan
    return Specialized("\n".join(out) + "\n", source_map, tuple(sorted(constants.items())), returns)


def _distributed_imports(functions: list[JITFunction], annotations: dict[str, dict[str, str]]) -> list[str]:
    """`import plang.distributed as <alias>` for each alias the functions' modules bind (the
    bodies are copied verbatim), `pld` when only annotations need it."""
    aliases = {name for fn in functions for name, value in fn.source.namespace.items()
               if getattr(value, "__name__", None) in MODULE_NAMES}
    if any(text.startswith(("pld.", "pl.Out[pld.", "pl.InOut[pld."))
           for ann in annotations.values() for text in ann.values()):
        aliases.add("pld")
    return [f"import plang.distributed as {a}" for a in sorted(aliases)]


def _annotation(spec: ParamSpec, shape: TensorShape | None, scalar_dtype) -> str:
    if spec.kind == "scalar":
        return f"pl.Scalar[{scalar_dtype}]"
    dims = ", ".join(str(d) for d in shape.dims)
    layout = "" if spec.layout.name == "ND" else f", pl.{spec.layout.name}"
    kind = "pld.DistributedTensor" if spec.distributed else "pl.Tensor"
    text = f"{kind}[[{dims}], {shape.dtype}{layout}]"
    if spec.direction is ParamDirection.Out:
        return f"pl.Out[{text}]"
    if spec.direction is ParamDirection.InOut:
        return f"pl.InOut[{text}]"
    return text


def _entry_annotations(src: FunctionSource, binding: Binding) -> dict[str, str]:
    ann: dict[str, str] = {}
    for spec in src.params:
        if spec.kind == "scalar":
            if binding.scalars.get(spec.name) is RUNTIME:
                dtype = spec.dtype or "pl.INT64"
                ann[spec.name] = f"pl.Scalar[{dtype}]"
        else:
            ann[spec.name] = _annotation(spec, binding.tensors[spec.name], None)
    return ann


def _dep_annotations(fn: JITFunction, functions: list[JITFunction],
                     known: dict[str, dict[str, str]]) -> dict[str, str]:
    """A dependency's annotations: its own when complete, else taken from a call site."""
    src = fn.source
    ann: dict[str, str] = {}
    for i, spec in enumerate(src.params):
        if spec.kind == "tile":
            ann[spec.name] = spec.text
        elif spec.kind == "scalar":
            ann[spec.name] = f"pl.Scalar[{spec.dtype or 'pl.INT64'}]"
        elif spec.fully_annotated:
            dims = tuple(d.name if hasattr(d, "name") else int(d) for d in spec.dims)
            ann[spec.name] = _annotation(spec, TensorShape(dims, spec.dtype), None)
        else:
            text = _from_call_site(fn, i, spec, functions, known)
            if text is None:
                kind = "pld.DistributedTensor" if spec.distributed else "pl.Tensor"
                raise JitSignatureError(f"cannot infer the shape of parameter "
                                        f"{spec.name!r} of {fn.name}: pass a parameter of the caller "
                                        f"directly or annotate it fully as {kind}[[dims], dtype]",
                                        Span(src.filename, spec.lineno))
            ann[spec.name] = text
    return ann


def _from_call_site(fn: JITFunction, index: int, spec: ParamSpec, functions: list[JITFunction],
                    known: dict[str, dict[str, str]]) -> str | None:
    for caller in functions:
        caller_ann = known.get(caller.name)
        if caller_ann is None:
            continue
        for node in ast.walk(caller.source.fdef):
            if not isinstance(node, ast.Call):
                continue
            args = _call_args_for(node, fn.name)
            if args is None:
                continue
            arg = args[index] if index < len(args) else next(
                (k.value for k in node.keywords if k.arg == spec.name), None)
            if isinstance(arg, ast.Call) and _dotted(arg.func) in ("pl.no_dep",) and arg.args:
                arg = arg.args[0]
            if not isinstance(arg, ast.Name):
                continue
            inner = _strip_direction(caller_ann[arg.id]) if arg.id in caller_ann else \
                _created_tensor(caller, arg.id, caller_ann) or _sliced_view(caller, arg.id, caller_ann)
            if inner is not None:
                if spec.distributed:  # the callee's kind, the caller's shape
                    inner = "pld.DistributedTensor[" + inner.split("[", 1)[1]
                if spec.direction is ParamDirection.Out:
                    return f"pl.Out[{inner}]"
                if spec.direction is ParamDirection.InOut:
                    return f"pl.InOut[{inner}]"
                return inner
    return None


def _created_tensor(fn: JITFunction, name: str, ann: dict[str, str]) -> str | None:
    """The annotation of a local made by `name = pl.create_tensor([dims], dtype=...)` or
    `name = pld.window(buf, [dims], dtype=...)`; a dim may be `param.shape[i]` of a parameter
    whose annotation is static."""
    from .signature import _eval

    for node in ast.walk(fn.source.fdef):
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Name) and node.targets[0].id == name
                and isinstance(node.value, ast.Call)):
            continue
        call = node.value
        made = _maker(call, fn)
        if made is None:
            continue
        kind, at = made
        args = {k.arg: k.value for k in call.keywords}
        shape = call.args[at] if len(call.args) > at else args.get("shape")
        dtype = call.args[at + 1] if len(call.args) > at + 1 else args.get("dtype")
        try:
            dt = _eval(dtype, fn.source.namespace)
            dims = [_dim(d, fn, ann) for d in shape.elts] if isinstance(shape, (ast.List, ast.Tuple)) \
                else _eval(shape, fn.source.namespace)
        except Exception:
            return None
        if isinstance(dims, (list, tuple)) and all(isinstance(d, int) for d in dims):
            return f"{kind}[[{', '.join(map(str, dims))}], {dt}]"
    return None


def _maker(call: ast.Call, fn: JITFunction) -> tuple[str, int] | None:
    """(annotation head, index of the shape argument) of a call that makes a tensor."""
    dotted = _dotted(call.func)
    if dotted in ("pl.create_tensor", "pl.tensor.create"):
        return "pl.Tensor", 0
    root, _, rest = dotted.partition(".")
    if rest in ("window", "tensor.window") and \
            getattr(fn.source.namespace.get(root), "__name__", None) in MODULE_NAMES:
        return "pld.DistributedTensor", 1
    return None


def _dim(node: ast.expr, fn: JITFunction, ann: dict[str, str]) -> int | None:
    """A dim of a created tensor: `param.shape[i]` read from the parameter's static
    annotation, anything else evaluated in the function's namespace."""
    from .signature import _eval

    if (isinstance(node, ast.Subscript) and isinstance(node.value, ast.Attribute)
            and node.value.attr == "shape" and isinstance(node.value.value, ast.Name)
            and node.value.value.id in ann):
        base = _static_annotation(ann[node.value.value.id])
        return None if base is None else base[0][_eval(node.slice, fn.source.namespace)]
    return _eval(node, fn.source.namespace)


def _static_annotation(text: str) -> tuple[list, list[ast.expr]] | None:
    """(dims, the other subscript parts) of a `pl.Tensor[[dims], ...]` annotation (a dim not
    a literal is None), or None for another form."""
    base = ast.parse(_strip_direction(text), mode="eval").body
    if not (isinstance(base, ast.Subscript) and isinstance(base.slice, ast.Tuple)
            and isinstance(base.slice.elts[0], ast.List)):
        return None
    dims = [d.value if isinstance(d, ast.Constant) else None for d in base.slice.elts[0].elts]
    return dims, base.slice.elts[1:]


def _sliced_view(fn: JITFunction, name: str, ann: dict[str, str]) -> str | None:
    """The annotation of a local made by subscript sugar `name = param[a:b, ...]` over a
    parameter whose annotation is static (each slice `a:b` keeps `b - a` rows, an index 1)."""
    from .signature import _eval

    for node in ast.walk(fn.source.fdef):
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Name) and node.targets[0].id == name
                and isinstance(node.value, ast.Subscript) and isinstance(node.value.value, ast.Name)
                and node.value.value.id in ann):
            continue
        static = _static_annotation(ann[node.value.value.id])
        if static is None:
            return None
        dims, others = static
        index = node.value.slice
        parts = index.elts if isinstance(index, ast.Tuple) else [index]
        if None in dims or len(parts) > len(dims):
            return None
        try:
            for axis, part in enumerate(parts):
                if isinstance(part, ast.Slice):
                    if part.step is not None:
                        return None
                    lo = _eval(part.lower, fn.source.namespace) if part.lower else 0
                    hi = _eval(part.upper, fn.source.namespace) if part.upper else dims[axis]
                    dims[axis] = min(hi, dims[axis]) - lo
                else:
                    _eval(part, fn.source.namespace)
                    dims[axis] = 1
        except Exception:
            return None
        rest = ", ".join(ast.unparse(e) for e in others)
        return f"pl.Tensor[[{', '.join(map(str, dims))}], {rest}]"
    return None


def _call_args_for(node: ast.Call, name: str) -> list[ast.expr] | None:
    """Positional args passed to function `name` by this call (direct or via pl.submit)."""
    if isinstance(node.func, ast.Name) and node.func.id == name:
        return node.args
    if _dotted(node.func) in ("pl.submit", "pl.spmd_submit") and node.args:
        target = node.args[0]
        if isinstance(target, ast.Name) and target.id == name:
            skip = 2 if _dotted(node.func) == "pl.spmd_submit" else 1
            return node.args[skip:]
    return None


def _strip_direction(text: str) -> str:
    for head in ("pl.Out[", "pl.InOut["):
        if text.startswith(head):
            return text[len(head):-1]
    return text


def _dotted(node: ast.expr) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{_dotted(node.value)}.{node.attr}"
    return ""


def _free_constants(fn: JITFunction, dep_names: set[str]) -> dict[str, str]:
    """Closure/global Python constants the body reads, as source literals (current values)."""
    consts: dict[str, str] = {}
    namespace = fn.source.namespace
    for name in fn.source.free_names:
        if name in dep_names or name not in namespace:
            continue
        lit = python_literal(namespace[name])
        if lit is not None:
            consts[name] = lit
    return consts


def _emit_function(fn: JITFunction, ann: dict[str, str], dep_names: set[str], out: list[str],
                   source_map: SourceMap) -> ReturnPlan | None:
    src = fn.source
    fdef = src.fdef
    keywords = [f"type=pl.FunctionType.{_KIND_TYPE[fn.kind]}"]
    if fn.single_core:
        from ..passes.expand_mixed_kernel import SINGLE_CORE  # the passes load only to compile

        keywords.append(f"attrs={{{SINGLE_CORE!r}: True}}")
    if not fn.auto_scope:
        keywords.append("auto_scope=False")
    out.append("")
    out.append(f"    @pl.function({', '.join(keywords)})")
    params = ", ".join(["self"] + [f"{name}: {text}" for name, text in ann.items()])
    out.append(f"    def {fdef.name}({params}):")
    source_map[len(out)] = (src.filename, src.orig_line(fdef.lineno), 0)
    body = fdef.body
    if body and isinstance(body[0], ast.Expr) and isinstance(getattr(body[0], "value", None), ast.Constant) \
            and isinstance(body[0].value.value, str):
        body = body[1:]
    if not body:
        out.append("        pass")
        return ReturnPlan(0, ()) if fn.kind == "orchestration" else None
    first, last = body[0].lineno, fdef.end_lineno
    lines = list(src.lines[first - 1:last])
    col = body[0].col_offset  # (a UTF-8 byte offset, as every column used below)
    head = lines[0].encode()[:col].decode()
    if head.strip():  # a body on the `def` / `):` line: blank what precedes it, keeping columns
        lines[0] = " " * col + lines[0][len(head):]
    _rewrite(src, dep_names, lines, first)
    plan = _return_outputs(src, body, lines, first) if fn.kind == "orchestration" else None
    for offset, line in enumerate(lines):
        out.append("    " + line if line.strip() else "")
        source_map[len(out)] = (src.filename, src.orig_line(min(first + offset, last)), 4)
    return plan


def _return_outputs(src: FunctionSource, body: list[ast.stmt], lines: list[str], first: int) -> ReturnPlan:
    """Make the entry also return every Out / InOut tensor it rebinds but does not return, so
    a result rebound to a new buffer (`y = pl.add(x, x)` in a scope) can be written back into
    the caller's tensor. Edits `lines`; returns where each output sits in the program's result."""
    outs = [p.name for p in src.params if p.kind == "tensor" and p.direction is not ParamDirection.In]
    returns = [n for n in ast.walk(src.fdef) if isinstance(n, ast.Return)]
    final = body[-1]
    if returns and not (len(returns) == 1 and returns[0] is final):
        return ReturnPlan(-1, ())  # several or early returns: results are passed through as they are
    values = [] if not returns or final.value is None else (
        final.value.elts if isinstance(final.value, ast.Tuple) else [final.value])
    names = [v.id if isinstance(v, ast.Name) else None for v in values]
    rebound = {n.id for n in ast.walk(src.fdef) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    extra = [o for o in outs if o not in names and o in rebound]  # others are only written in place
    writebacks = [(i, n) for i, n in enumerate(names) if n in outs]
    writebacks += [(len(values) + k, o) for k, o in enumerate(extra)]
    if extra:
        if returns:
            lo, hi = final.lineno - first, final.end_lineno - first
            text = "if 1:\n" + "\n".join(lines[lo:hi + 1])  # the return as rewritten (self.dep)
            ret = pyast.parse(text).body[0].body[-1]  # (after any `a = ...;` sharing its line)
            value = ret.value
            elts = [] if value is None else value.elts if isinstance(value, ast.Tuple) else [value]
            parts = [ast.get_source_segment(text, v) for v in elts] + extra
            lines[lo] = lines[lo].encode()[:ret.col_offset].decode() + f"return {', '.join(parts)}"
            for k in range(lo + 1, hi + 1):
                lines[k] = ""
        else:
            line = lines[final.lineno - first]
            lines.append(f"{line[: len(line) - len(line.lstrip())]}return {', '.join(extra)}")
    return ReturnPlan(len(values), tuple(writebacks))


def _rewrite(src: FunctionSource, dep_names: set[str], lines: list[str], first: int) -> None:
    """In place: `dep(` → `self.dep(`; drop `pl.dynamic` / `bind_dynamic` statements."""
    inserts: dict[int, list[int]] = {}
    for node in ast.walk(src.fdef):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id in dep_names:
            inserts.setdefault(node.lineno, []).append(node.col_offset)
    for stmt in ast.walk(src.fdef):
        if _is_dynamic_decl(stmt, src):
            lo, hi = stmt.lineno - first, stmt.end_lineno - first
            indent = lines[lo][: len(lines[lo]) - len(lines[lo].lstrip())]
            lines[lo] = indent + "pass"
            for k in range(lo + 1, hi + 1):
                lines[k] = ""
    for lineno, cols in inserts.items():
        k = lineno - first
        if 0 <= k < len(lines):
            line = lines[k]
            for col in sorted(cols, reverse=True):
                line = line[:col] + "self." + line[col:]
            lines[k] = line


def _is_dynamic_decl(stmt: ast.AST, src: FunctionSource) -> bool:
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
        return stmt.targets[0].id in src.body_dynvars and isinstance(stmt.value, ast.Call)
    return (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call)
            and isinstance(stmt.value.func, ast.Attribute) and stmt.value.func.attr == "bind_dynamic")


