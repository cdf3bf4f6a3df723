"""The command-line experiment of ``examples/run_ddpg.py`` as a library module.

``run_ddpg.py`` and the Ray Tune sweeps (:mod:`ddpg.experiment.tune`) configure a run with the same
options, parsed by the same parser and built by the same functions here, so that a sweep's
trial is exactly the run ``run_ddpg.py`` would make from the same flags. A trial's
configuration is a dictionary of the script's option names, the argparse destinations
(``--qfunc-lr`` is ``qfunc_lr``): :func:`args_from_config` turns it into the script's parsed
arguments by going through the parser itself, so types, choices and presets are checked
exactly as on the command line.
"""
import argparse
import csv
import json
import os
import re

from ddpg import DDPG, logger
from ddpg.checkpoint import read_manifest
from ddpg.experiment.script import UsageError
from ddpg.backend.context import num_gpus
from ddpg.errors import CheckpointError
from ddpg.envs import CartpoleEnv, GymEnv, normalize
from ddpg.backend.initializers import HIDDEN_INITS, OUTPUT_INITS
from ddpg.policies import DeterministicMLPPolicy
from ddpg.experiment.presets import add_preset_argument, get_preset, parse_args_with_preset
from ddpg.qfuncs import ContinuousMLPQ
from ddpg.strategies import GaussianStrategy, OUStrategy
from ddpg.td3 import TD3

__all__ = ["CARTPOLE_MAX_PATH_LENGTH", "FALLBACK_MAX_PATH_LENGTH", "RESUME_FLAGS",
           "RaisingArgumentParser", "build_parser", "explicit_flags", "resumed_args",
           "continue_progress", "make_env", "make_strategy", "make_algorithm",
           "setup_logging", "close_logging", "tensorboard_problem", "setup_tensorboard",
           "option_names", "check_option_names", "config_to_argv", "args_from_config",
           "split_run_flags", "prepare_run", "check_ctx", "build_env", "usage_error",
           "flags_named_in", "checkpoint_run_folder"]


class RaisingArgumentParser(argparse.ArgumentParser):
    """An ArgumentParser that raises ``ValueError`` instead of printing usage and exiting:
    a bad value in a trial's configuration is a library error, not a command line's."""

    def error(self, message):
        raise ValueError(message)


#: max_path_length of the original run.py, used for the cart-pole.
CARTPOLE_MAX_PATH_LENGTH = 100
#: Used when a gymnasium environment declares no time limit of its own.
FALLBACK_MAX_PATH_LENGTH = 1000


def split_run_flags(argv):
    """``(own arguments, run_ddpg.py arguments)``: the latter follow the first ``--``.

    For the scripts that drive run_ddpg.py runs (benchmarks/learning.py, examples/sweep.py,
    benchmarks/tune_scaling.py) and pass the flags after ``--`` on to them.
    """
    argv = list(argv)
    if "--" in argv:
        cut = argv.index("--")
        return argv[:cut], argv[cut + 1:]
    return argv, []


def updates_per_sample(text):
    """A whole number stays an int (as the original's); a fraction 1/k means an update every k steps."""
    value = float(text)
    return int(value) if value == int(value) else value


