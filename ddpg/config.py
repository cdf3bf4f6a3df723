"""The settings of a DDPG or TD3 run: :class:`DDPGConfig` and :class:`TD3Config`.

A config is a frozen dataclass with one field per setting of the algorithm's constructor
(everything but the objects: ``env``, ``policy``, ``qfunc``, ``strategy``, ``eval_env``,
``logger`` and TD3's ``qfunc2``). A field is the whole declaration of its setting: the default,
the documentation and, in its metadata (:func:`setting`), its :class:`ddpg.kinds.Kind`, the
example's flag for it and whether checkpoints record it. :data:`ddpg.hyperparams.TABLE` is read
from the fields, and the command line from the table.

Building a config validates it, in one method, :meth:`DDPGConfig.validate`: every field's
range, the replay memory's sizes (:func:`check_relations`), the settings hindsight replay cannot
be combined with (:func:`check_goal_conflicts`) and the update schedule
(:func:`update_schedule`). What depends on the environment or the device is checked when the
algorithm is built: ``ctx``, ``mkldnn`` and ``omp_threads`` where they are resolved
(:mod:`ddpg.backend.context`, :mod:`ddpg.backend.kernels`), and hindsight replay's needs of
the environment (:func:`ddpg.options.check_goal_settings`).

``DDPG(env, policy, qfunc, strategy, **settings)`` builds ``DDPGConfig(**settings)``;
``DDPG.from_config(env, policy, qfunc, strategy, config)`` takes one; ``algo.config`` is the
config an algorithm was built with. ``tests/test_config.py`` checks that the fields agree with
the constructors' signatures, the command line's flags and the presets.

The module imports nothing of ``ddpg`` but :mod:`ddpg.kinds`.
"""
import dataclasses
import inspect

from ddpg.kinds import (AUTO_SWITCH, AUTO_THREADS, CLOSED_UNIT, CONTEXT, FINITE, HALF_OPEN_UNIT,
                        HER_STRATEGY, INTEGER, MEMORY_KIND, NON_NEGATIVE, NON_NEGATIVE_INT,
                        OPTIMIZER, POSITIVE, POSITIVE_INT, POSITIVE_NUMBER, SWITCH, UPDATES,
                        VEC_ENV)

__all__ = ["DDPGConfig", "TD3Config", "CONFIGS", "register_config", "OBJECTS", "SAME_NAME",
           "CARTPOLE_MAX_PATH_LENGTH", "FALLBACK_MAX_PATH_LENGTH", "setting", "documented",
           "check_range", "check_relations",
           "check_goal_conflicts", "update_schedule", "raise_goal_conflicts"]

#: The constructor arguments that are objects, not settings (not fields of a config).
OBJECTS = ("env", "policy", "qfunc", "strategy", "eval_env", "logger", "qfunc2")
#: max_path_length of the original run.py, used for the cart-pole.
CARTPOLE_MAX_PATH_LENGTH = 100
#: Used when a gymnasium environment declares no time limit of its own.
FALLBACK_MAX_PATH_LENGTH = 1000
#: :func:`setting`'s ``flag`` default: the flag's destination is the setting's name.
SAME_NAME = "<the setting's name>"


def setting(default, kind, doc, help=None,  # pylint: disable=redefined-builtin
            flag=SAME_NAME, cli_default=dataclasses.MISSING, from_flag=None, cli_options=None,
            checkpointed=True, structural=False):
    """A config field: its ``default``, and in its metadata ``doc`` (its documentation),
    ``kind`` (a :class:`ddpg.kinds.Kind`: what values it takes), and its row of
    :data:`ddpg.hyperparams.TABLE` (see :class:`ddpg.hyperparams.Hyperparameter`): ``help``
    (the example's ``--help`` text; by default ``doc``), ``flag`` (the argparse destination;
    None: no flag), ``cli_default`` (by default ``default``), ``from_flag`` (the flag's value
    to the setting's; by default the same), ``cli_options``, ``checkpointed`` and
    ``structural``."""
    return dataclasses.field(default=default, metadata={
        "doc": doc, "kind": kind, "help": doc if help is None else help, "flag": flag,
        "cli_default": default if cli_default is dataclasses.MISSING else cli_default,
        "from_flag": from_flag or (lambda value: value), "cli_options": dict(cli_options or {}),
        "checkpointed": checkpointed, "structural": structural})


