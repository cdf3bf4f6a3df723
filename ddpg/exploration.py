"""The exploration side of DDPG's training loop: stepping the training episode.

One call of :func:`step` is one environment step: a new episode when the last one ended, an
action (uniform during ``start_steps``, else the exploration strategy's around the policy's),
the step itself with its checks for non-finite values, the transition stored in the replay
memory, and the episode's bookkeeping. The updates that follow a step are
:func:`ddpg.training.run_updates`.

The episode's state lives on the algorithm object (``obs``, ``end``, ``path_length``,
``path_return``, ``episode``, ``total_env_steps``, ``n_skipped_nonfinite``,
``strategy_path_returns``), not here, because checkpoints save it and a restored algorithm
continues the episode where it stopped: these functions read and advance it.
"""
import numpy as np

from ddpg import faults, logger


def reset_env(algo):
    """Reset the training environment, checking the first observation."""
    obs = faults.call_env(algo, "reset")
    faults.check_reset_observation(obs, algo)
    return obs


def step(algo, memory, action_shape, act_dim, log_scalars):
    """One environment step of the training episode, its transition stored in ``memory``.

    ``action_shape`` is the shape the environment takes its actions in, ``act_dim`` their
    flat size. With ``log_scalars`` an ending episode's return and length are written as
    ``train/EpisodeReturn`` and ``train/EpisodeLength`` at the run's step count.
    """
    if algo.end:
        start_episode(algo)
    obs = algo.obs
    act = choose_action(algo, obs, act_dim)
    nxt, rwd, end, info = faults.call_env(algo, "step", np.reshape(act, action_shape))
    finite = bool(np.isfinite(rwd) and np.isfinite(nxt).all())
    if not finite:
        end = nonfinite_step(algo, nxt, rwd) or end
    algo.path_length += 1
    algo.total_env_steps += 1
    if finite:
        algo.path_return += rwd
        store(algo, memory, obs, act, rwd * algo.scale_reward, end, info, nxt)
    if not end and algo.path_length >= algo.max_path_length:
        end = True
    algo.end = end
    algo.obs = nxt
    if end and log_scalars:
        logger.record_scalar("train/EpisodeReturn", algo.path_return, algo.total_env_steps)
        logger.record_scalar("train/EpisodeLength", algo.path_length, algo.total_env_steps)


def start_episode(algo):
    """Record the ended episode's return, then reset the environment and the strategy."""
    algo.strategy_path_returns.append(algo.path_return)
    algo.path_length = 0
    algo.path_return = 0
    algo.episode += 1
    algo.obs = reset_env(algo)
    algo.strategy.reset()


def choose_action(algo, obs, act_dim):
    """The exploration action for ``obs``: uniform over the action space for the run's first
    ``start_steps`` steps (covering it before the policy means anything), else the
    strategy's action around the policy's (not the target policy's)."""
    if algo.total_env_steps < algo.start_steps:
        return np.random.uniform(algo._action_low, algo._action_high)
    return faults.check_action(algo.strategy.get_action(obs, algo.policy), act_dim,
                               algo.strategy, algo)


def nonfinite_step(algo, nxt, rwd):
    """A NaN/inf observation or reward: raise, or (skip_nonfinite) count and skip it.

    Returns whether the episode must end: an observation that is not finite cannot be
    acted on; a bad reward alone does not stop the episode. The first three skips of an
    epoch are logged.
    """
    parts = faults.nonfinite_parts(nxt, rwd)
    if not algo.skip_nonfinite:
        faults.raise_nonfinite_step(parts, nxt, rwd, algo)
    algo.n_skipped_nonfinite += 1
    if algo.n_skipped_nonfinite - algo._skipped_before_epoch <= 3:
        logger.log("Skipping a transition: " + faults.nonfinite_step_message(
            parts, nxt, rwd, algo))
    return "observation" in parts


def store(algo, memory, obs, act, rwd, end, info, nxt):
    """Add one transition to the memory, deciding whether its target may bootstrap.

    A time-limit cut (``max_path_length`` here, or the environment's own time limit) is
    not a terminal state. The original dropped the cut transition (or stored it as
    terminal with ``include_horizon_terminal``) and stored the environment's time-limit
    ends as terminal; with ``bootstrap_truncated`` they bootstrap from s' instead.
    ``algo.path_length`` already counts this step.
    """
    horizon_cut = not end and algo.path_length >= algo.max_path_length
    env_truncated = bool(end and info and info.get("TimeLimit.truncated", False))
    if not (horizon_cut or env_truncated):
        memory.add_sample(obs, act, rwd, end, nxt)
    elif algo.include_horizon_terminal:
        memory.add_sample(obs, act, rwd, True, nxt)
    elif algo.bootstrap_truncated:
        memory.add_sample(obs, act, rwd, False, nxt)
    elif env_truncated:
        memory.add_sample(obs, act, rwd, True, nxt)
    # else: the original drops a transition cut at max_path_length
