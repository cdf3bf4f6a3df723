"""Small pieces of DDPG's optional behaviour that are not part of the update itself.

- the evaluation environment's running statistics (:func:`sync_running_statistics`);
- hindsight replay's requirements of the environment and the observation normaliser
  (:func:`check_goal_settings`, :func:`observation_normalizer`; its conflicts with other
  settings are the config's, :func:`ddpg.config.check_goal_conflicts`).
"""

from ddpg.checkpoint.env_description import env_name
from ddpg.config import raise_goal_conflicts
from ddpg.obs_normalizer import ObservationNormalizer


def sync_running_statistics(env, eval_env):
    """Copy ``env``'s running statistics into ``eval_env`` when both have them.

    ``normalize(env, normalize_obs=True)`` keeps running observation (and reward) statistics
    (``get_param_values``/``set_param_values``). The evaluation environment is a separate
    copy whose statistics would otherwise follow only the evaluation episodes, so the policy
    would be evaluated on observations normalised differently from the ones it was trained
    on. DDPG calls this before every evaluation. (The original evaluated on the training
    environment itself, so it used the training statistics too.) Returns whether it copied.
    """
    if env is eval_env:
        return False
    get_values = getattr(env, "get_param_values", None)
    set_values = getattr(eval_env, "set_param_values", None)
    if not (callable(get_values) and callable(set_values)):
        return False
    set_values(get_values())
    return True


def check_goal_settings(algo):
    """``ValueError`` when ``algo.her`` cannot work with ``algo.env``: the environment is not
    goal-conditioned (a dict of observation, achieved_goal and desired_goal), or it
    normalises rewards or observations, which the goals could not be swapped into. (The
    settings HER cannot be combined with are the config's,
    :func:`ddpg.config.check_goal_conflicts`.)"""
    if not algo.her:
        return
    if getattr(algo.env, "goal_layout", None) is None:
        raise ValueError("her=True needs a goal-conditioned environment (dict observations "
                         "of observation, achieved_goal and desired_goal, and "
                         "compute_reward), e.g. FetchReach-v4; %s is not one"
                         % (env_name(algo.env),))
    env = algo.env
    raise_goal_conflicts((
        ("normalize_obs", getattr(env, "normalize_obs", False), False,
         "relabelled goals cannot be put into normalised observations (use obs_norm for "
         "observation normalisation)"),
        ("normalize_reward", getattr(env, "normalize_reward", False), False,
         "recomputed rewards would not be normalised")))


def observation_normalizer(algo):
    """The :class:`ddpg.obs_normalizer.ObservationNormalizer` of ``algo.obs_norm`` (None when
    off), installed in the policy, whose actions it normalises the observations of."""
    if not algo.obs_norm:
        return None
    normalizer = ObservationNormalizer(algo.env.observation_space.flat_dim)
    algo.policy.input_normalizer = normalizer
    return normalizer
