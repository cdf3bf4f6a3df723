"""Deterministic policies: MXNet symbols plus the executors that act and train.

``DeterministicMLPPolicy`` binds two executors that share parameters: ``exe`` for a training
batch and ``exe_one``, the same network reshaped to batch 1, used to act in the environment.
"""
import numpy as np

import mxnet as mx

from ddpg.utils import DEFAULT_POLICY_HIDDEN_SIZES, define_policy


class Policy(object):
    """Interface of a policy usable by :class:`ddpg.DDPG` and the strategies."""

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
    """

    def __init__(self, env_spec, hidden_sizes=DEFAULT_POLICY_HIDDEN_SIZES):
        super(DeterministicMLPPolicy, self).__init__(env_spec)
        self.hidden_sizes = tuple(hidden_sizes)
        self.obs = mx.symbol.Variable("obs")
        self.act = define_policy(self.obs, env_spec.action_space.flat_dim, self.hidden_sizes)
        self.exe = None

    def get_output_symbol(self):
        return self.act

    def get_loss_symbols(self):
        return {"obs": self.obs, "act": self.act}

    def define_loss(self, loss_exp):
        """The policy's loss lives in DDPG's policy executor (it needs the Q network)."""
        raise NotImplementedError("the policy loss is built by DDPG from the Q-function")

    def define_exe(self, ctx, init, updater, input_shapes=None, grad_req=None):
        """Bind the batch executor ``exe`` and its batch-1 twin ``exe_one`` (shared weights)."""
        if grad_req is None:
            grad_req = {name: ("null" if name == "obs" else "write")
                        for name in self.act.list_arguments()}
        self.exe = self.act.simple_bind(ctx=ctx, grad_req=grad_req, **input_shapes)
        self.arg_arrays = self.exe.arg_arrays
        self.grad_arrays = self.exe.grad_arrays
        self.arg_dict = self.exe.arg_dict
        self.grad_dict = self.exe.grad_dict
        self.param_names = [name for name in self.act.list_arguments() if name != "obs"]
        for name in self.param_names:
            init(mx.initializer.InitDesc(name), self.arg_dict[name])
        self.updater = updater
        self.exe_one = self.exe.reshape(obs=(1,) + tuple(input_shapes["obs"][1:]))

    def update_params(self, grad_from_top):
        """Backpropagate ``grad_from_top`` (dLoss/dact) through the batch last set by
        ``get_actions`` and apply the updater to every parameter."""
        self.exe.forward(is_train=True)
        self.exe.backward([grad_from_top])
        for index, name in enumerate(self.param_names):
            self.updater(index, self.grad_dict[name], self.arg_dict[name])

    def get_actions(self, obs):
        """Actions for a full training batch of observations, as a numpy array."""
        self.exe.arg_dict["obs"][:] = obs
        self.exe.forward(is_train=False)
        return self.exe.outputs[0].asnumpy()

    def get_action(self, obs):
        """The action for one observation, flat ``(act_dim,)`` (the original returned (1, d))."""
        self.exe_one.arg_dict["obs"][:] = np.asarray(obs, dtype=np.float32).reshape(1, -1)
        self.exe_one.forward(is_train=False)
        return self.exe_one.outputs[0].asnumpy()[0]