def build_parser(parser_class=argparse.ArgumentParser):
    """run_ddpg.py's argument parser. ``parser_class`` lets :func:`args_from_config` use one
    that raises ``ValueError`` instead of exiting."""
    parser = parser_class(
        description="Train DDPG (MXNet symbolic executors). Defaults reproduce the MXNet "
                    "example's run.py on the cart-pole.",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    env = parser.add_argument_group("environment")
    env.add_argument("--env", default="cartpole",
                     help="'cartpole' (our port of rllab's cart-pole) or a gymnasium id, "
                          "e.g. Pendulum-v1, HalfCheetah-v5")
    env.add_argument("--no-reset-quirk", action="store_true",
                     help="cart-pole only: turn off the Box2D first-step reset quirk")
    env.add_argument("--scale-reward", type=float, default=1.0,
                     help="normalize()'s reward scale")
    env.add_argument("--normalize-obs", action="store_true",
                     help="normalize()'s running observation normalisation")
    env.add_argument("--max-path-length", type=int, default=None,
                     help="episode cut-off; default 100 for cartpole (run.py), else the "
                          "environment's own time limit, else %d" % FALLBACK_MAX_PATH_LENGTH)

    algo = parser.add_argument_group("algorithm (DDPG arguments)")
    algo.add_argument("--algo", choices=["ddpg", "td3"], default="ddpg",
                      help="td3: twin critics, target policy smoothing, delayed updates")
    algo.add_argument("--policy-delay", type=int, default=None,
                      help="Q updates per policy and target update (default: 1 for ddpg, "
                           "as the original; 2 for td3)")
    algo.add_argument("--target-noise", type=float, default=0.2,
                      help="td3: target-action noise std, relative to the action half-range")
    algo.add_argument("--target-noise-clip", type=float, default=0.5,
                      help="td3: the noise's clip, relative to the action half-range")
    algo.add_argument("--n-epochs", type=int, default=1000, help="epochs to train")
    algo.add_argument("--epoch-length", type=int, default=1000,
                      help="environment steps per epoch")
    algo.add_argument("--batch-size", type=int, default=32, help="transitions per update")
    algo.add_argument("--memory-size", type=int, default=1000000,
                      help="replay memory capacity (transitions)")
    algo.add_argument("--memory-start-size", type=int, default=10000,
                      help="transitions collected before updates start")
    algo.add_argument("--discount", type=float, default=0.99, help="discount factor, in [0, 1]")
    algo.add_argument("--eval-samples", type=int, default=10000,
                      help="environment steps of deterministic evaluation rollouts")
    algo.add_argument("--eval-interval", type=int, default=1,
                      help="evaluate every N epochs; 0 = the last epoch only (the original)")
    algo.add_argument("--qfunc-updater", default="adam", help="any MXNet optimizer name")
    algo.add_argument("--qfunc-lr", type=float, default=1e-3, help="Q-function learning rate")
    algo.add_argument("--policy-updater", default="adam", help="any MXNet optimizer name")
    algo.add_argument("--policy-lr", type=float, default=1e-4, help="policy learning rate")
    algo.add_argument("--soft-target-tau", type=float, default=1e-3,
                      help="soft target update rate, in (0, 1]")
    algo.add_argument("--n-updates-per-sample", type=updates_per_sample, default=1,
                      help="updates after each step; a fraction 1/k (0.5) is one update "
                           "every k steps")
    algo.add_argument("--train-freq", type=int, default=1,
                      help="update every N environment steps (SB3's train_freq)")
    algo.add_argument("--gradient-steps", type=int, default=None,
                      help="updates each time (SB3's gradient_steps); default: "
                           "--n-updates-per-sample")
    algo.add_argument("--ddpg-scale-reward", type=float, default=1.0,
                      help="DDPG's scale_reward (rllab's): rewards are multiplied by this "
                           "before they are stored; unlike --scale-reward, the returns "
                           "reported stay unscaled")
    algo.add_argument("--qfunc-weight-decay", type=float, default=0.0,
                      help="L2 penalty 0.5*decay*sum(w^2) on the Q weights (DDPG paper: 1e-2)")
    algo.add_argument("--policy-weight-decay", type=float, default=0.0,
                      help="L2 penalty on the policy weights, as --qfunc-weight-decay")
    algo.add_argument("--qfunc-grad-clip", type=float, default=None,
                      help="clip each Q gradient element to [-c, c] (MXNet clip_gradient)")
    algo.add_argument("--policy-grad-clip", type=float, default=None,
                      help="clip each policy gradient element to [-c, c]")
    algo.add_argument("--start-steps", type=int, default=0,
                      help="first N steps act uniformly at random (0: the original, never)")
    algo.add_argument("--include-horizon-terminal", action="store_true",
                      help="store transitions cut by the time limit as terminal")
    algo.add_argument("--original-truncation", action="store_true",
                      help="treat time-limit cuts as the original did (drop them, or "
                           "terminal) instead of bootstrapping from s'")

    nets = parser.add_argument_group("networks and exploration")
    nets.add_argument("--policy-hidden-sizes", type=int, nargs="+", default=[32, 32],
                      help="policy hidden layer sizes")
    nets.add_argument("--qfunc-hidden-sizes", type=int, nargs="+", default=[32, 32, 32],
                      help="Q-function hidden layer sizes")
    nets.add_argument("--qfunc-action-merge-layer", type=int, default=2,
                      help="number of hidden layers the observation passes before the "
                           "action is concatenated")
    nets.add_argument("--activation", default="relu",
                      help="hidden-layer activation of both networks (any MXNet act_type)")
    nets.add_argument("--layer-norm", action="store_true",
                      help="LayerNorm after each hidden layer of both networks")
    nets.add_argument("--output-init", choices=list(OUTPUT_INITS), default="normal",
                      help="final-layer initialisation; uniform3e-3 is the DDPG paper's, "
                           "fanin PyTorch's default")
    nets.add_argument("--hidden-init", choices=list(HIDDEN_INITS), default="normal",
                      help="hidden-layer initialisation; fanin is the DDPG paper's "
                           "U(+-1/sqrt(fan_in))")
    nets.add_argument("--strategy", choices=["ou", "gaussian"], default="ou",
                      help="exploration noise")
    nets.add_argument("--ou-theta", type=float, default=0.15, help="OU mean reversion rate")
    nets.add_argument("--ou-sigma", type=float, default=0.3, help="OU noise scale")
    nets.add_argument("--ou-dt", type=float, default=1.0,
                      help="OU time step (1: the original's recursion)")
    nets.add_argument("--gaussian-sigma", type=float, default=0.1,
                      help="Gaussian noise std, relative to the action half-range")
    nets.add_argument("--gaussian-sigma-min", type=float, default=None,
                      help="with --gaussian-decay-steps: sigma decays linearly to this")
    nets.add_argument("--gaussian-decay-steps", type=int, default=None,
                      help="actions over which sigma decays to --gaussian-sigma-min")

    run = parser.add_argument_group("run")
    add_preset_argument(run)
    run.add_argument("--ctx", choices=["auto", "cpu", "gpu"], default="auto",
                     help="auto = GPU when MXNet sees one, else CPU")
    run.add_argument("--seed", type=int, default=12345,
                     help="seeds numpy, MXNet and the environment (evaluation: seed + 1)")
    run.add_argument("--log-dir", default=None,
                     help="folder for progress.csv, debug.log, params.json and checkpoints "
                          "(none: no files); with --resume, the folder the checkpoint lies in")
    run.add_argument("--no-progress-bar", action="store_true",
                     help="no progress bar over each epoch")
    run.add_argument("--tensorboard", action="store_true",
                     help="also write TensorBoard event files into --log-dir (needs "
                          "tensorboardX: pip install -e '.[tensorboard]')")
    run.add_argument("--tensorboard-every", type=int, default=100, metavar="N",
                     help="with --tensorboard: log the Q and policy loss of every N-th update")
    run.add_argument("--snapshot-mode", choices=["last", "all", "gap", "none"], default="last",
                     help="checkpoints in --log-dir after each epoch: 'last' keeps one "
                          "(params/), 'all' one per epoch (itr_N/), 'gap' every "
                          "--snapshot-gap epochs")
    run.add_argument("--snapshot-gap", type=int, default=1,
                     help="epochs between checkpoints with --snapshot-mode gap")
    run.add_argument("--resume", default=None, metavar="CHECKPOINT",
                     help="continue the run saved in this checkpoint folder, with its "
                          "settings; only %s may be given with it"
                          % ", ".join("--" + flag.replace("_", "-")
                                      for flag in RESUME_FLAGS[1:]))
    run.add_argument("--debug", action="store_true",
                     help="show tracebacks instead of one-line error messages (also: "
                          "DDPG_DEBUG=1)")
    run.add_argument("--trust-pickle", action="store_true",
                     help="with --resume: also open a checkpoint of the older, pickled format "
                          "(version 1); unpickling can run any code, so only for checkpoints "
                          "you trust")
    return parser


#: Flags that may accompany --resume: they say how to continue a run, not what it trains.
RESUME_FLAGS = ("resume", "n_epochs", "log_dir", "snapshot_mode", "snapshot_gap", "ctx",
                "no_progress_bar", "tensorboard", "tensorboard_every", "debug", "trust_pickle")
#: Flags about one invocation, not the run: not saved in checkpoints.
INVOCATION_FLAGS = ("resume", "trust_pickle", "debug")


def explicit_flags(argv, parser_class=argparse.ArgumentParser):
    """``{destination: value}`` of the flags given on the command line, defaults left out.
    With ``parser_class=RaisingArgumentParser`` bad flags raise ``ValueError``."""
    parser = build_parser(parser_class=parser_class)
    for action in parser._actions:  # pylint: disable=protected-access
        action.default = argparse.SUPPRESS
    return vars(parser.parse_args(argv))


def resumed_args(args, argv):
    """The arguments saved in the checkpoint ``args.resume``, continuation flags applied.

    The resumed run writes to the folder the checkpoint lies in (``runs/x`` for
    ``runs/x/params``), found from the checkpoint's own path and never from the current
    folder, unless ``--log-dir`` is given. A checkpoint that cannot be read, was not written
    by run_ddpg.py or has already trained ``--n-epochs`` epochs is a :class:`UsageError`;
    nothing is written before these checks.
    """
    given = explicit_flags(argv)
    refused = sorted(set(given) - set(RESUME_FLAGS))
    if refused:
        build_parser().error("--resume takes the run's settings from the checkpoint; %s "
                             "cannot be changed when resuming"
                             % ", ".join("--" + flag.replace("_", "-") for flag in refused))
    try:
        manifest = read_manifest(args.resume)
    except CheckpointError as error:
        raise UsageError("--resume %s: %s" % (args.resume, error)) from error
    saved = manifest.get("metadata", {}).get("run_args")
    if not isinstance(saved, dict):
        raise UsageError("--resume %s was not written by run_ddpg.py (its manifest has no "
                         "run_args); restore it from Python with DDPG.restore" % args.resume)
    merged = dict(vars(args))  # flags newer than the checkpoint keep their defaults
    merged.update(saved)
    # --policy-delay was TD3's alone (default 2) before DDPG had it: the value the algorithm
    # used is in the manifest's hyperparameters (none: the algorithm's default)
    merged["policy_delay"] = manifest.get("hyperparameters", {}).get("policy_delay")
    merged.update(given)
    if "log_dir" not in given:
        merged["log_dir"] = checkpoint_run_folder(args.resume)
    done = int(manifest.get("progress", {}).get("epoch", 0))
    if merged["n_epochs"] <= done:
        raise UsageError("--resume %s has already trained %d epoch%s (n_epochs %d): pass "
                         "--n-epochs N with N > %d to continue it"
                         % (args.resume, done, "" if done == 1 else "s",
                            merged["n_epochs"], done))
    return argparse.Namespace(**merged)


def checkpoint_run_folder(checkpoint_path):
    """The run folder a run_ddpg.py checkpoint belongs to: the folder it lies in.

    run_ddpg.py saves its checkpoints (``params/``, ``itr_N/``, ``interrupted/``) in its
    ``--log-dir``, next to ``params.json``. A checkpoint elsewhere (a sweep trial's
    ``checkpoint_N/ddpg``) has no run folder around it: the user must say where the resumed
    run writes, with ``--log-dir``.
    """
    folder = os.path.dirname(os.path.abspath(os.path.normpath(checkpoint_path)))
    if not any(os.path.isfile(os.path.join(folder, name))
               for name in ("params.json", "progress.csv")):
        raise UsageError("--resume %s: the folder it lies in (%s) is not a run_ddpg.py run "
                         "folder (no params.json or progress.csv); pass --log-dir DIR for "
                         "the resumed run's logs and checkpoints" % (checkpoint_path, folder))
    return folder


def continue_progress(log_dir, epoch):
    """Keep only the rows of ``log_dir``/progress.csv that the checkpoint of ``epoch`` holds.

    A run that was killed after writing an epoch's row but before that epoch's checkpoint
    was complete has rows the resumed run writes again (and perhaps a last line cut short):
    they are dropped, atomically, so the continued progress.csv has each epoch once, as the
    uninterrupted run's has. Returns the number of lines dropped.
    """
    path = os.path.join(log_dir, "progress.csv") if log_dir else None
    if not path or not os.path.isfile(path):
        return 0
    with open(path, newline="", encoding="utf-8") as handle:
        lines = handle.read().split("\n")
    if len(lines) < 2:
        return 0
    header = next(csv.reader([lines[0]]))
    if "Epoch" not in header:
        return 0
    column = header.index("Epoch")
    complete, last = lines[1:-1], lines[-1]  # the last piece is "" unless cut short
    kept = []
    for line in complete:
        cells = next(csv.reader([line]), [])
        try:
            if int(cells[column]) < epoch:
                kept.append(line)
        except (IndexError, ValueError):
            continue  # a damaged line
    dropped = len(complete) - len(kept) + (1 if last else 0)
    if dropped:
        temporary = path + ".trim"
        with open(temporary, "w", newline="", encoding="utf-8") as handle:
            handle.write("\n".join([lines[0]] + kept) + "\n")
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, path)
    return dropped


