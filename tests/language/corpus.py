# ruff: noqa: E501  (DSL source text)
"""Round-trip corpus: DSL programs covering every construct and op family.

Each entry is (name, source). Kernel bodies go into an InCore function
`k(a, b, out)` over 64x64 FP32 tensors; orchestration bodies into `main` next to it.
"""

from __future__ import annotations

import textwrap

_T = "pl.Tensor[[64, 64], pl.FP32]"
_SIG = f"self, a: {_T}, b: {_T}, out: pl.Out[{_T}]"


def kernel(body: str, decorator: str = "type=pl.FunctionType.InCore", header: str = "") -> str:
    return f"""
import plang as pl
{header}

@pl.program
class K:
    @pl.function({decorator})
    def k({_SIG}) -> {_T}:
{textwrap.indent(textwrap.dedent(body).strip(), " " * 8)}
        return out
"""


def orch(body: str, decorator: str = "type=pl.FunctionType.Orchestration", header: str = "") -> str:
    return f"""
import plang as pl
{header}

@pl.program
class O:
    @pl.function(type=pl.FunctionType.InCore)
    def k({_SIG}) -> {_T}:
        t = pl.load(a, [0, 0], [64, 64])
        out = pl.store(t, [0, 0], out)
        return out

    @pl.function({decorator})
    def main({_SIG}) -> {_T}:
{textwrap.indent(textwrap.dedent(body).strip(), " " * 8)}
        return out
"""


LOAD = "x = pl.load(a, [0, 0], [64, 64])\ny = pl.load(b, [0, 0], [64, 64])\n"

