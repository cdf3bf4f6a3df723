"""The settings of a DDPG or TD3 run: :class:`DDPGConfig` and :class:`TD3Config`.

A config is a frozen dataclass with one field per setting of the algorithm's constructor
(everything but the objects: ``env``, ``policy``, ``qfunc``, ``strategy``, ``eval_env``,
``logger`` and TD3's ``qfunc2``), each with its default and its documentation (the field's
``metadata["doc"]``). Building one validates it, in :meth:`DDPGConfig.validate`: the ranges of
:mod:`ddpg.hyperparams`'s table, the replay memory's sizes, hindsight replay's conflicts with
other settings (:func:`ddpg.options.check_goal_conflicts`) and the update schedule
(:func:`ddpg.options.update_schedule`). What depends on the environment or the device is
checked when the algorithm is built: ``ctx``, ``mkldnn`` and ``omp_threads`` where they are
resolved (:mod:`ddpg.backend.context`, :mod:`ddpg.backend.kernels`), and hindsight replay's
needs of the environment (:func:`ddpg.options.check_goal_settings`).

``DDPG(env, policy, qfunc, strategy, **settings)`` builds ``DDPGConfig(**settings)``;
``DDPG.from_config(env, policy, qfunc, strategy, config)`` takes one; ``algo.config`` is the
config an algorithm was built with. ``tests/test_config.py`` checks that the fields agree with
the constructors' signatures, :data:`ddpg.hyperparams.TABLE`, the command line's flags and
the presets.
"""
import dataclasses

from ddpg import hyperparams, options

__all__ = ["DDPGConfig", "TD3Config", "OBJECTS"]

#: The constructor arguments that are objects, not settings (not fields of a config).
OBJECTS = ("env", "policy", "qfunc", "strategy", "eval_env", "logger", "qfunc2")


def setting(default, doc):
    """A config field: ``default``, and ``doc`` (its documentation) in its metadata."""
    return dataclasses.field(default=default, metadata={"doc": doc})


def _documented(cls):
    """Append each field's documentation to the docstring of config class ``cls``."""
    own = [field for field in dataclasses.fields(cls) if field.name in cls.__annotations__]
    cls.__doc__ += "\n" + "\n".join("    %s (default %r): %s" % (
        field.name, field.default, field.metadata["doc"]) for field in own) + "\n"
    return cls


