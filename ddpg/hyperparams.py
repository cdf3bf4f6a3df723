"""Every hyperparameter of DDPG and TD3 in one table: its defaults, range, help and whether
checkpoints record it.

The places that need a hyperparameter are read from this table or checked against it, so
they cannot drift apart:

- its field of :class:`ddpg.config.DDPGConfig` (or :class:`ddpg.config.TD3Config`): the
  setting's default and documentation; ``tests/test_config.py`` checks that every row is a
  field with the row's default and every field a row;
- ``DDPG``'s and ``TD3``'s signatures keep literal defaults (the MXNet example's, and Python
  needs them there); ``tests/test_hyperparams.py`` checks that they equal
  :attr:`Hyperparameter.default`;
- the example's flags (:mod:`ddpg.experiment.cli`) take their default, help and type from a
  row (:attr:`Hyperparameter.flag` is the argparse destination, ``None`` for an argument the
  command line does not set), and :func:`from_flags` turns parsed flags back into
  constructor arguments;
- the config's validation (:meth:`ddpg.config.DDPGConfig.validate`) calls :func:`check`,
  which applies each row's :class:`Kind` (its range, and the error message naming the
  argument) and the relations between the replay-memory sizes;
- presets are checked by :func:`check_flag_values`;
- :func:`checkpointed_names` and :func:`structural_names` say which arguments a checkpoint's
  manifest records and which of them its contents depend on.

The module imports nothing of ``ddpg`` (MXNet only when an optimizer name is checked), so that
the algorithm modules and the experiment tooling can both use it.
"""
import collections

import numpy as np

__all__ = ["Kind", "POSITIVE_INT", "NON_NEGATIVE_INT", "POSITIVE", "POSITIVE_NUMBER",
           "NON_NEGATIVE", "CLOSED_UNIT", "HALF_OPEN_UNIT", "FINITE", "OPTIMIZER", "SWITCH",
           "INTEGER", "UPDATES", "CONTEXT", "VEC_ENV", "HER_STRATEGY", "AUTO_SWITCH",
           "AUTO_THREADS", "Hyperparameter",
           "TABLE", "DEFAULT_ENV", "CARTPOLE_MAX_PATH_LENGTH", "FALLBACK_MAX_PATH_LENGTH",
           "updates_per_sample", "get", "rows", "names", "checked_names", "defaults", "by_flag",
           "checkpointed_names", "structural_names", "check", "check_flag_values",
           "from_flags"]

#: The environment of the original run.py (--env's default): the cart-pole.
DEFAULT_ENV = "cartpole"
#: max_path_length of the original run.py, used for the cart-pole.
CARTPOLE_MAX_PATH_LENGTH = 100
#: Used when a gymnasium environment declares no time limit of its own.
FALLBACK_MAX_PATH_LENGTH = 1000


def updates_per_sample(text):
    """``--n-updates-per-sample``'s type: a whole number stays an int (as the original's); a
    fraction 1/k means an update every k steps."""
    value = float(text)
    return int(value) if value == int(value) else value


class Kind(object):
    """What values a hyperparameter takes: ``description`` (as the error message says it),
    ``accepts`` (a test; ``None``: not checked here, by ``checked_by`` where it is checked at
    all) and ``cli_type`` (argparse's ``type``; ``bool`` makes a switch)."""

    def __init__(self, description, accepts=None, cli_type=None, checked_by=None):
        self.description = description
        self.accepts = accepts
        self.cli_type = cli_type
        self.checked_by = checked_by

    def check(self, name, value):
        """Raise ``ValueError`` naming ``name`` unless ``value`` is of this kind."""
        if self.accepts is not None and not self.accepts(value):
            raise ValueError("%s must be %s, got %r" % (name, self.description, value))

    def or_none(self, description):
        """This kind, or ``None``."""
        accepts = self.accepts
        return Kind(description, lambda value: value is None or accepts(value), self.cli_type)


