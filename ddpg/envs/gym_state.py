"""The checkpoint state of a gymnasium (or gym 0.26) environment, as arrays and plain values.

:class:`ddpg.envs.GymEnv`'s checkpoint hook (``get_checkpoint_state`` and friends) is built
from these functions. Saved are the unwrapped environment's random generator
(``np_random``'s bit-generator state: a dict of integers), its seed, the ``TimeLimit`` step
counters, whether it was reset, a seed waiting for the next ``reset()``, and, where the whole
simulator state can be read:

* *classic-control* environments (Pendulum, MountainCarContinuous, ...): the ``state``
  attribute of the unwrapped environment (plus ``last_u`` and ``steps_beyond_terminated``);
* MuJoCo environments: MuJoCo's integration state (``mj_getState(mjSTATE_INTEGRATION)``:
  time, qpos, qvel, act, warm start, controls, applied forces, mocap, user data) and every
  other array of ``MjData`` whose size the model fixes (body positions, contact forces, ...).
  gymnasium's MuJoCo environments read some of those derived quantities before integrating,
  and after a step they still describe the state *before* it, so restoring the integration
  state alone and recomputing them would not continue the episode exactly. The arrays that
  MuJoCo sizes per step (constraints ``efc_*``, islands, contacts) are recomputed by the next
  ``mj_step`` before they are read; so are arrays whose size differs when restoring. A
  goal-conditioned task (gymnasium-robotics' Fetch) also has its episode's ``goal`` saved.

Those two continue an episode exactly (``episode`` is ``"exact"``); for other environments
(e.g. Box2D ones) only the generators are saved and a restored run starts a new episode.
"""
import types

import numpy as np

from ddpg.plain_data import require_keys

EXACT = "exact"
RESET = "reset"

#: Attributes that hold the whole dynamic state of gymnasium's classic-control environments
#: (``last_u`` only matters for rendering, ``steps_beyond_terminated`` for a warning).
CLASSIC_CONTROL_ATTRIBUTES = ("state", "last_u", "steps_beyond_terminated")
CLASSIC_CONTROL_MODULES = ("gymnasium.envs.classic_control.", "gym.envs.classic_control.")

#: MjData arrays that MuJoCo sizes per step (constraints, islands, contacts): not saved.
MUJOCO_PER_STEP_PREFIXES = ("efc_", "iefc_", "efm_", "island_", "map_")
#: MjData flags saying which derived quantities are current.
MUJOCO_FLAGS = ("flg_energypos", "flg_energyvel", "flg_rnepost", "flg_subtreevel")
#: Model sizes that must agree before a saved MjData state may be written into another.
MUJOCO_SIZES = ("nq", "nv", "na", "nu", "nbody", "njnt", "ngeom", "nsite", "nmocap",
                "nuserdata", "nsensordata", "nplugin")


def wrappers(library, gym_env):
    """The library wrappers around an environment, outermost first."""
    chain = []
    env = gym_env
    while library is not None and isinstance(env, library.Wrapper):
        chain.append(env)
        env = env.env
    return chain


def has_been_reset(library, gym_env):
    """Whether the environment was reset (OrderEnforcing knows); True when nothing tracks it."""
    return all(w._has_reset for w in wrappers(library, gym_env) if hasattr(w, "_has_reset"))


def mujoco_module(unwrapped):
    """The ``mujoco`` module when ``unwrapped`` is a MuJoCo environment, else None."""
    if not (hasattr(unwrapped, "model") and hasattr(unwrapped, "data")):
        return None
    try:
        import mujoco
    except ImportError:
        return None
    return mujoco if isinstance(unwrapped.data, mujoco.MjData) else None


def _mujoco_sizes(model):
    return {name: int(getattr(model, name)) for name in MUJOCO_SIZES if hasattr(model, name)}


def _mujoco_arrays(data):
    """``{name: live array}`` of the MjData arrays the model sizes (see the module docstring)."""
    arrays = {}
    for name in dir(data):
        if name.startswith("_") or name.startswith(MUJOCO_PER_STEP_PREFIXES):
            continue
        value = getattr(data, name, None)
        if isinstance(value, np.ndarray):
            arrays[name] = value
    return arrays


