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

from ddpg.replay.batch import TransitionBatch
from ddpg.replay.nstep import NStepReplayMem
from ddpg.replay.sum_tree import SumTree
from ddpg.replay.uniform import check_arrays

__all__ = ["PrioritizedReplayMem", "annealed_beta"]


def annealed_beta(beta, steps_done, steps_total):
    """``beta`` moved linearly to 1 over ``steps_total`` transitions, then 1."""
    return beta + (1.0 - beta) * min(1.0, steps_done / float(max(steps_total, 1)))


class PrioritizedReplayMem(NStepReplayMem):
    """A replay memory sampled in proportion to priorities (see the module docstring).

    alpha: how much the priorities count (0: uniform; the paper's 0.6 for its proportional
        variant).
    eps: added to every |TD error|, so that no transition's probability is 0.

    beta: the importance-weight exponent at the run's start; ``sample`` anneals the
        attribute ``beta`` (the next batch's exponent) from it to 1 by ``transitions_done()``,
        the run's environment steps so far, of ``total_transitions``. Without
        ``transitions_done`` the attribute is what the caller sets before ``get_batch``.

    A batch (:class:`TransitionBatch`) carries ``weights`` (float32) and ``indices`` (the
    slots, for :meth:`update_priorities`). n-step sums and horizons are kept as in
    :class:`NStepReplayMem` (all 1 with 1-step transitions).
    """

    #: batches carry importance weights, and the TD errors update the priorities
    weighted = True
    uses_td_errors = True

    def __init__(self, obs_dim, act_dim, memory_size, alpha=0.6, eps=1e-6, n_step=1,
                 discount=0.99, n_envs=1, observe=None, beta=None, transitions_done=None,
                 total_transitions=1):
        super(PrioritizedReplayMem, self).__init__(obs_dim, act_dim, memory_size, n_step=n_step,
                                                   discount=discount, n_envs=n_envs,
                                                   observe=observe)
        self.alpha, self.eps = float(alpha), float(eps)
        self.tree = SumTree(self.memory_size)
        #: the largest priority (|TD error| + eps) seen: a new transition's
        self.max_priority = 1.0
        self.beta = 1.0
        #: with ``transitions_done`` (the run's environment steps so far), :meth:`sample`
        #: anneals beta from ``beta`` to 1 at ``total_transitions`` (:func:`annealed_beta`)
        self.initial_beta, self.transitions_done = beta, transitions_done
        self.total_transitions = total_transitions

    @classmethod
    def build(cls, settings, env, observe=None, transitions_done=None):
        return cls(env.observation_space.flat_dim, env.action_space.flat_dim,
                   settings.memory_size, alpha=settings.per_alpha, eps=settings.per_eps,
                   n_step=settings.n_step, discount=settings.discount, n_envs=settings.n_envs,
                   observe=observe, beta=settings.per_beta, transitions_done=transitions_done,
                   total_transitions=settings.n_epochs * settings.epoch_length)

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

    def sample(self, batch_size):
        """:meth:`get_batch`'s batch, beta annealed first to the run's progress (when the
        memory knows it), with its bootstrap discounts."""
        if self.transitions_done is not None:
            self.beta = annealed_beta(self.initial_beta, self.transitions_done(),
                                      self.total_transitions)
        return self._with_discounts(self.get_batch(batch_size))

    def after_update(self, batch, td_errors):
        """The batch's new priorities: its |TD errors|."""
        self.update_priorities(batch.indices, td_errors)

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

    def state_dict(self):
        """The n-step memory's state with the ``priorities`` (to the power alpha) and
        ``max_priority``."""
        arrays = super(PrioritizedReplayMem, self).state_dict()
        arrays.update(priorities=self.priorities(), max_priority=np.float64(self.max_priority))
        return arrays

    def _check_state(self, arrays):
        super(PrioritizedReplayMem, self)._check_state(arrays)
        check_arrays(arrays, {"priorities": (int(arrays["size"]),), "max_priority": ()})
        priorities = np.asarray(arrays["priorities"], dtype=np.float64)
        if not (np.isfinite(priorities).all() and (priorities > 0).all()):
            raise ValueError("has priorities that are not positive and finite")

    def _load_state(self, arrays):
        super(PrioritizedReplayMem, self)._load_state(arrays)
        self.set_priorities(np.asarray(arrays["priorities"], dtype=np.float64),
                            float(arrays["max_priority"]))
