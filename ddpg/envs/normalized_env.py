"""rllab's ``normalize``: actions in [-1, 1] and optional running normalisation.

DDPG's policy ends in tanh, so it emits actions in [-1, 1]; ``NormalizedEnv`` maps them affinely
onto the wrapped environment's bounds.  Observation and reward normalisation use exponential moving
averages, exactly as rllab does (including updating the statistics on ``reset()``), because the
original example's results depend on these details.
"""

import copy

import numpy as np

from ddpg.plain_data import require_keys

from .base import Env, Step, seed_env
from .gym_env import GymEnv, is_gym_env
from .spaces import Box, flat_dim_of, is_box_space

#: Added to the running standard deviation before dividing by it.
OBS_NORMALIZATION_EPS = _EPS = 1e-8


class NormalizedEnv(Env):
    """Wraps an rllab-style environment; see ``normalize`` for the arguments."""

    def __init__(self, env, scale_reward=1., normalize_obs=False, normalize_reward=False,
                 obs_alpha=0.001, reward_alpha=0.001):
        self.wrapped_env = env
        self.scale_reward = scale_reward
        self.normalize_obs = normalize_obs
        self.normalize_reward = normalize_reward
        self.obs_alpha = obs_alpha
        self.reward_alpha = reward_alpha
        self._obs_mean = np.zeros(flat_dim_of(env.observation_space))
        self._obs_var = np.ones(flat_dim_of(env.observation_space))
        self._reward_mean = 0.
        self._reward_var = 1.
        # True: normalise with the statistics as they are, without updating them (how an
        # exported policy, ddpg.experiment.export, normalises; rllab always updates)
        self.freeze_obs_stats = False
        inner = env.action_space
        if is_box_space(inner):
            self._action_low = np.asarray(inner.low, dtype=np.float64)
            self._action_high = np.asarray(inner.high, dtype=np.float64)
            if not (np.isfinite(self._action_low).all() and np.isfinite(self._action_high).all()):
                raise ValueError("normalize needs finite action bounds to rescale [-1, 1] onto; "
                                 "got low=%s high=%s" % (self._action_low, self._action_high))
            self._action_space = Box(-1., 1., self._action_low.shape)
        else:
            # rllab leaves non-box action spaces alone; DDPG rejects them later with a clear error.
            self._action_low = self._action_high = None
            self._action_space = inner

    @property
    def observation_space(self):
        return self.wrapped_env.observation_space

    @property
    def action_space(self):
        return self._action_space

    @property
    def horizon(self):
        return getattr(self.wrapped_env, "horizon", None)

    @property
    def goal_layout(self):
        """The wrapped goal-conditioned environment's layout (:mod:`ddpg.envs.goals`), or
        None."""
        return getattr(self.wrapped_env, "goal_layout", None)

    def compute_reward(self, achieved_goals, desired_goals, info):
        """The wrapped environment's goal rewards, scaled as :meth:`step` scales rewards
        (hindsight replay cannot be combined with ``normalize_reward``)."""
        return self.wrapped_env.compute_reward(achieved_goals, desired_goals,
                                               info) * self.scale_reward

    def _update_obs_estimate(self, flat_obs):
        a = self.obs_alpha
        self._obs_mean = (1 - a) * self._obs_mean + a * flat_obs
        self._obs_var = (1 - a) * self._obs_var + a * np.square(flat_obs - self._obs_mean)

    def _update_reward_estimate(self, reward):
        a = self.reward_alpha
        self._reward_mean = (1 - a) * self._reward_mean + a * reward
        self._reward_var = (1 - a) * self._reward_var + a * np.square(reward - self._reward_mean)

    def _apply_normalize_obs(self, obs):
        obs = np.asarray(obs, dtype=np.float64)
        flat_obs = obs.reshape(-1)
        if not self.freeze_obs_stats:
            self._update_obs_estimate(flat_obs)
        normalized = (flat_obs - self._obs_mean) / (np.sqrt(self._obs_var) + _EPS)
        return normalized.reshape(obs.shape)

    def _apply_normalize_reward(self, reward):
        self._update_reward_estimate(reward)
        return reward / (np.sqrt(self._reward_var) + _EPS)

    def scale_action(self, action):
        """The wrapped environment's action for a [-1, 1] one: affine map, then clip."""
        if self._action_low is None:
            return action
        action = np.asarray(action, dtype=np.float64)
        if action.size != self._action_low.size:
            raise ValueError("expected %d action values, got an array of shape %s"
                             % (self._action_low.size, action.shape))
        action = action.reshape(self._action_low.shape)
        lb, ub = self._action_low, self._action_high
        scaled = lb + (action + 1.) * 0.5 * (ub - lb)
        return np.clip(scaled, lb, ub)

    def reset(self):
        obs = self.wrapped_env.reset()
        if self.normalize_obs:
            return self._apply_normalize_obs(obs)
        return obs

    def step(self, action):
        next_obs, reward, done, info = self.wrapped_env.step(self.scale_action(action))
        if self.normalize_obs:
            next_obs = self._apply_normalize_obs(next_obs)
        if self.normalize_reward:
            reward = self._apply_normalize_reward(reward)
        return Step(next_obs, reward * self.scale_reward, done, info if info is not None else {})

    def seed(self, seed):
        """Seed the wrapped env; return whether it could be seeded (see ``seed_env``)."""
        return seed_env(self.wrapped_env, seed)

    def render(self):
        return self.wrapped_env.render()

    def terminate(self):
        terminate_fn = getattr(self.wrapped_env, "terminate", None)
        if callable(terminate_fn):
            terminate_fn()

    def log_diagnostics(self, paths):
        log_fn = getattr(self.wrapped_env, "log_diagnostics", None)
        if callable(log_fn):
            log_fn(paths)

    def get_param_values(self):
        """The running statistics, as a dict of copies, for checkpoints."""
        return {
            "obs_mean": self._obs_mean.copy(),
            "obs_var": self._obs_var.copy(),
            "reward_mean": float(self._reward_mean),
            "reward_var": float(self._reward_var),
        }

    def set_param_values(self, params):
        """Restore statistics saved by ``get_param_values`` (shapes must match)."""
        obs_mean = np.array(params["obs_mean"], dtype=np.float64)
        obs_var = np.array(params["obs_var"], dtype=np.float64)
        if obs_mean.shape != self._obs_mean.shape or obs_var.shape != self._obs_var.shape:
            raise ValueError("observation statistics of shape %s/%s do not fit this env's %s"
                             % (obs_mean.shape, obs_var.shape, self._obs_mean.shape))
        self._obs_mean, self._obs_var = obs_mean, obs_var
        self._reward_mean = float(params["reward_mean"])
        self._reward_var = float(params["reward_var"])

    # -- the checkpoint hook of a wrapper (ddpg.checkpoint.env_state): the running statistics;
    #    the wrapped environment's state is saved beside them, through its own hook

    def get_wrapper_checkpoint_state(self):
        """The running statistics as plain data (:meth:`get_param_values`)."""
        return self.get_param_values()

    def check_wrapper_checkpoint_state(self, stats):
        """``ValueError`` unless ``stats`` (from :meth:`get_wrapper_checkpoint_state`) fit
        this environment's observations; changes nothing."""
        require_keys(stats, ("obs_mean", "obs_var", "reward_mean", "reward_var"),
                     "the normalisation statistics")
        for key, current in (("obs_mean", self._obs_mean), ("obs_var", self._obs_var)):
            shape = np.shape(stats[key])
            if shape != current.shape:
                raise ValueError("the normalisation statistics are of observations of shape "
                                 "%s, this one %s" % (shape, current.shape))

    def set_wrapper_checkpoint_state(self, stats):
        """Restore statistics saved by :meth:`get_wrapper_checkpoint_state` (checked first)."""
        self.check_wrapper_checkpoint_state(stats)
        self.set_param_values(stats)

    def clone(self):
        """A fresh normalised copy with the same settings (e.g. for evaluation).

        The running statistics start afresh, as in a newly built env; copy them over with
        ``clone.set_param_values(env.get_param_values())`` when the evaluation should see the
        training normalisation.
        """
        clone_fn = getattr(self.wrapped_env, "clone", None)
        inner = clone_fn() if callable(clone_fn) else copy.deepcopy(self.wrapped_env)
        return normalize(inner, scale_reward=self.scale_reward,
                         normalize_obs=self.normalize_obs,
                         normalize_reward=self.normalize_reward,
                         obs_alpha=self.obs_alpha, reward_alpha=self.reward_alpha)

    def __repr__(self):
        return "NormalizedEnv(%r)" % (self.wrapped_env,)


def normalize(env, scale_reward=1., normalize_obs=False, normalize_reward=False,
              obs_alpha=0.001, reward_alpha=0.001):
    """rllab's ``normalize``: return ``env`` with a [-1, 1] action space (see ``NormalizedEnv``).

    ``scale_reward`` multiplies every reward last (rllab's cart-pole example used 0.01).  With
    ``normalize_obs``/``normalize_reward`` observations/rewards are divided by a running standard
    deviation (observations also centred) with EMA rates ``obs_alpha``/``reward_alpha``.  A raw
    gymnasium or gym environment is first wrapped in ``GymEnv`` for convenience.
    """
    if is_gym_env(env):
        env = GymEnv(env)
    return NormalizedEnv(env, scale_reward=scale_reward, normalize_obs=normalize_obs,
                         normalize_reward=normalize_reward, obs_alpha=obs_alpha,
                         reward_alpha=reward_alpha)
