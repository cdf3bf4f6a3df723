"""Deep Deterministic Policy Gradient with MXNet symbolic executors.

The design is the Apache MXNet example's: the Q-function and the policy each own a bound
executor; ``policy_executor`` is the Q network's graph under the policy loss ``-mean(Q)``, bound
on the Q-function's own argument arrays *and gradient arrays*, so its backward pass leaves
dLoss/dact in the Q-function's ``act`` gradient, which then drives the policy's backward pass.
Because the two executors share gradient memory, the order of one update is fixed: the Q
update must finish with its own gradients before the policy executor overwrites them.

``DDPG`` holds the settings, the networks and the update; the jobs around them are modules of
their own: the executor bindings (:mod:`ddpg.executors`), the training loop, owner of the
run's state and replay memory (:class:`ddpg.training.TrainingLoop`), and the evaluation
rollouts with the epoch's statistics (:mod:`ddpg.evaluation`).
"""
from collections import OrderedDict

import numpy as np

from ddpg import checkpoint, evaluation, executors, faults, options
from ddpg.config import DDPGConfig
from ddpg.logger import get_default_logger
from ddpg.training import TrainingLoop, with_state_views
from ddpg.backend import regularization, seeding
from ddpg.backend.kernels import choose_mkldnn, choose_omp_threads, hidden_layer_sizes
from ddpg.backend.context import check_gpu_supported, resolve_ctx
from ddpg.envs import seed_env
from ddpg.backend.fpu import flushing_denormals
from ddpg.backend.mxnet_log import filters_mxnet_info
from ddpg.backend.flat import PackedInputs, soft_update
from ddpg.batch_inputs import BatchInputs
from ddpg.network_state import NetworkState
from ddpg.replay import memory_class
from ddpg.backend.statistics import UpdateStatistics


