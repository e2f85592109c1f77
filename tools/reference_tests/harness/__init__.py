"""plang's stand-in for the reference's system-test harness package (see ../run.py)."""
