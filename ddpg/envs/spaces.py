"""Continuous spaces with rllab's ``Box`` semantics.

DDPG only ever deals with real-valued vectors, so the one space it needs is a box.  rllab's users
hand us their own ``Box`` objects, gymnasium users hand us gymnasium's; internally we use this one,
which keeps rllab's names (``flat_dim``, ``bounds``, ``flatten_n``...) because the rest of the
library, like the original example, is written against them.
"""

import numpy as np


def flat_bounds(space):
    """A box-like space's ``(low, high)`` as flat float64 arrays.

    Reads only ``low`` and ``high``, which our ``Box``, gymnasium's and duck-typed rllab
    spaces all have (rllab's ``bounds`` is not on gymnasium's).
    """
    return (np.reshape(space.low, -1).astype(np.float64),
            np.reshape(space.high, -1).astype(np.float64))


class Box(object):
    """A box in R^n: every coordinate lies in ``[low[i], high[i]]``.

    ``Box(low, high)`` takes two arrays of the same shape; ``Box(low, high, shape)`` also accepts
    scalars, broadcast to ``shape`` (rllab's two forms).  Scalars without a shape give shape
    ``(1,)``, as gymnasium does, rather than a 0-d box nobody can flatten sensibly.  Bounds are
    stored as float64 copies, so later edits to the caller's arrays cannot move the box.
    Infinite bounds are allowed (observation spaces often have them) but such a box cannot be
    sampled.
    """

    def __init__(self, low, high, shape=None):
        low = np.asarray(low, dtype=np.float64)
        high = np.asarray(high, dtype=np.float64)
        if shape is None:
            if low.ndim == 0 and high.ndim == 0:
                shape = (1,)
            elif low.shape != high.shape:
                raise ValueError(
                    "Box low and high must have the same shape, got %s and %s"
                    % (low.shape, high.shape))
            else:
                shape = low.shape
        shape = tuple(int(d) for d in np.atleast_1d(shape))
        for name, bound in (("low", low), ("high", high)):
            if bound.ndim != 0 and bound.shape != shape:
                raise ValueError("Box %s has shape %s but the box has shape %s"
                                 % (name, bound.shape, shape))
        self.low = low + np.zeros(shape)
        self.high = high + np.zeros(shape)
        if np.isnan(self.low).any() or np.isnan(self.high).any():
            raise ValueError("Box bounds must not be NaN")
        if (self.low > self.high).any():
            raise ValueError("Box needs low <= high everywhere, got low=%s high=%s"
                             % (self.low, self.high))
        self.shape = shape

    @property
    def flat_dim(self):
        """Length of the flattened vector: what networks and replay buffers are sized by."""
        return int(np.prod(self.shape))

    @property
    def bounds(self):
        return self.low, self.high

    def flatten(self, x):
        """One point as a 1-D float64 vector.

        The size is checked because a silently mis-shaped action or observation (the original
        example passed (1, act_dim) arrays around) is a bug we want to hear about.
        """
        flat = np.asarray(x, dtype=np.float64).reshape(-1)
        if flat.size != self.flat_dim:
            raise ValueError("expected %d values for %r, got %d"
                             % (self.flat_dim, self, flat.size))
        return flat

    def unflatten(self, x):
        return np.asarray(x, dtype=np.float64).reshape(self.shape)

    def flatten_n(self, xs):
        """A batch of points as an ``(n, flat_dim)`` array."""
        xs = np.asarray(xs, dtype=np.float64)
        return xs.reshape((xs.shape[0], self.flat_dim))

    def unflatten_n(self, xs):
        xs = np.asarray(xs, dtype=np.float64)
        return xs.reshape((xs.shape[0],) + self.shape)

    def sample(self):
        """A uniform point, drawn from the global ``np.random`` as rllab does (seed numpy)."""
        if not (np.isfinite(self.low).all() and np.isfinite(self.high).all()):
            raise ValueError("cannot sample uniformly from %r: its bounds are not finite" % (self,))
        return np.random.uniform(low=self.low, high=self.high, size=self.shape)

    def contains(self, x):
        try:
            x = np.asarray(x, dtype=np.float64)
        except (TypeError, ValueError):
            return False
        return (x.shape == self.shape and bool((x >= self.low).all())
                and bool((x <= self.high).all()))

    def __repr__(self):
        def fmt(a):
            return np.array2string(a, separator=", ", threshold=20)
        return "Box(low=%s, high=%s, shape=%s)" % (fmt(self.low), fmt(self.high), self.shape)

    def __eq__(self, other):
        return (isinstance(other, Box) and self.shape == other.shape
                and np.array_equal(self.low, other.low)
                and np.array_equal(self.high, other.high))

    def __ne__(self, other):
        return not self == other

    __hash__ = None


def flat_dim_of(space):
    """``flat_dim`` of any box-like space: ours/rllab's have it, gymnasium's only have ``shape``."""
    flat_dim = getattr(space, "flat_dim", None)
    if flat_dim is not None:
        return int(flat_dim)
    return int(np.prod(space.shape))


def is_box_space(space):
    """Whether ``space`` looks like a continuous box, whatever library it comes from.

    DDPG accepts rllab-style environments whose spaces are rllab's own ``Box`` (or a user's
    look-alike), so an ``isinstance`` check against our class would wrongly reject them.  A box is
    anything with numeric ``low``/``high`` of one shape and a ``flat_dim`` or ``shape``.  Discrete
    spaces have no ``low``, so they fail.  Never raises.
    """
    if not (hasattr(space, "low") and hasattr(space, "high")):
        return False
    if not (hasattr(space, "flat_dim") or hasattr(space, "shape")):
        return False
    try:
        low = np.asarray(space.low, dtype=np.float64)
        high = np.asarray(space.high, dtype=np.float64)
    except (TypeError, ValueError):
        return False
    if low.shape != high.shape or np.isnan(low).any() or np.isnan(high).any():
        return False
    return bool((low <= high).all())
