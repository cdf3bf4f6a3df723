"""run_ddpg.py's command line: the argument parser, and the flags its errors name.

One parser serves ``examples/run_ddpg.py``, the Ray Tune sweeps (:mod:`ddpg.experiment.config`
feeds a trial's configuration through it) and the scripts that pass flags on to run_ddpg.py
(:func:`split_run_flags`), so that every way of starting a run checks its flags alike. The
hyperparameters' flags take their default, type and help from :mod:`ddpg.hyperparams`; the
flags of the environment, the networks, the exploration and the run itself are written here,
their defaults read from where they live: the networks' in :mod:`ddpg.utils` and
:mod:`ddpg.backend.initializers`, the strategies' in :mod:`ddpg.strategies`.
"""
import argparse
import re

from ddpg import hyperparams
from ddpg.backend.initializers import (DEFAULT_HIDDEN_INIT, DEFAULT_OUTPUT_INIT, HIDDEN_INITS,
                                      OUTPUT_INITS)
from ddpg.experiment.presets import add_preset_argument
from ddpg.experiment.script import (HelpFormatter, UsageError, add_debug_flag,
                                    add_trust_pickle_flag)
from ddpg.strategies import (DEFAULT_GAUSSIAN_SIGMA, DEFAULT_OU_DT, DEFAULT_OU_SIGMA,
                             DEFAULT_OU_THETA, DEFAULT_RANDOM_ACTION_PROB)
from ddpg.utils import (ACTIVATIONS, DEFAULT_ACTIVATION, DEFAULT_POLICY_HIDDEN_SIZES,
                        DEFAULT_QFUNC_ACTION_MERGE_LAYER, DEFAULT_QFUNC_HIDDEN_SIZES)

__all__ = ["RESUME_FLAGS", "INVOCATION_FLAGS", "RaisingArgumentParser", "split_run_flags",
           "build_parser", "add_hyperparameter", "explicit_flags", "parser_actions",
           "option_names", "flags_named_in", "usage_error"]

#: Flags that may accompany --resume: they say how to continue a run, not what it trains
#: (:mod:`ddpg.experiment.resume` refuses the others).
RESUME_FLAGS = ("resume", "n_epochs", "log_dir", "no_log_dir", "overwrite", "snapshot_mode",
                "snapshot_gap", "ctx", "no_progress_bar", "tensorboard", "tensorboard_every",
                "video_every", "video_camera", "debug", "trust_pickle", "ray_address")
#: Flags about one invocation, not the run: not saved in checkpoints.
INVOCATION_FLAGS = ("resume", "trust_pickle", "debug", "overwrite")


class RaisingArgumentParser(argparse.ArgumentParser):
    """An ArgumentParser that raises ``ValueError`` instead of printing usage and exiting:
    a bad value in a trial's configuration is a library error, not a command line's."""

    def error(self, message):
        raise ValueError(message)


def split_run_flags(argv):
    """``(own arguments, run_ddpg.py arguments)``: the latter follow the first ``--``.

    For the scripts that drive run_ddpg.py runs (benchmarks/learning.py, ddpg-sweep,
    benchmarks/tune_scaling.py) and pass the flags after ``--`` on to them.
    """
    argv = list(argv)
    if "--" in argv:
        cut = argv.index("--")
        return argv[:cut], argv[cut + 1:]
    return argv, []


def add_hyperparameter(group, name):
    """Add the flag of hyperparameter ``name`` (:mod:`ddpg.hyperparams`) to ``group``."""
    row = hyperparams.get(name)
    options = dict(row.cli_options, default=row.cli_default, help=row.help)
    if row.kind.cli_type is bool:
        options["action"] = "store_true"
    elif row.kind.cli_type is not None:
        options["type"] = row.kind.cli_type
    return group.add_argument("--" + row.flag.replace("_", "-"), **options)