#: ``--algo`` name -> config class: every algorithm's settings, registered with
#: :func:`register_config` (DDPG's first); :mod:`ddpg.hyperparams` builds its table from them.
CONFIGS = {}


def register_config(cls):
    """Register the config class ``cls`` under its ``ALGORITHM`` name (a class decorator): its
    fields join :data:`ddpg.hyperparams.TABLE`, its name the command line's ``--algo``. It
    must extend :class:`DDPGConfig` (the settings every algorithm shares)."""
    name = cls.ALGORITHM
    if name in CONFIGS and CONFIGS[name] is not cls:
        raise ValueError("an algorithm named %r is registered already (%s)"
                         % (name, CONFIGS[name].__name__))
    if CONFIGS and not issubclass(cls, CONFIGS["ddpg"]):
        raise TypeError("%s must extend DDPGConfig" % cls.__name__)
    CONFIGS[name] = cls
    return cls


def documented(cls):
    """Append each field's documentation to the docstring of config class ``cls``."""
    own = [field for field in dataclasses.fields(cls) if field.name in cls.__annotations__]
    # cleaned first: Python 3.13 strips a docstring's indentation when it compiles it, 3.12
    # and older do not, and the lines appended must line up with the rest either way
    cls.__doc__ = inspect.cleandoc(cls.__doc__) + "\n\n" + "\n".join("%s (default %r): %s" % (
        field.name, field.default, field.metadata["doc"]) for field in own) + "\n"
    return cls