CORPUS: list[tuple[str, str]] = [
    ("elementwise_binary", kernel(LOAD + "z = pl.add(x, y)\nz = pl.sub(z, y)\nz = pl.mul(z, x)\nz = pl.div(z, y)\n"
                                  "out = pl.store(z, [0, 0], out)")),
    ("elementwise_operators", kernel(LOAD + "z = x + y\nz = z * y\nz = z - x\nz = z / y\nz = -z\n"
                                     "out = pl.store(z, [0, 0], out)")),
    ("elementwise_scalar_operands", kernel(LOAD + "z = pl.add(x, 1.0)\nz = pl.mul(z, 0.5)\nz = z + 2.0\n"
                                           "out = pl.store(z, [0, 0], out)")),
    ("elementwise_unary", kernel(LOAD + "z = pl.exp(x)\nz = pl.sqrt(z)\nz = pl.abs(z)\nz = pl.relu(z)\n"
                                 "z = pl.recip(z)\nz = pl.log(z)\nz = pl.neg(z)\nout = pl.store(z, [0, 0], out)")),
    ("elementwise_minmax", kernel(LOAD + "z = pl.maximum(x, y)\nz = pl.minimum(z, y)\nz = pl.maximums(z, 0.0)\n"
                                  "out = pl.store(z, [0, 0], out)")),
    ("explicit_tile_namespace", kernel("x = pl.tile.load(a, [0, 0], [64, 64])\nz = pl.tile.add(x, x)\n"
                                       "z = pl.tile.adds(z, 3.0)\nout = pl.tile.store(z, [0, 0], out)")),
    ("reductions", kernel(LOAD + "r = pl.row_sum(x, y)\nm = pl.row_max(x, y)\nc = pl.col_sum(x, y)")),
    ("reductions_without_tmp", kernel(LOAD + "r = pl.row_sum(x)\nm = pl.row_max(x)\nn = pl.row_min(x)\n"
                                      "c = pl.col_sum(x)\nd = pl.col_max(y)\ne = pl.tile.col_min(y)\n"
                                      "i = pl.row_argmax(x)\nj = pl.col_argmin(x)\nz = pl.row_expand_sub(x, m)\n"
                                      "out = pl.store(z, [0, 0], out)")),
    ("row_col_expand", kernel(LOAD + "r = pl.row_sum(x, y)\nz = pl.row_expand_mul(x, r)\n"
                              "z = pl.row_expand_sub(z, r)\nout = pl.store(z, [0, 0], out)")),
    ("matmul_family", kernel(LOAD + "m = pl.matmul(x, y)\nm = pl.matmul_acc(m, x, y)\n"
                             "out = pl.store(m, [0, 0], out)")),
    ("matmul_transposed", orch("m = pl.matmul(a, b, b_trans=True)\nn = pl.matmul(a, b, out_dtype=pl.BF16)")),
    ("load_store_move", kernel("x = pl.load(a, [0, 0], [64, 64], target_memory=pl.MemorySpace.Mat)\n"
                               "v = pl.move(x, target_memory=pl.MemorySpace.Vec)\nout = pl.store(v, [0, 0], out)")),
    ("load_valid_shape", kernel("x = pl.load(a, [0, 0], [64, 64], valid_shape=[32, 64])\n"
                                "out = pl.store(x, [0, 0], out)")),
    ("slice_assemble_reshape_transpose", kernel(
        LOAD + "s = pl.slice(x, [32, 64], [0, 0])\nx = pl.assemble(x, s, [32, 0])\n"
        "r = pl.reshape(x, [128, 32])\nt = pl.transpose(x, 0, 1)\nout = pl.store(x, [0, 0], out)")),
    ("casts", kernel(LOAD + "h = pl.cast(x, pl.BF16)\nf = pl.cast(h, pl.FP32)\nout = pl.store(f, [0, 0], out)")),
    ("scalar_arithmetic", kernel("n = pl.tile.get_block_idx()\nm = n * 64 + 1\nq = m // 2\nr = m % 3\n"
                                 "p = pl.min(q, r)\nw = pl.max(p, 4)\nc = pl.cast(w, pl.INT32)\n"
                                 "d = c + 1\nb2 = (m > 3) and (q < 10)\nnb = not b2")),
    ("scalar_consts", kernel("v = pl.const(3, pl.INT32)\nw = v * 2\nf = pl.const(1.5, pl.FP16)\ng = f + 0.5\n"
                             "idx = 7\nfl = 2.5\nflag = True")),
    ("subscript_slice_and_write", orch("s = a[0:32, :]\nout[0:32, 0:64] = s\nt = a[:, 0:32]")),
    ("subscript_tile_store", kernel("x = pl.load(a, [0, 0], [32, 64])\nout[32:64, :] = x")),
    ("shape_static_dim", kernel("n = a.shape[0]\nx = pl.load(a, [0, 0], [n, a.shape[1]])\n"
                                "out = pl.store(x, [0, 0], out)")),
    ("for_range_plain", kernel("for i in pl.range(4):\n    x = pl.load(a, [i * 16, 0], [16, 64])\n"
                               "    out = pl.store(x, [i * 16, 0], out)")),
    ("for_range_start_stop_step", kernel("for i in pl.range(0, 64, 16):\n    x = pl.load(a, [i, 0], [16, 64])\n"
                                         "    out = pl.store(x, [i, 0], out)")),
    ("for_range_carried", kernel("acc = pl.load(a, [0, 0], [16, 64])\n"
                                 "for i, (s,) in pl.range(1, 4, init_values=(acc,)):\n"
                                 "    x = pl.load(a, [i * 16, 0], [16, 64])\n    s2 = pl.add(s, x)\n"
                                 "    total = pl.yield_(s2)\nout = pl.store(total, [0, 0], out)")),
    ("for_range_two_carried", kernel("for i, (p, q) in pl.range(8, init_values=(0, 1)):\n"
                                     "    p2 = p + i\n    q2 = q * 2\n    pe, qe = pl.yield_(p2, q2)\nz = pe + qe")),
    ("for_parallel_carried", kernel("acc = pl.load(a, [0, 0], [16, 64])\n"
                                    "for i, (s,) in pl.parallel(4, init_values=(acc,)):\n"
                                    "    s2 = pl.mul(s, 2.0)\n    r = pl.yield_(s2)")),
    ("for_unroll", kernel("x = pl.load(a, [0, 0], [64, 64])\nfor i in pl.unroll(4):\n    x = pl.add(x, 1.0)\n"
                          "out = pl.store(x, [0, 0], out)")),
    ("for_pipeline", kernel("for i in pl.pipeline(8, stage=2):\n    x = pl.load(a, [i * 8, 0], [8, 64])\n"
                            "    out = pl.store(x, [i * 8, 0], out)")),
    ("for_pipeline_carried", kernel("for i, (c,) in pl.pipeline(0, 8, 1, stage=4, init_values=(0,)):\n"
                                    "    c2 = c + i\n    cnt = pl.yield_(c2)")),
    ("break_continue", kernel("for i in pl.range(10):\n    if i == 3:\n        continue\n    if i > 7:\n"
                              "        break\n    x = pl.load(a, [0, 0], [64, 64])")),
    ("while_loop", kernel("for (x, y) in pl.while_(init_values=(0, 1)):\n    pl.cond(x < 10)\n"
                          "    x2 = x + 1\n    y2 = y * 2\n    xo, yo = pl.yield_(x2, y2)")),
    ("while_single", kernel("for (n,) in pl.while_(init_values=(0,)):\n    pl.cond(n < 5)\n    n2 = n + 1\n"
                            "    nn = pl.yield_(n2)")),
    ("if_statement", kernel("i = pl.tile.get_block_idx()\nif i == 0:\n    x = pl.load(a, [0, 0], [64, 64])\n"
                            "    out = pl.store(x, [0, 0], out)\nelse:\n    y = pl.load(b, [0, 0], [64, 64])\n"
                            "    out = pl.store(y, [0, 0], out)")),
    ("if_with_values", kernel(LOAD + "i = pl.tile.get_block_idx()\nif i < 2:\n    r = pl.yield_(x)\nelse:\n"
                              "    z = pl.add(x, y)\n    r = pl.yield_(z)\nout = pl.store(r, [0, 0], out)")),
    ("if_elif_else", kernel("i = pl.tile.get_block_idx()\nif i == 0:\n    v = pl.yield_(1)\nelif i == 1:\n"
                            "    w = i * 2\n    v = pl.yield_(w)\nelse:\n    v = pl.yield_(3)")),
    ("scope_incore", orch("with pl.at(level=pl.Level.CORE_GROUP):\n    t = pl.load(a, [0, 0], [64, 64])\n"
                          "    out = pl.store(t, [0, 0], out)")),
    ("scope_incore_split_slot", orch(
        "with pl.at(level=pl.Level.CORE_GROUP, optimizations=[pl.split(pl.SplitMode.UP_DOWN), "
        "pl.cross_core_slot(slot_num=4)], name_hint='blk') as tid:\n    c = pl.add(a, b)\n"
        "with pl.at(level=pl.Level.CORE_GROUP, deps=[tid], no_dep_args=[a], allow_early_resolve=True):\n"
        "    d = pl.add(a, a)")),
    ("scope_hierarchy", orch("with pl.at(level=pl.Level.HOST, role=pl.Role.Orchestrator):\n"
                             "    out = self.k(a, b, out)")),
    ("scope_cluster_spmd", orch("with pl.cluster(name_hint='grp'):\n    with pl.spmd(4, sync_start=True):\n"
                                "        out = self.k(a, b, out)")),
    ("spmd_three_forms", orch("with pl.spmd(4):\n    out = self.k(a, b, out)\nfor i in pl.spmd(4, name_hint='s'):\n"
                              "    off = i * 16\nwith pl.spmd(2, deps=[], optimizations=[pl.split(pl.SplitMode.NONE)]) "
                              "as tid:\n    out = self.k(a, b, out)")),
    ("runtime_scopes", orch("with pl.scope():\n    out = self.k(a, b, out)\nwith pl.manual_scope():\n"
                            "    r, tid = pl.submit(self.k, a, b, out)", "type=pl.FunctionType.Orchestration, "
                            "auto_scope=False")),
    ("graph_scope", orch("for layer in pl.range(4):\n    with pl.graph('decoder_layer'):\n"
                         "        out = self.k(a, b, out)")),
    ("submit_with_deps", orch("r1, t1 = pl.submit(self.k, a, b, out)\n"
                              "r2, t2 = pl.submit(self.k, a, b, r1, deps=[t1], allow_early_resolve=True)\n"
                              "r3, t3 = pl.spmd_submit(self.k, a, b, r2, core_num=8, sync_start=True, deps=[t1, t2])\n"
                              "res = pl.submit(self.k, a, b, out)")),
    ("submit_predicate", orch("r1, t1 = pl.submit(self.k, a, b, out)\n"
                              "r2, t2 = pl.submit(self.k, a, b, out, deps=[t1], predicate=(r1[0, 0] > 0))")),
    ("no_dep_and_dump", orch("pl.dump_tag(a)\nout = self.k(pl.no_dep(a), b, out)")),
    ("cache_policy", orch("with pl.at(level=pl.Level.CORE_GROUP):\n    pl.set_cache_policy(b, pl.CachePolicy.BYPASS)\n"
                          "    c = pl.add(a, b)")),
    ("split_aiv_modes", orch("for lane in pl.split_aiv(2, mode=pl.SplitMode.UP_DOWN):\n    o = lane * 32\n"
                             "for lane in pl.split_aiv(2, mode=pl.SplitMode.LEFT_RIGHT):\n    o = lane * 16\n"
                             "for _ in pl.split_aiv(2, mode=pl.SplitMode.NONE):\n    c = pl.add(a, b)")),
    ("split_aiv_crossings", orch(
        "with pl.at(level=pl.Level.CORE_GROUP):\n"
        "    ta = pl.load(a, [0, 0], [64, 64], target_memory=pl.Mem.Mat)\n    mm = pl.matmul(ta, ta)\n"
        "    for lane in pl.split_aiv(2, mode=pl.SplitMode.UP_DOWN):\n"
        "        v = pl.exp(pl.aiv_shard(mm))\n        g = pl.aic_gather(v)\n"
        "    for lane in pl.split_aiv(2, mode=pl.SplitMode.LEFT_RIGHT):\n        w = pl.aiv_shard(mm)\n"
        "    for _ in pl.split_aiv(2, mode=pl.SplitMode.NONE):\n        u = pl.aiv_shard(mm)\n"
        "c = pl.tensor.add(a, b)\nfor lane in pl.split_aiv(2, mode=pl.SplitMode.UP_DOWN):\n"
        "    h = pl.tensor.aiv_shard(c)")),
    ("indexing_and_generated_tiles", kernel(
        LOAD + "idx = pl.tile.arange(0, [1, 64])\nm = pl.tri(1, [64, 64], valid_shape=[32, 64], dtype=pl.FP32, upper=True)\n"
        "g = pl.gather(x, 1, pl.tile.full([64, 8], pl.INT32, 3))\nf = pl.gather(x, idx)\n"
        "s = pl.scatter(x, -1, pl.tile.full([64, 8], pl.INT32, 0), g)\n"
        "r = pl.rem(x, y, pl.tile.create([2, 64], pl.FP32), high_precision=True)\nq = pl.rems(x, 2.0, x)\n"
        "c = pl.subsc(pl.addc(x, y, m), 1.0, m)\np = pl.prelu(c, y, x)\n"
        "out = pl.store(p, [0, 0], out)")),
    ("batch_matmul_and_tensor_gather", orch(
        "with pl.at(level=pl.Level.CORE_GROUP):\n"
        "    ta = pl.load(a, [0, 0], [64, 64], target_memory=pl.Mem.Mat)\n"
        "    bm = pl.batch_matmul(pl.reshape(ta, [2, 32, 64]), ta)\n"
        "v = pl.arange(4, [1, 64], dtype=pl.INT16, descending=True)\n"
        "w = pl.tensor.gather(a, pl.tensor.full([64, 8], pl.INT32, 1), dim=-1)")),
    ("cross_function_calls", orch("t = self.k(a, b, out)\nout = self.k(t, b, out)")),
    ("tile_full_create", kernel("z = pl.tile.full([16, 64], pl.FP32, 0.0)\nf = pl.full([16, 64], pl.FP16, 1.5)\n"
                                "c = pl.tile.create([16, 64], pl.FP32, target_memory=pl.Mem.Vec)\n"
                                "v = pl.tile.full([16, 64], dtype=pl.FP32, value=2.0, valid_shape=[8, 64])\n"
                                "z = pl.add(z, c)\nout = pl.store(z, [0, 0], out)")),
    ("tensor_full_create", orch("f = pl.tensor.full([64, 64], pl.FP32, 0.0)\ng = pl.full([8, 8], pl.INT32, 3)\n"
                                "c = pl.tensor.create([64, 64], pl.BF16, layout=pl.NZ)\nout = self.k(f, b, out)")),
    ("arrays", orch("tids = pl.array.create(2, pl.TASK_ID)\nidx = pl.array.create(4, pl.INT32)\n"
                    "for i in pl.range(4):\n    idx[i] = i * 16\nr, tid = pl.submit(self.k, a, b, out)\n"
                    "tids[0] = tid\nr2, t2 = pl.submit(self.k, a, b, r, deps=[tids[0]])\no = idx[3]")),
    ("tensor_level_ops", orch("c = pl.add(a, b)\nd = pl.matmul(c, b)\ne = pl.exp(d)\nf = pl.create_tensor([64, 64], "
                              "dtype=pl.FP32)\nh = pl.cast(e, pl.BF16)")),
    ("func_attr_and_attrs", kernel("pl.func_attr({'stationary': b})\nx = pl.load(a, [0, 0], [64, 64])\n"
                                   "res = pl.store(x, [0, 0], out)",
                                   "type=pl.FunctionType.InCore, attrs={'tag': 1}, strict_ssa=True")),
    ("system_ops", kernel("pl.system.sync_set(0)\npl.system.syncall()\nn = pl.system.available_cluster_count()")),
    ("annotated_tiles", kernel("x: pl.Tile[[64, 64], pl.FP32, pl.Mem.Vec] = pl.load(a, [0, 0], [64, 64], "
                               "target_memory=pl.Mem.Vec)\n"
                               "v: pl.Tile[[64, 64], pl.FP32, pl.TileView(valid_shape=[32, 64])] = "
                               "pl.load(a, [0, 0], [64, 64], valid_shape=[32, 64])\nout = pl.store(x, [0, 0], out)")),
    ("static_checks", kernel("pl.static_assert(64 % 16 == 0, 'tile must divide')\n" + LOAD +
                             "pl.static_assert(x.shape[0] == 64)\npl.static_print(x)\nout = pl.store(x, [0, 0], out)")),
    ("while_break_continue", kernel("for (i, s) in pl.while_(init_values=(0, 0)):\n    pl.cond(i < 100)\n"
                                    "    if s > 50:\n        break\n    i2 = i + 1\n    if i2 % 2 == 0:\n"
                                    "        continue\n    s2 = s + i2\n    io, so = pl.yield_(i2, s2)")),
    ("augmented_and_unpacking", kernel(LOAD + "x += y\nx *= 2.0\nn = 3\nn += 1\nn //= 2\np, q = n, n * 2\n"
                                       "out = pl.store(x, [0, 0], out)")),
    ("scalar_operators", kernel("n = pl.tile.get_block_idx()\np = n ** 2\nc1 = n != 3\nc2 = n >= 2\nc3 = n <= 9\n"
                                "c4 = c1 or c2\nc5 = -n\nf = pl.cast(n, pl.FP32)\ng = f / 2.0\nh = f ** 2.0")),
    ("if_without_else_and_elif", kernel("i = pl.tile.get_block_idx()\nif i == 0:\n    x = pl.load(a, [0, 0], [64, 64])\n"
                                        "    out = pl.store(x, [0, 0], out)\nelif i == 1:\n"
                                        "    y = pl.load(b, [0, 0], [64, 64])\n    out = pl.store(y, [0, 0], out)\n"
                                        "if i > 5:\n    pl.system.syncall()")),
    ("matmul_bias_gemv", kernel(LOAD + "bias = pl.load(b, [0, 0], [1, 64])\nm = pl.matmul_bias(x, y, bias)\n"
                                "r = pl.load(a, [0, 0], [1, 64])\ng = pl.gemv(r, y)\ng = pl.gemv_acc(g, r, y)\n"
                                "out = pl.store(m, [0, 0], out)")),
    ("module_constants_folded", kernel(
        "x = pl.load(a, [0, ROWS * 0], TILE)\nfor i in pl.range(ROWS // BLOCK):\n"
        "    y = pl.load(b, [i * BLOCK, 0], [BLOCK, COLS[1]])\nz = pl.mul(x, SCALE * 2)\nif FLAG:\n"
        "    z = pl.add(z, 1.0)\nout = pl.store(z, OFFSETS, out)",
        header="ROWS = 64\nBLOCK = 16\nTILE = [64, 64]\nCOLS = (0, 64)\nOFFSETS = (0, 0)\nSCALE = 0.25\n"
               "FLAG = not False\n")),
    ("module_enum_constants", orch("with pl.at(level=LEVEL, optimizations=[pl.split(MODE)]):\n    c = pl.add(a, b)\n"
                                   "for lane in pl.split_aiv(2, mode=MODE):\n    o = lane * 32",
                                   header="LEVEL = pl.Level.CORE_GROUP\nMODE = pl.SplitMode.LEFT_RIGHT\n")),
    ("nested_carried_loops", kernel(
        "for i, (s,) in pl.range(4, init_values=(0,)):\n    for j, (t,) in pl.parallel(1, 9, 2, init_values=(s,)):\n"
        "        if j > 3:\n            u = pl.yield_(t + j)\n        else:\n            u = pl.yield_(t)\n"
        "        t2 = pl.yield_(u)\n    for (w,) in pl.while_(init_values=(t2,)):\n        pl.cond(w < 100)\n"
        "        w2 = pl.yield_(w * 2)\n    s2 = pl.yield_(w2)")),
    ("unroll_bounds", kernel("for i in pl.unroll(2, 10, 4):\n    x = pl.load(a, [i, 0], [4, 64])\n"
                             "    out = pl.store(x, [i, 0], out)")),
    ("float_and_negative_literals", kernel(LOAD + "z = pl.mul(x, 1e-06)\nz = pl.add(z, -2.5)\n"
                                           "z = pl.maximums(z, float('-inf'))\nz = pl.mul(z, 3.0e10)\nn = -7\n"
                                           "m = n - -3\nout = pl.store(z, [0, 0], out)")),
    ("integer_dtypes", kernel("n = pl.const(5, pl.INT64)\nm = n + 1\nk = pl.cast(m, pl.INT32)\n"
                              "k2 = k * pl.const(2, pl.INDEX)\nh = pl.const(1.5, pl.FP16)\nh2 = h * 2.0\n"
                              "i8 = pl.const(1, pl.INT8)\nc = i8 < 4")),
    ("scope_with_task_id_in_carried_loop", orch(
        "for i, (o,) in pl.range(3, init_values=(out,)):\n    with pl.at(level=pl.Level.CORE_GROUP, name_hint='s') as tid:\n"
        "        t = pl.add(a, b)\n    o2 = self.k(t, b, o)\n    r = pl.yield_(o2)\nout = r",
        "type=pl.FunctionType.Orchestration, attrs={'note': 'a\\'b', 'n': [1, 2], 'd': {'x': 1.5}}")),
]