def _capture_mujoco(mujoco, unwrapped):
    model, data = unwrapped.model, unwrapped.data
    integration = np.empty(mujoco.mj_stateSize(model, mujoco.mjtState.mjSTATE_INTEGRATION))
    mujoco.mj_getState(model, data, integration, mujoco.mjtState.mjSTATE_INTEGRATION)
    return {"kind": "mujoco", "sizes": _mujoco_sizes(model), "integration": integration,
            "arrays": {name: np.array(array) for name, array in _mujoco_arrays(data).items()},
            "flags": {name: bool(getattr(data, name)) for name in MUJOCO_FLAGS
                      if hasattr(data, name)}}


def capture_mujoco_data(data):
    """The physics state :func:`capture` saves, of a MuJoCo ``MjData`` (and its ``model``)
    alone: checkpoints of format version 1 pickled the MjData (:mod:`ddpg.checkpoint.legacy`
    converts them)."""
    simulation = types.SimpleNamespace(model=data.model, data=data)  # as an env holds them
    return _capture_mujoco(mujoco_module(simulation), simulation)


def _capture_physics(unwrapped):
    """``(episode level, physics state or None)`` of the unwrapped environment."""
    mujoco = mujoco_module(unwrapped)
    if mujoco is not None:
        physics = _capture_mujoco(mujoco, unwrapped)
        if isinstance(getattr(unwrapped, "goal", None), np.ndarray):  # a goal task (Fetch)
            physics["goal"] = np.array(unwrapped.goal)
        return EXACT, physics
    if type(unwrapped).__module__.startswith(CLASSIC_CONTROL_MODULES) and hasattr(
            unwrapped, "state"):
        values = {}
        for name in CLASSIC_CONTROL_ATTRIBUTES:
            if hasattr(unwrapped, name):
                value = getattr(unwrapped, name)
                values[name] = np.array(value) if isinstance(value, np.ndarray) else value
        return EXACT, {"kind": "attributes", "values": values}
    return RESET, None


def episode_level(unwrapped):
    """``"exact"`` if the episode of ``unwrapped`` can be continued from a checkpoint."""
    if mujoco_module(unwrapped) is not None:
        return EXACT
    return EXACT if (type(unwrapped).__module__.startswith(CLASSIC_CONTROL_MODULES)
                     and hasattr(unwrapped, "state")) else RESET


def _type_name(obj):
    return "%s.%s" % (type(obj).__module__, type(obj).__qualname__)


def capture(library, gym_env, env_id, pending_seed):
    unwrapped = gym_env.unwrapped
    generator = getattr(unwrapped, "_np_random", None)
    episode, physics = _capture_physics(unwrapped)
    seed = getattr(unwrapped, "_np_random_seed", None)
    return {
        "env_id": env_id, "type": _type_name(unwrapped), "episode": episode, "physics": physics,
        "pending_seed": None if pending_seed is None else int(pending_seed),
        "has_reset": has_been_reset(library, gym_env),
        "rng": None if generator is None else generator.bit_generator.state,
        "rng_seed": None if seed is None else int(seed),
        "elapsed_steps": [getattr(w, "_elapsed_steps", None)
                          for w in wrappers(library, gym_env)],
    }


