"""The example's import path of :class:`ReplayMem` (``from ddpg.replay_mem import ReplayMem``),
which lives with the other memory kinds in :mod:`ddpg.replay.uniform`."""
from ddpg.replay.uniform import ReplayMem

__all__ = ["ReplayMem"]