@register_config
@documented
@dataclasses.dataclass(frozen=True)
class DDPGConfig:
    """DDPG's settings, validated when built; frozen (assigning a field raises
    ``dataclasses.FrozenInstanceError``; ``dataclasses.replace`` gives a changed copy).

    The fields up to ``seed`` are the MXNet example's arguments, with its defaults. Fields:
    """
    # pylint: disable=too-many-instance-attributes
    ctx: object = setting(None, CONTEXT, "the MXNet context; None picks mx.gpu(0) when MXNet "
        "sees a GPU, else mx.cpu() ('cpu' and 'gpu' name them too)",
        help="auto = GPU when MXNet sees one, else CPU", cli_default="auto",
        from_flag=lambda value: None if value == "auto" else value,
        cli_options={"choices": ["auto", "cpu", "gpu"]}, checkpointed=False)
    batch_size: int = setting(32, POSITIVE_INT, "transitions per update")
    n_epochs: int = setting(1000, POSITIVE_INT, "epochs to train")
    epoch_length: int = setting(1000, POSITIVE_INT, "environment steps per epoch (a multiple of "
        "n_envs)", help="environment steps per epoch")
    memory_size: int = setting(1000000, POSITIVE_INT, "replay memory capacity, in transitions",
        help="replay memory capacity (transitions)", structural=True)
    memory_start_size: int = setting(1000, NON_NEGATIVE_INT, "transitions collected before "
        "updates start (0: update at once)", help="transitions collected before updates start",
        cli_default=10000)
    discount: float = setting(0.99, CLOSED_UNIT, "discount factor, in [0, 1]")
    max_path_length: int = setting(1000, POSITIVE_INT, "episode cut-off, in environment steps",
        help="episode cut-off; default %d for cartpole (run.py), else the environment's own "
             "time limit, else %d" % (CARTPOLE_MAX_PATH_LENGTH, FALLBACK_MAX_PATH_LENGTH),
        cli_default=None)
    eval_samples: int = setting(10000, NON_NEGATIVE_INT, "environment steps of deterministic "
        "evaluation rollouts per evaluation",
        help="environment steps of deterministic evaluation rollouts")
    qfunc_updater: str = setting("adam", OPTIMIZER, "the Q-function's MXNet optimizer",
        help="any MXNet optimizer name", structural=True)
    qfunc_lr: float = setting(1e-4, POSITIVE, "the Q-function's learning rate",
        help="Q-function learning rate", cli_default=1e-3)
    policy_updater: str = setting("adam", OPTIMIZER, "the policy's MXNet optimizer",
        help="any MXNet optimizer name", structural=True)
    policy_lr: float = setting(1e-4, POSITIVE, "the policy's learning rate",
        help="policy learning rate")
    soft_target_tau: float = setting(1e-3, HALF_OPEN_UNIT, "soft target update rate, in (0, 1]")
    n_updates_per_sample: object = setting(1, UPDATES, "updates after each environment step; a "
        "fraction 1/k is one update every k steps",
        help="updates after each step; a fraction 1/k (0.5) is one update every k steps")
    include_horizon_terminal: bool = setting(False, SWITCH, "store transitions cut by the time "
        "limit as terminal (the original's option)",
        help="store transitions cut by the time limit as terminal")
    seed: int = setting(12345, INTEGER, "seeds numpy, MXNet and the environments (environment i: "
        "seed + i; evaluation: seed + n_envs)",
        help="seeds numpy, MXNet and the environment (evaluation: seed + n_envs)")
    eval_interval: object = setting(1,
        POSITIVE_INT.or_none("a positive integer or None (last epoch only)"), "evaluate every "
        "this many epochs (and always at the last); None: at the last epoch only, as the "
        "original", help="evaluate every N epochs; 0 = the last epoch only (the original)",
        from_flag=lambda value: value or None)
    bootstrap_truncated: bool = setting(True, SWITCH, "a transition cut by a time limit is "
        "stored as non-terminal, so its target bootstraps from s'; False: the original's "
        "behaviour (dropped, or terminal)",
        help="treat time-limit cuts as the original did (drop them, or terminal) instead of "
             "bootstrapping from s'", flag="original_truncation", cli_default=False,
        from_flag=lambda value: not value)
    progress_bar: bool = setting(True, SWITCH, "show pyprind's progress bar over each epoch",
        help="no progress bar over each epoch", flag="no_progress_bar", cli_default=False,
        from_flag=lambda value: not value)
    flush_denormals: bool = setting(True, SWITCH, "flush denormal floats to zero while building "
        "and training (ddpg.backend.fpu)",
        help="flush denormal floats to zero while building and training", flag=None)
    skip_nonfinite: bool = setting(False, SWITCH, "skip (and count in n_skipped_nonfinite) a "
        "transition whose observation or reward is not finite, instead of raising "
        "ddpg.errors.NonFiniteError",
        help="skip transitions whose observation or reward is not finite", flag=None)
    mkldnn: object = setting("auto", AUTO_SWITCH, "MXNet's oneDNN kernels on the CPU: True, "
        "False or 'auto' (off when no layer has over 64 units)",
        help="MXNet's oneDNN kernels on the CPU", flag=None)
    start_steps: int = setting(0, NON_NEGATIVE_INT, "the run's first start_steps steps act "
        "uniformly at random (TD3's warm-up; 0: never)",
        help="first N steps act uniformly at random (0: the original, never)")
    scale_reward: float = setting(1.0, FINITE, "rewards are multiplied by this before they are "
        "stored (rllab's); exploration returns stay unscaled",
        help="DDPG's scale_reward (rllab's): rewards are multiplied by this before they are "
             "stored; unlike --scale-reward, the returns reported stay unscaled",
        flag="ddpg_scale_reward")
    qfunc_weight_decay: float = setting(0.0, NON_NEGATIVE, "L2 penalty 0.5 * decay * sum(w ** 2) "
        "over the Q weights (not biases), added to its loss",
        help="L2 penalty 0.5*decay*sum(w^2) on the Q weights (DDPG paper: 1e-2)")
    policy_weight_decay: float = setting(0.0, NON_NEGATIVE, "the same penalty over the policy's "
        "weights", help="L2 penalty on the policy weights, as --qfunc-weight-decay")
    qfunc_grad_clip: object = setting(None, POSITIVE_NUMBER.or_none("a positive number or None"),
        "MXNet's element-wise clip_gradient of the Q optimiser (None: no clipping)",
        help="clip each Q gradient element to [-c, c] (MXNet clip_gradient)")
    policy_grad_clip: object = setting(None, POSITIVE_NUMBER.or_none("a positive number or None"),
        "the same for the policy's optimiser",
        help="clip each policy gradient element to [-c, c]")
    train_freq: int = setting(1, POSITIVE_INT, "run gradient_steps updates every train_freq "
        "environment steps (Stable-Baselines3's terms)",
        help="update every N environment steps (SB3's train_freq)")
    gradient_steps: object = setting(None, POSITIVE_INT.or_none("a positive integer"),
        "updates each time; None takes n_updates_per_sample",
        help="updates each time (SB3's gradient_steps); default: --n-updates-per-sample")
    omp_threads: object = setting("auto", AUTO_THREADS, "MXNet's OpenMP threads on the CPU: a "
        "number, or 'auto' (1 when no layer has over 64 units)",
        help="MXNet's OpenMP threads on the CPU", flag=None)
    loss_log_interval: int = setting(100, POSITIVE_INT, "with a TensorBoard output, the losses "
        "of every loss_log_interval-th update are logged",
        help="with --tensorboard: log the Q and policy loss of every N-th update",
        flag="tensorboard_every", cli_options={"metavar": "N"}, checkpointed=False)
    policy_delay: int = setting(1, POSITIVE_INT, "the policy step and the soft target updates "
        "run on every policy_delay-th update only (the Q update every time)",
        help="Q updates per policy and target update (default: 1 for ddpg, as the original; 2 "
             "for td3)", cli_default=None)
    n_envs: int = setting(1, POSITIVE_INT, "environments stepped together (env and n_envs - 1 "
        "clones); step counts still count transitions",
        help="environments stepped together (environment i seeded with seed + i); every step "
             "count still counts transitions")
    vec_env: str = setting("sync", VEC_ENV, "with n_envs > 1: 'sync' steps them in this process, "
        "'async' each in a worker process",
        help="with --n-envs: sync steps them in this process, async each in a worker process",
        cli_options={"choices": ["sync", "async"]})
    n_step: int = setting(1, POSITIVE_INT, "targets sum n_step rewards before they bootstrap, "
        "never across an episode's end",
        help="targets sum N rewards before bootstrapping (n-step returns), never across an "
             "episode's end; 1: the original's 1-step targets", structural=True)
    prioritized_replay: bool = setting(False, SWITCH, "proportional prioritised replay "
        "(ddpg.replay.prioritized)",
        help="proportional prioritised replay (Schaul et al. 2016): sampled by |TD error|, "
             "importance weights in the Q loss", structural=True)
    per_alpha: float = setting(0.6, NON_NEGATIVE, "prioritised replay: probabilities ~ (|TD "
        "error| + per_eps) ** per_alpha",
        help="with --prioritized-replay: priorities ** alpha (0: uniform; the paper's 0.6)")
    per_beta: float = setting(0.4, CLOSED_UNIT, "prioritised replay: importance-weight exponent, "
        "annealed to 1 over the run",
        help="with --prioritized-replay: importance-weight exponent at the first update, "
             "annealed to 1 over the run (the paper's 0.4)")
    per_eps: float = setting(1e-6, POSITIVE, "prioritised replay: added to each |TD error|",
        help="with --prioritized-replay: added to each |TD error|, so no priority is 0")
    her: bool = setting(False, SWITCH, "hindsight experience replay for a goal-conditioned env "
        "(ddpg.replay.her)",
        help="hindsight experience replay for a goal-conditioned environment (Fetch tasks): "
             "goals relabelled when a batch is sampled, rewards recomputed", structural=True)
    her_strategy: str = setting("future", HER_STRATEGY, "where a relabelled goal comes from: "
        "'future', 'final' or 'episode'",
        help="with --her: where a relabelled goal comes from (the HER paper's strategies)",
        cli_options={"choices": ["future", "final", "episode"]})
    her_k: int = setting(4, NON_NEGATIVE_INT, "relabelled transitions per real one in a batch",
        help="with --her: relabelled transitions per real one in a batch (the HER paper's k)")
    obs_norm: bool = setting(False, SWITCH, "observations standardised by running statistics "
        "wherever they enter a network (ddpg.obs_normalizer)",
        help="standardise observations by running statistics, clipped to +-200 before and +-5 "
             "after, wherever they enter a network (the HER authors' normaliser)", structural=True)
    action_l2: float = setting(0.0, NON_NEGATIVE, "adds action_l2 * mean(mu(s) ** 2) to the "
        "policy loss",
        help="adds action_l2 * mean(mu(s)^2) to the policy loss (the HER authors' 1.0)")
    target_update_interval: int = setting(1, POSITIVE_INT, "the soft target updates run on every "
        "target_update_interval-th update only",
        help="soft target updates on every N-th update only (the HER authors: 40)")
    replay_memory: object = setting(None, MEMORY_KIND, "the replay memory kind, by its name in "
        "ddpg.replay.MEMORY_KINDS; None: chosen by her, prioritized_replay and n_step",
        flag=None, structural=True)

    #: The ``--algo`` name of this config's algorithm.
    ALGORITHM = "ddpg"

    def __post_init__(self):
        self.validate()

    def validate(self):
        """Raise ``ValueError`` (the message naming the setting) for the first setting out of
        its range or in conflict with another, in this order: each field's range, in field
        order; the replay memory's sizes and the epoch's steps; hindsight replay's conflicts;
        the update schedule."""
        settings = self.settings()
        for name in DDPGConfig.names():
            check_range(DDPGConfig, name, settings[name])
        check_relations(settings)
        check_goal_conflicts(self.her, self.n_step, self.prioritized_replay)
        self.update_schedule()

    def update_schedule(self):
        """``(train_freq, gradient_steps)`` of :func:`update_schedule`."""
        return update_schedule(self.n_updates_per_sample, self.train_freq, self.gradient_steps)

    @classmethod
    def names(cls):
        """The fields' names, in the constructor's order."""
        return [field.name for field in dataclasses.fields(cls)]

    def settings(self):
        """``{name: value}`` of every field: ``DDPG(env, ..., **config.settings())``."""
        return {name: getattr(self, name) for name in self.names()}


