"""TD3 (Fujimoto et al., 2018) on DDPG's executors: twin critics, target policy smoothing,
delayed policy and target updates.

``TD3`` is a :class:`ddpg.DDPG` whose design it keeps: flat parameter buffers, one-operation
optimiser steps and soft updates, and one ``target_executor`` that writes the targets y straight
into the critics' ``yval`` input. What changes:

- **Twin critics.** A second Q network, ``qfunc2`` (by default the first one's layout with the
  parameter prefix ``qfunc2``, so both fit in one graph), with its own flat parameters,
  gradients, optimiser and target ``qfunc2_target``. Both critics are bound on the same
  ``obs``, ``act`` and ``yval`` arrays and regress on the same y.
- **Clipped double-Q targets.** ``target_executor`` computes
  ``y = r + (1 - end) * discount * min(Q1'(s', a~), Q2'(s', a~))``.
- **Target policy smoothing.** ``a~ = clip(mu'(s') + noise, low, high)`` with
  ``noise = clip(N(0, target_noise^2), -target_noise_clip, target_noise_clip)``, both scaled
  by the action half-range ``(high - low) / 2`` per dimension (TD3's 0.2 and 0.5 of
  ``max_action``). The noise is an *input array* of ``target_executor``, drawn on the host
  with numpy's global generator at every update (after the batch), so a run is reproducible
  from its seed and checkpoints, and a NumPy reference that re-seeds draws the same.
- **Delayed updates.** The policy step and the soft updates of all three targets run on every
  ``policy_delay``-th critic update (update index ``itr`` with ``(itr + 1) % policy_delay ==
  0``, as TD3's ``total_it % policy_freq == 0``); the policy's loss is ``-mean(Q1(s, mu(s)))``
  through the updated first critic, exactly DDPG's policy executor.

The statistics follow the first critic (``AverageQLoss``, ``AverageQ``, ...);
``AveragePolicyLoss`` averages over the policy updates only.
"""
import numpy as np

import mxnet as mx

from ddpg import executors, hyperparams
from ddpg.config import TD3Config
from ddpg.backend import regularization
from ddpg.ddpg import DDPG
from ddpg.envs.spaces import flat_bounds
from ddpg.backend.flat import param_shapes
from ddpg.qfuncs import ContinuousMLPQ


