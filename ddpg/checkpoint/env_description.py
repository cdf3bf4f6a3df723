"""What a checkpoint says about its environment, so that its policy can be used without the
training script's arguments (``python -m ddpg.export``, ``examples/evaluate.py``).

:func:`describe_env` gives the manifest's ``env_description`` section, plain JSON:

``env``
    the environment that ``normalize()`` wraps (or the environment itself): ``kind``
    ``"gym"`` with its ``id`` (None when the gymnasium environment has no registered id),
    its ``library`` and ``make_kwargs``, and for a goal-conditioned one the ``goal_layout``
    of the flat vector the networks see (``{"observation": n, "desired_goal": g}``: ``n``
    values of the observation, then ``g`` of the desired goal); ``"cartpole"`` (the
    library's ``CartpoleEnv``) with ``reset_quirk``; or ``"other"`` (any rllab-style
    environment); and its ``class``;
``normalize``
    ``normalize()``'s settings (``scale_reward``, ``normalize_obs``, ``normalize_reward``,
    ``obs_alpha``, ``reward_alpha``), or None when the environment was not normalised;
``wrappers``
    the classes of any other wrappers (environments with a ``wrapped_env``) between the
    outside and ``env``, outermost first;
``observation_space``, ``action_space``
    ``env``'s spaces: ``shape``, ``low`` and ``high`` (flattened; a bound that is not finite
    is written as the string ``"inf"``, ``"-inf"`` or ``"nan"``, which JSON has no number
    for). The action bounds are those ``normalize()`` rescales the policy's [-1, 1] onto.

A checkpoint written before this section existed has no ``env_description``;
:func:`read_description` returns None for it.
"""
import numpy as np

from ddpg.envs.cartpole import CartpoleEnv
from ddpg.envs.gym_env import GymEnv
from ddpg.envs.normalized_env import NormalizedEnv
from ddpg.errors import CheckpointError

__all__ = ["SECTION", "NORMALIZE_SETTINGS", "describe_env", "described_name", "env_name",
           "read_description", "bounds_from_json"]

#: The manifest's key.
SECTION = "env_description"
#: ``normalize()``'s settings, as NormalizedEnv's attributes.
NORMALIZE_SETTINGS = ("scale_reward", "normalize_obs", "normalize_reward", "obs_alpha",
                      "reward_alpha")
_NON_FINITE = {"inf": np.inf, "-inf": -np.inf, "nan": np.nan}


def _class_name(obj):
    return "%s.%s" % (type(obj).__module__, type(obj).__qualname__)


def _bound_to_json(value):
    value = float(value)
    if np.isfinite(value):
        return value
    return "nan" if np.isnan(value) else ("inf" if value > 0 else "-inf")


def bounds_from_json(values, what):
    """The float64 array of bounds written by :func:`describe_env` (``CheckpointError``
    naming ``what`` for anything else)."""
    if not isinstance(values, list):
        raise CheckpointError("the checkpoint's %s is not a list" % what)
    try:
        return np.array([_NON_FINITE[value] if isinstance(value, str) else float(value)
                         for value in values], dtype=np.float64)
    except (KeyError, TypeError, ValueError):
        raise CheckpointError("the checkpoint's %s holds something that is not a bound: %r"
                              % (what, values))


def _space(space):
    low = np.broadcast_to(np.asarray(space.low, dtype=np.float64), space.shape)
    high = np.broadcast_to(np.asarray(space.high, dtype=np.float64), space.shape)
    return {"shape": [int(size) for size in space.shape],
            "low": [_bound_to_json(value) for value in low.ravel()],
            "high": [_bound_to_json(value) for value in high.ravel()]}


def _plain_kwargs(kwargs):
    return {str(key): value if value is None or isinstance(value, (bool, int, float, str))
            else repr(value) for key, value in kwargs.items()}


def _describe_inner(env):
    if isinstance(env, GymEnv):
        library = type(env.env.unwrapped).__module__.split(".")[0]
        described = {"kind": "gym", "id": env.env_id, "library": library,
                     "make_kwargs": _plain_kwargs(getattr(env, "_make_kwargs", {})),
                     "class": _class_name(env.env.unwrapped)}
        layout = getattr(env, "goal_layout", None)
        if layout is not None:
            described["goal_layout"] = {"observation": int(layout.obs_dim),
                                        "desired_goal": int(layout.goal_dim)}
        return described
    if isinstance(env, CartpoleEnv):
        return {"kind": "cartpole", "reset_quirk": bool(env.reset_quirk),
                "class": _class_name(env)}
    return {"kind": "other", "class": _class_name(env)}


def described_name(described):
    """How messages name a described environment (``describe_env(env)["env"]``): its
    gymnasium id, ``cartpole`` or its class."""
    if described.get("id"):
        return described["id"]
    return "cartpole" if described["kind"] == "cartpole" else described.get("class")


def env_name(env):
    """How messages name ``env``: the gymnasium id, ``cartpole`` or the class of the
    environment inside its wrappers (``normalize()``'s and others)."""
    while getattr(env, "wrapped_env", None) is not None:
        env = env.wrapped_env
    return described_name(_describe_inner(env))


def describe_env(env):
    """The manifest's ``env_description`` of the training environment ``env`` (see the
    module's docstring)."""
    normalize, wrappers = None, []
    while getattr(env, "wrapped_env", None) is not None:
        if isinstance(env, NormalizedEnv) and normalize is None and not wrappers:
            normalize = {name: getattr(env, name) for name in NORMALIZE_SETTINGS}
            normalize = {name: value if isinstance(value, bool) else float(value)
                         for name, value in normalize.items()}
        else:
            wrappers.append(_class_name(env))
        env = env.wrapped_env
    return {"env": _describe_inner(env), "normalize": normalize, "wrappers": wrappers,
            "observation_space": _space(env.observation_space),
            "action_space": _space(env.action_space)}


def read_description(manifest):
    """The manifest's ``env_description``, its structure checked, or None when the
    checkpoint predates it."""
    description = manifest.get(SECTION)
    if description is None:
        return None
    problem = None
    if not isinstance(description, dict):
        problem = "is not a dict"
    elif not isinstance(description.get("env"), dict) or \
            description["env"].get("kind") not in ("gym", "cartpole", "other"):
        problem = "has no env of a known kind"
    elif not (description.get("normalize") is None or isinstance(description["normalize"],
                                                                  dict)):
        problem = "has normalize settings that are not a dict"
    elif not isinstance(description.get("wrappers"), list):
        problem = "has no list of wrappers"
    elif not all(isinstance(description.get(space), dict)
                 for space in ("observation_space", "action_space")):
        problem = "lacks the spaces"
    if problem:
        raise CheckpointError("the manifest's %s %s" % (SECTION, problem))
    return description
