"""How a sampled batch reaches DDPG's bound executors: one packed host buffer, one copy.

:class:`BatchInputs` is the part of :class:`ddpg.DDPG` that names the arrays an update's
batch fills (``obs``, ``nxt``, ``rwd``, ``discount_mask``, and ``weight`` with a memory
whose batches carry importance weights), writes a batch into their host twin and uploads it
(:class:`ddpg.backend.flat.PackedInputs`). The Q executor's ``obs`` is also the policy's and
policy_executor's; the targets share one s' array; rewards and the bootstrap discounts feed
``target_executor``. A subclass adds arrays of its own (TD3: its target-policy noise).
"""
from collections import OrderedDict

import numpy as np

from ddpg.backend.flat import copy_into
from ddpg.replay.batch import bootstrap_discounts

__all__ = ["BatchInputs"]


class BatchInputs(object):
    """The batch-copying methods of :class:`ddpg.DDPG` (see the module docstring); they read
    ``batch_size``, ``discount``, ``obs_normalizer``, ``_memory_class`` (whether batches carry
    importance weights), ``_batch`` (the packed inputs) and ``qfunc``."""

    def _batch_input_shapes(self, obs_dim, act_dim):
        """Name -> shape of the arrays one update's batch fills (see ``_fill_batch``)."""
        # not the actions: the Q network concatenates them to a hidden layer, and MXNet's
        # oneDNN Concat cannot read a view (it falls back to a kernel about 5x slower, 200 us
        # per pass at batch 256); they get their own array and their own copy
        shapes = OrderedDict([("obs", (self.batch_size, obs_dim)),
                              ("nxt", (self.batch_size, obs_dim)),
                              ("rwd", (self.batch_size, 1)),
                              ("discount_mask", (self.batch_size, 1))])
        if self._memory_class.weighted:  # the importance weights of the Q loss
            shapes["weight"] = (self.batch_size, 1)
        return shapes

    def _load_batch(self, batch):
        """Copy a batch into the bound input arrays; returns the (bound) actions array: the
        batch is written into the packed buffer's host twin and copied to the device at
        once; the actions are copied on their own."""
        acts = self._fill_batch(self._batch.host_views, batch)
        self._batch.upload()
        copy_into(self.qfunc.arg_dict["act"], acts)
        return self.qfunc.arg_dict["act"]

    def _fill_batch(self, host, batch):
        """Write ``batch`` into the host views (float32), except the actions, which it
        returns: rewards, and the bootstrap discounts the memory gave with the batch
        (:func:`ddpg.replay.bootstrap_discounts`; computed here, for 1-step transitions, for
        a batch without them, as the example's ``get_batch`` gives)."""
        obss, acts, rwds, ends, nxts = batch
        if self.obs_normalizer is not None:  # obs_norm: the networks see normalised s, s'
            obss, nxts = self.obs_normalizer(obss), self.obs_normalizer(nxts)
        host["obs"][...] = np.reshape(obss, host["obs"].shape)
        host["nxt"][...] = np.reshape(nxts, host["nxt"].shape)
        host["rwd"][...] = np.reshape(rwds, host["rwd"].shape)
        discounts = getattr(batch, "discounts", None)
        if discounts is None:
            discounts = bootstrap_discounts(ends, self.discount,
                                            getattr(batch, "horizons", None))
        host["discount_mask"][...] = np.reshape(discounts, host["discount_mask"].shape)
        if self._memory_class.weighted:
            host["weight"][...] = np.reshape(batch.weights, host["weight"].shape)
        return acts
