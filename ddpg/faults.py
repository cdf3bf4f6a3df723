"""Checks for bad input and faults during training, kept out of the training loop's code.

Each check either passes silently or raises one of the exceptions of :mod:`ddpg.errors` with a
message that says what was wrong and where in the run it happened, because the default
failure (a numpy broadcasting error, NaN statistics an hour later, a traceback from inside a
simulator) does not say either.
"""
import numpy as np

from ddpg.checkpoint import all_network_params
from ddpg.envs import is_box_space
from ddpg.errors import DivergenceError, EnvError, NonFiniteError


def check_env(env):
    """DDPG needs flat, continuous spaces with finite action bounds: say so clearly."""
    for attr in ("observation_space", "action_space", "reset", "step"):
        if not hasattr(env, attr):
            raise ValueError("env must follow the rllab interface (observation_space, "
                             "action_space, reset(), step()); %r has no %r. Wrap gym or "
                             "gymnasium environments with ddpg.envs.GymEnv." % (env, attr))
    if not is_box_space(env.action_space):
        raise ValueError("DDPG needs a continuous (Box) action space; the environment has %r"
                         % (env.action_space,))
    low, high = env.action_space.low, env.action_space.high  # gymnasium's Box has no bounds
    if not (np.all(np.isfinite(low)) and np.all(np.isfinite(high))):
        raise ValueError("DDPG needs finite action bounds; the environment's action space "
                         "is %r" % (env.action_space,))
    if not is_box_space(env.observation_space):
        raise ValueError("DDPG needs a flat Box observation space; the environment has %r"
                         % (env.observation_space,))


def position(algo, index, transition):
    """Where the training run is, in words: the step of environment ``index``'s episode, the
    episode, the epoch, the run's ``transition`` (its environment step number, counting from
    1: with several environments, the transitions of one step are counted in their order)
    and with several environments which one (``index``)."""
    step = algo.loop.episode_of(index).path_length + 1
    where = ("step %d of episode %d (epoch %d, environment step %d of the run)"
             % (step, algo.episode, algo.epoch, transition))
    return where + " in environment %d" % index if getattr(algo, "n_envs", 1) > 1 else where


def env_error(algo, method, index, transition, error_type, message, worker_traceback=None):
    """The :class:`EnvError` for an exception ``error_type: message`` that training
    environment ``index`` raised in ``method()``, with the run's position as context (and the
    worker process's traceback when it ran in one). ``transition`` is the run's number of
    the transition a failed ``step()`` was taking (see :func:`position`; unused for
    ``reset()``)."""
    if method == "reset":
        where = ("starting episode %d (epoch %d, after %d environment steps of the run)"
                 % (algo.episode, algo.epoch, algo.total_env_steps))
        if getattr(algo, "n_envs", 1) > 1:
            where += " in environment %d" % index
    else:
        where = "at " + position(algo, index, transition)
    text = "the environment raised %s in %s() %s: %s" % (error_type, method, where, message)
    if worker_traceback:
        text += "\n(in its worker process)\n" + worker_traceback.rstrip()
    return EnvError(text)


def check_action(action, act_dim, strategy, algo, index, transition):
    """The strategy's action for environment ``index``, as a flat array, or a clear error
    (at the run's ``transition``, see :func:`position`) if it cannot be one.

    A custom strategy returning the wrong number of values would otherwise fail inside numpy's
    reshape, or worse, be broadcast silently; a NaN action means the policy (or the strategy)
    has gone wrong and would poison the replay memory.
    """
    flat = np.reshape(action, -1)
    if flat.size != act_dim:
        raise ValueError("%s.get_action returned an action of shape %s at %s; the action "
                         "space needs %d values"
                         % (type(strategy).__name__, np.shape(action),
                            position(algo, index, transition), act_dim))
    if not np.isfinite(flat).all():
        where = position(algo, index, transition)
        # most likely the networks diverged during this epoch's updates: say so if they did
        statistics = getattr(algo, "update_stats", None)
        check_divergence(algo.epoch, {} if statistics is None else statistics.averages(),
                         all_network_params(algo),
                         "at %s, where the policy's action became non-finite" % where)
        raise NonFiniteError("%s.get_action returned a non-finite action %s at %s"
                             % (type(strategy).__name__, flat, where))
    return flat


