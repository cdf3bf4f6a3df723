"""n-step returns: each stored transition sums up to ``n`` rewards before it bootstraps.

With ``n_step = n`` the transition stored for step ``t`` of an episode is

    (s_t, a_t, R, end, s_t+k, k),  R = r_t + g r_t+1 + ... + g^(k-1) r_t+k-1

and its target is ``R + (1 - end) g^k Q'(s_t+k, mu'(s_t+k))``. ``k = n`` inside an episode;
near its end the horizon is shorter, because a return never crosses an episode's end: a
terminal state stops the bootstrap (``end = 1``), a time-limit cut bootstraps from the last
next observation (with ``bootstrap_truncated``; the example's other choices for cut
transitions apply to all of the episode's last transitions alike), and a transition the loop
does not store (a skipped non-finite one, or one the example drops at ``max_path_length``)
ends the sums before it, which bootstrap from the observation it started from.

The sums are built as transitions arrive, per environment: each environment's episode keeps
its *chain*, the tuples ``(s_t, a_t, R so far, k so far)`` of its last ``n - 1`` steps, as
part of the training state (so a checkpoint saves it and a resumed run continues exactly).
Environments never mix, with several environments or actors, because each has its own chain.
Rewards are summed in float64 and stored as float32, as 1-step rewards are.
"""
import numpy as np

from ddpg.replay_mem import ReplayMem

__all__ = ["TransitionBatch", "NStepReplayMem", "extend_chain", "take_complete",
           "close_chain"]


class TransitionBatch(tuple):
    """A sampled batch: the example's 5-tuple ``(obss, acts, rwds, ends, nxts)``, which
    unpacks as before, with the ``horizons`` (k of each transition) of an n-step memory and
    the importance ``weights`` and slots (``indices``) of a prioritised one."""

    def __new__(cls, obss, acts, rwds, ends, nxts, horizons=None, weights=None,
                indices=None):
        batch = super(TransitionBatch, cls).__new__(cls, (obss, acts, rwds, ends, nxts))
        batch.horizons, batch.weights, batch.indices = horizons, weights, indices
        return batch


class NStepReplayMem(ReplayMem):
    """A :class:`ReplayMem` that also stores each transition's horizon ``k`` (float32, the
    power of the discount its target bootstraps with) and samples it with the batch."""

    def __init__(self, obs_dim, act_dim, memory_size):
        super(NStepReplayMem, self).__init__(obs_dim, act_dim, memory_size)
        self.horizons = np.ones((self.memory_size,), dtype=np.float32)

    def add_sample(self, obs, act, rwd, end, nxt, horizon=1):
        self.horizons[self.top] = horizon
        super(NStepReplayMem, self).add_sample(obs, act, rwd, end, nxt)

    def get_batch(self, batch_size):
        """A uniform batch, as :meth:`ReplayMem.get_batch` draws it, with its horizons."""
        if self.size == 0:
            raise ValueError("cannot sample from an empty ReplayMem")
        indices = np.random.randint(0, self.size, size=batch_size)
        return TransitionBatch(self.obss[indices], self.acts[indices], self.rwds[indices],
                               self.ends[indices], self.nxts[indices], self.horizons[indices])


def extend_chain(chain, obs, act, rwd, discount):
    """The chain after a stored step ``(obs, act, rwd)``: the step's reward added to every
    sum (discounted by each one's horizon so far), and the step itself appended."""
    rwd = float(rwd)
    return [(s, a, total + discount ** k * rwd, k + 1) for s, a, total, k in chain] \
        + [(obs, act, rwd, 1)]


def take_complete(chain, n_step, nxt):
    """``(transitions, chain)``: the sums of ``n_step`` rewards, as transitions
    ``(obs, act, R, end=False, nxt, n_step)``, and the chain without them."""
    complete = [(s, a, total, False, nxt, k) for s, a, total, k in chain if k >= n_step]
    return complete, [item for item in chain if item[3] < n_step]


def close_chain(chain, end, nxt):
    """Every sum of an ending chain as a transition ``(obs, act, R, end, nxt, k)``: ``end``
    True (a terminal state: no bootstrap) or False (bootstrap from ``nxt``)."""
    return [(s, a, total, end, nxt, k) for s, a, total, k in chain]
