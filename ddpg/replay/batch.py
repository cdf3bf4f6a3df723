"""What goes into a replay memory and what comes out of it.

A :class:`Transition` is one environment step as the training loop hands it to a memory
(:meth:`add(transition, env_index)`). A :class:`TransitionBatch` is what a memory's
``sample(batch_size)`` returns: the example's 5-tuple ``(obss, acts, rwds, ends, nxts)``,
which unpacks as before, with the bootstrap ``discounts`` its targets use and, where the
memory has them, n-step ``horizons``, importance ``weights`` and the sampled slots
(``indices``). The discounts are the memory's to give because only the memory knows how many
rewards each transition sums (:func:`bootstrap_discounts`).
"""
import collections

import numpy as np

__all__ = ["Transition", "TransitionBatch", "bootstrap_discounts"]


class Transition(collections.namedtuple("Transition",
                                        ["obs", "act", "rwd", "end", "nxt", "achieved"])):
    """One stored step: observation, action, (scaled) reward, whether ``nxt`` is a true
    terminal state (no bootstrap), the next observation, and the goal achieved after the
    step (``info["achieved_goal"]`` of a goal environment; None elsewhere)."""

    __slots__ = ()

    def __new__(cls, obs, act, rwd, end, nxt, achieved=None):
        return super(Transition, cls).__new__(cls, obs, act, rwd, end, nxt, achieved)


class TransitionBatch(tuple):
    """A sampled batch: the example's 5-tuple ``(obss, acts, rwds, ends, nxts)``, which
    unpacks as before, with the ``horizons`` (k of each transition) of an n-step memory, the
    importance ``weights`` and slots (``indices``) of a prioritised one, and the bootstrap
    ``discounts`` ``(1 - end) * discount ** k`` (float32) of a batch from ``sample``."""

    def __new__(cls, obss, acts, rwds, ends, nxts, horizons=None, weights=None,
                indices=None, discounts=None):
        batch = super(TransitionBatch, cls).__new__(cls, (obss, acts, rwds, ends, nxts))
        batch.horizons, batch.weights, batch.indices = horizons, weights, indices
        batch.discounts = discounts
        return batch


def bootstrap_discounts(ends, discount, horizons=None):
    """``(1 - end) * discount ** k`` for each transition, in float32: what the target's
    bootstrap term is multiplied by (``k`` = 1, or an n-step transition's horizon)."""
    discounts = np.subtract(np.float32(1.0), np.asarray(ends, dtype=np.float32))
    if horizons is None:
        discounts *= np.float32(discount)
    else:
        discounts *= np.power(np.float32(discount),
                              np.reshape(np.asarray(horizons, dtype=np.float32),
                                         discounts.shape))
    return discounts