#: The hyperparameters of --help's "algorithm" group, in its order.
_ALGORITHM_FLAGS = (
    "policy_delay", "target_noise", "target_noise_clip", "n_epochs", "epoch_length",
    "batch_size", "memory_size", "memory_start_size", "discount", "eval_samples",
    "eval_interval", "qfunc_updater", "qfunc_lr", "policy_updater", "policy_lr",
    "soft_target_tau", "n_updates_per_sample", "train_freq", "gradient_steps", "scale_reward",
    "qfunc_weight_decay", "policy_weight_decay", "qfunc_grad_clip", "policy_grad_clip",
    "include_horizon_terminal", "bootstrap_truncated", "n_step", "prioritized_replay",
    "per_alpha", "per_beta", "per_eps", "her", "her_strategy", "her_k", "obs_norm",
    "action_l2", "target_update_interval")


def build_parser(parser_class=argparse.ArgumentParser):
    """run_ddpg.py's (``ddpg-train``'s) argument parser, its flags in groups. ``parser_class``
    lets :func:`ddpg.experiment.config.args_from_config` use one that raises ``ValueError``
    instead of exiting."""
    parser = parser_class(
        description="Train DDPG (MXNet symbolic executors). Defaults reproduce the MXNet "
                    "example's run.py on the cart-pole.",
        # the flags are listed below by group; a usage line of every flag would fill a screen
        usage="%(prog)s [options]   (--help lists them)",
        formatter_class=HelpFormatter)
    _add_environment_flags(parser.add_argument_group("environment"))
    algo = parser.add_argument_group("algorithm (DDPG arguments)")
    algo.add_argument("--algo", choices=hyperparams.algorithm_names(), default="ddpg",
                      help="td3: twin critics, target policy smoothing, delayed updates; d4pg: a "
                           "distributional critic (--atoms, --v-min, --v-max)")
    for name in _ALGORITHM_FLAGS:
        add_hyperparameter(algo, name)
    _add_network_flags(parser.add_argument_group("networks"))
    _add_exploration_flags(parser.add_argument_group("exploration"))
    _add_actor_flags(parser.add_argument_group("distributed collection (Ray actors)"))
    _add_run_flags(parser.add_argument_group("run"))
    _add_logging_flags(parser.add_argument_group("logging and checkpoints"))
    # the settings of an algorithm registered with its own (ddpg.config.register_config)
    # that no group above names: in the algorithm group, in the table's order
    present = {action.dest for action in parser._actions}  # pylint: disable=protected-access
    for row in hyperparams.TABLE:
        if row.flag is not None and row.flag not in present:
            add_hyperparameter(algo, row.name)
    return parser


def _add_environment_flags(env):
    env.add_argument("--env", default=hyperparams.DEFAULT_ENV,
                     help="'cartpole' (our port of rllab's cart-pole) or a gymnasium id, "
                          "e.g. Pendulum-v1, HalfCheetah-v5")
    env.add_argument("--no-reset-quirk", action="store_true",
                     help="cart-pole only: start each episode from the sampled state exactly "
                          "(rllab's Box2D cart-pole corrects it on the first step, which we "
                          "reproduce by default)")
    env.add_argument("--scale-reward", type=float, default=1.0,
                     help="normalize()'s reward scale")
    env.add_argument("--normalize-obs", action="store_true",
                     help="normalize()'s running observation normalisation")
    add_hyperparameter(env, "max_path_length")
    add_hyperparameter(env, "n_envs")
    add_hyperparameter(env, "vec_env")


def _add_network_flags(nets):
    nets.add_argument("--policy-hidden-sizes", type=int, nargs="+",
                      default=list(DEFAULT_POLICY_HIDDEN_SIZES),
                      metavar="SIZE", help="policy hidden layer sizes")
    nets.add_argument("--qfunc-hidden-sizes", type=int, nargs="+",
                      default=list(DEFAULT_QFUNC_HIDDEN_SIZES),
                      metavar="SIZE", help="Q-function hidden layer sizes")
    nets.add_argument("--qfunc-action-merge-layer", type=int,
                      default=DEFAULT_QFUNC_ACTION_MERGE_LAYER,
                      help="number of hidden layers the observation passes before the "
                           "action is concatenated")
    nets.add_argument("--activation", choices=ACTIVATIONS, default=DEFAULT_ACTIVATION,
                      help="hidden-layer activation of both networks")
    nets.add_argument("--layer-norm", action="store_true",
                      help="LayerNorm after each hidden layer of both networks")
    nets.add_argument("--output-init", choices=list(OUTPUT_INITS),
                      default=DEFAULT_OUTPUT_INIT,
                      help="final-layer initialisation; uniform3e-3 is the DDPG paper's, "
                           "fanin PyTorch's default")
    nets.add_argument("--hidden-init", choices=list(HIDDEN_INITS),
                      default=DEFAULT_HIDDEN_INIT,
                      help="hidden-layer initialisation; fanin is the DDPG paper's "
                           "U(+-1/sqrt(fan_in))")


