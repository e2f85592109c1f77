"""InferTileMemorySpace: every tile gets Vec / Mat / Left / Right / Acc, with tile.move where a
consumer needs another space."""

from __future__ import annotations

from pass_testing import check_pass

T = "pl.Tensor[[64, 64], pl.FP32]"
B = "pl.Tensor[[64, 64], pl.BF16]"
VEC = "pl.Tile[[64, 64], pl.FP32, pl.Mem.Vec]"
ACC = "pl.Tile[[64, 64], pl.FP32, pl.Mem.Acc]"
MAT = "pl.Tile[[64, 64], pl.BF16, pl.Mem.Mat]"
LEFT = "pl.Tile[[64, 64], pl.BF16, pl.Mem.Left]"
RIGHT = "pl.Tile[[64, 64], pl.BF16, pl.Mem.Right]"
VMEM, MMEM = "target_memory=pl.MemorySpace.Vec", "target_memory=pl.MemorySpace.Mat"


def test_vector_kernel_lives_in_vec():
    check_pass("infer_tile_memory_space", f"""
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, x: {T}, out: pl.Out[{T}]) -> {T}:
                xt = pl.tile.load(x, [0, 0], [64, 64])
                y = pl.tile.exp(xt)
                o = pl.tile.store(y, [0, 0], out)
                return o
    """, f"""
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, x: {T}, out: pl.Out[{T}]) -> {T}:
                xt: {VEC} = pl.tile.load(x, [0, 0], [64, 64], {VMEM})
                y: {VEC} = pl.tile.exp(xt)
                o = pl.tile.store(y, [0, 0], out)
                return o
    """, ("TileMemoryInferred", "TypeCheck"))


def test_matmul_operands_go_through_mat_to_left_right_and_result_to_vec():
    check_pass("infer_tile_memory_space", f"""
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, a: {B}, b: {B}, out: pl.Out[{T}]) -> {T}:
                at = pl.tile.load(a, [0, 0], [64, 64])
                bt = pl.tile.load(b, [0, 0], [64, 64])
                c = pl.tile.matmul(at, bt, out_dtype=pl.FP32)
                r = pl.tile.relu(c)
                o = pl.tile.store(r, [0, 0], out)
                return o
    """, f"""
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, a: {B}, b: {B}, out: pl.Out[{T}]) -> {T}:
                at: {MAT} = pl.tile.load(a, [0, 0], [64, 64], {MMEM})
                al: {LEFT} = pl.tile.move(at, target_memory=pl.MemorySpace.Left)
                bt: {MAT} = pl.tile.load(b, [0, 0], [64, 64], {MMEM})
                br: {RIGHT} = pl.tile.move(bt, target_memory=pl.MemorySpace.Right)
                c: {ACC} = pl.tile.matmul(al, br, out_dtype=pl.FP32)
                cv: {VEC} = pl.tile.move(c, {VMEM})
                r: {VEC} = pl.tile.relu(cv)
                o = pl.tile.store(r, [0, 0], out)
                return o
    """)


def test_loop_carried_accumulator_starts_in_acc_and_moves_out_after_the_loop():
    check_pass("infer_tile_memory_space", f"""
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, a: {B}, b: {B}, out: pl.Out[{T}]) -> {T}:
                at = pl.tile.load(a, [0, 0], [64, 64])
                bt = pl.tile.load(b, [0, 0], [64, 64])
                c0 = pl.tile.matmul(at, bt, out_dtype=pl.FP32)
                for i, (acc,) in pl.range(3, init_values=(c0,)):
                    acc2 = pl.tile.matmul_acc(acc, at, bt)
                    r = pl.yield_(acc2)
                e = pl.tile.exp(r)
                o = pl.tile.store(e, [0, 0], out)
                return o
    """, f"""
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, a: {B}, b: {B}, out: pl.Out[{T}]) -> {T}:
                at: {MAT} = pl.tile.load(a, [0, 0], [64, 64], {MMEM})
                al: {LEFT} = pl.tile.move(at, target_memory=pl.MemorySpace.Left)
                bt: {MAT} = pl.tile.load(b, [0, 0], [64, 64], {MMEM})
                br: {RIGHT} = pl.tile.move(bt, target_memory=pl.MemorySpace.Right)
                c0: {ACC} = pl.tile.matmul(al, br, out_dtype=pl.FP32)
                for i, (acc,) in pl.range(3, init_values=(c0,)):
                    acc2: {ACC} = pl.tile.matmul_acc(acc, al, br)
                    r: {ACC} = pl.yield_(acc2)
                rv: {VEC} = pl.tile.move(r, {VMEM})
                e: {VEC} = pl.tile.exp(rv)
                o = pl.tile.store(e, [0, 0], out)
                return o
    """)