TUPLE_PARAMS = """
import plang as pl


@pl.function(type=pl.FunctionType.Orchestration)
def f(pair: pl.Tuple[pl.Tensor[[8], pl.FP32], pl.Scalar[pl.INT32]], tid: pl.Scalar[pl.TASK_ID]) -> pl.Tensor[[8], pl.FP32]:
    t = pair[0]
    n = pair[1]
    u = pl.add(t, t)
    return u
"""

PARAM_KINDS = """
import plang as pl


@pl.program(strict_ssa=True)
class Params:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[64, 64], pl.FP16, pl.DN], acc: pl.InOut[pl.Tensor[[64, 64], pl.FP32]],
          ids: pl.Array[8, pl.INT32], t: pl.Tile[[16, 16], pl.FP32, pl.Mem.Acc], n: pl.Scalar[pl.INT64]) -> pl.Tensor[[64, 64], pl.FP32]:
        first = ids[0]
        x = pl.load(acc, [0, 0], [16, 16])
        y = pl.add(x, x)
        res = pl.store(y, [first, 0], acc)
        return res

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[64, 64], pl.FP16, pl.DN], acc: pl.InOut[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
        ids = pl.array.create(8, pl.INT32)
        t = pl.tile.create([16, 16], pl.FP32, target_memory=pl.Mem.Acc)
        res = self.k(a, acc, ids, t, pl.const(3, pl.INT64))
        return res
"""

