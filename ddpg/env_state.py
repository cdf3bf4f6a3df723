"""Capturing and restoring an environment's state, so a checkpoint can continue an episode.

A checkpoint taken mid-episode can only continue that episode if the simulator's state can be
read and written back, which no general environment API offers. What is captured depends on
the environment, and each snapshot says how well its episode can be continued (``episode``):

``exact``
    The continued episode is bit-identical to the uninterrupted one:

    * ``CartpoleEnv``: its physical state, the pending reset quirk and its random generator;
    * gymnasium/gym *classic-control* environments (Pendulum, MountainCarContinuous, ...),
      whose whole dynamic state is the ``state`` attribute of the unwrapped environment;
    * MuJoCo environments: a copy of the whole ``MjData`` (written back with
      ``mj_copyData``), derived quantities included: gymnasium's MuJoCo environments read
      some of them (body positions, contact forces) before integrating, so restoring only
      qpos/qvel (or MuJoCo's integration state) would not be exact;
    * any environment defining ``get_checkpoint_state()`` / ``set_checkpoint_state(state)``
      (the hook takes precedence; its state must be picklable and complete).

    For gymnasium environments the unwrapped environment's random generator (``np_random``),
    the ``TimeLimit`` step counter and a seed still waiting for the next ``reset()`` are saved
    too.
``reset``
    The episode cannot be continued (other gymnasium environments, e.g. Box2D ones; rllab-style
    environments without the hook). Restoring starts a new episode; generators that could be
    saved still are, so later episodes are reproducible where the environment allows.

``NormalizedEnv`` adds its running observation/reward statistics and takes the episode level
of the environment it wraps.

Restoring goes in two steps so that a mismatch changes nothing: :func:`prepare_env_restore`
checks a snapshot against an environment and returns a function that applies it.
"""
import copy

import numpy as np

from ddpg.envs.cartpole import CartpoleEnv
from ddpg.envs.gym_env import GymEnv, library_of
from ddpg.envs.normalized_env import NormalizedEnv

EXACT = "exact"
RESET = "reset"

#: Attributes that hold the whole dynamic state of gymnasium's classic-control environments
#: (``last_u`` only matters for rendering, ``steps_beyond_terminated`` for a warning).
CLASSIC_CONTROL_ATTRIBUTES = ("state", "last_u", "steps_beyond_terminated")
CLASSIC_CONTROL_MODULES = ("gymnasium.envs.classic_control.", "gym.envs.classic_control.")


def _type_name(obj):
    return "%s.%s" % (type(obj).__module__, type(obj).__qualname__)


def capture_env_state(env):
    """A picklable snapshot of ``env``: a dict with ``kind``, ``episode`` and the state."""
    if callable(getattr(env, "get_checkpoint_state", None)):
        return {"kind": "custom", "type": _type_name(env), "episode": EXACT,
                "state": copy.deepcopy(env.get_checkpoint_state())}
    if isinstance(env, NormalizedEnv):
        inner = capture_env_state(env.wrapped_env)
        return {"kind": "normalize", "type": _type_name(env), "episode": inner["episode"],
                "stats": env.get_param_values(), "inner": inner}
    if isinstance(env, CartpoleEnv):
        return {"kind": "cartpole", "type": _type_name(env), "episode": EXACT,
                "state": None if env.state is None else np.array(env.state),
                "quirk_pending": bool(env._quirk_pending), "seeded": bool(env._seeded),
                "rng": env.np_random.get_state()}
    if isinstance(env, GymEnv):
        return _capture_gym(env)
    return {"kind": "opaque", "type": _type_name(env), "episode": RESET}


def prepare_env_restore(env, saved, what="environment"):
    """Check ``saved`` (from :func:`capture_env_state`) against ``env``; return an applier.

    Raises ``ValueError`` naming the mismatch (another kind of environment, another gymnasium
    id, other shapes) without touching ``env``. The returned function, called with no
    arguments, writes the state into ``env``.
    """
    kind = saved.get("kind")
    current = capture_kind(env)
    if kind != current:
        raise ValueError("the checkpoint's %s is %s (%s) but this one is %s (%s)"
                         % (what, kind, saved.get("type"), current, _type_name(env)))
    if kind == "custom":
        state = copy.deepcopy(saved["state"])
        return lambda: env.set_checkpoint_state(state)
    if kind == "normalize":
        return _prepare_normalize(env, saved, what)
    if kind == "cartpole":
        return _prepare_cartpole(env, saved, what)
    if kind == "gym":
        return _prepare_gym(env, saved, what)
    return lambda: None  # opaque: nothing was saved


def capture_kind(env):
    """The ``kind`` :func:`capture_env_state` gives ``env``, without capturing anything."""
    if callable(getattr(env, "get_checkpoint_state", None)):
        return "custom"
    for kind, cls in (("normalize", NormalizedEnv), ("cartpole", CartpoleEnv),
                      ("gym", GymEnv)):
        if isinstance(env, cls):
            return kind
    return "opaque"


def _prepare_normalize(env, saved, what):
    stats = saved["stats"]
    current = env.get_param_values()
    for key in ("obs_mean", "obs_var"):
        shape = np.shape(stats[key])
        if shape != current[key].shape:
            raise ValueError("the checkpoint's %s normalises observations of shape %s, this "
                             "one %s" % (what, shape, current[key].shape))
    apply_inner = prepare_env_restore(env.wrapped_env, saved["inner"], what)

    def apply():
        env.set_param_values(stats)
        apply_inner()
    return apply


