"""The training state of a checkpoint: captured as plain data, checked and assigned back.

``training_state.json``/``.npz`` (:mod:`ddpg.plain_data`) hold the training loop's state
(every field of :class:`ddpg.training_state.TrainingState`: the epoch, the update index, the
episode in progress, ...; saved under ``counters``), numpy's and
Python's global generators, the exploration strategy's state, the epoch's running update
statistics and both environments' states (:mod:`ddpg.checkpoint.env_state`).

:func:`capture_training_state` gives that state as a dict; :func:`prepare_training_state`
checks a saved one against an algorithm without changing anything and returns the function
that assigns it, so that a restore fails before its first change.
"""
import random

import numpy as np

from ddpg.checkpoint import env_state
from ddpg.errors import CheckpointError
from ddpg.training_state import STATE_FIELDS

#: The training loop's state saved in training_state.json/.npz: TrainingState's fields.
COUNTERS = STATE_FIELDS


def _capture_strategy(strategy):
    if callable(getattr(strategy, "get_checkpoint_state", None)):
        return {"kind": "custom", "state": strategy.get_checkpoint_state()}
    if hasattr(strategy, "state"):
        return {"kind": "state", "state": np.array(strategy.state, copy=True)}
    return {"kind": "none"}


def _capture_update_stats(algo):
    """The current epoch's running update statistics (all zero at epoch boundaries)."""
    stats = getattr(algo, "update_stats", None)
    if not callable(getattr(stats, "get_checkpoint_state", None)):
        return None
    return stats.get_checkpoint_state()


def capture_training_state(algo):
    """``algo``'s training state as a dict of plain data (see the module docstring)."""
    counters = {}
    for name in COUNTERS:
        value = getattr(algo.loop.state, name)
        counters[name] = np.array(value, copy=True) if isinstance(value, np.ndarray) \
            else list(value) if isinstance(value, list) else value
    return {
        "counters": counters,
        "np_random": np.random.get_state(),
        "python_random": random.getstate(),
        "strategy": _capture_strategy(algo.strategy),
        "env": env_state.capture_env_state(algo.env),
        "eval_env": env_state.capture_env_state(algo.eval_env),
        "update_stats": _capture_update_stats(algo),
    }


def _prepare_strategy(strategy, saved, path):
    kind = saved["kind"]
    if kind == "custom":
        if not callable(getattr(strategy, "set_checkpoint_state", None)):
            raise CheckpointError("the checkpoint %s saved its strategy with "
                                  "get_checkpoint_state(); %s has no set_checkpoint_state()"
                                  % (path, type(strategy).__name__))
        return lambda: strategy.set_checkpoint_state(saved["state"])
    if kind == "state":
        current = getattr(strategy, "state", None)
        if current is None or np.shape(current) != np.shape(saved["state"]):
            raise CheckpointError("the checkpoint %s has an exploration state of shape %s; %s "
                                  "has %s" % (path, np.shape(saved["state"]),
                                              type(strategy).__name__,
                                              None if current is None else np.shape(current)))

        def apply():
            strategy.state = np.array(saved["state"], copy=True)
        return apply
    return lambda: None


def _prepare_update_stats(algo, saved, path):
    """The epoch's running update statistics, through the statistics object's own hooks
    (statistics of another layout start the epoch's averages afresh)."""
    stats = getattr(algo, "update_stats", None)
    try:
        fits = saved is not None and _capture_update_stats(algo) is not None \
            and stats.check_checkpoint_state(saved) and int(saved["n_updates"]) >= 0
    except (KeyError, TypeError, ValueError) as error:
        raise CheckpointError("the checkpoint %s has malformed update statistics (%r)"
                              % (path, error))
    if not fits:
        return lambda: stats.reset() if hasattr(stats, "reset") else None
    return lambda: stats.set_checkpoint_state(saved)


def _check_generators(state, path):
    """``CheckpointError`` unless the saved numpy and Python generator states are usable."""
    try:
        np.random.RandomState().set_state(state["np_random"])
    except (TypeError, ValueError, IndexError) as error:
        raise CheckpointError("the checkpoint %s has an unusable numpy random state (%s)"
                              % (path, error))
    python_random = state.get("python_random")
    if python_random is not None:
        try:
            random.Random().setstate(python_random)
        except (TypeError, ValueError, IndexError) as error:
            raise CheckpointError("the checkpoint %s has an unusable Python random state (%s)"
                                  % (path, error))


def _check_counters(counters, path):
    if not isinstance(counters, dict) or not set(counters) <= set(COUNTERS):
        raise CheckpointError("the checkpoint %s has malformed training counters" % path)


def _check_observation(algo, obs, path):
    """``CheckpointError`` unless the saved current observation fits ``algo``'s environment."""
    if obs is not None and np.size(obs) != algo.env.observation_space.flat_dim:
        raise CheckpointError("the checkpoint %s holds a current observation of %d values; "
                              "this environment has %d" % (path, np.size(obs),
                                                          algo.env.observation_space.flat_dim))


def _prepare_environments(algo, state, path):
    """The function assigning both saved environment states (checked first)."""
    try:
        apply_env = env_state.prepare_env_restore(algo.env, state["env"], "environment")
        apply_eval_env = env_state.prepare_env_restore(algo.eval_env, state["eval_env"],
                                                       "evaluation environment")
    except (ValueError, TypeError, KeyError, IndexError) as error:
        raise CheckpointError("%s (checkpoint %s)" % (error, path))

    def apply():
        apply_env()
        apply_eval_env()
    return apply


def prepare_training_state(algo, state, path, log):
    """Check the training state against ``algo``; return the function assigning it with
    the checkpoint's replay memory (``apply(memory)``), through the training loop."""
    counters = state["counters"]
    _check_counters(counters, path)
    _check_generators(state, path)
    _check_observation(algo, counters.get("obs"), path)
    python_random = state.get("python_random")
    apply_environments = _prepare_environments(algo, state, path)
    apply_strategy = _prepare_strategy(algo.strategy, state["strategy"], path)
    apply_stats = _prepare_update_stats(algo, state.get("update_stats"), path)
    continue_episode = state["env"]["episode"] == env_state.EXACT
    mid_episode = counters.get("obs") is not None and not counters.get("end", False)

    def apply(memory):
        algo.loop.restore({name: list(value) if isinstance(value, list) else value
                           for name, value in counters.items()}, memory)
        np.random.set_state(state["np_random"])
        if python_random is not None:
            random.setstate(python_random)
        apply_strategy()
        apply_environments()
        apply_stats()
        if mid_episode and not continue_episode:
            # the simulator's state could not be saved (see ddpg.checkpoint.env_state)
            log("The environment's state (%s) cannot be restored: the interrupted episode "
                "is abandoned and a new one starts" % state["env"].get("type"))
            algo.loop.abandon_episode()
    return apply