class _Optimizer(Kind):
    """An MXNet optimizer name (any case)."""

    def __init__(self):
        super(_Optimizer, self).__init__("an MXNet optimizer name", cli_type=None)
        self.accepts = self._registered

    @staticmethod
    def _known():
        import mxnet as mx  # pylint: disable=import-outside-toplevel
        return mx.optimizer.Optimizer.opt_registry

    def _registered(self, value):
        return str(value).lower() in self._known()

    def check(self, name, value):
        if not self._registered(value):
            raise ValueError("%s=%r is not an MXNet optimizer; known: %s"
                             % (name, value, ", ".join(sorted(self._known()))))


def _whole(value):
    return not isinstance(value, bool) and int(value) == value


POSITIVE_INT = Kind("a positive integer", lambda v: _whole(v) and v > 0, int)
NON_NEGATIVE_INT = Kind("a non-negative integer", lambda v: _whole(v) and v >= 0, int)
POSITIVE = Kind("positive", lambda v: v > 0, float)
POSITIVE_NUMBER = Kind("a positive number", lambda v: not isinstance(v, bool) and v > 0, float)
NON_NEGATIVE = Kind("a non-negative number", lambda v: not isinstance(v, bool) and v >= 0,
                    float)
CLOSED_UNIT = Kind("in [0, 1]", lambda v: 0.0 <= v <= 1.0, float)
HALF_OPEN_UNIT = Kind("in (0, 1]", lambda v: 0.0 < v <= 1.0, float)
FINITE = Kind("a finite number", lambda v: not isinstance(v, bool) and np.isfinite(v), float)
OPTIMIZER = _Optimizer()
SWITCH = Kind("True or False", cli_type=bool)
INTEGER = Kind("an integer", cli_type=int)
UPDATES = Kind("a positive integer or 1/k for an integer k", cli_type=updates_per_sample,
               checked_by="ddpg.options.update_schedule, with train_freq and gradient_steps")
CONTEXT = Kind("None, 'cpu', 'gpu' or an mx.Context",
               checked_by="ddpg.backend.context.resolve_ctx")
AUTO_SWITCH = Kind("True, False or 'auto'", checked_by="ddpg.backend.kernels.choose_mkldnn")
VEC_ENV = Kind("'sync' or 'async'", lambda v: v in ("sync", "async"), str)
HER_STRATEGY = Kind("'future', 'final' or 'episode'",
                    lambda v: v in ("future", "final", "episode"), str)
AUTO_THREADS = Kind("a positive integer or 'auto'",
                    checked_by="ddpg.backend.kernels.choose_omp_threads")

_SAME = object()  # cli_default: the class default


class Hyperparameter(collections.namedtuple("Hyperparameter", [
        "name", "default", "kind", "help", "flag", "cli_default", "from_flag", "cli_options",
        "checkpointed", "structural", "algorithms", "td3_default"])):
    """One row of the table.

    ``name``: the constructor argument; ``default``: DDPG's default (``td3_default``: TD3's);
    ``kind``: a :class:`Kind`; ``help``: the example's ``--help`` text; ``flag``: the
    example's argparse destination (None: no flag), ``cli_default`` its default,
    ``from_flag`` the function that turns the flag's value into the argument's and
    ``cli_options`` more ``add_argument`` keywords; ``checkpointed``: recorded in a checkpoint's
    manifest; ``structural``: a checkpoint's contents depend on it (restoring with another
    value is an error); ``algorithms``: the ``--algo`` values that take it.
    """

    def check(self, value):
        """Raise ``ValueError`` naming the hyperparameter unless ``value`` is in range."""
        self.kind.check(self.name, value)


