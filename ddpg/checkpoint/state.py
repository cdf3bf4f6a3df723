"""The training state of a checkpoint: captured as plain data, checked and assigned back.

``training_state.json``/``.npz`` (:mod:`ddpg.plain_data`) hold the training loop's state
(every field of :class:`ddpg.training_state.TrainingState`: the epoch, the update index, the
episode in progress, ...; saved under ``counters``), numpy's and
Python's global generators, the exploration strategy's state, the epoch's running update
statistics and both environments' states (:mod:`ddpg.checkpoint.env_state`). With several
training environments (``n_envs``), environment 0 is saved as above and the others' episodes
(``counters["vector_episodes"]``), states (``vector_envs``), strategies
(``vector_strategies``) and generators (``vector_generators``) beside it. A run collecting
through actors (:mod:`ddpg.distributed`) adds their state under ``collector``, one with
``obs_norm`` its observation normaliser's statistics under ``obs_normalizer``.

The environments (with their strategies and generators:
:meth:`ddpg.training_envs.TrainingEnvironments.state_dict`), the global generators, the
update statistics and the normaliser give their state through ``state_dict()`` and take it
back, checked first (:mod:`ddpg.random_state`, :func:`ddpg.strategies.state_methods`); this
module saves what they give under the keys above. :func:`capture_training_state` gives that
state as a dict; :func:`prepare_training_state` checks a saved one against an algorithm
without changing anything and returns the function that assigns it, so that a restore fails
before its first change.
"""
import dataclasses

import numpy as np

from ddpg.checkpoint import env_state
from ddpg.envs.vector import VectorEnvCallError
from ddpg.errors import CheckpointError
from ddpg.random_state import GlobalGenerators
from ddpg.training_state import STATE_FIELDS, EnvEpisode

#: The training loop's state saved in training_state.json/.npz: TrainingState's fields.
COUNTERS = STATE_FIELDS


def _strategy_record(state):
    """The saved record of a strategy's ``state_dict()`` (:func:`ddpg.strategies.state_methods`):
    ``kind`` "none" for no state, "state" for an array (OU noise's) and "custom" for any
    other plain data, the state under ``state``."""
    if state is None:
        return {"kind": "none"}
    return {"kind": "state" if isinstance(state, np.ndarray) else "custom", "state": state}


def _capture_update_stats(algo):
    """The current epoch's running update statistics (all zero at epoch boundaries); None
    for an algorithm without them."""
    return None if algo.update_stats is None else algo.update_stats.state_dict()


def capture_training_state(algo):
    """``algo``'s training state as a dict of plain data (see the module docstring)."""
    counters = {}
    for name in COUNTERS:
        value = getattr(algo.loop.state, name)
        counters[name] = np.array(value, copy=True) if isinstance(value, np.ndarray) \
            else list(value) if isinstance(value, list) else value
    # each environment captured where it lives (a worker process with vec_env="async")
    environments = algo.loop.envs.state_dict()
    env_states = environments["envs"]
    strategies = [_strategy_record(saved) for saved in environments["strategies"]]
    generators = GlobalGenerators().state_dict()
    state = {
        "counters": counters,
        "np_random": generators["np_random"],
        "python_random": generators["python_random"],
        "strategy": strategies[0],
        "env": env_states[0],
        "eval_env": env_state.capture_env_state(algo.eval_env),
        "update_stats": _capture_update_stats(algo),
    }
    # one environment: the keys of a checkpoint made before there could be several
    del counters["vector_episodes"]
    if not counters["strategy_path_successes"]:  # as before environments reported successes
        del counters["strategy_path_successes"]
    if algo.n_envs > 1:
        counters["vector_episodes"] = [dataclasses.asdict(episode)
                                       for episode in algo.loop.state.vector_episodes]
        state.update(vector_envs=env_states[1:], vector_strategies=strategies[1:],
                     vector_generators=environments["generators"])
    collected = algo.loop.collector.get_checkpoint_state()
    if collected is not None:  # actors elsewhere (a run's own environments: None)
        state["collector"] = collected
    if algo.obs_normalizer is not None:
        state["obs_normalizer"] = algo.obs_normalizer.state_dict()
    return state


def _prepare_normalizer(algo, saved, path):
    """The function assigning the observation normaliser's statistics (``obs_norm``; the
    manifest's structural check has made sure the checkpoint has them)."""
    normalizer = algo.obs_normalizer
    if normalizer is None:
        return lambda: None
    try:
        normalizer.check_state_dict(saved)
    except (ValueError, TypeError) as error:
        raise CheckpointError("the checkpoint %s has unusable observation normaliser "
                              "statistics (%s)" % (path, error))
    return lambda: normalizer.load_state_dict(saved)


def _prepare_collector(algo, saved, path, log):
    """The function assigning the collector's saved state (``saved``: None when the
    checkpoint's run collected with its own environments), from the collector."""
    return algo.loop.collector.prepare_checkpoint_state(saved, path, log)


def _prepare_strategies(algo, records, path):
    """The function putting back the saved strategy records (checked first); a record of no
    state leaves its strategy as it is."""
    states = [None if record["kind"] == "none" else record["state"] for record in records]
    try:
        return algo.loop.envs.prepare_strategy_states(states)
    except (ValueError, TypeError) as error:
        raise CheckpointError("the checkpoint %s has %s" % (path, error))