def make_env(args, render_mode=None):
    """The training environment, normalised to [-1, 1] actions as run.py does.

    ``render_mode`` is passed to gymnasium (examples/evaluate.py asks for "rgb_array").
    """
    if args.env.lower() == "cartpole":
        inner = CartpoleEnv(reset_quirk=not args.no_reset_quirk)
        default_horizon = CARTPOLE_MAX_PATH_LENGTH
    else:
        inner = GymEnv(args.env, **({"render_mode": render_mode} if render_mode else {}))
        default_horizon = inner.horizon or FALLBACK_MAX_PATH_LENGTH
    env = normalize(inner, scale_reward=args.scale_reward, normalize_obs=args.normalize_obs)
    return env, args.max_path_length or default_horizon


#: Words in the library's error messages that name a setting, and the flag that sets it,
#: where the flag is not simply the name with "-" for "_" (DDPG's scale_reward is
#: --ddpg-scale-reward; --scale-reward is normalize()'s).
_FLAGS_OF_WORDS = {
    "scale_reward": "--ddpg-scale-reward",
    "bootstrap_truncated": "--original-truncation",
    "action_merge_layer": "--qfunc-action-merge-layer",
    "qfunc hidden_sizes": "--qfunc-hidden-sizes",
    "policy hidden_sizes": "--policy-hidden-sizes",
    "OUStrategy's dt": "--ou-dt",
    "GaussianStrategy's sigma": "--gaussian-sigma",
    "sigma_min": "--gaussian-sigma-min",
    "decay_steps": "--gaussian-decay-steps",
}


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