def _row(name, default, kind, help,  # pylint: disable=redefined-builtin
         flag=_SAME, cli_default=_SAME, from_flag=None, cli_options=None, checkpointed=True,
         structural=False, algorithms=("ddpg", "td3"), td3_default=_SAME):
    return Hyperparameter(
        name, default, kind, help, name if flag is _SAME else flag,
        default if cli_default is _SAME else cli_default, from_flag or (lambda value: value),
        dict(cli_options or {}), checkpointed, structural, tuple(algorithms),
        default if td3_default is _SAME else td3_default)


#: The table, in ``DDPG.__init__``'s order (then TD3's own arguments).
TABLE = (
    # ctx: the manifest records str(ctx) itself
    _row("ctx", None, CONTEXT, "auto = GPU when MXNet sees one, else CPU", cli_default="auto",
         from_flag=lambda value: None if value == "auto" else value,
         cli_options={"choices": ["auto", "cpu", "gpu"]}, checkpointed=False),
    _row("batch_size", 32, POSITIVE_INT, "transitions per update"),
    _row("n_epochs", 1000, POSITIVE_INT, "epochs to train"),
    _row("epoch_length", 1000, POSITIVE_INT, "environment steps per epoch"),
    _row("memory_size", 1000000, POSITIVE_INT, "replay memory capacity (transitions)",
         structural=True),
    _row("memory_start_size", 1000, NON_NEGATIVE_INT,
         "transitions collected before updates start", cli_default=10000),
    _row("discount", 0.99, CLOSED_UNIT, "discount factor, in [0, 1]"),
    _row("max_path_length", 1000, POSITIVE_INT,
         "episode cut-off; default %d for cartpole (run.py), else the environment's own time "
         "limit, else %d" % (CARTPOLE_MAX_PATH_LENGTH, FALLBACK_MAX_PATH_LENGTH),
         cli_default=None),
    _row("eval_samples", 10000, NON_NEGATIVE_INT,
         "environment steps of deterministic evaluation rollouts"),
    _row("qfunc_updater", "adam", OPTIMIZER, "any MXNet optimizer name", structural=True),
    _row("qfunc_lr", 1e-4, POSITIVE, "Q-function learning rate", cli_default=1e-3),
    _row("policy_updater", "adam", OPTIMIZER, "any MXNet optimizer name", structural=True),
    _row("policy_lr", 1e-4, POSITIVE, "policy learning rate"),
    _row("soft_target_tau", 1e-3, HALF_OPEN_UNIT, "soft target update rate, in (0, 1]"),
    _row("n_updates_per_sample", 1, UPDATES,
         "updates after each step; a fraction 1/k (0.5) is one update every k steps"),
    _row("include_horizon_terminal", False, SWITCH,
         "store transitions cut by the time limit as terminal"),
    _row("seed", 12345, INTEGER,
         "seeds numpy, MXNet and the environment (evaluation: seed + n_envs)"),
    _row("eval_interval", 1, POSITIVE_INT.or_none("a positive integer or None (last epoch "
                                                  "only)"),
         "evaluate every N epochs; 0 = the last epoch only (the original)",
         from_flag=lambda value: value or None),
    _row("bootstrap_truncated", True, SWITCH,
         "treat time-limit cuts as the original did (drop them, or terminal) instead of "
         "bootstrapping from s'", flag="original_truncation", cli_default=False,
         from_flag=lambda value: not value),
    _row("progress_bar", True, SWITCH, "no progress bar over each epoch",
         flag="no_progress_bar", cli_default=False, from_flag=lambda value: not value),
    _row("flush_denormals", True, SWITCH,
         "flush denormal floats to zero while building and training", flag=None),
    _row("skip_nonfinite", False, SWITCH,
         "skip transitions whose observation or reward is not finite", flag=None),
    _row("mkldnn", "auto", AUTO_SWITCH, "MXNet's oneDNN kernels on the CPU", flag=None),
    _row("start_steps", 0, NON_NEGATIVE_INT,
         "first N steps act uniformly at random (0: the original, never)"),
    _row("scale_reward", 1.0, FINITE,
         "DDPG's scale_reward (rllab's): rewards are multiplied by this before they are "
         "stored; unlike --scale-reward, the returns reported stay unscaled",
         flag="ddpg_scale_reward"),
    _row("qfunc_weight_decay", 0.0, NON_NEGATIVE,
         "L2 penalty 0.5*decay*sum(w^2) on the Q weights (DDPG paper: 1e-2)"),
    _row("policy_weight_decay", 0.0, NON_NEGATIVE,
         "L2 penalty on the policy weights, as --qfunc-weight-decay"),
    _row("qfunc_grad_clip", None, POSITIVE_NUMBER.or_none("a positive number or None"),
         "clip each Q gradient element to [-c, c] (MXNet clip_gradient)"),
    _row("policy_grad_clip", None, POSITIVE_NUMBER.or_none("a positive number or None"),
         "clip each policy gradient element to [-c, c]"),
    _row("train_freq", 1, POSITIVE_INT,
         "update every N environment steps (SB3's train_freq)"),
    _row("gradient_steps", None, POSITIVE_INT.or_none("a positive integer"),
         "updates each time (SB3's gradient_steps); default: --n-updates-per-sample"),
    _row("omp_threads", "auto", AUTO_THREADS, "MXNet's OpenMP threads on the CPU", flag=None),
    _row("loss_log_interval", 100, POSITIVE_INT,
         "with --tensorboard: log the Q and policy loss of every N-th update",
         flag="tensorboard_every", cli_options={"metavar": "N"}, checkpointed=False),
    _row("policy_delay", 1, POSITIVE_INT,
         "Q updates per policy and target update (default: 1 for ddpg, as the original; 2 "
         "for td3)", cli_default=None, td3_default=2),
    _row("n_envs", 1, POSITIVE_INT,
         "environments stepped together (environment i seeded with seed + i); every step "
         "count still counts transitions"),
    _row("vec_env", "sync", VEC_ENV,
         "with --n-envs: sync steps them in this process, async each in a worker process",
         cli_options={"choices": ["sync", "async"]}),
    _row("n_step", 1, POSITIVE_INT,
         "targets sum N rewards before bootstrapping (n-step returns), never across an "
         "episode's end; 1: the original's 1-step targets", structural=True),
    _row("prioritized_replay", False, SWITCH,
         "proportional prioritised replay (Schaul et al. 2016): sampled by |TD error|, "
         "importance weights in the Q loss", structural=True),
    _row("per_alpha", 0.6, NON_NEGATIVE,
         "with --prioritized-replay: priorities ** alpha (0: uniform; the paper's 0.6)"),
    _row("per_beta", 0.4, CLOSED_UNIT,
         "with --prioritized-replay: importance-weight exponent at the first update, "
         "annealed to 1 over the run (the paper's 0.4)"),
    _row("per_eps", 1e-6, POSITIVE,
         "with --prioritized-replay: added to each |TD error|, so no priority is 0"),
    _row("her", False, SWITCH,
         "hindsight experience replay for a goal-conditioned environment (Fetch tasks): "
         "goals relabelled when a batch is sampled, rewards recomputed", structural=True),
    _row("her_strategy", "future", HER_STRATEGY,
         "with --her: where a relabelled goal comes from (the HER paper's strategies)",
         cli_options={"choices": ["future", "final", "episode"]}),
    _row("her_k", 4, NON_NEGATIVE_INT,
         "with --her: relabelled transitions per real one in a batch (the HER paper's k)"),
    _row("obs_norm", False, SWITCH,
         "standardise observations by running statistics, clipped to +-200 before and +-5 "
         "after, wherever they enter a network (the HER authors' normaliser)",
         structural=True),
    _row("action_l2", 0.0, NON_NEGATIVE,
         "adds action_l2 * mean(mu(s)^2) to the policy loss (the HER authors' 1.0)"),
    _row("target_update_interval", 1, POSITIVE_INT,
         "soft target updates on every N-th update only (the HER authors: 40)"),
    _row("target_noise", 0.2, NON_NEGATIVE,
         "td3: target-action noise std, relative to the action half-range",
         algorithms=("td3",)),
    _row("target_noise_clip", 0.5, NON_NEGATIVE,
         "td3: the noise's clip, relative to the action half-range", algorithms=("td3",)),
)

