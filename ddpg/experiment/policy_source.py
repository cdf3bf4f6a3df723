"""What a checkpoint says about its policy's environment, for ``python -m ddpg.export`` and
``examples/evaluate.py``: run_ddpg.py's arguments that rebuild it, the policy network's
options, and the path from a raw observation to an action in the environment's units
(normalize()'s observation statistics and action bounds).

A checkpoint records its environment in the manifest's ``env_description``
(:mod:`ddpg.checkpoint.env_description`): a gymnasium id or the cart-pole can be rebuilt
from it, and the path needs only its spaces, whatever the environment. run_ddpg.py's
checkpoints also hold the run's arguments; checkpoints written from Python by a ddpg older
than the record need ``--env``.
"""
import numpy as np

from ddpg.checkpoint.env_description import bounds_from_json, described_name, read_description
from ddpg.envs import NormalizedEnv
from ddpg.envs.normalized_env import OBS_NORMALIZATION_EPS
from ddpg.errors import CheckpointError
from ddpg.experiment.build import make_env
from ddpg.experiment.cli import build_parser
from ddpg.obs_normalizer import ObservationNormalizer

__all__ = ["checkpoint_run_args", "policy_options", "apply_normalization", "path_from_env",
           "path_from_description", "normalization_constants", "checkpoint_obs_normalizer",
           "input_layout"]


def checkpoint_run_args(manifest, env_override=None):
    """run_ddpg.py's arguments for rebuilding the checkpoint's environment.

    The arguments run_ddpg.py saved in the manifest (its defaults for options newer than the
    checkpoint). A checkpoint written from Python (``DDPG.save``) has none: its environment
    comes from the manifest's ``env_description`` (a gymnasium id or the cart-pole, with
    ``normalize()``'s settings), or from ``env_override`` (a ``--env`` value), which older
    checkpoints need; its horizon and seed come from the manifest's hyperparameters.
    """
    args = build_parser().parse_args([])
    saved = manifest.get("metadata", {}).get("run_args")
    if isinstance(saved, dict):
        vars(args).update(saved)
    else:
        description = read_description(manifest)
        if description is None and env_override is None:
            raise CheckpointError("the checkpoint was not written by run_ddpg.py and does not "
                                  "describe its environment (it was saved by an older ddpg), "
                                  "so it does not say which environment it was trained on: "
                                  "pass --env")
        if description is not None:
            _describe_run_args(args, description, rebuild=env_override is None)
        hyperparameters = manifest["hyperparameters"]
        args.max_path_length = hyperparameters.get("max_path_length")
        args.seed = hyperparameters.get("seed", args.seed)
    if env_override is not None:
        args.env = env_override
    return args


def _describe_run_args(args, description, rebuild):
    """Set ``args`` from an ``env_description``: normalize()'s settings, and with ``rebuild``
    the environment (``CheckpointError`` when run_ddpg.py's --env cannot name it)."""
    normalize = description["normalize"]
    if normalize is not None:
        args.scale_reward = float(normalize.get("scale_reward", 1.0))
        args.normalize_obs = bool(normalize.get("normalize_obs", False))
    if not rebuild:
        return
    env = description["env"]
    if env["kind"] == "cartpole":
        args.env, args.no_reset_quirk = "cartpole", not env.get("reset_quirk", True)
    elif env["kind"] == "gym" and isinstance(env.get("id"), str):
        args.env = env["id"]
    else:
        raise CheckpointError("the checkpoint's environment (%s) is neither a gymnasium id nor "
                              "the cart-pole, so it cannot be rebuilt from the checkpoint: "
                              "pass --env" % env.get("class"))
    if description["wrappers"]:
        raise CheckpointError("the checkpoint's environment is wrapped in %s, which cannot be "
                              "rebuilt from the checkpoint: pass --env"
                              % ", ".join(description["wrappers"]))
    if normalize is None and not _unit_bounds(description):
        raise CheckpointError("the checkpoint's environment %s was not wrapped in "
                              "normalize(), which a rebuilt environment always is, and its "
                              "actions are not in [-1, 1]: pass --env" % args.env)


def _action_bounds(description):
    """The described environment's action bounds, ``(low, high)`` float64 arrays."""
    space = description["action_space"]
    return (bounds_from_json(space.get("low"), "action bounds"),
            bounds_from_json(space.get("high"), "action bounds"))


def _unit_bounds(description):
    """Whether the described environment's actions are in [-1, 1] (normalize() is then the
    identity on actions)."""
    low, high = _action_bounds(description)
    return bool(np.all(low == -1.0) and np.all(high == 1.0))


