"""Building run_ddpg.py's run from its parsed arguments: environment, networks, exploration
strategy and algorithm, checked before anything is written.

:func:`prepare_run` is the whole of it for a command line (``--resume`` included): every bad
setting becomes a :class:`ddpg.experiment.script.UsageError` naming its flag. The pieces
(:func:`make_env`, :func:`make_strategy`, :func:`make_algorithm`) serve the Ray Tune trials,
``ddpg-evaluate`` and ``ddpg-export`` too, so that each rebuilds a run exactly as
``ddpg-train`` built it. The algorithm's arguments come from the flags through
:func:`ddpg.hyperparams.from_flags`.
"""
import re

from ddpg import DDPG, hyperparams
from ddpg.backend.context import num_gpus
from ddpg.envs import CartpoleEnv, GymEnv, normalize
from ddpg.errors import CheckpointError
from ddpg.experiment.cli import build_parser, explicit_flags, usage_error
from ddpg.experiment.config import args_from_config
from ddpg.experiment.presets import parse_args_with_preset
from ddpg.experiment.resume import INVOCATION_FLAGS, resumed_args
from ddpg.experiment.run_folder import RunFolderLock, default_run_folder
from ddpg.experiment.run_logs import tensorboard_problem
from ddpg.experiment.script import UsageError
from ddpg.hyperparams import CARTPOLE_MAX_PATH_LENGTH, FALLBACK_MAX_PATH_LENGTH
from ddpg.policies import DeterministicMLPPolicy
from ddpg.qfuncs import ContinuousMLPQ
from ddpg.rendering import choose_mujoco_gl, mujoco_cameras, opengl_problem
from ddpg.strategies import GaussianStrategy, OUStrategy
from ddpg.td3 import TD3
from ddpg.d4pg import D4PG

__all__ = ["ALGORITHMS", "CameraError", "make_env", "check_ctx", "build_env", "check_env_id",
           "prepare_run", "make_strategy", "make_algorithm", "attach_actors"]

#: The classes of run_ddpg.py's --algo values.
#: ``--algo`` name -> algorithm class: the registration of an algorithm (its config class
#: registers its settings, :func:`ddpg.config.register_config`); a test checks that the two
#: name the same algorithms.
ALGORITHMS = {"ddpg": DDPG, "td3": TD3, "d4pg": D4PG}


class CameraError(ValueError):
    """A camera was asked of an environment that does not have it."""


def make_env(args, render_mode=None, camera=None):
    """The training environment, normalised to [-1, 1] actions as run.py does.

    ``render_mode`` is passed to the environment (videos ask for "rgb_array"); MuJoCo's
    rendering backend is chosen then (:func:`ddpg.rendering.choose_mujoco_gl`). ``camera``
    names the MuJoCo model's camera to render through (HalfCheetah's ``track`` follows the
    body; gymnasium 1.4's default view stays where the episode starts).
    """
    if render_mode:
        choose_mujoco_gl()
    if args.env.lower() == "cartpole":
        if camera is not None:
            raise CameraError("the cart-pole has no cameras: its picture is drawn from the "
                              "state")
        inner = CartpoleEnv(reset_quirk=not args.no_reset_quirk, render_mode=render_mode)
        default_horizon = CARTPOLE_MAX_PATH_LENGTH
    else:
        inner = _gym_env(args.env, render_mode, camera)
        default_horizon = inner.horizon or FALLBACK_MAX_PATH_LENGTH
    env = normalize(inner, scale_reward=args.scale_reward, normalize_obs=args.normalize_obs)
    return env, args.max_path_length or default_horizon


def _gym_env(env_id, render_mode, camera):
    """``GymEnv(env_id)`` rendering ``render_mode`` frames through ``camera`` when given."""
    options = {"render_mode": render_mode} if render_mode else {}
    if camera is None:
        return GymEnv(env_id, **options)
    try:
        env = GymEnv(env_id, camera_name=camera, **options)
    except TypeError as error:
        if "camera_name" not in str(error):
            raise
        raise CameraError("%s is not a MuJoCo environment: it has no cameras" % env_id)
    cameras = mujoco_cameras(env.env)
    if camera not in (cameras or ()):
        raise CameraError("%s has no camera %r; its cameras: %s"
                          % (env_id, camera, ", ".join(cameras) if cameras else "none"))
    return env


