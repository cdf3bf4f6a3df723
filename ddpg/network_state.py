"""The networks' state, as the other components give theirs: ``state_dict()`` and
``load_state_dict()`` of every network's parameters and every optimiser.

:class:`NetworkState` is the part of :class:`ddpg.DDPG` (and its subclasses) that gives it:
the parameters of ``CHECKPOINT_NETWORKS`` as float32 numpy copies, by name, and the updaters
of ``CHECKPOINT_OPTIMISED`` as :mod:`ddpg.checkpoint.optimizer_state` captures them (plain
data and NDArrays, no pickle: MXNet's own ``Updater.get_states`` pickles). The checkpoint
writes what :meth:`NetworkState.networks_state_dict` gives.
"""
from collections import OrderedDict

from ddpg.checkpoint import optimizer_state
from ddpg.checkpoint.networks import networks_of, optimised_of

__all__ = ["NetworkState"]


class NetworkState(object):
    """The networks' state methods of :class:`ddpg.DDPG`; they read ``network_params``,
    ``network_updater`` and ``optimiser_settings``."""

    def networks_state_dict(self):
        """``{"params": {network: {name: float32 array}}, "optimizers": {network: (JSON
        tree, {name: NDArray})}}``: copies, which later updates do not change."""
        return {
            "params": OrderedDict(
                (network, OrderedDict((name, array.asnumpy())
                                      for name, array in self.network_params(network).items()))
                for network in networks_of(self)),
            "optimizers": OrderedDict(
                (network, optimizer_state.capture(self.network_updater(network)))
                for network in optimised_of(self))}

    def load_networks_state_dict(self, state):
        """Take :meth:`networks_state_dict`'s ``state`` back: every layout and optimiser
        state checked first (ValueError naming the network), then the optimisers' states
        (with this run's learning rates and gradient clips) and the parameters assigned."""
        params = state["params"]
        if list(params) != list(networks_of(self)):
            raise ValueError("the state holds the networks %s; this algorithm has %s"
                             % (list(params), list(networks_of(self))))
        for network, values in params.items():
            current = self.network_params(network)
            shapes = {name: tuple(array.shape) for name, array in current.items()}
            given = {name: tuple(value.shape) for name, value in values.items()}
            if shapes != given:
                raise ValueError("%s's parameters are %s in the state and %s here"
                                 % (network, given, shapes))
        applies = []
        for network, (tree, arrays) in state["optimizers"].items():
            shapes = [array.shape for array in self.network_params(network).values()]
            applies.append((network, optimizer_state.prepare(
                self.network_updater(network), tree, arrays, shapes)))
        for network, apply in applies:
            apply()
            lr, clip = self.optimiser_settings(network)
            optimizer = self.network_updater(network).optimizer
            optimizer.set_learning_rate(lr)
            optimizer.clip_gradient = None if clip is None else float(clip)
        for network, values in params.items():
            current = self.network_params(network)
            for name, value in values.items():
                current[name][:] = value
