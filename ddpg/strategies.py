"""Exploration strategies: how the behaviour policy perturbs the deterministic policy.

``OUStrategy`` is the original's (and the DDPG paper's) temporally correlated noise;
``GaussianStrategy`` is the uncorrelated noise that the later re-tuned implementations (TD3's
"OurDDPG", Stable-Baselines3's zoo, CleanRL) found works as well or better on MuJoCo tasks.
Both draw from numpy's global generator, which :class:`ddpg.DDPG` seeds and checkpoints save,
unless their ``rng`` is set: with several environments each has a copy of the strategy drawing
from a generator of its own (:mod:`ddpg.training_envs`).
"""
import math

import numpy as np

# The strategies' defaults: the home of every default of OUStrategy and GaussianStrategy, and
# of the command line's exploration flags.
#: The original's OU noise (the DDPG paper's theta and sigma; dt=1, the original's recursion).
DEFAULT_OU_THETA = 0.15
DEFAULT_OU_SIGMA = 0.3
DEFAULT_OU_DT = 1.0
#: The TD3 authors' Gaussian noise std, relative to the action half-range.
DEFAULT_GAUSSIAN_SIGMA = 0.1
#: No uniformly random actions among the Gaussian strategy's (the HER authors used 0.3).
DEFAULT_RANDOM_ACTION_PROB = 0.0


class BaseStrategy(object):
    """Turns ``policy.get_action(obs)`` into an exploratory action."""

    #: The ``np.random.RandomState`` the noise is drawn from; None: numpy's global generator.
    rng = None

    def random(self):
        """The generator to draw from: ``rng``, or numpy's global one."""
        return np.random if self.rng is None else self.rng

    def get_action(self, obs, policy):
        raise NotImplementedError

    def reset(self):
        pass


class OUStrategy(BaseStrategy):
    """Ornstein-Uhlenbeck noise added to the policy's action, as in the DDPG paper.

    The state starts at ``mu`` and evolves with
    ``x += theta * (mu - x) * dt + sigma * sqrt(dt) * N(0, I)`` at every action (the
    Euler-Maruyama step of the OU process); ``reset()`` at episode ends returns it to ``mu``.
    ``dt=1`` is the original's recursion, bit for bit. A smaller ``dt`` (OpenAI Baselines and
    Stable-Baselines3 use 1e-2) makes the noise smoother and slower to revert; its stationary
    standard deviation is ``sigma / sqrt(theta * (2 - theta * dt))``, which tends to the
    continuous process's ``sigma / sqrt(2 * theta)``. Noise is drawn from numpy's global
    generator, which :class:`ddpg.DDPG` seeds.
    """

    def __init__(self, env_spec, mu=0, theta=DEFAULT_OU_THETA, sigma=DEFAULT_OU_SIGMA,
                 dt=DEFAULT_OU_DT):
        self.action_space = env_spec.action_space
        self.action_dim = self.action_space.flat_dim
        self.mu = mu
        self.theta = theta
        self.sigma = sigma
        if not dt > 0:
            raise ValueError("OUStrategy's dt must be positive, got %r" % (dt,))
        self.dt = dt
        self.state = np.ones(self.action_dim) * self.mu

    def evolve_state(self):
        x = self.state
        dx = (self.theta * (self.mu - x) * self.dt
              + self.sigma * math.sqrt(self.dt) * self.random().randn(len(x)))
        self.state = x + dx
        return self.state

    def reset(self):
        self.state = np.ones(self.action_dim) * self.mu

    def get_action(self, obs, policy):
        """Policy action plus the next OU state, clipped to the action bounds; flat shape."""
        action = np.asarray(policy.get_action(obs)).reshape(-1)
        ou_state = self.evolve_state()
        return np.clip(action + ou_state, np.reshape(self.action_space.low, -1),
                       np.reshape(self.action_space.high, -1))


class GaussianStrategy(BaseStrategy):
    """Independent Gaussian noise added to the policy's action, clipped to the bounds.

    The noise's standard deviation in each action dimension is ``sigma * (high - low) / 2``:
    ``sigma`` is relative to the action range, so ``sigma=0.1`` means 0.1 on the [-1, 1]
    actions of a normalised environment (the TD3 authors' and the SB3 zoo's setting) and 10%
    of the half-range otherwise (CleanRL's "0.1 x action scale").

    With ``sigma_min`` and ``decay_steps`` the deviation falls linearly from ``sigma`` to
    ``sigma_min`` over the first ``decay_steps`` actions of the run and then stays there
    (rllab's ``GaussianStrategy`` has the same schedule). The step count is the strategy's
    only state; it spans episodes (``reset()`` keeps it) and is saved in checkpoints through
    ``get_checkpoint_state``/``set_checkpoint_state``, so a resumed run continues the schedule.

    With ``random_prob`` an action is, with that probability, drawn uniformly from the action
    space instead (the noise is drawn either way): the
    HER authors' exploration (``random_eps`` 0.3 with noise 0.2). 0, the default, never.
    """

    def __init__(self, env_spec, sigma=DEFAULT_GAUSSIAN_SIGMA, sigma_min=None,
                 decay_steps=None, random_prob=DEFAULT_RANDOM_ACTION_PROB):
        self.action_space = env_spec.action_space
        self.action_dim = self.action_space.flat_dim
        if not sigma >= 0:
            raise ValueError("GaussianStrategy's sigma must be non-negative, got %r" % (sigma,))
        if (sigma_min is None) != (decay_steps is None):
            raise ValueError("GaussianStrategy needs both sigma_min and decay_steps for a "
                             "decaying sigma, or neither; got sigma_min=%r, decay_steps=%r"
                             % (sigma_min, decay_steps))
        if decay_steps is not None and (int(decay_steps) != decay_steps or decay_steps <= 0
                                        or not sigma_min >= 0):
            raise ValueError("decay_steps must be a positive integer and sigma_min "
                             "non-negative; got decay_steps=%r, sigma_min=%r"
                             % (decay_steps, sigma_min))
        if not 0.0 <= random_prob <= 1.0:
            raise ValueError("GaussianStrategy's random_prob must be in [0, 1], got %r"
                             % (random_prob,))
        self.sigma = sigma
        self.random_prob = random_prob
        self.sigma_min = sigma_min
        self.decay_steps = None if decay_steps is None else int(decay_steps)
        # low/high, not rllab's bounds: gym's Box and duck-typed spaces have no bounds
        self._low = np.reshape(self.action_space.low, -1).astype(np.float64)
        self._high = np.reshape(self.action_space.high, -1).astype(np.float64)
        self._scale = (self._high - self._low) / 2.0
        self.steps = 0  # actions taken so far: drives the decay

    def current_sigma(self):
        """The relative deviation for the next action (``sigma`` without a decay)."""
        if self.decay_steps is None:
            return self.sigma
        fraction = min(1.0, self.steps / float(self.decay_steps))
        return self.sigma + fraction * (self.sigma_min - self.sigma)

    def get_action(self, obs, policy):
        """Policy action plus N(0, (sigma * half-range)^2), clipped to the bounds; flat."""
        action = np.asarray(policy.get_action(obs)).reshape(-1)
        noise = self.current_sigma() * self._scale * self.random().randn(self.action_dim)
        self.steps += 1
        if self.random_prob and self.random().uniform() < self.random_prob:
            return self.random().uniform(self._low, self._high)
        return np.clip(action + noise, self._low, self._high)

    def get_checkpoint_state(self):
        return {"steps": int(self.steps)}

    def set_checkpoint_state(self, state):
        self.steps = int(state["steps"])
