"""Code generation: kernels (IR → MLIR → native) and reference / orchestration code."""
