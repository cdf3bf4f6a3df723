"""Replay memories: one interface, several kinds, registered in one table.

:mod:`ddpg.replay.uniform`: the example's :class:`ReplayMem` (1-step transitions, sampled
uniformly), which defines the interface every kind provides. :mod:`ddpg.replay.nstep`: n-step
returns (``n_step``), summed inside the memory as steps arrive. :mod:`ddpg.replay.prioritized`:
proportional prioritised replay on a numpy sum tree (:mod:`ddpg.replay.sum_tree`).
:mod:`ddpg.replay.her`: hindsight experience replay for goal-conditioned environments.
:mod:`ddpg.replay.batch`: what goes in (:class:`Transition`) and comes out
(:class:`TransitionBatch`). :mod:`ddpg.replay.registry`: the kinds by name, and the memory a
run's settings ask for.
"""
from ddpg.replay.batch import Transition, TransitionBatch, bootstrap_discounts
from ddpg.replay.nstep import NStepReplayMem, close_chain, extend_chain, take_complete
from ddpg.replay.her import HER_STRATEGIES, HindsightReplayMem
from ddpg.replay.prioritized import PrioritizedReplayMem, annealed_beta
from ddpg.replay.registry import (MEMORY_KINDS, make_memory, memory_class, memory_kind,
                                  register_memory)
from ddpg.replay.uniform import ReplayMem

__all__ = ["HER_STRATEGIES", "HindsightReplayMem", "MEMORY_KINDS", "NStepReplayMem",
           "PrioritizedReplayMem", "ReplayMem", "Transition", "TransitionBatch",
           "annealed_beta", "bootstrap_discounts", "close_chain", "extend_chain",
           "make_memory", "memory_class", "memory_kind", "register_memory", "take_complete"]