def test_accumulator_store_stays_in_acc_and_explicit_spaces_are_kept():
    check_pass("infer_tile_memory_space", f"""
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, a: {B}, b: {B}, out: pl.Out[{T}]) -> {T}:
                at = pl.tile.load(a, [0, 0], [64, 64], target_memory=pl.MemorySpace.Mat)
                al = pl.tile.move(at, target_memory=pl.MemorySpace.Left)
                bt = pl.tile.load(b, [0, 0], [64, 64])
                c = pl.tile.matmul(al, bt, out_dtype=pl.FP32)
                o = pl.tile.store(c, [0, 0], out)
                return o
    """, f"""
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, a: {B}, b: {B}, out: pl.Out[{T}]) -> {T}:
                at: {MAT} = pl.tile.load(a, [0, 0], [64, 64], {MMEM})
                al: {LEFT} = pl.tile.move(at, target_memory=pl.MemorySpace.Left)
                bt: {MAT} = pl.tile.load(b, [0, 0], [64, 64], {MMEM})
                br: {RIGHT} = pl.tile.move(bt, target_memory=pl.MemorySpace.Right)
                c: {ACC} = pl.tile.matmul(al, br, out_dtype=pl.FP32)
                o = pl.tile.store(c, [0, 0], out)
                return o
    """)


BIG = "pl.Tensor[[64, 128], pl.FP32]"


def test_assemble_into_a_mat_target_drains_the_accumulator_in_place():
    # the reference's Acc->Mat insert: no move of the Acc source, the result stays in Mat
    check_pass("infer_tile_memory_space", f"""
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, x: {BIG}, a: {B}, b: {B}, out: pl.Out[{BIG}]) -> {BIG}:
                xt = pl.tile.load(x, [0, 0], [64, 128], target_memory=pl.MemorySpace.Mat)
                at = pl.tile.load(a, [0, 0], [64, 64])
                bt = pl.tile.load(b, [0, 0], [64, 64])
                c = pl.tile.matmul(at, bt)
                r = pl.tile.assemble(xt, c, [0, 64])
                rv = pl.tile.move(r, target_memory=pl.MemorySpace.Vec)
                o = pl.tile.store(rv, [0, 0], out)
                return o
    """, f"""
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, x: {BIG}, a: {B}, b: {B}, out: pl.Out[{BIG}]) -> {BIG}:
                xt: pl.Tile[[64, 128], pl.FP32, pl.Mem.Mat] = pl.tile.load(x, [0, 0], [64, 128], {MMEM})
                at: {MAT} = pl.tile.load(a, [0, 0], [64, 64], {MMEM})
                al: {LEFT} = pl.tile.move(at, target_memory=pl.MemorySpace.Left)
                bt: {MAT} = pl.tile.load(b, [0, 0], [64, 64], {MMEM})
                br: {RIGHT} = pl.tile.move(bt, target_memory=pl.MemorySpace.Right)
                c: {ACC} = pl.tile.matmul(al, br)
                r: pl.Tile[[64, 128], pl.FP32, pl.Mem.Mat] = pl.tile.assemble(xt, c, [0, 64])
                rv: pl.Tile[[64, 128], pl.FP32, pl.Mem.Vec] = pl.tile.move(r, {VMEM})
                o = pl.tile.store(rv, [0, 0], out)
                return o
    """, ("TileMemoryInferred", "TypeCheck"))


def test_assemble_into_a_vec_target_moves_an_accumulator_source_to_vec():
    check_pass("infer_tile_memory_space", f"""
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, a: {B}, b: {B}, out: pl.Out[{BIG}]) -> {BIG}:
                s = pl.tile.create([64, 128], dtype=pl.FP32)
                at = pl.tile.load(a, [0, 0], [64, 64])
                bt = pl.tile.load(b, [0, 0], [64, 64])
                c = pl.tile.matmul(at, bt)
                r = pl.tile.assemble(s, c, [0, 64])
                o = pl.tile.store(r, [0, 0], out)
                return o
    """, f"""
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, a: {B}, b: {B}, out: pl.Out[{BIG}]) -> {BIG}:
                s: pl.Tile[[64, 128], pl.FP32, pl.Mem.Vec] = pl.tile.create([64, 128], dtype=pl.FP32, {VMEM})
                at: {MAT} = pl.tile.load(a, [0, 0], [64, 64], {MMEM})
                al: {LEFT} = pl.tile.move(at, target_memory=pl.MemorySpace.Left)
                bt: {MAT} = pl.tile.load(b, [0, 0], [64, 64], {MMEM})
                br: {RIGHT} = pl.tile.move(bt, target_memory=pl.MemorySpace.Right)
                c: {ACC} = pl.tile.matmul(al, br)
                cv: {VEC} = pl.tile.move(c, {VMEM})
                r: pl.Tile[[64, 128], pl.FP32, pl.Mem.Vec] = pl.tile.assemble(s, cv, [0, 64])
                o = pl.tile.store(r, [0, 0], out)
                return o
    """, ("TileMemoryInferred", "TypeCheck"))


