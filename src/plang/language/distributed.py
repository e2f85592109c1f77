"""`import plang.language.distributed as pld`: the reference's import path of `plang.distributed`."""

from ..distributed import *  # noqa: F403
from ..distributed import __all__  # noqa: F401