_BY_NAME = {row.name: row for row in TABLE}


def get(name):
    """The row of hyperparameter ``name`` (``KeyError`` naming the known ones)."""
    try:
        return _BY_NAME[name]
    except KeyError:
        raise KeyError("unknown hyperparameter %r; known: %s" % (name, ", ".join(_BY_NAME)))


def rows(algorithm=None):
    """The rows ``algorithm`` (``"ddpg"``, ``"td3"``; None: either) takes, in table order."""
    return [row for row in TABLE if algorithm is None or algorithm in row.algorithms]


def names(algorithm=None):
    """The hyperparameter names, in table order."""
    return [row.name for row in rows(algorithm)]


def checked_names(algorithm=None):
    """The names :func:`check` checks (the others' :attr:`Kind.checked_by` names who does)."""
    return [row.name for row in rows(algorithm) if row.kind.accepts is not None]


def defaults(algorithm="ddpg"):
    """``{name: default}`` of the class ``algorithm`` names (``"ddpg"`` or ``"td3"``)."""
    return {row.name: row.td3_default if algorithm == "td3" else row.default
            for row in rows(algorithm)}


def by_flag():
    """``{argparse destination: row}`` of the hyperparameters the example sets by a flag."""
    return {row.flag: row for row in TABLE if row.flag is not None}


