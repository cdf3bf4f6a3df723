"""Replay beyond the example's uniform memory of 1-step transitions.

:mod:`ddpg.replay.nstep`: n-step returns (``n_step``), built as transitions are stored and
kept in a memory that records each transition's horizon. :mod:`ddpg.replay.prioritized`:
proportional prioritised replay on a numpy sum tree (:mod:`ddpg.replay.sum_tree`).
:mod:`ddpg.replay.her`: hindsight experience replay for goal-conditioned environments. The
example's :class:`ddpg.replay_mem.ReplayMem` stays what a run without either uses, unchanged.
"""
from ddpg.replay.nstep import (NStepReplayMem, TransitionBatch, close_chain, extend_chain,
                               take_complete)
from ddpg.replay.her import HER_STRATEGIES, HindsightReplayMem
from ddpg.replay.prioritized import PrioritizedReplayMem, annealed_beta
from ddpg.replay_mem import ReplayMem

__all__ = ["HER_STRATEGIES", "HindsightReplayMem", "NStepReplayMem", "PrioritizedReplayMem", "TransitionBatch", "make_memory",
           "annealed_beta", "close_chain", "extend_chain", "take_complete"]


def make_memory(algo, obs_dim, act_dim, memory_size):
    """The replay memory ``algo``'s settings ask for: hindsight (``her``, for the goal
    environment ``algo.env``, a pending episode per environment), prioritised
    (``prioritized_replay``), with horizons (``n_step > 1``), or the example's ReplayMem."""
    if algo.her:
        return HindsightReplayMem(obs_dim, act_dim, memory_size, algo.env.goal_layout,
                                  algo.env.compute_reward, strategy=algo.her_strategy,
                                  her_k=algo.her_k, n_envs=algo.n_envs,
                                  scale_reward=algo.scale_reward)
    if algo.prioritized_replay:
        return PrioritizedReplayMem(obs_dim, act_dim, memory_size, alpha=algo.per_alpha,
                                    eps=algo.per_eps)
    memory_class = ReplayMem if algo.n_step == 1 else NStepReplayMem
    return memory_class(obs_dim=obs_dim, act_dim=act_dim, memory_size=memory_size)