def policy_options(manifest):
    """The layout options of the checkpoint's policy network that change its graph
    (``hidden_sizes``, ``activation``, ``layer_norm``; older checkpoints: the defaults)."""
    described = manifest.get("networks", {}).get("policy", {})
    return {key: described[key] for key in ("hidden_sizes", "activation", "layer_norm")
            if described.get(key) is not None}


def apply_normalization(reader, env):
    """Give a NormalizedEnv the training environment's running statistics."""
    if not isinstance(env, NormalizedEnv):
        return
    saved_env = reader.training_state()["env"]
    if saved_env.get("kind") == "normalize":
        env.set_param_values(saved_env["stats"])


def path_from_env(reader, args, obs_dim, act_dim):
    """``(name, observation statistics or None, action low, action high)`` of the environment
    that ``args`` rebuild, normalised with the checkpoint's statistics."""
    env, _ = make_env(args)
    if (obs_dim, act_dim) != (env.observation_space.flat_dim, env.action_space.flat_dim):
        raise CheckpointError(
            "the checkpoint's policy takes %d observation values and gives %d action values; "
            "the environment %s has %d and %d" % (obs_dim, act_dim, args.env,
                                                 env.observation_space.flat_dim,
                                                 env.action_space.flat_dim))
    stats = None
    if env.normalize_obs:
        apply_normalization(reader, env)
        stats = env.get_param_values()
    # make_env always wraps in normalize(): its [-1, 1] -> [low, high] map
    space = env.wrapped_env.action_space
    return args.env, stats, space.low, space.high


def path_from_description(reader, description, act_dim):
    """The same as :func:`path_from_env`, from the manifest's ``env_description`` alone: no
    environment is built (a custom one needs only its spaces)."""
    if description["wrappers"]:
        raise CheckpointError("the checkpoint's environment is wrapped in %s; the export "
                              "reproduces normalize() only" % ", ".join(description["wrappers"]))
    name = described_name(description["env"])
    normalize = description["normalize"]
    if normalize is None:  # the policy's tanh output is the action
        return name, None, -np.ones(act_dim), np.ones(act_dim)
    stats = None
    if normalize.get("normalize_obs"):
        saved_env = reader.training_state()["env"]
        if saved_env.get("kind") != "normalize" or not isinstance(saved_env.get("stats"), dict):
            raise CheckpointError("the checkpoint normalised observations but its training "
                                  "state holds no normalize() statistics")
        stats = saved_env["stats"]
    low, high = _action_bounds(description)
    if low.shape != (act_dim,) or high.shape != (act_dim,) or \
            not (np.isfinite(low).all() and np.isfinite(high).all()):
        raise CheckpointError("the checkpoint's action bounds %s, %s are not %d finite values"
                              % (low.tolist(), high.tolist(), act_dim))
    return name, stats, low, high


def normalization_constants(stats, obs_dim):
    """The float32 ``(1, obs_dim)`` mean and divisor of normalize()'s observation
    normalisation with the running statistics ``stats``."""
    try:
        mean = np.asarray(stats["obs_mean"], dtype=np.float64).reshape(1, obs_dim)
        var = np.asarray(stats["obs_var"], dtype=np.float64).reshape(1, obs_dim)
    except (KeyError, TypeError, ValueError) as error:
        raise CheckpointError("the checkpoint's observation statistics do not fit %d "
                              "observation values (%s)" % (obs_dim, error))
    return mean.astype(np.float32), (np.sqrt(var) + OBS_NORMALIZATION_EPS).astype(np.float32)


def checkpoint_obs_normalizer(reader, obs_dim):
    """The :class:`ddpg.obs_normalizer.ObservationNormalizer` of a checkpoint trained with
    ``obs_norm``, with the statistics its training state holds; None without ``obs_norm``."""
    if not reader.manifest.get("hyperparameters", {}).get("obs_norm"):
        return None
    normalizer = ObservationNormalizer(obs_dim)
    try:
        normalizer.load_state_dict(reader.training_state()["obs_normalizer"])
    except (KeyError, TypeError, ValueError) as error:
        raise CheckpointError("its observation normaliser's statistics are unusable (%r)"
                              % (error,))
    return normalizer


def input_layout(manifest, obs_dim):
    """What the policy's ``obs_dim`` input values are, as ``[[part, size], ...]`` in order:
    ``[["observation", n], ["desired_goal", g]]`` for a goal-conditioned environment
    (:mod:`ddpg.envs.goals`), ``[["observation", obs_dim]]`` for any other; None for a
    hindsight-replay checkpoint whose description does not record the split."""
    description = manifest.get("env_description") or {}
    layout = (description.get("env") or {}).get("goal_layout")
    if isinstance(layout, dict):
        return [["observation", int(layout["observation"])],
                ["desired_goal", int(layout["desired_goal"])]]
    if manifest.get("hyperparameters", {}).get("her"):
        return None
    return [["observation", int(obs_dim)]]
