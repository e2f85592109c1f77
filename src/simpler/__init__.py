"""`simpler`, the reference runtime's Python module path, on plang's simulated chip.

Only the manual-dispatch worker is provided (`simpler.worker.Worker`): programs that drive a
compiled program by hand (``compiled.chip_callable`` / ``build_orch_args`` /
``build_call_config``) run unchanged. See `plang.runtime.chip_callable`.
"""