def check_ctx(args):
    """``--ctx gpu`` needs a GPU that MXNet can see: say so, with the flags that work."""
    if args.ctx == "gpu" and num_gpus() == 0:
        raise UsageError("--ctx gpu: MXNet sees no GPU (the CPU-only 'mxnet' wheel cannot "
                         "use one; GPUs need 'mxnet-cu112'); use --ctx cpu, or --ctx auto "
                         "for the GPU when there is one")


def build_env(args, render_mode=None):
    """:func:`make_env`, with a failure to make the environment as a :class:`UsageError`
    naming ``--env`` (an unknown id, a discrete action space, a missing dependency)."""
    try:
        return make_env(args, render_mode=render_mode)
    except Exception as error:  # pylint: disable=broad-except
        message = "--env %s: %s" % (args.env, error)
        if "continuous" in str(error) and "cartpole" in args.env.lower():
            message += "; for the MXNet example's continuous cart-pole use --env cartpole"
        elif "continuous" in str(error):
            message += "; DDPG needs a gymnasium id with a Box action space, or --env cartpole"
        raise UsageError(message) from error


def prepare_run(argv):
    """run_ddpg.py's run from its command line, built and checked; nothing is written.

    Returns ``(args, env, max_path_length, algo)``, restored from ``--resume`` when given.
    Every bad setting (flags, environment, hyperparameters, device, checkpoint) raises a
    :class:`UsageError` naming the flag, before any folder is created.
    """
    args = parse_args_with_preset(build_parser(), argv)
    if args.resume:
        args = resumed_args(args, argv)
    check_ctx(args)
    problem = tensorboard_problem(args)
    if problem:
        raise UsageError(problem)
    env, max_path_length = build_env(args)
    try:
        algo = make_algorithm(args, env, max_path_length)
    except ValueError as error:
        raise usage_error(error) from error
    if args.resume:
        try:
            algo.restore(args.resume, trust_pickle=args.trust_pickle)
        except CheckpointError as error:
            raise UsageError("--resume %s: %s" % (args.resume, error)) from error
    return args, env, max_path_length, algo