@register_config
@documented
@dataclasses.dataclass(frozen=True)
class TD3Config(DDPGConfig):
    """TD3's settings: DDPG's (``policy_delay`` with TD3's default of 2), and TD3's own.
    Fields:
    """
    policy_delay: int = dataclasses.field(
        default=2, metadata=DDPGConfig.__dataclass_fields__["policy_delay"].metadata)
    target_noise: float = setting(0.2, NON_NEGATIVE, "std of the target-action noise, relative "
        "to the action half-range",
        help="td3: target-action noise std, relative to the action half-range")
    target_noise_clip: float = setting(0.5, NON_NEGATIVE, "clip of the target-action noise, "
        "relative to the action half-range",
        help="td3: the noise's clip, relative to the action half-range")

    ALGORITHM = "td3"

    def validate(self):
        """TD3's own settings' ranges, then DDPG's checks."""
        for name in ("target_noise", "target_noise_clip"):
            check_range(TD3Config, name, getattr(self, name))
        super().validate()


def check_range(config_class, name, value):
    """Raise ``ValueError`` naming setting ``name`` unless ``value`` is of the kind of
    ``config_class``'s field (:class:`ddpg.kinds.Kind`)."""
    config_class.__dataclass_fields__[name].metadata["kind"].check(name, value)


