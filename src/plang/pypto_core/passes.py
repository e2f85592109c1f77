"""`MemoryPlanner`: the reference's choice of on-chip memory planner. plang's simulated chip
plans no on-chip memory (buffers are host memory), so every planner compiles the same program;
`RunConfig(memory_planner=...)` and the harnesses' planner parameters accept any of them.
`l0_tile_chooser` picks a cube L0 design point under the reference's configuration names."""

from enum import Enum

from . import l0_tile_chooser


class MemoryPlanner(Enum):
    """Who plans on-chip buffer memory in the reference: its own planner, DSA register
    planning or the ptoas assembler. No effect in plang."""

    PYPTO = 0
    DSA_RP = 1
    PTOAS = 2


__all__ = ["MemoryPlanner", "l0_tile_chooser"]