def check_ctx(args):
    """``--ctx gpu`` needs a GPU that MXNet can see: say so, with the flags that work."""
    if args.ctx == "gpu" and num_gpus() == 0:
        raise UsageError("--ctx gpu: MXNet sees no GPU (the CPU-only 'mxnet' wheel cannot "
                         "use one; GPUs need 'mxnet-cu112'); use --ctx cpu, or --ctx auto "
                         "for the GPU when there is one")


def build_env(args, render_mode=None, camera=None, camera_flag="--camera",
              render_flag="--video"):
    """:func:`make_env`, with a failure to make the environment as a :class:`UsageError`
    naming ``--env`` (an unknown id, a discrete action space, a missing dependency),
    ``camera_flag`` for a camera the environment does not have, or ``render_flag`` (the
    flag that asked for ``render_mode``) when no OpenGL backend can render its frames."""
    try:
        return make_env(args, render_mode=render_mode, camera=camera)
    except CameraError as error:
        raise UsageError("%s %s: %s" % (camera_flag, camera, error)) from error
    except Exception as error:  # pylint: disable=broad-except
        problem = render_mode and opengl_problem(error)
        if problem:
            raise UsageError("%s: %s" % (render_flag, problem)) from None
        message = "--env %s: %s" % (args.env, error)
        if "continuous" in str(error) and "cartpole" in args.env.lower():
            message += "; for the MXNet example's continuous cart-pole use --env cartpole"
        elif "continuous" in str(error):
            message += "; DDPG needs a gymnasium id with a Box action space, or --env cartpole"
        raise UsageError(message) from error


def check_env_id(env_id):
    """Make the environment of ``--env env_id`` once, with ddpg-train's other defaults: a
    :class:`UsageError` naming ``--env``, as :func:`build_env` says it, when it cannot be made.
    For the commands that take an ``--env`` and build the environment later, or elsewhere
    (ddpg-export, the trials of ddpg-sweep)."""
    build_env(args_from_config({"env": env_id}))


def prepare_run(argv):
    """run_ddpg.py's run from its command line, built and checked; nothing is written.

    Returns ``(args, env, max_path_length, algo)``, restored from ``--resume`` when given.
    Without ``--log-dir`` (and without ``--no-log-dir``) ``args.log_dir`` is a new folder
    ``runs/ENV-ALGO-TIME`` (:func:`ddpg.experiment.run_folder.default_run_folder`).
    Every bad setting (flags, environment, hyperparameters, device, checkpoint) raises a
    :class:`UsageError` naming the flag, before any folder is created.
    """
    args = parse_args_with_preset(build_parser(), argv)
    if args.no_log_dir and args.log_dir:  # a resume would otherwise drop --log-dir silently
        raise UsageError("--no-log-dir writes no files, --log-dir names where to write "
                         "them: give one of the two")
    if args.resume:
        args = resumed_args(args, argv)
    else:
        _check_algorithm_flags(args, argv)
        _check_max_path_length(args)
        if not args.no_log_dir and not args.log_dir:
            # a run of hours that saves nothing is a trap: the example's behaviour is a flag
            args.log_dir = default_run_folder(args.env, args.algo)
    if args.log_dir:
        # a folder another run is writing: say so before reading a checkpoint it may be
        # replacing at this moment (ddpg.experiment.run_folder locks it for the whole run)
        RunFolderLock(args.log_dir).check_free()
    check_ctx(args)
    problem = tensorboard_problem(args)
    if problem:
        raise UsageError(problem)
    env, max_path_length = build_env(args)
    try:
        algo = make_algorithm(args, env, max_path_length)
    except ValueError as error:
        raise usage_error(error) from error
    attach_actors(args, algo)
    if args.resume:
        try:
            algo.restore(args.resume, trust_pickle=args.trust_pickle)
        except CheckpointError as error:
            raise UsageError("--resume %s: %s" % (args.resume, error)) from error
    return args, env, max_path_length, algo