def nonfinite_parts(observation, reward):
    """Which of the observation and the reward are NaN or infinite (an empty list if none)."""
    parts = []
    if not np.all(np.isfinite(observation)):
        parts.append("observation")
    if not np.isfinite(reward):
        parts.append("reward")
    return parts


def check_reset_observation(observation, algo):
    """A reset observation that is not finite cannot be acted on: always an error."""
    if not np.all(np.isfinite(observation)):
        raise NonFiniteError("the environment's reset() returned a non-finite observation "
                             "%s for episode %d (epoch %d)"
                             % (np.asarray(observation), algo.episode, algo.epoch))


def nonfinite_step_message(parts, observation, reward, algo, index, transition):
    """What is wrong with environment ``index``'s step, the run's ``transition``: its
    non-finite ``parts`` (:func:`nonfinite_parts`)."""
    return ("the environment returned a non-finite %s at %s (observation %s, reward %r)"
            % (" and ".join(parts), position(algo, index, transition),
               np.asarray(observation), reward))


def raise_nonfinite_step(parts, observation, reward, algo, index, transition):
    raise NonFiniteError(nonfinite_step_message(parts, observation, reward, algo, index,
                                                transition)
                         + "; pass DDPG(..., skip_nonfinite=True) to skip such transitions")


def finite_evaluation_paths(paths, epoch, skip_nonfinite):
    """The evaluation paths whose observations and rewards are all finite.

    A NaN or infinite reward (or observation) in an evaluation episode raises
    :class:`NonFiniteError` naming the evaluation, the epoch, the episode and the step, as
    the same value in training does; with ``skip_nonfinite`` the episode is left out instead.
    Returns ``(finite paths, messages about the skipped ones)``, so that no NaN reaches the
    tabular statistics.
    """
    kept, skipped = [], []
    for episode, path in enumerate(paths):
        rewards = np.asarray(path["rewards"], dtype=np.float64)
        observations = np.asarray(path["observations"], dtype=np.float64)
        bad_steps = np.flatnonzero(~np.isfinite(rewards))
        bad_obs = (np.flatnonzero(~np.isfinite(observations).all(axis=1))
                   if observations.ndim == 2 else np.array([], dtype=int))
        if not (bad_steps.size or bad_obs.size):
            kept.append(path)
            continue
        if bad_steps.size and (not bad_obs.size or bad_steps[0] <= bad_obs[0]):
            what = "reward %r" % (rewards[bad_steps[0]],)
            step = bad_steps[0]
        else:
            what = "observation %s" % (observations[bad_obs[0]],)
            step = bad_obs[0]
        message = ("evaluation episode %d of epoch %d: the environment returned a non-finite "
                   "%s at step %d" % (episode, epoch, what, step + 1))
        if not skip_nonfinite:
            raise NonFiniteError(message + "; pass DDPG(..., skip_nonfinite=True) to skip "
                                           "such episodes")
        skipped.append(message)
    return kept, skipped


def check_divergence(epoch, statistics, network_params, where="at the end of the epoch"):
    """Raise :class:`DivergenceError` if an epoch statistic or a parameter is not finite.

    ``statistics`` maps tabular keys (``AverageQLoss``, ...) to the epoch's values;
    ``network_params`` maps a network's name to ``{parameter name: NDArray}``. Checking sums
    once per epoch costs nothing per update: a single NaN or infinite loss makes its sum
    non-finite (infinite losses that cancel aside).
    """
    # as plain Python numbers: numpy 2 writes its scalars as np.float64(inf)
    bad_statistics = ["%s=%r" % (key, np.asarray(value).tolist())
                      for key, value in statistics.items() if not np.all(np.isfinite(value))]
    bad_params = ["%s.%s" % (network, name)
                  for network, params in network_params.items()
                  for name, array in params.items()
                  if not np.all(np.isfinite(array.asnumpy()))]
    if not (bad_statistics or bad_params):
        return
    details = []
    if bad_statistics:
        details.append("non-finite statistics: %s (a Q loss or policy loss became NaN or "
                       "infinite)" % ", ".join(bad_statistics))
    if bad_params:
        details.append("non-finite parameters: %s" % ", ".join(bad_params))
    raise DivergenceError(
        "training diverged in epoch %d: %s (found %s). Try smaller learning rates "
        "(qfunc_lr, policy_lr), smaller rewards (normalize(scale_reward=...)) or check the "
        "environment's rewards; the last snapshot, if any, holds the state before this epoch."
        % (epoch, "; ".join(details), where))