def make_strategy(args, env_spec):
    """The exploration strategy the flags ask for (OU, the original's, by default)."""
    if args.strategy == "gaussian":
        return GaussianStrategy(env_spec, sigma=args.gaussian_sigma,
                                sigma_min=args.gaussian_sigma_min,
                                decay_steps=args.gaussian_decay_steps)
    return OUStrategy(env_spec, theta=args.ou_theta, sigma=args.ou_sigma, dt=args.ou_dt)


def setup_logging(log_dir, args, params_file="params.json"):
    """Send the logger's text and tables to ``log_dir`` (debug.log, progress.csv) and write
    the run's arguments to ``params_file`` there. Nothing without a ``log_dir``.

    ``params_file`` differs only under Ray Tune, whose own params.json (the trial's
    configuration) lies in the same folder (:mod:`ddpg.experiment.tune`).
    """
    if not log_dir:
        return
    os.makedirs(log_dir, exist_ok=True)
    logger.add_text_output(os.path.join(log_dir, "debug.log"))
    logger.add_tabular_output(os.path.join(log_dir, "progress.csv"))
    with open(os.path.join(log_dir, params_file), "w") as params:
        json.dump(vars(args), params, indent=2, sort_keys=True)


def tensorboard_problem(args):
    """Why ``--tensorboard`` (or ``--tensorboard-every``) cannot work with ``args`` (a
    one-line message naming the fix), or None. Checked before anything is built, so that a
    run does not fail after setup."""
    if args.tensorboard_every < 1:
        return "--tensorboard-every must be a positive number of updates"
    if not getattr(args, "tensorboard", False):
        return None
    if not args.log_dir:
        return "--tensorboard writes its event files into the run's folder: give --log-dir"
    try:
        import tensorboardX  # noqa: F401  pylint: disable=unused-import,import-outside-toplevel
    except ImportError:
        return "--tensorboard needs tensorboardX, which is not installed: %s" % (
            logger.TENSORBOARD_INSTALL,)
    return None