def _add_exploration_flags(noise):
    noise.add_argument("--strategy", choices=["ou", "gaussian"], default="ou",
                       help="exploration noise")
    noise.add_argument("--ou-theta", type=float, default=DEFAULT_OU_THETA,
                       help="OU mean reversion rate")
    noise.add_argument("--ou-sigma", type=float, default=DEFAULT_OU_SIGMA,
                       help="OU noise scale")
    noise.add_argument("--ou-dt", type=float, default=DEFAULT_OU_DT,
                       help="OU time step (1: the original's recursion)")
    noise.add_argument("--gaussian-sigma", type=float, default=DEFAULT_GAUSSIAN_SIGMA,
                       help="Gaussian noise std, relative to the action half-range")
    noise.add_argument("--gaussian-sigma-min", type=float, default=None,
                       help="with --gaussian-decay-steps: sigma decays linearly to this")
    noise.add_argument("--gaussian-decay-steps", type=int, default=None,
                       help="actions over which sigma decays to --gaussian-sigma-min")
    noise.add_argument("--random-action-prob", type=float,
                       default=DEFAULT_RANDOM_ACTION_PROB,
                       help="gaussian: the probability of a uniformly random action instead "
                            "(the HER authors' random_eps, 0.3)")
    add_hyperparameter(noise, "start_steps")


def _add_actor_flags(actors):
    actors.add_argument("--ray-actors", type=int, default=0, metavar="K",
                        help="collect with K Ray actor processes, each with --n-envs "
                             "environments and a CPU copy of the policy (0: this process "
                             "collects)")
    actors.add_argument("--ray-address", default=None, metavar="ADDR",
                        help="with --ray-actors: an existing Ray cluster (default: a local "
                             "one)")
    actors.add_argument("--weight-sync-every", type=int, default=1, metavar="U",
                        help="with --ray-actors: send the actors the policy's weights every "
                             "U updates")
    actors.add_argument("--ray-mode", choices=["deterministic", "async"],
                        default="deterministic",
                        help="with --ray-actors: deterministic (chunks in a fixed order; "
                             "reproducible, exact resume) or async (as they arrive)")
    actors.add_argument("--ray-chunk", type=int, default=100, metavar="T",
                        help="with --ray-actors: transitions an actor collects per request")


def _add_run_flags(run):
    add_preset_argument(run)
    add_hyperparameter(run, "ctx")
    add_hyperparameter(run, "seed")
    run.add_argument("--resume", default=None, metavar="CHECKPOINT",
                     help="continue the run saved in this checkpoint folder (e.g. "
                          "runs/x/params), with its settings; only %s may be given with it"
                          % ", ".join("--" + flag.replace("_", "-")
                                      for flag in RESUME_FLAGS[1:]))
    add_trust_pickle_flag(run, when="with --resume: ")
    add_debug_flag(run)


