"""Observation normalisation with clipping, as in the HER authors' code (OpenAI Baselines'
``her/normalizer.py``).

Inputs are clipped to ``+-clip_obs`` (200) before anything else, standardised with the running
mean and standard deviation of every observation seen so far, and clipped again to
``+-clip_range`` (5). The standard deviation is at least ``eps`` (0.01), so a constant input
(a goal coordinate that never moves) stays finite; before the first update the transform is
the identity's clipping (mean 0, std 1). The statistics are sums in float64 (count, sum, sum
of squares), saved in checkpoints, so a resumed run normalises as the uninterrupted one.

:class:`ddpg.DDPG` applies it, when ``obs_norm`` is set, wherever an observation enters a
network: the policy's actions (exploration, evaluation) and the batches of an update (s and
s'). It is updated with the observations the replay memory stores; with hindsight replay,
with each stored episode's observations under relabelled goals (the goals its batches will
show the networks), as the HER authors do.
"""
import numpy as np

__all__ = ["ObservationNormalizer"]


class ObservationNormalizer(object):
    """Running per-dimension standardisation of ``dim``-sized observations, clipped."""

    def __init__(self, dim, clip_obs=200.0, clip_range=5.0, eps=1e-2):
        self.dim = int(dim)
        self.clip_obs = float(clip_obs)
        self.clip_range = float(clip_range)
        self.eps = float(eps)
        self.count = 0
        self.sum = np.zeros(self.dim, dtype=np.float64)
        self.sumsq = np.zeros(self.dim, dtype=np.float64)
        self.mean = np.zeros(self.dim, dtype=np.float64)
        self.std = np.ones(self.dim, dtype=np.float64)

    def update(self, observations):
        """Add ``observations`` (``(n, dim)``, clipped to ``+-clip_obs``) to the statistics."""
        values = np.clip(np.reshape(np.asarray(observations, dtype=np.float64), (-1, self.dim)),
                         -self.clip_obs, self.clip_obs)
        if len(values) == 0:
            return
        self.count += len(values)
        self.sum += values.sum(axis=0)
        self.sumsq += np.square(values).sum(axis=0)
        self._recompute()

    def _recompute(self):
        self.mean = self.sum / self.count
        variance = self.sumsq / self.count - np.square(self.mean)
        self.std = np.sqrt(np.maximum(np.square(self.eps), variance))

    def __call__(self, observations):
        """``observations`` normalised (float32, same shape)."""
        values = np.asarray(observations, dtype=np.float64)
        flat = np.clip(np.reshape(values, (-1, self.dim)), -self.clip_obs, self.clip_obs)
        normalised = np.clip((flat - self.mean) / self.std, -self.clip_range, self.clip_range)
        return normalised.reshape(values.shape).astype(np.float32)

    def state_dict(self):
        """The statistics as plain data: ``{"count": int, "sum": array, "sumsq": array}``
        (the mean and deviation follow from them)."""
        return {"count": int(self.count), "sum": self.sum.copy(), "sumsq": self.sumsq.copy()}

    def check_state_dict(self, state):
        """``ValueError``/``TypeError`` unless ``state`` holds statistics of this size: a
        non-negative integer count and ``dim`` sums and sums of squares."""
        if not isinstance(state, dict) or not {"count", "sum", "sumsq"} <= set(state):
            raise ValueError("observation normaliser statistics need a count, sum and sumsq; "
                             "got %r" % (sorted(state) if isinstance(state, dict) else state,))
        count = np.asarray(state["count"])
        if count.ndim != 0 or count.dtype.kind not in "iu":
            raise TypeError("an observation normaliser count of %r; it is an integer"
                            % (state["count"],))
        total, squares = np.asarray(state["sum"]), np.asarray(state["sumsq"])
        if total.shape != (self.dim,) or squares.shape != (self.dim,) or count < 0:
            raise ValueError("observation normaliser statistics of size %s/%s and count %r "
                             "do not fit observations of size %d"
                             % (total.shape, squares.shape, state["count"], self.dim))
        for values in (total, squares):
            if values.dtype.kind not in "iuf":
                raise TypeError("observation normaliser statistics of %s values; they are "
                                "numbers" % values.dtype)

    def load_state_dict(self, state):
        """Put back statistics from :meth:`state_dict` (checked first: statistics that do
        not fit raise and change nothing)."""
        self.check_state_dict(state)
        self.count = int(state["count"])
        self.sum = np.array(state["sum"], dtype=np.float64)
        self.sumsq = np.array(state["sumsq"], dtype=np.float64)
        if self.count:
            self._recompute()
        else:
            self.mean, self.std = np.zeros(self.dim), np.ones(self.dim)