@with_state_views
class DDPG(BatchInputs, NetworkState):
    """The DDPG algorithm (Lillicrap et al., 2015) as in the MXNet example.

    The arguments up to ``seed`` are the original's, with its defaults, except ``ctx``: ``None``
    picks ``mx.gpu(0)`` when MXNet sees a GPU and ``mx.cpu()`` otherwise. The keyword arguments
    after ``seed`` are additions (see docs/differences.md; the algorithm options of
    docs/options.md keep the original's behaviour by default). Every argument but the objects
    is a setting, documented, defaulted and validated as a field of :class:`ddpg.DDPGConfig`:
    the constructor builds one (``algo.config``), and :meth:`from_config` takes one. Each
    setting is also an attribute of the algorithm (``ctx``, ``mkldnn`` and ``omp_threads``
    resolved: the context, and the choices made).

    eval_env: environment for evaluation rollouts; by default a clone of ``env``, so that
        evaluating never disturbs the training episode.
    logger: the :class:`ddpg.logger.Logger` of the run's text, rows and snapshots; by default
        the module-level one (``from ddpg import logger``), as the example.
    """

    #: The class of this algorithm's settings (:mod:`ddpg.config`).
    CONFIG = DDPGConfig
    #: Attributes a checkpoint's manifest records besides ``ddpg.checkpoint.HYPERPARAMETERS``
    #: (a subclass names the hyperparameters it adds).
    CHECKPOINT_EXTRA_HYPERPARAMETERS = ()

    def __init__(self, env, policy, qfunc, strategy, ctx=None, batch_size=32, n_epochs=1000,
                 epoch_length=1000, memory_size=1000000, memory_start_size=1000,
                 discount=0.99, max_path_length=1000, eval_samples=10000,
                 qfunc_updater="adam", qfunc_lr=1e-4, policy_updater="adam", policy_lr=1e-4,
                 soft_target_tau=1e-3, n_updates_per_sample=1, include_horizon_terminal=False,
                 seed=12345, eval_env=None, eval_interval=1, bootstrap_truncated=True,
                 progress_bar=True, flush_denormals=True, skip_nonfinite=False,
                 mkldnn="auto", start_steps=0, scale_reward=1.0, qfunc_weight_decay=0.0,
                 policy_weight_decay=0.0, qfunc_grad_clip=None, policy_grad_clip=None,
                 train_freq=1, gradient_steps=None, omp_threads="auto",
                 loss_log_interval=100, policy_delay=1, n_envs=1, vec_env="sync",
                 n_step=1, prioritized_replay=False, per_alpha=0.6, per_beta=0.4,
                 per_eps=1e-6, her=False, her_strategy="future", her_k=4, obs_norm=False,
                 action_l2=0.0, target_update_interval=1, replay_memory=None, logger=None):
        # the signature is the example's (literal defaults: tests/test_config.py checks that
        # they are the config's); every argument but the objects is a field of the config
        arguments = locals()
        config = DDPGConfig(**{name: arguments[name] for name in DDPGConfig.names()})
        self._build(env, policy, qfunc, strategy, config, eval_env, logger)

    @classmethod
    def from_config(cls, env, policy, qfunc, strategy, config, eval_env=None, logger=None,
                    **objects):
        """The algorithm of settings ``config`` (a :attr:`CONFIG`: :class:`ddpg.DDPGConfig`,
        for TD3 a :class:`ddpg.TD3Config`), the same as ``cls(env, policy, qfunc, strategy,
        eval_env=eval_env, logger=logger, **config.settings())``. ``objects``: a subclass's
        other objects (TD3's ``qfunc2``)."""
        if type(config) is not cls.CONFIG:  # pylint: disable=unidiomatic-typecheck
            raise TypeError("%s.from_config takes a %s, got %r"
                            % (cls.__name__, cls.CONFIG.__name__, type(config).__name__))
        algo = cls.__new__(cls)
        algo._build(env, policy, qfunc, strategy, config, eval_env, logger, **objects)
        return algo

    @filters_mxnet_info
    def _build(self, env, policy, qfunc, strategy, config, eval_env, logger):
        """Build the algorithm of the validated ``config`` around the objects."""
        faults.check_env(env)
        self.config = config
        self.logger = get_default_logger() if logger is None else logger
        self.ctx = resolve_ctx(config.ctx)
        check_gpu_supported(self.ctx)  # before anything runs on it
        # before MXNet's first operator, which fixes the choice for the process
        layer_sizes = hidden_layer_sizes(policy, qfunc)
        self.mkldnn = choose_mkldnn(config.mkldnn, layer_sizes, self.ctx)
        self.omp_threads = choose_omp_threads(config.omp_threads, layer_sizes, self.ctx)
        seeding.seed_global_generators(config.seed)
        self.env = env
        self.policy = policy
        self.qfunc = qfunc
        self.strategy = strategy
        for name, value in config.settings().items():
            if name not in ("ctx", "mkldnn", "omp_threads"):
                setattr(self, name, value)
        for name in ("skip_nonfinite", "prioritized_replay", "her", "obs_norm"):
            setattr(self, name, bool(getattr(self, name)))
        self.policy_delay, self.n_envs = int(self.policy_delay), int(self.n_envs)
        options.check_goal_settings(self)  # the environment's side (the config: the rest)
        # the replay memory's kind (ValueError for an unregistered replay_memory): whether
        # its batches carry importance weights decides the Q loss's inputs
        self._memory_class = memory_class(config)
        # The original never seeded its environment; environment i has seed + i, and the
        # evaluation copy a seed of its own so that its episodes differ from the training ones
        self.eval_env = evaluation.make_eval_env(env, eval_env)
        seed_env(self.env, config.seed)
        seed_env(self.eval_env, config.seed + config.n_envs)
        with flushing_denormals(self.flush_denormals):
            self.init_net()
        self.obs_normalizer = options.observation_normalizer(self)  # None without obs_norm
        # the owner of the run's counters, episode and replay memory (self.epoch, ... view them)
        self.loop = TrainingLoop(self)
        # JSON-able information saved in checkpoints' manifests (ddpg-train: its arguments)
        self.checkpoint_metadata = {}

    def network_params(self, network):
        """``{name: NDArray}`` of ``network``'s parameters (one of ``CHECKPOINT_NETWORKS``),
        views of the running executors' arrays, inputs left out: what a checkpoint saves and
        restores in place, however the arrays are laid out."""
        arg_dict = getattr(self, network).arg_dict
        return OrderedDict((name, array) for name, array in arg_dict.items()
                           if name not in checkpoint.INPUT_NAMES)

    def network_updater(self, network):
        """The MXNet updater of ``network`` (one of ``CHECKPOINT_OPTIMISED``): its optimiser
        and per-parameter state, which a checkpoint saves and restores."""
        return getattr(self, network).updater

    def optimiser_settings(self, network):
        """``(learning rate, gradient clip or None)`` of this run for the optimiser of
        ``network`` (one of ``CHECKPOINT_OPTIMISED``): a restored optimiser state carries the
        saved run's, and this run's settings win."""
        return {"qfunc": (self.qfunc_lr, self.qfunc_grad_clip),
                "policy": (self.policy_lr, self.policy_grad_clip)}[network]

    def close(self):
        """End the environments' worker processes (``vec_env="async"``; else nothing)."""
        self.loop.close()

    def init_net(self):
        """Bind the Q and policy executors, their targets and the policy executor.

        The structure is the original's; each binding is a function of :mod:`ddpg.executors`,
        called in the original's order. For speed, each network's parameters live in one
        flat buffer that its executors are bound on (:mod:`ddpg.backend.flat`); executors that
        read the same batch share their input arrays (the Q executor, the policy executor and
        the policy's batch executor read one ``obs`` array); and the targets y are computed by
        one executor over both target networks, ``target_executor``, whose output array *is*
        the Q executor's ``yval`` input. ``qfunc_target`` and ``policy_target`` are views of the
        target parameters under executor names (:class:`ddpg.executors.TargetNetwork`).
        """
        obs_dim = self.env.observation_space.flat_dim
        act_dim = self.env.action_space.flat_dim
        # every array a batch is copied into, packed so that it is one copy per update
        self._batch = PackedInputs(self.ctx, self._batch_input_shapes(obs_dim, act_dim))
        batch_obs, batch_nxt = self._batch.views["obs"], self._batch.views["nxt"]
        # rewards and (1 - end) * discount of a batch, inputs of target_executor
        self._batch_rwds = self._batch.views["rwd"]
        self._batch_discounts = self._batch.views["discount_mask"]
        qval_sym = self.qfunc.get_loss_symbols()["qval"]
        act_sym = self.policy.get_loss_symbols()["act"]
        self.qfunc_input_shapes, self.policy_input_shapes = executors.input_shapes(
            self.batch_size, obs_dim, act_dim, weighted=self._memory_class.weighted,
            target_size=self._target_size())
        qfunc_target_shapes = executors.target_q_shapes(self.qfunc_input_shapes)

        # target parameters: not shared with the online networks, initialised the same below
        self.qfunc_target_params = executors.target_params(self.ctx, qval_sym,
                                                           qfunc_target_shapes)
        self.policy_target_params = executors.target_params(self.ctx, act_sym,
                                                            self.policy_input_shapes)
        self.target_executor = executors.bind_target_executor(
            self.ctx, self._batch.views, qval_sym, act_sym,
            (self.qfunc_target_params.views, self.policy_target_params.views),
            self._target_q_symbol, self._target_y_symbol)
        executors.bind_qfunc(
            self.qfunc, self.ctx, self.batch_size,
            regularization.create_updater(self.qfunc_updater, self.qfunc_lr,
                                          self.qfunc_grad_clip),
            self.qfunc_weight_decay, self.qfunc_input_shapes,
            dict({"obs": batch_obs, "yval": self.target_executor.outputs[0]},
                 **executors.weight_input(self._batch.views)), critic_loss=self._critic_loss)
        self.qfunc_target = executors.target_network(
            self.ctx, qval_sym, qfunc_target_shapes, {"obs": batch_nxt},
            self.qfunc_target_params, self.qfunc.params, "qfunc")
        self._policy_penalty = executors.bind_policy(
            self.policy, self.ctx,
            regularization.create_updater(self.policy_updater, self.policy_lr,
                                          self.policy_grad_clip),
            self.policy_weight_decay, self.policy_input_shapes, batch_obs)
        # the heart of the design: dLoss/dact lands in the Q-function's act gradient
        self.policy_executor, self.policy_executor_grad_dict = \
            executors.bind_policy_executor(self.qfunc, self.ctx, self.batch_size)
        self.policy_executor_arg_dict = self.policy_executor.arg_dict
        self.policy_target = executors.target_network(
            self.ctx, act_sym, self.policy_input_shapes, {"obs": batch_nxt},
            self.policy_target_params, self.policy.params, "policy")
        self.update_stats = UpdateStatistics(self.ctx, self.batch_size)

    def _target_size(self):
        """The numbers of a target y per transition: DDPG's one value."""
        return 1

    #: y from r, (1 - end) * discount and Q' inside ``target_executor``: DDPG's
    #: ``r + (1 - end) * discount * Q'`` (D4PG projects a distribution instead).
    _target_y_symbol = staticmethod(executors.bootstrapped_value)
    #: The critic's loss per transition (:class:`ddpg.executors.CriticLoss`): DDPG's
    #: ``(Q - y)^2`` (D4PG's is a cross-entropy).
    _critic_loss = staticmethod(executors.squared_error)

    def _target_q_symbol(self, qval_sym, act_sym, args):
        """Q'(s', mu'(s')) inside ``target_executor``: the target Q graph with the target
        policy's output as its action. A subclass may return another symbol and add the
        arrays it reads to ``args`` (TD3: the minimum of two critics at a smoothed action)."""
        return qval_sym(act=act_sym)

    def train(self, epoch_callback=None):
        """Run epochs ``self.epoch`` .. ``n_epochs - 1`` of ``epoch_length`` steps each, with
        checkpoints and ``epoch_callback(self, epoch)`` after each (see
        :meth:`ddpg.training.TrainingLoop.train`)."""
        self.loop.train(epoch_callback)

    def save(self, path):
        """Write a checkpoint folder at ``path``, atomically (see :mod:`ddpg.checkpoint`)."""
        return checkpoint.save(self, path)

    def restore(self, path, trust_pickle=False):
        """Load the checkpoint at ``path``; ``train()`` then continues from its next epoch.

        The algorithm must be built compatibly (same spaces, network layout, memory_size and
        optimisers); otherwise a :class:`ddpg.errors.CheckpointError` is raised and nothing
        is changed. Returns the checkpoint's manifest.

        Restoring reads data only (see docs/checkpoints.md). Checkpoints of the older,
        pickled format (version 1) can run code when opened: they are refused unless
        ``trust_pickle=True``, which loads them with a warning.
        """
        return checkpoint.restore(self, path, log=self.logger.log, trust_pickle=trust_pickle)

    def train_epoch(self, epoch):
        """One epoch: ``epoch_length`` environment steps with updates, then statistics."""
        with flushing_denormals(self.flush_denormals):
            self.loop.run_epoch(epoch)

    def do_update(self, itr, batch):
        """One DDPG update, in the original's order (docs/design.md, "One update").

        The order is written here only: a subclass changes what step 3 updates
        (``_update_critics``) and which targets step 6 moves (``_soft_update_pairs``).
        Everything stays on the device: the batch goes in with two copies (``_load_batch``),
        and the statistics are summed there (:class:`ddpg.backend.statistics.UpdateStatistics`).
        """
        acts = self._load_batch(batch)
        update_policy = (itr + 1) % self.policy_delay == 0
        if update_policy:
            # 1. the current policy's actions for s, before any update (kept for steps 4-5)
            self.policy.exe.forward(is_train=True)
            policy_acts = self.policy.exe.outputs[0]
        # 1-2. y = r + (1 - end) * discount * Q'(s', mu'(s')) with the target networks,
        #      written straight into the Q executor's yval input (the same array)
        self._compute_targets()
        ys = self.qfunc.arg_dict["yval"]

        # 3. Q update(s). Since policy_executor shares the grad arrays with qfunc, the update
        # order cannot be changed.
        q_stats = self._update_critics(acts, ys)
        if not update_policy:  # policy_delay: Q only, targets unchanged
            self.update_stats.add(q_stats)
            return

        # 4-5. the policy step through the *updated* Q
        policy_loss = self._policy_step(policy_acts)

        # 6. soft update of the target networks, one operation per network
        if (itr + 1) % self.target_update_interval == 0:
            for target, online in self._soft_update_pairs():
                soft_update(target.data, online.data, self.soft_target_tau)

        self.update_stats.add(q_stats, policy_loss)

    def _compute_targets(self):
        """Steps 1-2: ``target_executor``'s forward pass, which writes the targets into the
        Q executor's ``yval`` (its output array). D4PG projects them there afterwards."""
        self.target_executor.forward(is_train=False)

    def _update_critics(self, acts, ys):
        """Step 3 on the batch's ``acts`` and targets ``ys``; returns the update statistics
        (the Q executor's third output). A subclass with more critics updates them here."""
        self.qfunc.update_params(self.qfunc.arg_dict["obs"], acts, ys)
        return self.qfunc.exe.outputs[2]  # computed by the update: no second forward pass

    def td_errors(self):
        """Q(s, a) - y of the last update's batch (numpy, one per transition), from the Q
        executor's forward pass: prioritised replay's new priorities."""
        return (self.qfunc.exe.outputs[1] - self.qfunc.arg_dict["yval"]).asnumpy()[:, 0]

    def _soft_update_pairs(self):
        """Step 6's (target, online) flat parameter buffers; a subclass adds its own."""
        return [(self.policy_target_params, self.policy.params),
                (self.qfunc_target_params, self.qfunc.params)]

    def _policy_step(self, policy_acts):
        """Steps 4-5: dLoss/dact through the current Q, then the policy update.

        ``policy_acts`` are the policy's outputs for the batch from its step-1 forward pass
        (``is_train=True``), which the policy's backward pass reuses. policy_executor's obs is
        the Q executor's, which already holds the batch. Returns the policy loss (NDArray).
        """
        policy_acts.copyto(self.policy_executor.arg_dict["act"])
        self.policy_executor.forward(is_train=True)
        policy_loss = self.policy_executor.outputs[0]
        self.policy_executor.backward()
        dloss_dact = self.policy_executor_grad_dict["act"]
        if self.action_l2:  # + action_l2 * mean(a ** 2), the HER authors' action penalty
            dloss_dact += (2.0 * self.action_l2 / policy_acts.size) * policy_acts
            policy_loss = policy_loss + self.action_l2 * (policy_acts ** 2).mean()
        self._policy_update(dloss_dact)
        return policy_loss

    def _policy_update(self, dloss_dact):
        """Step 5: the policy's backward pass from ``dloss_dact`` (reusing its step-1 forward
        pass) and its optimiser step, with the L2 penalty's gradient added when
        ``policy_weight_decay`` is set."""
        if self._policy_penalty is None:
            self.policy.update_params(dloss_dact, forward=False)
        else:
            self.policy.exe.backward([dloss_dact])
            self._policy_penalty.add_gradient()
            self.policy.updater(0, self.policy.grads.data, self.policy.params.data)

    def evaluate(self, epoch, memory):
        """Record this epoch's tabular statistics, running evaluation rollouts when due.

        Evaluation runs the deterministic policy on ``eval_env`` for whole rollouts totalling
        ``eval_samples`` environment steps (:mod:`ddpg.evaluation`). The Q statistics are the
        epoch's updates' (summed on the device), so ``memory``, kept in the example's
        signature, is not read. Statistics that do not exist yet are left out of the row.
        """
        self.logger.record_tabular("Epoch", epoch)
        if evaluation.evaluation_due(epoch, self.n_epochs, self.eval_interval):
            evaluation.record_rollouts(
                self.env, self.eval_env, self.policy, epoch, eval_samples=self.eval_samples,
                max_path_length=self.max_path_length, discount=self.discount,
                skip_nonfinite=self.skip_nonfinite, logger=self.logger)
        evaluation.record_exploration_returns(self.strategy_path_returns, self.logger,
                                              self.strategy_path_successes)
        evaluation.record_update_statistics(self.update_stats, self.logger)