def _add_logging_flags(logs):
    logs.add_argument("--log-dir", default=None,
                      help="the run folder: progress.csv, debug.log, params.json and "
                           "checkpoints (default: a new folder runs/ENV-ALGO-TIME); with "
                           "--resume, the folder the checkpoint lies in")
    logs.add_argument("--no-log-dir", action="store_true",
                      help="write no files at all, as the MXNet example did (nothing to "
                           "resume from)")
    logs.add_argument("--overwrite", action="store_true",
                      help="if --log-dir holds a run, move it aside to "
                           "FOLDER.replaced-TIMESTAMP (nothing is deleted) and start afresh")
    logs.add_argument("--snapshot-mode", choices=["last", "all", "gap", "none"],
                      default="last",
                      help="checkpoints after each epoch: 'last' keeps one (params/), "
                           "'all' one per epoch (itr_N/), 'gap' every --snapshot-gap epochs")
    logs.add_argument("--snapshot-gap", type=int, default=1,
                      help="epochs between checkpoints with --snapshot-mode gap")
    add_hyperparameter(logs, "progress_bar")
    logs.add_argument("--tensorboard", action="store_true",
                      help="also write TensorBoard event files into the run folder (needs "
                           "pip install \"mxnet-ddpg[tensorboard]\")")
    add_hyperparameter(logs, "loss_log_interval")
    logs.add_argument("--video-every", type=int, default=0, metavar="N",
                      help="after every N-th epoch, record one deterministic episode into "
                           "videos/epoch_EPOCH.mp4 in the run folder, and into TensorBoard "
                           'with --tensorboard (needs pip install "mxnet-ddpg[video]"); '
                           "0: no videos")
    logs.add_argument("--video-camera", default=None, metavar="NAME",
                      help="MuJoCo environments: record --video-every's episodes through the "
                           "model's camera NAME (HalfCheetah's 'track' follows the body)")


def explicit_flags(argv, parser_class=argparse.ArgumentParser):
    """``{destination: value}`` of the flags given on the command line, defaults left out.
    With ``parser_class=RaisingArgumentParser`` bad flags raise ``ValueError``."""
    parser = build_parser(parser_class=parser_class)
    for action in parser._actions:  # pylint: disable=protected-access
        action.default = argparse.SUPPRESS
    return vars(parser.parse_args(argv))


def parser_actions(parser):
    """``{destination: action}`` of ``parser``'s options, ``--help`` left out."""
    return {action.dest: action for action in parser._actions  # pylint: disable=protected-access
            if action.dest != "help"}


def option_names(exclude=()):
    """run_ddpg.py's option names (argparse destinations), sorted, without ``exclude``."""
    return sorted(set(parser_actions(build_parser())) - set(exclude))


#: Words in the library's error messages that name a setting, and the flag that sets it,
#: where the flag is not simply the name with "-" for "_": the hyperparameters whose flag has
#: another name (DDPG's scale_reward is --ddpg-scale-reward; --scale-reward is normalize()'s)
#: and the arguments of the networks and strategies.
_FLAGS_OF_WORDS = dict(
    {row.name: "--" + row.flag.replace("_", "-")
     for row in hyperparams.TABLE if row.flag not in (None, row.name)},
    **{
        "action_merge_layer": "--qfunc-action-merge-layer",
        "qfunc hidden_sizes": "--qfunc-hidden-sizes",
        "policy hidden_sizes": "--policy-hidden-sizes",
        "OUStrategy's dt": "--ou-dt",
        "GaussianStrategy's sigma": "--gaussian-sigma",
        "sigma_min": "--gaussian-sigma-min",
        "decay_steps": "--gaussian-decay-steps",
        "random_prob": "--random-action-prob",
        "her=True": "--her",  # a one-word setting: named with its value, not as a word
    })


def flags_named_in(message):
    """The run_ddpg.py flags whose settings ``message`` (a library error) names, in order."""
    dests = set(option_names())
    named = []  # (position in the message, flag)
    for words, flag in _FLAGS_OF_WORDS.items():
        named.extend((match.start(), flag) for match in
                     re.finditer(r"(?<![\w'])%s(?![\w'])" % re.escape(words), message))
    for match in re.finditer(r"[A-Za-z][A-Za-z0-9_]*", message):
        word = match.group(0)
        if "_" in word and word in dests and word not in _FLAGS_OF_WORDS:
            named.append((match.start(), "--" + word.replace("_", "-")))
    found = []
    for _, flag in sorted(named):
        if flag not in found:
            found.append(flag)
    return found


def usage_error(error):
    """A library ``ValueError`` about a setting as a :class:`UsageError` naming its flags."""
    message = str(error)
    flags = flags_named_in(message)
    if flags:
        message += " (set with %s)" % " and ".join(flags)
    return UsageError(message)
