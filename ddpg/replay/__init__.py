"""Replay beyond the example's uniform memory of 1-step transitions.

:mod:`ddpg.replay.nstep`: n-step returns (``n_step``), built as transitions are stored and
kept in a memory that records each transition's horizon. :mod:`ddpg.replay.prioritized`:
proportional prioritised replay on a numpy sum tree (:mod:`ddpg.replay.sum_tree`). The
example's :class:`ddpg.replay_mem.ReplayMem` stays what a run without either uses, unchanged.
"""
from ddpg.replay.nstep import (NStepReplayMem, TransitionBatch, close_chain, extend_chain,
                               take_complete)
from ddpg.replay.prioritized import PrioritizedReplayMem, annealed_beta
from ddpg.replay_mem import ReplayMem

__all__ = ["NStepReplayMem", "PrioritizedReplayMem", "TransitionBatch", "make_memory",
           "annealed_beta", "close_chain", "extend_chain", "take_complete"]


def make_memory(algo, obs_dim, act_dim, memory_size):
    """The replay memory ``algo``'s settings ask for: prioritised (``prioritized_replay``),
    with horizons (``n_step > 1``), or the example's ReplayMem."""
    if algo.prioritized_replay:
        return PrioritizedReplayMem(obs_dim, act_dim, memory_size, alpha=algo.per_alpha,
                                    eps=algo.per_eps)
    memory_class = ReplayMem if algo.n_step == 1 else NStepReplayMem
    return memory_class(obs_dim=obs_dim, act_dim=act_dim, memory_size=memory_size)