@_documented
@dataclasses.dataclass(frozen=True)
class DDPGConfig:
    """DDPG's settings, validated when built; frozen (assigning a field raises
    ``dataclasses.FrozenInstanceError``; ``dataclasses.replace`` gives a changed copy).

    The fields up to ``seed`` are the MXNet example's arguments, with its defaults. Fields:
    """
    # pylint: disable=too-many-instance-attributes
    ctx: object = setting(None, "the MXNet context; None picks mx.gpu(0) when MXNet sees a "
                                "GPU, else mx.cpu() ('cpu' and 'gpu' name them too)")
    batch_size: int = setting(32, "transitions per update")
    n_epochs: int = setting(1000, "epochs to train")
    epoch_length: int = setting(1000, "environment steps per epoch (a multiple of n_envs)")
    memory_size: int = setting(1000000, "replay memory capacity, in transitions")
    memory_start_size: int = setting(1000, "transitions collected before updates start (0: "
                                           "update at once)")
    discount: float = setting(0.99, "discount factor, in [0, 1]")
    max_path_length: int = setting(1000, "episode cut-off, in environment steps")
    eval_samples: int = setting(10000, "environment steps of deterministic evaluation "
                                       "rollouts per evaluation")
    qfunc_updater: str = setting("adam", "the Q-function's MXNet optimizer")
    qfunc_lr: float = setting(1e-4, "the Q-function's learning rate")
    policy_updater: str = setting("adam", "the policy's MXNet optimizer")
    policy_lr: float = setting(1e-4, "the policy's learning rate")
    soft_target_tau: float = setting(1e-3, "soft target update rate, in (0, 1]")
    n_updates_per_sample: object = setting(1, "updates after each environment step; a "
                                              "fraction 1/k is one update every k steps")
    include_horizon_terminal: bool = setting(False, "store transitions cut by the time limit "
                                                    "as terminal (the original's option)")
    seed: int = setting(12345, "seeds numpy, MXNet and the environments (environment i: "
                               "seed + i; evaluation: seed + n_envs)")
    eval_interval: object = setting(1, "evaluate every this many epochs (and always at the "
                                       "last); None: at the last epoch only, as the original")
    bootstrap_truncated: bool = setting(
        True, "a transition cut by a time limit is stored as non-terminal, so its target "
              "bootstraps from s'; False: the original's behaviour (dropped, or terminal)")
    progress_bar: bool = setting(True, "show pyprind's progress bar over each epoch")
    flush_denormals: bool = setting(True, "flush denormal floats to zero while building and "
                                          "training (ddpg.backend.fpu)")
    skip_nonfinite: bool = setting(
        False, "skip (and count in n_skipped_nonfinite) a transition whose observation or "
               "reward is not finite, instead of raising ddpg.errors.NonFiniteError")
    mkldnn: object = setting("auto", "MXNet's oneDNN kernels on the CPU: True, False or "
                                     "'auto' (off when no layer has over 64 units)")
    start_steps: int = setting(0, "the run's first start_steps steps act uniformly at random "
                                  "(TD3's warm-up; 0: never)")
    scale_reward: float = setting(1.0, "rewards are multiplied by this before they are stored "
                                       "(rllab's); exploration returns stay unscaled")
    qfunc_weight_decay: float = setting(0.0, "L2 penalty 0.5 * decay * sum(w ** 2) over the "
                                             "Q weights (not biases), added to its loss")
    policy_weight_decay: float = setting(0.0, "the same penalty over the policy's weights")
    qfunc_grad_clip: object = setting(None, "MXNet's element-wise clip_gradient of the Q "
                                            "optimiser (None: no clipping)")
    policy_grad_clip: object = setting(None, "the same for the policy's optimiser")
    train_freq: int = setting(1, "run gradient_steps updates every train_freq environment "
                                 "steps (Stable-Baselines3's terms)")
    gradient_steps: object = setting(None, "updates each time; None takes "
                                           "n_updates_per_sample")
    omp_threads: object = setting("auto", "MXNet's OpenMP threads on the CPU: a number, or "
                                          "'auto' (1 when no layer has over 64 units)")
    loss_log_interval: int = setting(100, "with a TensorBoard output, the losses of every "
                                          "loss_log_interval-th update are logged")
    policy_delay: int = setting(1, "the policy step and the soft target updates run on every "
                                   "policy_delay-th update only (the Q update every time)")
    n_envs: int = setting(1, "environments stepped together (env and n_envs - 1 clones); "
                             "step counts still count transitions")
    vec_env: str = setting("sync", "with n_envs > 1: 'sync' steps them in this process, "
                                   "'async' each in a worker process")
    n_step: int = setting(1, "targets sum n_step rewards before they bootstrap, never across "
                             "an episode's end")
    prioritized_replay: bool = setting(False, "proportional prioritised replay "
                                              "(ddpg.replay.prioritized)")
    per_alpha: float = setting(0.6, "prioritised replay: probabilities ~ (|TD error| + "
                                    "per_eps) ** per_alpha")
    per_beta: float = setting(0.4, "prioritised replay: importance-weight exponent, annealed "
                                   "to 1 over the run")
    per_eps: float = setting(1e-6, "prioritised replay: added to each |TD error|")
    her: bool = setting(False, "hindsight experience replay for a goal-conditioned env "
                               "(ddpg.replay.her)")
    her_strategy: str = setting("future", "where a relabelled goal comes from: 'future', "
                                          "'final' or 'episode'")
    her_k: int = setting(4, "relabelled transitions per real one in a batch")
    obs_norm: bool = setting(False, "observations standardised by running statistics "
                                    "wherever they enter a network (ddpg.obs_normalizer)")
    action_l2: float = setting(0.0, "adds action_l2 * mean(mu(s) ** 2) to the policy loss")
    target_update_interval: int = setting(1, "the soft target updates run on every "
                                             "target_update_interval-th update only")

    #: The ``--algo`` name whose rows of :mod:`ddpg.hyperparams` this config holds.
    ALGORITHM = "ddpg"

    def __post_init__(self):
        self.validate()

    def validate(self):
        """Raise ``ValueError`` (the message naming the setting) for the first setting out of
        its range or in conflict with another, in this order: the table's ranges and the
        replay memory's sizes, hindsight replay's conflicts, the update schedule."""
        hyperparams.check({name: getattr(self, name)
                           for name in hyperparams.checked_names("ddpg")})
        options.check_goal_conflicts(self.her, self.n_step, self.prioritized_replay)
        self.update_schedule()

    def update_schedule(self):
        """``(train_freq, gradient_steps)`` of :func:`ddpg.options.update_schedule`."""
        return options.update_schedule(self.n_updates_per_sample, self.train_freq,
                                       self.gradient_steps)

    @classmethod
    def names(cls):
        """The fields' names, in the constructor's order."""
        return [field.name for field in dataclasses.fields(cls)]

    def settings(self):
        """``{name: value}`` of every field: ``DDPG(env, ..., **config.settings())``."""
        return {name: getattr(self, name) for name in self.names()}


@_documented
@dataclasses.dataclass(frozen=True)
class TD3Config(DDPGConfig):
    """TD3's settings: DDPG's (``policy_delay`` with TD3's default of 2), and TD3's own.
    Fields:
    """
    policy_delay: int = setting(2, "the policy step and the soft target updates run on every "
                                   "policy_delay-th critic update only (TD3: 2)")
    target_noise: float = setting(0.2, "std of the target-action noise, relative to the "
                                       "action half-range")
    target_noise_clip: float = setting(0.5, "clip of the target-action noise, relative to "
                                            "the action half-range")

    ALGORITHM = "td3"

    def validate(self):
        """TD3's noise settings, then DDPG's checks."""
        hyperparams.check({"target_noise": self.target_noise,
                           "target_noise_clip": self.target_noise_clip})
        super().validate()