def setup_tensorboard(args, algo, params_file="params.json"):
    """With ``--tensorboard``: event files in ``args.log_dir`` for ``algo``'s run, the run's
    arguments (``params_file``, written by :func:`setup_logging`) as the text
    ``hyperparameters``. Call it after any restore: a resumed run's events start after the
    checkpoint's environment steps, and TensorBoard drops what an earlier process logged
    from there on (``purge_step``), so the curves continue without a duplicate step; a fresh
    run's curves start over (events of an earlier run in the folder are dropped)."""
    if not getattr(args, "tensorboard", False) or not args.log_dir:
        return
    first_step = algo.total_env_steps + 1 if algo.total_env_steps else 0
    logger.add_tensorboard_output(args.log_dir, step_key="TotalEnvSteps",
                                  purge_step=first_step)
    with open(os.path.join(args.log_dir, params_file)) as params:
        text = params.read()
    # a Markdown code block, so TensorBoard's text tab keeps the JSON's layout
    logger.record_text("hyperparameters", "```\n%s\n```" % text.strip(), first_step)


def close_logging(log_dir):
    """Undo :func:`setup_logging` and :func:`setup_tensorboard` (the files are closed;
    snapshots are switched off)."""
    if not log_dir:
        return
    logger.remove_tensorboard_output(log_dir)
    logger.set_snapshot_dir(None)
    logger.remove_tabular_output(os.path.join(log_dir, "progress.csv"))
    logger.remove_text_output(os.path.join(log_dir, "debug.log"))



def make_algorithm(args, env, max_path_length):
    """The DDPG (or TD3) run that the parsed arguments ``args`` describe, on ``env``.

    Its ``checkpoint_metadata`` records ``args`` (``--resume`` left out), so that
    ``run_ddpg.py --resume`` and ``examples/evaluate.py`` can rebuild the run from a checkpoint.
    """
    network_options = dict(activation=args.activation, layer_norm=args.layer_norm,
                           output_init=args.output_init, hidden_init=args.hidden_init)
    policy = DeterministicMLPPolicy(env.spec, hidden_sizes=args.policy_hidden_sizes,
                                    **network_options)
    qfunc = ContinuousMLPQ(env.spec, hidden_sizes=args.qfunc_hidden_sizes,
                           action_merge_layer=args.qfunc_action_merge_layer, **network_options)
    strategy = make_strategy(args, env.spec)
    algorithm, extra = DDPG, {}
    if args.algo == "td3":
        algorithm = TD3
        extra = dict(target_noise=args.target_noise, target_noise_clip=args.target_noise_clip)
    if args.policy_delay is not None:  # else the algorithm's own default
        extra["policy_delay"] = args.policy_delay
    algo = algorithm(
        env=env, policy=policy, qfunc=qfunc, strategy=strategy, **extra,
        ctx=None if args.ctx == "auto" else args.ctx,
        batch_size=args.batch_size, n_epochs=args.n_epochs, epoch_length=args.epoch_length,
        memory_size=args.memory_size, memory_start_size=args.memory_start_size,
        discount=args.discount, max_path_length=max_path_length,
        eval_samples=args.eval_samples, qfunc_updater=args.qfunc_updater,
        qfunc_lr=args.qfunc_lr, policy_updater=args.policy_updater,
        policy_lr=args.policy_lr, soft_target_tau=args.soft_target_tau,
        n_updates_per_sample=args.n_updates_per_sample,
        include_horizon_terminal=args.include_horizon_terminal, seed=args.seed,
        eval_interval=args.eval_interval or None,
        bootstrap_truncated=not args.original_truncation,
        progress_bar=not args.no_progress_bar, start_steps=args.start_steps,
        scale_reward=args.ddpg_scale_reward, qfunc_weight_decay=args.qfunc_weight_decay,
        policy_weight_decay=args.policy_weight_decay, qfunc_grad_clip=args.qfunc_grad_clip,
        policy_grad_clip=args.policy_grad_clip, train_freq=args.train_freq,
        gradient_steps=args.gradient_steps, loss_log_interval=args.tensorboard_every)
    # what --resume needs to rebuild this run, saved in every checkpoint's manifest
    algo.checkpoint_metadata = {"run_args": {key: value for key, value in vars(args).items()
                                             if key not in INVOCATION_FLAGS}}
    return algo