DYNAMIC = """
import plang as pl

M = pl.dynamic("M")
N = pl.dynamic("N")


@pl.program
class Dyn:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[M, N], pl.FP32], out: pl.Out[pl.Tensor[[M, N], pl.FP32]],
          rows: pl.Scalar[pl.INDEX]) -> pl.Tensor[[M, N], pl.FP32]:
        cols = a.shape[1]
        for i in pl.range(rows):
            x = pl.load(a, [i, 0], [1, 64])
            out = pl.store(x, [i, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[M, N], pl.FP32], out: pl.Out[pl.Tensor[[M, N], pl.FP32]]) -> pl.Tensor[[M, N], pl.FP32]:
        m = pl.tensor.dim(a, 0)
        out = self.k(a, out, m)
        return out
"""

INLINE = """
import plang as pl


@pl.inline
def twice(x: pl.Tensor[[64, 64], pl.FP32]) -> pl.Tensor[[64, 64], pl.FP32]:
    y = pl.add(x, x)
    return y


@pl.program
class Inl:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[64, 64], pl.FP32]) -> pl.Tensor[[64, 64], pl.FP32]:
        b = twice(a)
        c = twice(b)
        return c
"""

MULTI_RETURN = """
import plang as pl


@pl.program
class Multi:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[64, 64], pl.FP32], n: pl.Scalar[pl.INT32]) -> tuple[pl.Tensor[[64, 64], pl.FP32], pl.Scalar[pl.INT32]]:
        m = n + 1
        return a, m

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[64, 64], pl.FP32]) -> pl.Tensor[[64, 64], pl.FP32]:
        r, cnt = self.k(a, 3)
        (x, y), tid = pl.submit(self.k, r, cnt)
        return x
"""

LONE_FUNCTION = """
import plang as pl


@pl.function(level=pl.Level.HOST, role=pl.Role.SubWorker)
def sub_worker(x: pl.Tensor[[64], pl.FP32, pl.NZ], n: pl.Scalar[pl.INDEX]) -> pl.Tensor[[64], pl.FP32, pl.NZ]:
    return x
"""

EXTERNAL = f"""
import plang as pl


@pl.program
class Ext:
    @pl.function(type=pl.FunctionType.AIV, external_source="softplus.cpp")
    def softplus({_SIG}) -> {_T}:
        ...

    @pl.function(type=pl.FunctionType.Orchestration)
    def main({_SIG}) -> {_T}:
        out = self.softplus(a, b, out)
        return out
"""

CORPUS += [("dynamic_dims", DYNAMIC), ("inline_functions", INLINE), ("multi_return_and_tuple_submit", MULTI_RETURN),
           ("lone_function_layout", LONE_FUNCTION), ("external_source_kernel", EXTERNAL),
           ("param_kinds_strict_program", PARAM_KINDS),
           ("tuple_and_task_id_params", TUPLE_PARAMS)]
