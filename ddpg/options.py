"""Small pieces of DDPG's optional behaviour that are not part of the update itself.

- the update schedule: Stable-Baselines3's ``train_freq``/``gradient_steps`` and fractional
  ``n_updates_per_sample`` (:func:`update_schedule`);
- the evaluation environment's running statistics (:func:`sync_running_statistics`);
- hindsight replay's requirements and the observation normaliser
  (:func:`check_goal_conflicts`, :func:`check_goal_settings`, :func:`observation_normalizer`).
"""

from ddpg import hyperparams
from ddpg.checkpoint.env_description import env_name
from ddpg.obs_normalizer import ObservationNormalizer


def update_schedule(n_updates_per_sample, train_freq=1, gradient_steps=None):
    """``(train_freq, gradient_steps)``: run ``gradient_steps`` updates every ``train_freq``
    environment steps.

    ``gradient_steps=None`` takes the count from ``n_updates_per_sample``. That may be a
    whole number (the original's meaning: that many updates after every step) or a fraction
    ``1/k`` (0.5, 0.25, ...), which means one update every ``k`` steps. The defaults (1, 1) are
    the original's schedule. Which step triggers is decided from the run's step count (an
    update follows step ``t`` when ``t % train_freq == 0``), so the schedule has no state of
    its own and a restored run keeps it.
    """
    hyperparams.check({"train_freq": train_freq, "gradient_steps": gradient_steps})
    ratio = n_updates_per_sample
    if isinstance(ratio, bool) or not ratio > 0:
        raise ValueError("n_updates_per_sample must be positive, got %r" % (ratio,))
    if gradient_steps is not None:
        if ratio != 1:
            raise ValueError("give gradient_steps or n_updates_per_sample, not both "
                             "(n_updates_per_sample=%r)" % (ratio,))
        return int(train_freq), int(gradient_steps)
    if int(ratio) == ratio:
        return int(train_freq), int(ratio)
    every = 1.0 / ratio
    if ratio > 1 or abs(every - round(every)) > 1e-9:
        raise ValueError("n_updates_per_sample must be a positive integer or 1/k for an "
                         "integer k (0.5 = one update every 2 steps), got %r" % (ratio,))
    if train_freq != 1:
        raise ValueError("a fractional n_updates_per_sample (%r) already sets the update "
                         "frequency; give train_freq with gradient_steps instead" % (ratio,))
    return int(round(every)), 1


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


def check_goal_conflicts(her, n_step, prioritized_replay):
    """``ValueError`` when ``her`` is combined with a setting that changes what a stored
    transition means: n-step sums, or priorities kept per slot. Checked by the config
    (:meth:`ddpg.config.DDPGConfig.validate`); the environment's side is
    :func:`check_goal_settings`'s."""
    if her:
        _raise_conflicts((
            ("n_step", n_step, 1, "an n-step sum holds the rewards of the episode's own goal, "
                                  "not of a relabelled one"),
            ("prioritized_replay", prioritized_replay, False,
             "priorities are kept per stored transition, not per relabelled one")))


def check_goal_settings(algo):
    """``ValueError`` when ``algo.her`` cannot work with ``algo.env``: the environment is not
    goal-conditioned (a dict of observation, achieved_goal and desired_goal), or it
    normalises rewards or observations, which the goals could not be swapped into. (The
    settings HER cannot be combined with are the config's, :func:`check_goal_conflicts`.)"""
    if not algo.her:
        return
    if getattr(algo.env, "goal_layout", None) is None:
        raise ValueError("her=True needs a goal-conditioned environment (dict observations "
                         "of observation, achieved_goal and desired_goal, and "
                         "compute_reward), e.g. FetchReach-v4; %s is not one"
                         % (env_name(algo.env),))
    env = algo.env
    _raise_conflicts((
        ("normalize_obs", getattr(env, "normalize_obs", False), False,
         "relabelled goals cannot be put into normalised observations (use obs_norm for "
         "observation normalisation)"),
        ("normalize_reward", getattr(env, "normalize_reward", False), False,
         "recomputed rewards would not be normalised")))


def _raise_conflicts(conflicts):
    """Raise for the first ``(setting, value, the value HER needs, why)`` of ``conflicts``
    whose value is not the one HER needs."""
    for name, value, plain, why in conflicts:
        if value != plain:
            raise ValueError("her=True cannot be combined with %s=%r: %s" % (name, value, why))


def observation_normalizer(algo):
    """The :class:`ddpg.obs_normalizer.ObservationNormalizer` of ``algo.obs_norm`` (None when
    off), installed in the policy, whose actions it normalises the observations of."""
    if not algo.obs_norm:
        return None
    normalizer = ObservationNormalizer(algo.env.observation_space.flat_dim)
    algo.policy.input_normalizer = normalizer
    return normalizer