# ---------------------------------------------------------------------------------------------
# configurations as dictionaries of option names (Ray Tune trials)
# ---------------------------------------------------------------------------------------------

def _actions(parser):
    return {action.dest: action for action in parser._actions  # pylint: disable=protected-access
            if action.dest != "help"}


def option_names(exclude=()):
    """run_ddpg.py's option names (argparse destinations), sorted, without ``exclude``."""
    return sorted(set(_actions(build_parser())) - set(exclude))


def check_option_names(names, exclude=(), what="option"):
    """Raise ``ValueError`` naming every name in ``names`` that is not one of run_ddpg.py's
    options (or is in ``exclude``), with the list of valid names."""
    valid = option_names(exclude)
    unknown = [name for name in names if name not in valid]
    if unknown:
        raise ValueError("unknown %s name%s %s; valid names (run_ddpg.py's options, '-' "
                         "written '_'): %s" % (what, "s" if len(unknown) > 1 else "",
                                                ", ".join(repr(n) for n in unknown),
                                                ", ".join(valid)))


def config_to_argv(config, parser=None):
    """The run_ddpg.py command line that sets the options of ``config``.

    Values are written as the user would type them: ``True`` for a switch
    (``{"layer_norm": True}`` is ``--layer-norm``; ``False`` leaves it off), a list for the
    options that take several values (``policy_hidden_sizes``), ``None`` for "not given"
    (the default, or the preset's value, applies).
    """
    actions = _actions(parser or build_parser())
    check_option_names(config)
    argv = []
    for name, value in config.items():
        action = actions[name]
        flag = max(action.option_strings, key=len)
        if isinstance(action, argparse._StoreTrueAction):  # pylint: disable=protected-access
            if not isinstance(value, bool):
                raise ValueError("%s is a switch: its value must be true or false, got %r"
                                 % (name, value))
            if value:
                argv.append(flag)
        elif value is None:
            continue
        elif action.nargs == "+":
            values = list(value) if isinstance(value, (list, tuple)) else [value]
            if not values:
                raise ValueError("%s needs at least one value" % (name,))
            argv.append(flag)
            argv.extend(_text(item) for item in values)
        else:
            # "--flag=value" so that values starting with "-" are not taken for options
            argv.append("%s=%s" % (flag, _text(value)))
    return argv


def _text(value):
    """A value as the command line would spell it (repr keeps floats exact)."""
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, float):
        return repr(float(value))  # numpy floats too
    return str(value)


def args_from_config(config, **set_by_caller):
    """run_ddpg.py's parsed arguments for ``config``, a dict of its option names.

    ``config`` may name a ``preset``, whose values it overrides, as flags do on the command
    line. ``set_by_caller`` holds options the caller fixes (a sweep sets ``log_dir``,
    ``ctx``, ``no_progress_bar``); they are added after ``config`` and win. Unknown names,
    values of the wrong type or outside an option's choices raise ``ValueError``.
    """
    config = dict(config)
    config.update(set_by_caller)
    if config.get("preset") is not None:
        get_preset(config["preset"])  # ValueError naming the known presets
    parser = build_parser(parser_class=RaisingArgumentParser)
    return parse_args_with_preset(parser, config_to_argv(config, parser))
