"""Op name -> torch emitter for the reference codegen.

Each emitter receives an `OpArgs` (the call's bound arguments rendered as Python source)
and returns one Python expression. The tensor and tile families share emitters: a tile is
a torch tensor of its full shape.
"""

from __future__ import annotations

from typing import Any, Callable

from ..ir.enums import AtomicType, PadValue
from ..ir.expr import Call
from ..ir.ops import get_op, ops_where
from ..ir.ops.system_ops import ORDERING_ONLY
from ..ir.types import TileType
from . import torch_ref_indexing, torch_ref_pld, torch_ref_predicate, torch_ref_rng, torch_ref_sort


class OpArgs:
    """The arguments of one op call, bound to parameter names and rendered as source."""

    def __init__(self, call: Call, render: Callable[[Any], str], site: str) -> None:
        self.call, self.render, self.site = call, render, site
        self.values: dict[str, Any] = {}
        args = iter(call.args)
        for p in call.op.params:
            if p.is_expr and p.required:
                self.values[p.name] = next(args)
            else:
                self.values[p.name] = call.kwargs.get(p.name, None if p.required else p.default)

    def __getitem__(self, name: str) -> str:
        """The argument as Python source."""
        return self.render(self.values[name])

    def raw(self, name: str) -> Any:
        return self.values[name]

    def valid(self, name: str) -> str:
        """The valid extent of a tile operand (its shape for tensors) as a tuple source."""
        t = self.values[name].type
        dims = t.effective_valid_shape if isinstance(t, TileType) else t.shape
        return self.render_dims(dims)

    def render_dims(self, dims) -> str:
        items = [self.render(d) for d in dims]
        return f"({items[0]},)" if len(items) == 1 else "(" + ", ".join(items) + ")"

    @property
    def dtype(self) -> str:
        return torch_dtype(self.call.type.dtype)


def torch_dtype(d) -> str:
    return "torch." + str(d.to_torch()).split(".")[-1]


Emitter = Callable[[OpArgs], str]
TABLE: dict[str, Emitter] = {}


def both(short: str, fn: Emitter) -> None:
    for ns in ("tensor", "tile"):
        TABLE[f"{ns}.{short}"] = fn


def _binary(name: str) -> Emitter:
    return lambda a: f"rt.binary({name!r}, {a['lhs']}, {a['rhs']})"


def _torch_fn(fn: str, operand: str = "input") -> Emitter:
    return lambda a: f"{fn}({a[operand]})"


def _reduce(op: str, dim: int) -> Emitter:
    def emit(a: OpArgs) -> str:
        valid = a.valid("input") if isinstance(a.raw("input").type, TileType) else "None"
        return f"rt.reduce({a['input']}, {op!r}, {dim}, {valid})"

    return emit


def _pad(v: Any) -> str:
    sugar = {0: "zero", float("inf"): "max", float("-inf"): "min"}
    return repr(v.value if isinstance(v, PadValue) else sugar[v]) if v is not None else "None"


class _TorchMath:
    """`OpFacts.semantics` evaluated as torch source on FP32 tensors."""

    _TORCH = {"recip": "reciprocal", "maximum": "maximum", "minimum": "minimum"}

    def const(self, v: float) -> str:
        return f"torch.tensor({float(v)!r})"

    def __getattr__(self, name: str) -> Callable[..., str]:
        fn = self._TORCH.get(name, name)
        return lambda *xs: f"torch.{fn}({', '.join(xs)})"


def _composite(semantics: Callable[..., Any]) -> Emitter:
    """Compute in FP32 (as the kernels do), round to the result dtype once."""
    return lambda a: f"(lambda x: {semantics(_TorchMath(), 'x')})({a['input']}.float()).to({a.dtype})"


