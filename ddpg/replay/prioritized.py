"""Proportional prioritised replay (Schaul et al. 2016).

Transition ``i`` is sampled with probability ``P(i) = p_i^alpha / sum_j p_j^alpha``, its
priority ``p_i`` the absolute TD error of its last update plus ``eps`` (a new transition gets
the largest priority seen so far, so that each is sampled at least once soon). The bias this
brings is corrected by importance weights in the Q loss, ``w_i = (N P(i))^-beta``, divided by
the batch's largest weight so that weights only ever scale updates down; ``beta`` grows
linearly from ``per_beta`` at the first update to 1 at the run's last transition
(:func:`annealed_beta`). The priorities live in a :class:`ddpg.replay.sum_tree.SumTree`, so
drawing a batch and updating its priorities take O(batch * log N) numpy work.

A batch is drawn stratified: the ``i``-th of ``batch_size`` transitions from the ``i``-th of
``batch_size`` equal parts of the priorities' total, with numpy's global generator (seeded by
DDPG and saved in checkpoints, as the uniform memory's draws are).
"""
import numpy as np

from ddpg.replay.nstep import NStepReplayMem, TransitionBatch
from ddpg.replay.sum_tree import SumTree

__all__ = ["PrioritizedReplayMem", "annealed_beta"]


def annealed_beta(beta, steps_done, steps_total):
    """``beta`` moved linearly to 1 over ``steps_total`` transitions, then 1."""
    return beta + (1.0 - beta) * min(1.0, steps_done / float(max(steps_total, 1)))


class PrioritizedReplayMem(NStepReplayMem):
    """A replay memory sampled in proportion to priorities (see the module docstring).

    alpha: how much the priorities count (0: uniform; the paper's 0.6 for its proportional
        variant).
    eps: added to every |TD error|, so that no transition's probability is 0.

    ``beta``, the importance-weight exponent of the next batch, is set by the training loop
    before each draw. A batch (:class:`TransitionBatch`) carries ``weights`` (float32) and
    ``indices`` (the slots, for :meth:`update_priorities`). Horizons are kept as in
    :class:`NStepReplayMem` (all 1 with 1-step transitions).
    """

    def __init__(self, obs_dim, act_dim, memory_size, alpha=0.6, eps=1e-6):
        super(PrioritizedReplayMem, self).__init__(obs_dim, act_dim, memory_size)
        self.alpha, self.eps = float(alpha), float(eps)
        self.tree = SumTree(self.memory_size)
        #: the largest priority (|TD error| + eps) seen: a new transition's
        self.max_priority = 1.0
        self.beta = 1.0

    def add_sample(self, obs, act, rwd, end, nxt, horizon=1):
        slot = self.top
        super(PrioritizedReplayMem, self).add_sample(obs, act, rwd, end, nxt, horizon)
        self.tree.update([slot], [self.max_priority ** self.alpha])

    def get_batch(self, batch_size):
        """A batch drawn in proportion to the priorities, with its importance weights."""
        if self.size == 0:
            raise ValueError("cannot sample from an empty ReplayMem")
        slots = self.tree.sample(batch_size, np.random)
        probabilities = self.tree.get(slots) / self.tree.total
        weights = (self.size * probabilities) ** -self.beta
        weights /= weights.max()
        return TransitionBatch(self.obss[slots], self.acts[slots], self.rwds[slots],
                               self.ends[slots], self.nxts[slots], self.horizons[slots],
                               weights=weights.astype(np.float32), indices=slots)

    def update_priorities(self, slots, td_errors):
        """New priorities ``|td_errors| + eps`` for ``slots`` (a slot drawn twice keeps its
        last one)."""
        priorities = np.abs(np.asarray(td_errors, dtype=np.float64)).reshape(-1) + self.eps
        if not np.isfinite(priorities).all():
            raise ValueError("a TD error is not finite: priorities cannot be updated")
        self.max_priority = max(self.max_priority, float(priorities.max()))
        self.tree.update(slots, priorities ** self.alpha)

    def priorities(self):
        """The stored transitions' priorities (to the power alpha), for checkpoints."""
        return self.tree.get(np.arange(self.size))

    def set_priorities(self, priorities, max_priority):
        """Restore :meth:`priorities` and ``max_priority`` from a checkpoint."""
        self.tree.update(np.arange(len(priorities)), priorities)
        self.max_priority = float(max_priority)
