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

    def get_checkpoint_state(self):
        """The statistics as plain data (for ``training_state``)."""
        return {"count": int(self.count), "sum": self.sum.copy(), "sumsq": self.sumsq.copy()}

    def set_checkpoint_state(self, state):
        """Put back statistics from :meth:`get_checkpoint_state`; ``ValueError`` if their
        size is not this normaliser's."""
        total, squares = np.asarray(state["sum"], np.float64), np.asarray(state["sumsq"],
                                                                          np.float64)
        if total.shape != (self.dim,) or squares.shape != (self.dim,) or state["count"] < 0:
            raise ValueError("observation normaliser statistics of size %s/%s and count %r "
                             "do not fit observations of size %d"
                             % (total.shape, squares.shape, state["count"], self.dim))
        self.count, self.sum, self.sumsq = int(state["count"]), total.copy(), squares.copy()
        if self.count:
            self._recompute()
        else:
            self.mean, self.std = np.zeros(self.dim), np.ones(self.dim)