def _prepare_cartpole(env, saved, what):
    state = saved["state"]
    if state is not None and np.shape(state) != (4,):
        raise ValueError("the checkpoint's %s has a cart-pole state of shape %s, not (4,)"
                         % (what, np.shape(state)))
    rng = np.random.RandomState()
    try:
        rng.set_state(saved["rng"])
    except (TypeError, ValueError) as error:
        raise ValueError("the checkpoint's %s has an unusable random state (%s)"
                         % (what, error))

    def apply():
        env.state = None if state is None else np.array(state, dtype=np.float64)
        env._quirk_pending = saved["quirk_pending"]
        env._seeded = saved["seeded"]
        env.np_random.set_state(saved["rng"])
    return apply


# ---------------------------------------------------------------------------------------------
# gymnasium and gym 0.26


def _wrappers(gym_env):
    """The library wrappers around an environment, outermost first (ours excluded)."""
    library = library_of(gym_env)
    chain = []
    env = gym_env
    while library is not None and isinstance(env, library.Wrapper):
        chain.append(env)
        env = env.env
    return chain


def _has_been_reset(gym_env):
    """Whether the environment was reset (OrderEnforcing knows); True when nothing tracks it."""
    flags = [w._has_reset for w in _wrappers(gym_env) if hasattr(w, "_has_reset")]
    return all(flags)


def _mujoco_module(unwrapped):
    """The ``mujoco`` module when ``unwrapped`` is a MuJoCo environment, else None."""
    if not (hasattr(unwrapped, "model") and hasattr(unwrapped, "data")):
        return None
    try:
        import mujoco
    except ImportError:
        return None
    return mujoco if isinstance(unwrapped.data, mujoco.MjData) else None


#: Model sizes that must agree before ``mj_copyData`` may copy one MjData into another.
MUJOCO_SIZES = ("nq", "nv", "na", "nu", "nbody", "njnt", "ngeom", "nsite", "nmocap",
                "nuserdata", "nsensordata", "narena")


def _mujoco_sizes(model):
    return {name: int(getattr(model, name)) for name in MUJOCO_SIZES if hasattr(model, name)}


def _capture_physics(unwrapped):
    """``(episode level, physics snapshot)`` of the unwrapped gymnasium environment."""
    if _mujoco_module(unwrapped) is not None:
        return EXACT, {"kind": "mujoco", "data": copy.deepcopy(unwrapped.data),
                       "sizes": _mujoco_sizes(unwrapped.model)}
    if type(unwrapped).__module__.startswith(CLASSIC_CONTROL_MODULES) and hasattr(
            unwrapped, "state"):
        values = {name: copy.deepcopy(getattr(unwrapped, name))
                  for name in CLASSIC_CONTROL_ATTRIBUTES if hasattr(unwrapped, name)}
        return EXACT, {"kind": "attributes", "values": values}
    return RESET, None


def _capture_gym(env):
    gym_env = env.env
    unwrapped = gym_env.unwrapped
    generator = getattr(unwrapped, "_np_random", None)
    episode, physics = _capture_physics(unwrapped)
    return {
        "kind": "gym", "type": _type_name(unwrapped), "env_id": env.env_id,
        "episode": episode, "physics": physics,
        "pending_seed": env._pending_seed,
        "has_reset": _has_been_reset(gym_env),
        "rng": None if generator is None else copy.deepcopy(generator.bit_generator.state),
        "rng_seed": getattr(unwrapped, "_np_random_seed", None),
        "elapsed_steps": [getattr(w, "_elapsed_steps", None) for w in _wrappers(gym_env)],
    }


def _prepare_gym(env, saved, what):
    gym_env = env.env
    unwrapped = gym_env.unwrapped
    if saved["env_id"] != env.env_id or saved["type"] != _type_name(unwrapped):
        raise ValueError("the checkpoint's %s is %s (%s) but this one is %s (%s)"
                         % (what, saved["env_id"], saved["type"], env.env_id,
                            _type_name(unwrapped)))
    wrappers = _wrappers(gym_env)
    if len(saved["elapsed_steps"]) != len(wrappers):
        raise ValueError("the checkpoint's %s has %d wrappers, this one %d"
                         % (what, len(saved["elapsed_steps"]), len(wrappers)))
    physics = saved["physics"]
    if physics is not None and physics["kind"] == "mujoco":
        mujoco = _mujoco_module(unwrapped)
        sizes = None if mujoco is None else _mujoco_sizes(unwrapped.model)
        if sizes != physics["sizes"] or _mujoco_sizes(physics["data"].model) != sizes:
            raise ValueError("the checkpoint's %s has a MuJoCo model of sizes %s, this one %s"
                             % (what, physics["sizes"], sizes))

    def apply():
        if saved["has_reset"] and not _has_been_reset(gym_env):
            # a fresh environment refuses step() before reset(); the reset's effects on the
            # generator and the state are overwritten below
            gym_env.reset()
        env._pending_seed = saved["pending_seed"]
        if saved["rng"] is not None:
            generator = unwrapped.np_random  # created if the environment has none yet
            generator.bit_generator.state = copy.deepcopy(saved["rng"])
            if hasattr(unwrapped, "_np_random_seed"):
                unwrapped._np_random_seed = saved["rng_seed"]
        for wrapper, steps in zip(wrappers, saved["elapsed_steps"]):
            if steps is not None and hasattr(wrapper, "_elapsed_steps"):
                wrapper._elapsed_steps = steps
        if physics is not None and physics["kind"] == "mujoco":
            mujoco.mj_copyData(unwrapped.data, unwrapped.model, physics["data"])
        elif physics is not None:
            for name, value in physics["values"].items():
                setattr(unwrapped, name, copy.deepcopy(value))
    return apply