def check(library, gym_env, env_id, saved):
    """``ValueError`` unless ``saved`` (from :func:`capture`) fits ``gym_env``."""
    require_keys(saved, ("env_id", "type", "episode", "physics", "pending_seed", "has_reset",
                         "rng", "rng_seed", "elapsed_steps"), "a gymnasium environment state")
    unwrapped = gym_env.unwrapped
    if saved["env_id"] != env_id or saved["type"] != _type_name(unwrapped):
        raise ValueError("the saved environment is %s (%s) but this one is %s (%s)"
                         % (saved["env_id"], saved["type"], env_id, _type_name(unwrapped)))
    chain = wrappers(library, gym_env)
    if len(saved["elapsed_steps"]) != len(chain):
        raise ValueError("the saved environment has %d wrappers, this one %d"
                         % (len(saved["elapsed_steps"]), len(chain)))
    if not isinstance(saved["elapsed_steps"], list) or not all(
            steps is None or isinstance(steps, int) for steps in saved["elapsed_steps"]):
        raise ValueError("the saved step counters are not a list of integers")
    if saved["rng"] is not None:
        try:
            np.random.default_rng().bit_generator.__class__().state = saved["rng"]
        except (TypeError, ValueError, KeyError) as error:
            raise ValueError("the saved generator state is unusable (%s)" % error)
    physics = saved["physics"]
    if physics is None:
        return
    require_keys(physics, ("kind",), "the saved physics")
    if physics["kind"] == "mujoco":
        require_keys(physics, ("sizes", "integration", "arrays", "flags"), "a MuJoCo state")
        mujoco = mujoco_module(unwrapped)
        sizes = None if mujoco is None else _mujoco_sizes(unwrapped.model)
        if sizes != physics["sizes"]:
            raise ValueError("the saved environment has a MuJoCo model of sizes %s, this one %s"
                             % (physics["sizes"], sizes))
        size = mujoco.mj_stateSize(unwrapped.model, mujoco.mjtState.mjSTATE_INTEGRATION)
        if np.shape(physics["integration"]) != (size,):
            raise ValueError("the saved MuJoCo state has %s values, this model needs %d"
                             % (np.shape(physics["integration"]), size))
        for name, array in physics["arrays"].items():
            if not isinstance(array, np.ndarray):
                raise ValueError("the saved MuJoCo array %s is not an array" % name)
    elif physics["kind"] != "attributes" or not isinstance(physics.get("values"), dict):
        raise ValueError("unknown saved physics kind %r" % (physics["kind"],))
    elif not type(unwrapped).__module__.startswith(CLASSIC_CONTROL_MODULES):
        raise ValueError("the saved environment's state is a classic-control state; this is "
                         "not a classic-control environment")


def apply(library, gym_env, saved):
    """Write ``saved`` (checked with :func:`check`) into ``gym_env``."""
    unwrapped = gym_env.unwrapped
    if saved["has_reset"] and not has_been_reset(library, gym_env):
        # a fresh environment refuses step() before reset(); the reset's effects on the
        # generator and the state are overwritten below
        gym_env.reset()
    if saved["rng"] is not None:
        generator = unwrapped.np_random  # created if the environment has none yet
        generator.bit_generator.state = saved["rng"]
        if hasattr(unwrapped, "_np_random_seed"):
            unwrapped._np_random_seed = saved["rng_seed"]
    for wrapper, steps in zip(wrappers(library, gym_env), saved["elapsed_steps"]):
        if steps is not None and hasattr(wrapper, "_elapsed_steps"):
            wrapper._elapsed_steps = int(steps)
    physics = saved["physics"]
    if physics is None:
        return
    if physics["kind"] == "mujoco":
        mujoco = mujoco_module(unwrapped)
        model, data = unwrapped.model, unwrapped.data
        mujoco.mj_setState(model, data, np.asarray(physics["integration"], dtype=np.float64),
                           mujoco.mjtState.mjSTATE_INTEGRATION)
        mujoco.mj_forward(model, data)  # per-step arrays consistent with the new state
        live = _mujoco_arrays(data)
        for name, array in physics["arrays"].items():
            # arrays MuJoCo sizes per step (islands: iacc, ...) may differ; the next mj_step
            # recomputes them
            if name in live and live[name].shape == np.shape(array):
                np.copyto(live[name], array)
        for name, value in physics["flags"].items():
            setattr(data, name, bool(value))
        if "goal" in physics:
            unwrapped.goal = np.array(physics["goal"])
        mujoco.mj_setState(model, data, np.asarray(physics["integration"], dtype=np.float64),
                           mujoco.mjtState.mjSTATE_INTEGRATION)
    else:
        for name, value in physics["values"].items():
            setattr(unwrapped, name, np.array(value) if isinstance(value, np.ndarray)
                    else value)
