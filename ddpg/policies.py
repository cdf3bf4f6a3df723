"""Deterministic policies: MXNet symbols plus the executors that act and train.

``DeterministicMLPPolicy`` binds two executors that share parameters: ``exe`` for a training
batch and ``exe_one``, the same network bound for batch 1, used to act in the environment.
"""

import mxnet as mx
import numpy as np

from ddpg.backend.binding import bind
from ddpg.backend.flat import copy_into
from ddpg.backend.initializers import (DEFAULT_HIDDEN_INIT, DEFAULT_OUTPUT_INIT,
                                      make_initializer)
from ddpg.backend.mxnet_log import filters_mxnet_info
from ddpg.executors import bind_network
from ddpg.utils import DEFAULT_ACTIVATION, DEFAULT_POLICY_HIDDEN_SIZES, define_policy


class Policy(object):
    """Interface of a policy usable by :class:`ddpg.DDPG` and the strategies."""

    #: What observations go through before the network (DDPG's ``obs_norm``:
    #: :class:`ddpg.obs_normalizer.ObservationNormalizer`); None: nothing.
    input_normalizer = None

    def network_input(self, obs):
        """``obs`` as the network takes it: normalised when ``input_normalizer`` is set."""
        return obs if self.input_normalizer is None else self.input_normalizer(obs)

    def __init__(self, env_spec):
        self.env_spec = env_spec

    def get_actions(self, obs):
        raise NotImplementedError

    def get_action(self, obs):
        raise NotImplementedError

    def reset(self):
        pass

    @property
    def observation_space(self):
        return self.env_spec.observation_space

    @property
    def action_space(self):
        return self.env_spec.action_space


class DeterministicMLPPolicy(Policy):
    """mu(s): an MLP with a tanh output in [-1, 1] per action dimension.

    The tanh bound is why the original wraps its environment in ``normalize``: the action
    space must be [-1, 1] (an unnormalised Box with other bounds is clipped by the strategy).

    ``activation``, ``layer_norm``, ``output_init`` and ``hidden_init`` are as for
    :class:`ddpg.qfuncs.ContinuousMLPQ` (the output layer is ``policy_fc<n+1>``, before tanh);
    the defaults are the original's network.
    """

    def __init__(self, env_spec, hidden_sizes=DEFAULT_POLICY_HIDDEN_SIZES,
                 activation=DEFAULT_ACTIVATION, layer_norm=False,
                 output_init=DEFAULT_OUTPUT_INIT, hidden_init=DEFAULT_HIDDEN_INIT):
        super(DeterministicMLPPolicy, self).__init__(env_spec)
        self.hidden_sizes = tuple(hidden_sizes)
        self.activation = activation
        self.layer_norm = bool(layer_norm)
        self.output_init = output_init
        self.hidden_init = hidden_init
        self.obs = mx.symbol.Variable("obs")
        self.act = define_policy(self.obs, env_spec.action_space.flat_dim, self.hidden_sizes,
                                 activation=activation, layer_norm=self.layer_norm)
        self.initializer = make_initializer(
            self.act, {"obs": (1, env_spec.observation_space.flat_dim)},
            "policy_fc%d" % (len(self.hidden_sizes) + 1), output_init, hidden_init)
        self.exe = None

    def get_output_symbol(self):
        return self.act

    def get_loss_symbols(self):
        return {"obs": self.obs, "act": self.act}

    def define_loss(self, loss_exp):
        """The policy's loss lives in DDPG's policy executor (it needs the Q network)."""
        raise NotImplementedError("the policy loss is built by DDPG from the Q-function")

    @filters_mxnet_info
    def define_exe(self, ctx, init, updater, input_shapes=None, input_arrays=None):
        """Bind the batch executor ``exe`` and its batch-1 twin ``exe_one`` (shared weights).

        As for the Q-function, parameters and gradients each live in one flat buffer
        (``self.params``, ``self.grads``) and the executors are bound on views of it.
        ``exe_one`` has an observation array of its own, so acting never writes into the
        training batch.
        """
        bind_network(self, self.act, ctx, init, updater, input_shapes, input_arrays)
        one_args = dict(self.params.views)
        one_args["obs"] = mx.nd.zeros((1,) + tuple(self.input_shapes["obs"][1:]), ctx=ctx)
        self.exe_one = bind(self.act, ctx, args=one_args, grad_req="null")
        self._acting_executors = {}  # n -> the executor of get_action_batch

    def update_params(self, grad_from_top, forward=True):
        """Backpropagate ``grad_from_top`` (dLoss/dact) through the batch last set by
        ``get_actions`` and step every parameter.

        ``forward=False`` skips the forward pass when the caller has just run
        ``exe.forward(is_train=True)`` on the same batch and weights (DDPG does): the
        gradients are the same, one forward pass cheaper.
        """
        if forward:
            self.exe.forward(is_train=True)
        self.exe.backward([grad_from_top])
        self.updater(0, self.grads.data, self.params.data)

    def get_actions(self, obs):
        """Actions for a full training batch of observations, as a numpy array."""
        copy_into(self.exe.arg_dict["obs"], self.network_input(obs))
        self.exe.forward(is_train=False)
        return self.exe.outputs[0].asnumpy()

    def get_action_batch(self, observations):
        """The actions for a few observations (one per environment, ``(n, obs_dim)``) in one
        forward pass, as an ``(n, act_dim)`` numpy array; the executor for ``n`` shares the
        parameters and is bound at its first use."""
        observations = np.asarray(observations)
        exe = self._acting_executors.get(len(observations))
        if exe is None:
            args = dict(self.params.views)
            args["obs"] = mx.nd.zeros(observations.shape, ctx=self.params.data.context)
            exe = bind(self.act, self.params.data.context, args=args, grad_req="null")
            self._acting_executors[len(observations)] = exe
        copy_into(exe.arg_dict["obs"], self.network_input(observations))
        exe.forward(is_train=False)
        return exe.outputs[0].asnumpy()

    def get_action(self, obs):
        """The action for one observation, flat ``(act_dim,)`` (the original returned (1, d))."""
        copy_into(self.exe_one.arg_dict["obs"], self.network_input(obs))
        self.exe_one.forward(is_train=False)
        return self.exe_one.outputs[0].asnumpy()[0]