def checkpointed_names(algorithm=None):
    """The constructor arguments a checkpoint's manifest records, in table order (of
    ``algorithm``'s arguments, or of every algorithm's)."""
    return tuple(row.name for row in rows(algorithm) if row.checkpointed)


def structural_names():
    """The recorded arguments a checkpoint's contents depend on."""
    return tuple(row.name for row in TABLE if row.structural)


def check(values):
    """Raise ``ValueError`` naming the first hyperparameter of ``values`` (``{name: value}``)
    out of its range, in table order, then for the replay memory's sizes that do not fit
    together. Names the table checks elsewhere (:attr:`Kind.checked_by`) are skipped."""
    for row in TABLE:
        if row.name in values:
            row.check(values[row.name])
    if {"batch_size", "memory_size", "memory_start_size"} <= set(values):
        _check_memory_sizes(values["batch_size"], values["memory_size"],
                            values["memory_start_size"])
    if {"epoch_length", "n_envs"} <= set(values) and values["epoch_length"] % values["n_envs"]:
        raise ValueError("epoch_length (%d) must be a multiple of n_envs (%d): an epoch steps "
                         "every environment equally often"
                         % (values["epoch_length"], values["n_envs"]))


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


def check_flag_values(values):
    """Check the hyperparameters among ``values`` (``{argparse destination: value}``, e.g. a
    preset) against their ranges, as the constructor would receive them; ``None`` (the
    algorithm's own default) and the flags that are not hyperparameters pass."""
    rows_by_flag = by_flag()
    for flag, value in values.items():
        row = rows_by_flag.get(flag)
        if row is not None and value is not None:
            row.check(row.from_flag(value))


def from_flags(values, algorithm="ddpg"):
    """The constructor arguments of ``algorithm`` that the example's parsed flags ``values``
    (``{argparse destination: value}``) set. A flag whose value is None is left out, so that
    the algorithm's own default applies (``--policy-delay``: 1 for DDPG, 2 for TD3)."""
    arguments = {}
    for row in rows(algorithm):
        if row.flag is not None and values[row.flag] is not None:
            arguments[row.name] = row.from_flag(values[row.flag])
    return arguments
