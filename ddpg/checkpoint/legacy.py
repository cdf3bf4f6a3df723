"""Reading checkpoints of format version 1, whose training and optimiser states are pickles.

Unpickling runs whatever code the file names, so these functions are called only when the
user passed ``trust_pickle=True`` (``--trust-pickle`` on the command line): see
:func:`ddpg.checkpoint.restore`. Version 1 stored ``state.pkl`` (the training state) and
``<network>.states`` (``Updater.get_states(dump_optimizer=True)``). The environment
snapshots of version 1 are converted to those of the checkpoint hooks
(:mod:`ddpg.checkpoint.env_state`), so that restoring goes through the same checks as version 2.
Re-saving a restored run writes the current version.
"""
import pickle

import mxnet as mx
import numpy as np

from ddpg.envs import gym_state

STATE = "state.pkl"


def states_file(network):
    return network + ".states"


def unpickle_file(full, what):
    """The unpickled contents of ``full``; ``ValueError`` naming ``what`` if it fails."""
    with open(full, "rb") as handle:
        raw = handle.read()
    try:
        return raw, pickle.loads(raw)
    except Exception as error:  # pylint: disable=broad-except
        raise ValueError("the %s %s cannot be unpickled (%s: %s)"
                         % (what, full, type(error).__name__, error))


def optimizer_state(updater, value, parameter_shapes):
    """Check an unpickled ``({index: state}, optimizer)`` against ``updater``; return the
    function applying it (``ValueError`` on a mismatch)."""
    states, optimizer = value if isinstance(value, tuple) and len(value) == 2 else (value, None)
    current = getattr(updater, "optimizer", None)
    if optimizer is not None and current is not None and type(current) is not type(optimizer):
        raise ValueError("it has a %s optimiser; this algorithm uses %s"
                         % (type(optimizer).__name__, type(current).__name__))
    if not isinstance(states, dict):
        raise ValueError("its states are not a dict")
    shapes = [tuple(shape) for shape in parameter_shapes]
    total = (int(sum(np.prod(shape) for shape in shapes)),)

    def arrays(state):
        if isinstance(state, mx.nd.NDArray):
            return [state]
        if isinstance(state, (tuple, list)):
            return [a for item in state for a in arrays(item)]
        return []
    for index, state in states.items():
        for array in arrays(state):
            shape = tuple(array.shape)
            if not ((index == 0 and shape == total) or (
                    isinstance(index, int) and 0 <= index < len(shapes)
                    and shape == shapes[index])):
                raise ValueError("it has state of shape %s at index %r, which fits no "
                                 "parameter of this network" % (shape, index))

    def apply():
        updater.states = states
        updater.states_synced = dict.fromkeys(states, False)
        if optimizer is not None:
            updater.optimizer = optimizer
    return apply


def _upgrade_env(saved):
    """A version-1 environment snapshot in the form of version 2 (the checkpoint hooks')."""
    kind = saved.get("kind")
    if kind == "normalize":
        return dict(saved, inner=_upgrade_env(saved["inner"]))
    if kind == "cartpole":
        return {"kind": "custom", "type": "ddpg.envs.cartpole.CartpoleEnv",
                "episode": saved["episode"],
                "state": {key: saved[key] for key in ("state", "quirk_pending", "seeded",
                                                      "rng")}}
    if kind == "gym":
        physics = saved["physics"]
        if physics is not None and physics["kind"] == "mujoco":
            physics = gym_state.capture_mujoco_data(physics["data"])
        state = {key: saved[key] for key in ("env_id", "type", "episode", "pending_seed",
                                             "has_reset", "rng", "rng_seed", "elapsed_steps")}
        state["physics"] = physics
        return {"kind": "custom", "type": "ddpg.envs.gym_env.GymEnv",
                "episode": saved["episode"], "state": state}
    return saved


def training_state(full):
    """The unpickled training state of ``full``, its environments in version 2's form."""
    _, state = unpickle_file(full, "training state")
    if not isinstance(state, dict):
        raise ValueError("the training state %s is not a dict" % full)
    for key in ("env", "eval_env"):
        if isinstance(state.get(key), dict):
            state[key] = _upgrade_env(state[key])
    state.setdefault("python_random", None)
    return state