def _check_algorithm_flags(args, argv):
    """A flag of a setting that only other algorithms take (``--atoms`` without ``--algo
    d4pg``) is a :class:`UsageError`: the run would ignore it."""
    given = explicit_flags(argv)
    for row in hyperparams.TABLE:
        if row.flag in given and args.algo not in row.algorithms:
            flag = "--" + row.flag.replace("_", "-")
            raise UsageError("%s applies to --algo %s, and this run is --algo %s: add --algo "
                             "%s, or leave %s out" % (flag, " or ".join(row.algorithms),
                                                      args.algo, row.algorithms[0], flag))


def _check_max_path_length(args):
    """``--max-path-length`` in its range (a positive integer, as the algorithm's), checked
    here because :func:`make_env` reads a 0 that checkpoints of older runs may hold as "not
    given", which a new run must not."""
    try:
        hyperparams.check_flag_values({"max_path_length": args.max_path_length})
    except ValueError as error:
        raise usage_error(error) from error


#: RayActors' arguments -> the flags that set them
_ACTOR_FLAGS = {"n_actors": "--ray-actors", "weight_sync_every": "--weight-sync-every",
                "mode": "--ray-mode", "chunk": "--ray-chunk", "epoch_length": "--epoch-length",
                "n_envs": "--n-envs"}


def attach_actors(args, algo):
    """Collect through Ray actors when ``--ray-actors`` asks (:mod:`ddpg.distributed`)."""
    if not args.ray_actors:
        if args.ray_address:
            raise UsageError("--ray-address names the cluster of --ray-actors: give "
                             "--ray-actors K too")
        return
    from ddpg.distributed.ray_actors import RayActors, import_ray
    try:
        import_ray()
    except ImportError as error:
        raise UsageError("--ray-actors: %s" % error) from error
    try:
        RayActors(algo, args.ray_actors, address=args.ray_address,
                  weight_sync_every=args.weight_sync_every, mode=args.ray_mode,
                  chunk=args.ray_chunk).attach()
    except ValueError as error:
        message = str(error)
        named = [flag for name, flag in _ACTOR_FLAGS.items()
                 if re.search(r"\b%s\b" % name, message)]
        raise UsageError("%s (set with %s)" % (message, " and ".join(named))) from error


def make_strategy(args, env_spec):
    """The exploration strategy the flags ask for (OU, the original's, by default)."""
    if args.random_action_prob and args.strategy != "gaussian":
        raise UsageError("--random-action-prob applies to --strategy gaussian (the HER "
                         "authors' exploration); add --strategy gaussian")
    if args.strategy == "gaussian":
        return GaussianStrategy(env_spec, sigma=args.gaussian_sigma,
                                sigma_min=args.gaussian_sigma_min,
                                decay_steps=args.gaussian_decay_steps,
                                random_prob=args.random_action_prob)
    return OUStrategy(env_spec, theta=args.ou_theta, sigma=args.ou_sigma, dt=args.ou_dt)


def make_algorithm(args, env, max_path_length):
    """The DDPG (or TD3) run that the parsed arguments ``args`` describe, on ``env``.

    Its ``checkpoint_metadata`` records ``args`` (``--resume`` left out), so that
    ``ddpg-train --resume`` and ``ddpg-evaluate`` can rebuild the run from a checkpoint.
    """
    network_options = dict(activation=args.activation, layer_norm=args.layer_norm,
                           output_init=args.output_init, hidden_init=args.hidden_init)
    policy = DeterministicMLPPolicy(env.spec, hidden_sizes=args.policy_hidden_sizes,
                                    **network_options)
    qfunc = ContinuousMLPQ(env.spec, hidden_sizes=args.qfunc_hidden_sizes,
                           action_merge_layer=args.qfunc_action_merge_layer, **network_options)
    strategy = make_strategy(args, env.spec)
    # the hyperparameters' flags (--policy-delay not given: the algorithm's own default)
    arguments = hyperparams.from_flags(vars(args), args.algo)
    arguments["max_path_length"] = max_path_length
    algo = ALGORITHMS[args.algo](env=env, policy=policy, qfunc=qfunc, strategy=strategy,
                                 **arguments)
    # what --resume needs to rebuild this run, saved in every checkpoint's manifest
    algo.checkpoint_metadata = {"run_args": {key: value for key, value in vars(args).items()
                                             if key not in INVOCATION_FLAGS}}
    return algo