class TD3(DDPG):
    """TD3 with DDPG's arguments (its settings: :class:`ddpg.TD3Config`) plus:

    qfunc2: the second critic; by default a :class:`ContinuousMLPQ` with ``qfunc``'s layout
        and options and the prefix ``qfunc2`` (a custom one needs parameter names of its own).
    policy_delay: DDPG's argument, with TD3's default of 2.
    target_noise, target_noise_clip: std and clip of the target-action noise, relative to the
        action half-range (TD3: 0.2 and 0.5).

    TD3's other settings are DDPG arguments: ``start_steps``, a
    :class:`ddpg.strategies.GaussianStrategy` of sigma 0.1, ``soft_target_tau=0.005``,
    ``batch_size=256``, learning rates 3e-4, 256-256 networks.
    """

    #: The class of TD3's settings (:mod:`ddpg.config`).
    CONFIG = TD3Config
    CHECKPOINT_NETWORKS = ("qfunc", "qfunc_target", "qfunc2", "qfunc2_target", "policy",
                           "policy_target")
    CHECKPOINT_OPTIMISED = ("qfunc", "qfunc2", "policy")
    CHECKPOINT_EXTRA_HYPERPARAMETERS = tuple(
        name for name in hyperparams.checkpointed_names("td3")
        if name not in hyperparams.checkpointed_names("ddpg"))

    def __init__(self, env, policy, qfunc, strategy, qfunc2=None, policy_delay=2,
                 target_noise=0.2, target_noise_clip=0.5, **kwargs):
        eval_env, logger = kwargs.pop("eval_env", None), kwargs.pop("logger", None)
        config = TD3Config(policy_delay=policy_delay, target_noise=target_noise,
                           target_noise_clip=target_noise_clip, **kwargs)
        self._build(env, policy, qfunc, strategy, config, eval_env, logger, qfunc2=qfunc2)

    def _build(self, env, policy, qfunc, strategy, config, eval_env, logger,
               qfunc2=None):  # pylint: disable=arguments-differ
        """DDPG's building, with the second critic (made from ``qfunc`` when None) set
        before :meth:`init_net` runs."""
        if qfunc2 is None:
            if not isinstance(qfunc, ContinuousMLPQ):
                raise ValueError("TD3 needs qfunc2 for a Q-function that is not a "
                                 "ContinuousMLPQ (%s)" % type(qfunc).__name__)
            qfunc2 = ContinuousMLPQ(qfunc.env_spec, prefix="qfunc2", **qfunc.layout())
        self.qfunc2 = qfunc2
        super(TD3, self)._build(env, policy, qfunc, strategy, config, eval_env, logger)

    def optimiser_settings(self, network):
        """DDPG's, and the second critic's: the first one's learning rate and clip."""
        return super(TD3, self).optimiser_settings("qfunc" if network == "qfunc2" else network)

    def _target_q_symbol(self, qval_sym, act_sym, args):
        """min(Q1'(s', a~), Q2'(s', a~)) with a~ = clip(mu'(s') + noise, low, high)."""
        qval2_sym = self.qfunc2.get_loss_symbols()["qval"]
        shapes = executors.target_q_shapes(self.qfunc_input_shapes)
        shared = set(param_shapes(qval_sym, shapes)) & set(param_shapes(qval2_sym, shapes))
        if shared:
            raise ValueError("TD3's two critics must have distinct parameter names; both "
                             "have %s" % sorted(shared))
        self.qfunc2_target_params = executors.target_params(self.ctx, qval2_sym, shapes)
        action_low, action_high = flat_bounds(self.env.action_space)
        half_range = (action_high - action_low) / 2.0
        self._noise_std = self.target_noise * half_range
        self._noise_bound = self.target_noise_clip * half_range
        # an input of the update's packed batch: drawn and copied in with it (_fill_batch)
        self._target_noise = self._batch.views["target_noise"]
        low = mx.nd.array(action_low.reshape(1, -1), ctx=self.ctx, dtype=np.float32)
        high = mx.nd.array(action_high.reshape(1, -1), ctx=self.ctx, dtype=np.float32)
        args.update({"target_noise": self._target_noise, "act_low": low, "act_high": high})
        args.update(self.qfunc2_target_params.views)
        # one obs variable for the three networks (each symbol has its own "obs" node, and
        # an executor cannot bind three arguments of one name)
        obs = mx.symbol.Variable("obs")
        smoothed = mx.symbol.broadcast_minimum(
            mx.symbol.broadcast_maximum(act_sym(obs=obs) + mx.symbol.Variable("target_noise"),
                                        mx.symbol.Variable("act_low")),
            mx.symbol.Variable("act_high"))
        return mx.symbol.minimum(qval_sym(obs=obs, act=smoothed),
                                 qval2_sym(obs=obs, act=smoothed))

    def init_net(self):
        """DDPG's executors (with the twin target above), then the second critic's, bound
        with DDPG's binding functions (:mod:`ddpg.executors`)."""
        super(TD3, self).init_net()
        # one obs, act and yval array for both critics: the batch is copied in once and
        # target_executor's output is both critics' target
        shared = {name: self.qfunc.arg_dict[name] for name in ("obs", "act", "yval")}
        shared.update(executors.weight_input(self._batch.views))
        executors.bind_qfunc(
            self.qfunc2, self.ctx, self.batch_size,
            regularization.create_updater(self.qfunc_updater, self.qfunc_lr,
                                          self.qfunc_grad_clip),
            self.qfunc_weight_decay, self.qfunc_input_shapes, shared, statistics=False)
        self.qfunc2_target = executors.target_network(
            self.ctx, self.qfunc2.get_loss_symbols()["qval"],
            executors.target_q_shapes(self.qfunc_input_shapes),
            {"obs": self.policy_target.arg_dict["obs"]}, self.qfunc2_target_params,
            self.qfunc2.params, "qfunc2")

    def _batch_input_shapes(self, obs_dim, act_dim):
        shapes = super(TD3, self)._batch_input_shapes(obs_dim, act_dim)
        shapes["target_noise"] = (self.batch_size, act_dim)
        return shapes

    def _fill_batch(self, host, batch):
        """DDPG's batch arrays plus this update's target-policy noise."""
        acts = super(TD3, self)._fill_batch(host, batch)
        host["target_noise"][...] = self.draw_target_noise()
        return acts

    def draw_target_noise(self):
        """The clipped target-action noise of one update, drawn with numpy's generator."""
        noise = np.random.randn(self.batch_size, len(self._noise_std)) * self._noise_std
        return np.clip(noise, -self._noise_bound, self._noise_bound)

    def _update_critics(self, acts, ys):
        """Step 3 for both critics, on the same batch and targets; the statistics are the
        first critic's."""
        q_stats = super(TD3, self)._update_critics(acts, ys)
        qfunc_args = self.qfunc.arg_dict
        # the obs, act and yval arrays are shared with the first critic: nothing is copied
        self.qfunc2.update_params(qfunc_args["obs"], qfunc_args["act"], ys)
        return q_stats

    def _soft_update_pairs(self):
        """DDPG's policy and first critic, then the second critic."""
        return super(TD3, self)._soft_update_pairs() + [(self.qfunc2_target_params,
                                                         self.qfunc2.params)]
