"""Replay beyond the example's uniform memory of 1-step transitions.

:mod:`ddpg.replay.nstep`: n-step returns (``n_step``), built as transitions are stored and
kept in a memory that records each transition's horizon. The example's
:class:`ddpg.replay_mem.ReplayMem` stays what a run with ``n_step=1`` uses, unchanged.
"""
from ddpg.replay.nstep import NStepReplayMem, TransitionBatch, make_memory

__all__ = ["NStepReplayMem", "TransitionBatch", "make_memory"]