def check_relations(values):
    """Raise ``ValueError`` for the settings among ``values`` (``{name: value}``, in range)
    that do not fit together: the replay memory's sizes, an epoch's steps and the
    environments stepped together, a categorical critic's bounds."""
    if {"batch_size", "memory_size", "memory_start_size"} <= set(values):
        _check_memory_sizes(values["batch_size"], values["memory_size"],
                            values["memory_start_size"])
    if {"epoch_length", "n_envs"} <= set(values) and values["epoch_length"] % values["n_envs"]:
        raise ValueError("epoch_length (%d) must be a multiple of n_envs (%d): an epoch steps "
                         "every environment equally often"
                         % (values["epoch_length"], values["n_envs"]))
    if {"v_min", "v_max"} <= set(values) and not values["v_min"] < values["v_max"]:
        raise ValueError("v_min (%r) must be below v_max (%r)"
                         % (values["v_min"], values["v_max"]))


def _check_memory_sizes(batch_size, memory_size, memory_start_size):
    if batch_size > memory_size:
        raise ValueError("batch_size (%d) must not exceed memory_size (%d)"
                         % (batch_size, memory_size))
    if memory_start_size > memory_size:
        # the memory never holds that many transitions, so no update would ever run
        raise ValueError("memory_start_size (%d) must not exceed memory_size (%d): the "
                         "replay memory never holds more than memory_size transitions, "
                         "so no update would ever run" % (memory_start_size, memory_size))
    if 0 < memory_start_size < batch_size:
        # updates would start on batches drawn from fewer transitions than they hold
        raise ValueError("batch_size (%d) must not exceed memory_start_size (%d); "
                         "memory_start_size=0 starts updating at once"
                         % (batch_size, memory_start_size))


