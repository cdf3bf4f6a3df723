"""Evaluation rollouts and the epoch's statistics row (``DDPG.evaluate``).

Evaluation runs the deterministic policy, without exploration noise, on an environment of
its own (:func:`make_eval_env`), so that it never disturbs the training episode. The rest of
an epoch's row is what training gathered: the exploration episodes' returns and the averaged
update statistics. Statistics that do not exist yet are left out of the row; the logger
leaves their cells empty so every row of progress.csv has the same columns.
"""

import numpy as np

from ddpg import faults, options
from ddpg.envs import clone_env
from ddpg.utils import discount_return, sample_paths


def make_eval_env(env, eval_env):
    """A separate environment for evaluation rollouts (the original reused the training one):
    ``eval_env`` when given, else ``env.clone()`` when it has one, else a deep copy."""
    if eval_env is not None:
        return eval_env
    return clone_env(env, "to evaluate on", "pass eval_env=... to DDPG")


def evaluation_due(epoch, n_epochs, eval_interval):
    """Whether ``epoch`` evaluates: every ``eval_interval`` epochs, and always the last."""
    if epoch == n_epochs - 1:
        return True
    return eval_interval is not None and (epoch + 1) % eval_interval == 0


def record_rollouts(train_env, eval_env, policy, epoch, eval_samples, max_path_length,
                    discount, skip_nonfinite, logger):
    """Run whole evaluation rollouts totalling ``eval_samples`` steps; record their returns
    on ``logger`` (a :class:`ddpg.logger.Logger`).

    The rollouts run under the training environment's observation normalisation. Episodes
    with non-finite values raise, or with ``skip_nonfinite`` are left out and counted
    (``SkippedEvalEpisodes``); when every episode is left out the return cells stay empty.
    """
    logger.log("Collecting samples for evaluation")
    options.sync_running_statistics(train_env, eval_env)
    paths = sample_paths(env=eval_env, policy=policy, eval_samples=eval_samples,
                         max_path_length=max_path_length)
    paths, skipped = faults.finite_evaluation_paths(paths, epoch, skip_nonfinite)
    for message in skipped[:3]:
        logger.log("Skipping an episode: " + message)
    if skip_nonfinite:
        logger.record_tabular("SkippedEvalEpisodes", len(skipped))
    rewards = [path["rewards"] for path in paths]
    if rewards:
        returns = [np.sum(reward) for reward in rewards]
        logger.record_tabular("AverageReturn", np.mean(returns))
        logger.record_tabular("StdReturn", np.std(returns))
        logger.record_tabular("MaxReturn", np.max(returns))
        logger.record_tabular("MinReturn", np.min(returns))
        logger.record_tabular("AverageDiscountedReturn", np.mean(
            [discount_return(reward, discount) for reward in rewards]))
    successes = [path["success"] for path in paths if "success" in path]
    if successes:  # a goal task's info["is_success"] at each episode's last step
        logger.record_tabular("SuccessRate", np.mean(successes))


def record_exploration_returns(returns, logger, successes=()):
    """The returns of the training (exploration) episodes that ended this epoch, if any,
    recorded on ``logger``, and their success rate (``EsSuccessRate``) when their
    environment reports successes."""
    record_tabular = logger.record_tabular
    if len(successes) > 0:
        record_tabular("EsSuccessRate", np.mean(successes))
    if len(returns) > 0:
        record_tabular("AverageEsReturn", np.mean(returns))
        record_tabular("StdEsReturn", np.std(returns))
        record_tabular("MaxEsReturn", np.max(returns))
        record_tabular("MinEsReturn", np.min(returns))
        record_tabular("NumEsEpisodes", len(returns))


def record_update_statistics(update_stats, logger):
    """The epoch's averaged update statistics, recorded on ``logger``, then their reset for
    the next epoch (:class:`ddpg.backend.statistics.UpdateStatistics`)."""
    for key, value in update_stats.averages().items():
        logger.record_tabular(key, value)
    update_stats.reset()
