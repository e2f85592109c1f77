"""@pl.jit kernels shared by the JIT tests (module-level so their source is inspectable)."""

import plang as pl

M = pl.dynamic("M")
SCALE = 2.0


@pl.jit.incore
def add_tile(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    ta = pl.load(a, [0, 0], [32, 64])
    tb = pl.load(b, [0, 0], [32, 64])
    c = pl.store(pl.add(ta, tb), [0, 0], c)
    return c


@pl.jit
def add(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    c = add_tile(a, b, c)
    return c


@pl.jit.incore
def scale_rows(x: pl.Tensor[[M, 64], pl.FP32], y: pl.Out[pl.Tensor[[M, 64], pl.FP32]]):
    for i in pl.range(M // 16):
        t = pl.load(x, [i * 16, 0], [16, 64])
        y = pl.store(pl.mul(t, SCALE), [i * 16, 0], y)
    return y


@pl.jit
def scale(x: pl.Tensor[[M, 64], pl.FP32], y: pl.Out[pl.Tensor[[M, 64], pl.FP32]]):
    y = scale_rows(x, y)
    return y


@pl.jit.incore
def add_scalar_tile(x: pl.Tensor[[16, 64], pl.FP32], y: pl.Out[pl.Tensor[[16, 64], pl.FP32]],
                    k: pl.Scalar[pl.FP32]):
    t = pl.load(x, [0, 0], [16, 64])
    y = pl.store(pl.add(t, k), [0, 0], y)
    return y


@pl.jit
def add_scalar(x: pl.Tensor[[16, 64], pl.FP32], y: pl.Out[pl.Tensor[[16, 64], pl.FP32]],
               k: pl.Scalar[pl.FP32]):
    y = add_scalar_tile(x, y, k)
    return y


@pl.jit.inline
def bias_relu(t: pl.Tile[[32, 64], pl.FP32], bias: pl.Tile[[32, 64], pl.FP32]):
    return pl.relu(pl.add(t, bias))


@pl.jit.incore
def bias_relu_tile(x: pl.Tensor, b: pl.Tensor, y: pl.Out[pl.Tensor]):
    t = pl.load(x, [0, 0], [32, 64])
    bt = pl.load(b, [0, 0], [32, 64])
    y = pl.store(bias_relu(t, bt), [0, 0], y)
    return y


@pl.jit
def fused_bias_relu(x: pl.Tensor, b: pl.Tensor, y: pl.Out[pl.Tensor]):
    y = bias_relu_tile(x, b, y)
    return y


@pl.jit.inline
def row_block_sums(x: pl.Tensor, y: pl.Tensor, r: pl.Scalar[pl.INDEX]):
    """y[r:r+16] = the sum of x's 16-row blocks from row r on, shaped by a local extent."""
    d = x.shape[1]
    first = pl.slice(x, [16, d], [r, 0])
    for i, (acc,) in pl.range(r + 16, x.shape[0], 16, init_values=(first,)):
        acc_next = pl.add(acc, pl.slice(x, [16, d], [i, 0]))
        total = pl.yield_(acc_next)
    return pl.assemble(y, total, [r, 0])


@pl.jit.incore
def block_sums_tile(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    for r in pl.range(0, x.shape[0], 16):
        y = row_block_sums(x, y, r)
    return y


@pl.jit
def block_sums(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    y = block_sums_tile(x, y)
    return y


@pl.jit
def bad_shapes(a: pl.Tensor, c: pl.Out[pl.Tensor]):
    c = add_tile(a, a, c, a)
    return c


@pl.jit
def rebind_out(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        y = pl.add(x, x)  # noqa: F841  (an Out parameter: plang writes it back)
    return y


@pl.jit
def rebind_out_no_return(x: pl.Tensor, y: pl.Out[pl.Tensor], z: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        y = pl.add(x, x)  # noqa: F841  (an Out parameter: plang writes it back)
        z = pl.mul(x, x)  # noqa: F841


T32x64 = pl.Tensor[[32, 64], pl.FP32]


@pl.jit.incore
def square_tile(x: T32x64, y: pl.Out[T32x64]):
    t = pl.load(x, [0, 0], [32, 64])
    y = pl.store(pl.mul(t, t), [0, 0], y)
    return y


@pl.jit.incore
def add_tiles(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    ta = pl.load(a, [0, 0], [32, 64])
    tb = pl.load(b, [0, 0], [32, 64])
    c = pl.store(pl.add(ta, tb), [0, 0], c)
    return c


@pl.jit
def square_plus(x: T32x64, y: pl.Out[T32x64]):
    sq = pl.create_tensor([32, 64], dtype=pl.FP32)
    sq = square_tile(x, sq)
    y = add_tiles(sq, x, y)
    return y


@pl.jit.incore
def double_tile(a: pl.Tensor, c: pl.Out[pl.Tensor]):
    t = pl.load(a, [0, 0], [a.shape[0], a.shape[1]])
    c = pl.store(pl.add(t, t), [0, 0], c)
    return c


@pl.jit
def double(a: pl.Tensor, c: pl.Out[pl.Tensor]):
    c = double_tile(a, c)
    return c


@pl.jit
def add_returning_call(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    return add_tile(a, b, c)


@pl.jit(auto_scope=False)
def add_manual_scopes(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    c = add_tile(a, b, c)
    return c