def update_schedule(n_updates_per_sample, train_freq=1, gradient_steps=None):
    """``(train_freq, gradient_steps)``: run ``gradient_steps`` updates every ``train_freq``
    environment steps.

    ``gradient_steps=None`` takes the count from ``n_updates_per_sample``. That may be a
    whole number (the original's meaning: that many updates after every step) or a fraction
    ``1/k`` (0.5, 0.25, ...), which means one update every ``k`` steps. The defaults (1, 1) are
    the original's schedule. Which step triggers is decided from the run's step count (an
    update follows step ``t`` when ``t % train_freq == 0``), so the schedule has no state of
    its own and a restored run keeps it.
    """
    check_range(DDPGConfig, "train_freq", train_freq)
    check_range(DDPGConfig, "gradient_steps", gradient_steps)
    ratio = n_updates_per_sample
    if isinstance(ratio, bool) or not ratio > 0:
        raise ValueError("n_updates_per_sample must be positive, got %r" % (ratio,))
    if gradient_steps is not None:
        if ratio != 1:
            raise ValueError("give gradient_steps or n_updates_per_sample, not both "
                             "(n_updates_per_sample=%r)" % (ratio,))
        return int(train_freq), int(gradient_steps)
    if int(ratio) == ratio:
        return int(train_freq), int(ratio)
    every = 1.0 / ratio
    if ratio > 1 or abs(every - round(every)) > 1e-9:
        raise ValueError("n_updates_per_sample must be a positive integer or 1/k for an "
                         "integer k (0.5 = one update every 2 steps), got %r" % (ratio,))
    if train_freq != 1:
        raise ValueError("a fractional n_updates_per_sample (%r) already sets the update "
                         "frequency; give train_freq with gradient_steps instead" % (ratio,))
    return int(round(every)), 1


def check_goal_conflicts(her, n_step, prioritized_replay):
    """``ValueError`` when ``her`` is combined with a setting that changes what a stored
    transition means: n-step sums, or priorities kept per slot (the environment's side is
    :func:`ddpg.options.check_goal_settings`'s)."""
    if her:
        raise_goal_conflicts((
            ("n_step", n_step, 1, "an n-step sum holds the rewards of the episode's own goal, "
                                  "not of a relabelled one"),
            ("prioritized_replay", prioritized_replay, False,
             "priorities are kept per stored transition, not per relabelled one")))


def raise_goal_conflicts(conflicts):
    """Hindsight replay's error: raise for the first ``(setting, value, the value HER needs,
    why)`` of ``conflicts`` whose value is not the one HER needs."""
    for name, value, plain, why in conflicts:
        if value != plain:
            raise ValueError("her=True cannot be combined with %s=%r: %s" % (name, value, why))