def _prepare_update_stats(algo, saved, path):
    """The function putting back the epoch's running update statistics (checked first;
    without saved statistics the epoch's averages start afresh)."""
    stats = algo.update_stats
    if stats is None:
        return lambda: None
    if saved is None:
        return stats.reset
    try:
        stats.check_state_dict(saved)
    except (KeyError, TypeError, ValueError) as error:
        raise CheckpointError("the checkpoint %s has malformed update statistics (%r)"
                              % (path, error))
    return lambda: stats.load_state_dict(saved)


def _check_generators(state, path):
    """``CheckpointError`` unless the saved numpy and Python generator states are usable."""
    try:
        GlobalGenerators().check_state_dict(state)
    except ValueError as error:
        raise CheckpointError("the checkpoint %s has %s" % (path, error))


def _check_counters(counters, path):
    if not isinstance(counters, dict) or not set(counters) <= set(COUNTERS):
        raise CheckpointError("the checkpoint %s has malformed training counters" % path)


def _check_observation(algo, obs, path):
    """``CheckpointError`` unless the saved current observation fits ``algo``'s environment."""
    if obs is not None and np.size(obs) != algo.env.observation_space.flat_dim:
        raise CheckpointError("the checkpoint %s holds a current observation of %d values; "
                              "this environment has %d" % (path, np.size(obs),
                                                          algo.env.observation_space.flat_dim))


def _check_environment_count(algo, state, counters, path):
    """``CheckpointError`` unless the checkpoint holds ``algo.n_envs`` environments (a
    checkpoint without the vector keys holds one)."""
    saved = [len(state.get("vector_envs", [])), len(state.get("vector_strategies", [])),
             len(state.get("vector_generators", [])), len(counters.get("vector_episodes", []))]
    if len(set(saved)) != 1:
        raise CheckpointError("the checkpoint %s has malformed per-environment state" % path)
    if saved[0] + 1 != algo.n_envs:
        raise CheckpointError("the checkpoint %s was saved by a run with %d environments; "
                              "this one has %d (n_envs)" % (path, saved[0] + 1, algo.n_envs))


def _prepare_environments(algo, state, path):
    """The function assigning every saved environment state (checked first, each
    environment where it lives)."""
    try:
        apply_training_envs = algo.loop.envs.prepare_env_states(
            [state["env"]] + list(state.get("vector_envs", [])))
        apply_eval_env = env_state.prepare_env_restore(algo.eval_env, state["eval_env"],
                                                       "evaluation environment")
    except VectorEnvCallError as error:
        raise CheckpointError("%s (checkpoint %s)" % (error.message, path))
    except (ValueError, TypeError, KeyError, IndexError) as error:
        raise CheckpointError("%s (checkpoint %s)" % (error, path))

    def apply():
        apply_training_envs()
        apply_eval_env()
    return apply


def _prepare_vector_generators(algo, state, path):
    """The function assigning environments 1 .. n-1's generator states (checked first)."""
    try:
        return algo.loop.envs.prepare_generator_states(state.get("vector_generators", []))
    except ValueError as error:
        raise CheckpointError("the checkpoint %s has %s" % (path, error))


def prepare_training_state(algo, state, path, log):
    """Check the training state against ``algo``; return the function assigning it with
    the checkpoint's replay memory (``apply(memory)``), through the training loop."""
    counters = state["counters"]
    _check_counters(counters, path)
    _check_environment_count(algo, state, counters, path)
    _check_generators(state, path)
    episodes = [dict(counters)] + list(counters.get("vector_episodes", []))
    for episode in episodes:
        _check_observation(algo, episode.get("obs"), path)
    apply_environments = _prepare_environments(algo, state, path)
    apply_strategies = _prepare_strategies(
        algo, [state["strategy"]] + list(state.get("vector_strategies", [])), path)
    apply_generators = _prepare_vector_generators(algo, state, path)
    apply_stats = _prepare_update_stats(algo, state.get("update_stats"), path)
    apply_collector = _prepare_collector(algo, state.get("collector"), path, log)
    apply_normalizer = _prepare_normalizer(algo, state.get("obs_normalizer"), path)
    env_states = [state["env"]] + list(state.get("vector_envs", []))
    restored = {name: list(value) if isinstance(value, list) else value
                for name, value in counters.items()}
    try:
        restored["vector_episodes"] = [EnvEpisode(**episode) for episode in episodes[1:]]
    except TypeError as error:
        raise CheckpointError("the checkpoint %s has malformed environment episodes (%s)"
                              % (path, error))

    def apply(memory):
        algo.loop.restore(restored, memory)
        GlobalGenerators().load_state_dict(state)
        apply_strategies()
        apply_generators()
        apply_environments()
        apply_stats()
        apply_collector()
        apply_normalizer()
        for index, (episode, saved_env) in enumerate(zip(episodes, env_states)):
            mid_episode = episode.get("obs") is not None and not episode.get("end", False)
            if mid_episode and saved_env["episode"] != env_state.EXACT:
                # the simulator's state could not be saved (see ddpg.checkpoint.env_state)
                log("The environment's state (%s) cannot be restored: the interrupted "
                    "episode is abandoned and a new one starts" % saved_env.get("type"))
                algo.loop.abandon_episode(index)
    return apply