def test_vector_state_carried_in_a_loop_with_dynamic_offsets_and_orchestration_untouched():
    check_pass("infer_tile_memory_space", """
        N = pl.dynamic("N")

        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, x: pl.Tensor[[N, 64], pl.FP32], n: pl.Scalar[pl.INDEX],
                  out: pl.Out[pl.Tensor[[32, 64], pl.FP32]]) -> pl.Tensor[[32, 64], pl.FP32]:
                z = pl.tile.load(x, [0, 0], [32, 64])
                for r, (acc,) in pl.range(32, n, 32, init_values=(z,)):
                    t = pl.tile.load(x, [r, 0], [32, 64])
                    acc2 = pl.tile.add(acc, t)
                    s = pl.yield_(acc2)
                o = pl.tile.store(s, [0, 0], out)
                return o

            @pl.function(type=pl.FunctionType.Orchestration)
            def main(self, x: pl.Tensor[[N, 64], pl.FP32], n: pl.Scalar[pl.INDEX],
                     out: pl.Out[pl.Tensor[[32, 64], pl.FP32]]) -> pl.Tensor[[32, 64], pl.FP32]:
                o = self.k(x, n, out)
                return o
    """, """
        N = pl.dynamic("N")

        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, x: pl.Tensor[[N, 64], pl.FP32], n: pl.Scalar[pl.INDEX],
                  out: pl.Out[pl.Tensor[[32, 64], pl.FP32]]) -> pl.Tensor[[32, 64], pl.FP32]:
                z: pl.Tile[[32, 64], pl.FP32, pl.Mem.Vec] = pl.tile.load(x, [0, 0], [32, 64],
                                                                          target_memory=pl.MemorySpace.Vec)
                for r, (acc,) in pl.range(32, n, 32, init_values=(z,)):
                    t: pl.Tile[[32, 64], pl.FP32, pl.Mem.Vec] = pl.tile.load(x, [r, 0], [32, 64],
                                                                              target_memory=pl.MemorySpace.Vec)
                    acc2: pl.Tile[[32, 64], pl.FP32, pl.Mem.Vec] = pl.tile.add(acc, t)
                    s: pl.Tile[[32, 64], pl.FP32, pl.Mem.Vec] = pl.yield_(acc2)
                o = pl.tile.store(s, [0, 0], out)
                return o

            @pl.function(type=pl.FunctionType.Orchestration)
            def main(self, x: pl.Tensor[[N, 64], pl.FP32], n: pl.Scalar[pl.INDEX],
                     out: pl.Out[pl.Tensor[[32, 64], pl.FP32]]) -> pl.Tensor[[32, 64], pl.FP32]:
                o = self.k(x, n, out)
                return o
    """)


def test_a_matmul_result_carried_through_a_loop_takes_acc_back_to_its_allocation():
    # the reference back-propagates the yielded space onto the iter arg, the loop's result and
    # the init; a vector reader of the iter arg gets its move at the top of the body
    check_pass("infer_tile_memory_space", f"""
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, a: {B}, b: {B}, out: pl.Out[{T}]) -> {T}:
                at = pl.tile.load(a, [0, 0], [64, 64])
                bt = pl.tile.load(b, [0, 0], [64, 64])
                acc0 = pl.tile.full([64, 64], dtype=pl.FP32, value=0.0)
                for i, (acc,) in pl.range(3, init_values=(acc0,)):
                    half = pl.tile.muls(acc, 0.5)
                    acc2 = pl.tile.matmul_acc(half, at, bt)
                    r = pl.yield_(acc2)
                e = pl.tile.exp(r)
                o = pl.tile.store(e, [0, 0], out)
                return o
    """, f"""
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, a: {B}, b: {B}, out: pl.Out[{T}]) -> {T}:
                at: {MAT} = pl.tile.load(a, [0, 0], [64, 64], {MMEM})
                al: {LEFT} = pl.tile.move(at, target_memory=pl.MemorySpace.Left)
                bt: {MAT} = pl.tile.load(b, [0, 0], [64, 64], {MMEM})
                br: {RIGHT} = pl.tile.move(bt, target_memory=pl.MemorySpace.Right)
                acc0: {ACC} = pl.tile.full([64, 64], dtype=pl.FP32, value=0.0,
                                           target_memory=pl.MemorySpace.Acc)
                for i, (acc,) in pl.range(3, init_values=(acc0,)):
                    accv: {VEC} = pl.tile.move(acc, {VMEM})
                    half: {VEC} = pl.tile.muls(accv, 0.5)
                    acc2: {ACC} = pl.tile.matmul_acc(half, al, br)
                    r: {ACC} = pl.yield_(acc2)
                rv: {VEC} = pl.tile.move(r, {VMEM})
                e: {VEC} = pl.tile.exp(rv)
                o = pl.tile.store(e, [0, 0], out)
                return o
    """, ("TileMemoryInferred", "TypeCheck"))