def _register() -> None:
    for op in ("add", "sub", "mul", "div", "maximum", "minimum", "fmod"):
        both(op, _binary(op))
    for op, base in (("adds", "add"), ("subs", "sub"), ("muls", "mul"), ("divs", "div"),
                     ("maximums", "maximum"), ("minimums", "minimum"), ("fmods", "fmod")):
        both(op, _binary(base))
    for op, fn in (("and_", "bitwise_and"), ("or_", "bitwise_or"), ("xor", "bitwise_xor"),
                   ("shl", "bitwise_left_shift"), ("shr", "bitwise_right_shift")):
        both(op, lambda a, fn=fn: f"torch.{fn}({a['lhs']}, {a['rhs']})")
        both(op.rstrip("_") + "s", lambda a, fn=fn: f"torch.{fn}({a['lhs']}, {a['rhs']})")
    for op, fn in (("exp", "torch.exp"), ("log", "torch.log"), ("sqrt", "torch.sqrt"),
                   ("rsqrt", "torch.rsqrt"), ("recip", "rt.recip"), ("sin", "torch.sin"),
                   ("cos", "torch.cos"), ("tanh", "torch.tanh"), ("sigmoid", "torch.sigmoid"),
                   ("neg", "torch.neg"), ("abs", "torch.abs"),
                   ("not_", "torch.bitwise_not")):
        both(op, _torch_fn(fn))
    TABLE["tile.rem"] = TABLE["tile.rems"] = lambda a: f"torch.remainder({a['lhs']}, {a['rhs']})"
    for op, first in (("addc", "add"), ("subc", "sub"), ("addsc", "add"), ("subsc", "sub")):
        TABLE[f"tile.{op}"] = lambda a, first=first: (f"rt.binary('add', rt.binary({first!r}, {a['lhs']}, "
                                                      f"{a['rhs']}), {a['rhs2']})")
    for name in ops_where(lambda op: op.facts.semantics is not None):
        TABLE[name] = _composite(get_op(name).facts.semantics)
    TABLE["tile.prelu"] = lambda a: f"rt.prelu({a['tile']}, {a['slope']})"
    TABLE["tensor.relu"] = _torch_fn("torch.relu")
    TABLE["tile.relu"] = _torch_fn("torch.relu", "tile")
    TABLE["tile.lrelu"] = lambda a: f"rt.lrelu({a['tile']}, {a['slope']})"
    TABLE["tensor.cmp"] = TABLE["tensor.cmps"] = lambda a: (f"rt.cmp({a['lhs']}, {a['rhs']}, "
                                                           f"{a.raw('cmp_type')!r})")
    torch_ref_predicate.register(TABLE)  # tile.cmp / cmps / sel / sels: packed masks
    both("cast", lambda a: f"rt.cast({a['input']}, {a.dtype}, {a.raw('mode')!r}, "
                           f"{a.raw('saturation_mode')!r})")
    both("expands", lambda a: f"torch.full_like({a['target']}, {a['scalar']})")

    for op in ("sum", "max", "min", "prod"):
        both(f"row_{op}", _reduce(op, -1))
        both(f"col_{op}", _reduce(op, -2))
    for op in ("argmax", "argmin"):
        both(f"row_{op}", _reduce(op, -1))
        both(f"col_{op}", _reduce(op, -2))
    for direction in ("row", "col"):
        for op in ("add", "sub", "mul", "div", "max", "min", "expdif"):
            both(f"{direction}_expand_{op}", lambda a, op=op: f"rt.expand({op!r}, {a['lhs']}, {a['rhs']})")
        both(f"{direction}_expand", lambda a: f"rt.expand('expand', {a['lhs']}, {a['rhs']})")

    def mm(a: OpArgs) -> str:
        out = a.dtype if a.raw("out_dtype") is not None else "None"
        return (f"rt.matmul({a['lhs']}, {a['rhs']}, {out}, {bool(a.raw('a_trans'))}, "
                f"{bool(a.raw('b_trans'))})")

    def mm_acc(a: OpArgs) -> str:
        flags = f"{bool(a.values.get('a_trans'))}, {bool(a.values.get('b_trans'))}"
        cond = a["init_cond"] if a.raw("init_cond") is not None else "None"
        return f"rt.matmul_acc({a['acc']}, {a['lhs']}, {a['rhs']}, {flags}, {cond})"

    TABLE["tile.batch_matmul"] = lambda a: f"rt.matmul({a['lhs']}, {a['rhs']})"
    TABLE["tile.batch_matmul_acc"] = lambda a: f"({a['acc']} + rt.matmul({a['lhs']}, {a['rhs']}))"
    both("matmul", mm)
    both("matmul_acc", mm_acc)
    TABLE["tile.gemv"] = lambda a: f"rt.matmul({a['lhs']}, {a['rhs']})"
    TABLE["tile.gemv_acc"] = mm_acc
    TABLE["tile.matmul_bias"] = lambda a: f"rt.matmul_bias({a['lhs']}, {a['rhs']}, {a['bias']})"
    TABLE["tile.gemv_bias"] = TABLE["tile.matmul_bias"]

    both("reshape", lambda a: f"{a['input']}.reshape({a['shape']})")

    def view(a: OpArgs) -> str:  # a layout flip reads the trailing pair transposed
        x = a["tensor"]
        if a.call.type.layout is not a.call.args[0].type.layout:
            x = f"{x}.transpose(-2, -1)"
        return f"{x}.reshape({a.render_dims(a.call.type.shape)})"

    TABLE["tensor.view"] = view
    TABLE["tensor.set_validshape"] = lambda a: a["tensor"]
    both("transpose", lambda a: f"{a['input']}.transpose({a.raw('axis1')}, {a.raw('axis2')})")

    def slice_(a: OpArgs) -> str:
        valid = a["valid_shape"] if a.raw("valid_shape") is not None else "None"
        return (f"rt.slice_({a['input']}, {a['shape']}, {a['offset']}, {valid}, "
                f"{tuple(a.raw('drop_dims') or ())!r}, {_pad(a.raw('pad_value'))}, {bool(a.raw('clamp'))})")

    both("slice", slice_)
    TABLE["tensor.expand_clone"] = lambda a: f"rt.expand_clone({a['input']}, {a['target']})"
    def assemble(a: OpArgs) -> str:  # only the source's valid region is written, as on the chip
        valid = a.valid("source") if isinstance(a.values["source"].type, TileType) else "None"
        return (f"rt.assemble({a['target']}, {a['source']}, {a['offset']}, "
                f"{a.raw('atomic') is AtomicType.Add}, {valid})")

    both("assemble", assemble)
    both("concat", lambda a: f"torch.cat([{a['src0']}, {a['src1']}], dim=-1)")
    TABLE["tile.fillpad"] = lambda a: (f"rt.fillpad({a['value']}, {a.valid('value')}, "
                                       f"{_pad(a.raw('pad_value'))})")

    def tensor_valid(a: OpArgs) -> str:  # a tensor's valid region is its view's
        t = a.values["value"].type
        if isinstance(t, TileType) or t.view is None or t.view.valid_shape is None:
            return a.valid("value")
        return a.render_dims(t.view.valid_shape)

    TABLE["tensor.fillpad"] = lambda a: (f"rt.fillpad({a['value']}, {tensor_valid(a)}, "
                                         f"{_pad(a.raw('pad_value'))})")
    both("fillpad_expand", lambda a: (f"rt.fillpad_expand({a['value']}, {tensor_valid(a)}, {a['shape']}, "
                                      f"{_pad(a.raw('pad_value'))})"))

    def create(a: OpArgs) -> str:
        return f"torch.zeros({a['shape']}, dtype={a.dtype})"

    def full(a: OpArgs) -> str:
        return f"torch.full({a['shape']}, {a['value']}, dtype={a.dtype})"

    TABLE["tensor.create"] = TABLE["tile.create"] = create
    TABLE["tensor.full"] = TABLE["tile.full"] = full
    TABLE["tile.load"] = lambda a: (f"rt.load({a['tensor']}, {a['offsets']}, {a['shapes']}, "
                                    f"{a['valid_shape'] if a.raw('valid_shape') is not None else 'None'}, "
                                    f"{bool(a.raw('clamp'))})")

    def store(a: OpArgs) -> str:
        extent = a["shapes"] if a.raw("shapes") is not None else a.valid("tile")
        return (f"rt.store({a['tile']}, {a['offsets']}, {a['output_tensor']}, {extent}, "
                f"{a.raw('atomic') is AtomicType.Add})")

    TABLE["tile.store"] = store
    both("arange", lambda a: f"rt.arange({a['start']}, {a['shape']}, {a.dtype}, {bool(a.raw('descending'))})")
    TABLE["tile.tri"] = lambda a: (f"rt.tri({a['diagonal']}, {a['shape']}, "
                                   f"{a['valid_shape'] if a.raw('valid_shape') is not None else 'None'}, "
                                   f"{a.dtype}, {bool(a.raw('upper'))})")

    def gather(a: OpArgs) -> str:
        if a.raw("dim") is None:
            return f"{a['input']}.reshape(-1)[{a['index']}.long()]"
        return f"torch.gather({a['input']}, {a.raw('dim')}, {a['index']}.long())"

    both("gather", gather)
    both("scatter", lambda a: (f"{a['input']}.clone().scatter_({a.raw('dim')}, {a['index']}.long(), "
                               f"{a['src']})"))
    TABLE["tile.move"] = lambda a: f"{a['tile']}.clone()"
    both("read", lambda a: f"rt.read({a['src']}, {a['offset']})")
    both("write", lambda a: f"rt.write({a['dst']}, {a['offset']}, {a['value']})")
    TABLE["tensor.dim"] = lambda a: f"{a['tensor']}.shape[{a.raw('axis')}]"
    for q, attr in (("get_block_idx", "block_idx"), ("get_block_num", "block_num"),
                    ("get_subblock_idx", "subblock_idx")):
        both(q, lambda a, attr=attr: f"_ctx.{attr}")

    for side in ("aiv", "aic"):
        TABLE[f"tile.tpush_to_{side}"] = lambda a, side=side: (
            f"_cross_core_rt.push_to_{side}({a['tile']}, {a.raw('split')}, {a.raw('id')})")
    TABLE["tile.tpop_from_aic"] = lambda a: f"_cross_core_rt.pop_from_aic({a.raw('id')})"
    TABLE["tile.tpop_from_aiv"] = lambda a: f"_cross_core_rt.pop_from_aiv({a.raw('id')})"
    TABLE["tile.tfree_to_aic"] = TABLE["tile.tfree_to_aiv"] = lambda a: "None"
    both("aiv_shard", lambda a: f"rt.halve({a['x']}, {a.raw('mode').name!r}, _ctx.subblock_idx)")
    both("aic_gather", lambda a: f"_cross_core_rt.gather({a.site!r}, {a['x']})")
    for sync in ("sync_set", "sync_wait", "syncall", *ORDERING_ONLY):  # blocks run one after another
        TABLE[f"system.{sync}"] = lambda a: "None"
    TABLE["system.task_invalid"] = TABLE["system.task_dummy"] = lambda a: "None"  # tasks run in order
    for name in ("make_context", "async_prefetch", "session"):  # a prefetch changes no value
        TABLE[f"prefetch.{name}"] = lambda a: "0"
    TABLE["prefetch.wait"] = lambda a: "True"
    TABLE["system.available_cluster_count"] = lambda a: "rt.DEVICE.clusters"
    TABLE["system.available_aiv_count"] = lambda a: "rt.DEVICE.clusters * rt.DEVICE.aiv_per_cluster"
    # on-core arrays are tuples; an element write builds the new tuple
    TABLE["array.create"] = lambda a: f"(0,) * {a.raw('extent')}"
    TABLE["array.get_element"] = lambda a: f"{a['array']}[int({a['index']})]"
    TABLE["array.update_element"] = lambda a: f"rt.array_update({a['array']}, {a['index']}, {a['value']})"
    TABLE["tile.alloc"] = lambda a: "None"  # placement: a kernel's buffers are its own here
    TABLE["system.reserve_buffer"] = lambda a: f"{max(a.raw('base'), 0)}"
    TABLE["system.import_peer_buffer"] = lambda a: "0"
    TABLE["system.aic_initialize_pipe"] = TABLE["system.aiv_initialize_pipe"] = lambda a: "None"
    TABLE["tile.extract"] = lambda a: (f"rt.slice_({a['src']}, {a['shape']}, "
                                       f"({a['index_row']}, {a['index_col']})).clone()")
    TABLE["tile.transpose_view"] = lambda a: f"{a['tile']}.transpose(-2, -1).contiguous()"
    TABLE["tile.reinterpret_view"] = lambda a: (f"{a['data']}.contiguous().view({a.dtype})"
                                                f".reshape({a.render_dims(a.call.type.shape)})")
    TABLE["tile.set_validshape"] = lambda a: f"{a['tile']}.clone()"
    torch_ref_pld.register(TABLE)
    torch_ref_indexing.register(TABLE)
    torch_ref_sort.register(TABLE)
    torch_ref_rng.register(TABLE)


_register()