def test_a_loaded_init_moves_into_the_space_its_loop_carries_and_a_vector_yield_stays_vec():
    check_pass("infer_tile_memory_space", f"""
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, x: {T}, a: {B}, b: {B}, out: pl.Out[{T}]) -> {T}:
                at = pl.tile.load(a, [0, 0], [64, 64])
                bt = pl.tile.load(b, [0, 0], [64, 64])
                x0 = pl.tile.load(x, [0, 0], [64, 64])
                for i, (c,) in pl.range(2, init_values=(x0,)):
                    c2 = pl.tile.matmul(at, bt, out_dtype=pl.FP32)
                    r = pl.yield_(c2)
                for j, (d,) in pl.range(2, init_values=(r,)):
                    d2 = pl.tile.matmul_acc(d, at, bt)
                    d3 = pl.tile.relu(d2)
                    s = pl.yield_(d3)
                o = pl.tile.store(s, [0, 0], out)
                return o
    """, f"""
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, x: {T}, a: {B}, b: {B}, out: pl.Out[{T}]) -> {T}:
                at: {MAT} = pl.tile.load(a, [0, 0], [64, 64], {MMEM})
                al: {LEFT} = pl.tile.move(at, target_memory=pl.MemorySpace.Left)
                bt: {MAT} = pl.tile.load(b, [0, 0], [64, 64], {MMEM})
                br: {RIGHT} = pl.tile.move(bt, target_memory=pl.MemorySpace.Right)
                x0: {VEC} = pl.tile.load(x, [0, 0], [64, 64], {VMEM})
                x0a: {ACC} = pl.tile.move(x0, target_memory=pl.MemorySpace.Acc)
                for i, (c,) in pl.range(2, init_values=(x0a,)):
                    c2: {ACC} = pl.tile.matmul(al, br, out_dtype=pl.FP32)
                    r: {ACC} = pl.yield_(c2)
                rv: {VEC} = pl.tile.move(r, {VMEM})
                for j, (d,) in pl.range(2, init_values=(rv,)):
                    d2: {ACC} = pl.tile.matmul_acc(d, al, br)
                    d2v: {VEC} = pl.tile.move(d2, {VMEM})
                    d3: {VEC} = pl.tile.relu(d2v)
                    s: {VEC} = pl.yield_(d3)
                o = pl.tile.store(s, [0, 0], out)
                return o
    """, ("TileMemoryInferred", "TypeCheck"))


def test_branches_yielding_different_spaces_meet_in_vec():
    # the reference leaves such a phi to its type checker (an error); here the branch that
    # yields an accumulator moves it to Vec first
    check_pass("infer_tile_memory_space", f"""
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, x: {T}, a: {B}, b: {B}, flag: pl.Scalar[pl.INDEX], out: pl.Out[{T}]) -> {T}:
                at = pl.tile.load(a, [0, 0], [64, 64])
                bt = pl.tile.load(b, [0, 0], [64, 64])
                xt = pl.tile.load(x, [0, 0], [64, 64])
                if flag > 0:
                    c = pl.tile.matmul(at, bt, out_dtype=pl.FP32)
                    r = pl.yield_(c)
                else:
                    e = pl.tile.exp(xt)
                    r = pl.yield_(e)
                o = pl.tile.store(r, [0, 0], out)
                return o
    """, f"""
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, x: {T}, a: {B}, b: {B}, flag: pl.Scalar[pl.INDEX], out: pl.Out[{T}]) -> {T}:
                at: {MAT} = pl.tile.load(a, [0, 0], [64, 64], {MMEM})
                al: {LEFT} = pl.tile.move(at, target_memory=pl.MemorySpace.Left)
                bt: {MAT} = pl.tile.load(b, [0, 0], [64, 64], {MMEM})
                br: {RIGHT} = pl.tile.move(bt, target_memory=pl.MemorySpace.Right)
                xt: {VEC} = pl.tile.load(x, [0, 0], [64, 64], {VMEM})
                if flag > 0:
                    c: {ACC} = pl.tile.matmul(al, br, out_dtype=pl.FP32)
                    cv: {VEC} = pl.tile.move(c, {VMEM})
                    r: {VEC} = pl.yield_(cv)
                else:
                    e: {VEC} = pl.tile.exp(xt)
                    r: {VEC} = pl.yield_(e)
                o = pl.tile.store(r, [0, 0], out)
                return o
    """, ("TileMemoryInferred", "TypeCheck"))
