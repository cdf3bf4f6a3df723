"""Exploration strategies: how the behaviour policy perturbs the deterministic policy."""
import numpy as np


class BaseStrategy(object):
    """Turns ``policy.get_action(obs)`` into an exploratory action."""

    def get_action(self, obs, policy):
        raise NotImplementedError

    def reset(self):
        pass


class OUStrategy(BaseStrategy):
    """Ornstein-Uhlenbeck noise added to the policy's action, as in the DDPG paper.

    The state starts at ``mu`` and evolves with ``x += theta * (mu - x) + sigma * N(0, I)``
    (time step 1) at every action; ``reset()`` at episode ends returns it to ``mu``. Noise is
    drawn from numpy's global generator, which :class:`ddpg.DDPG` seeds.
    """

    def __init__(self, env_spec, mu=0, theta=0.15, sigma=0.3):
        self.action_space = env_spec.action_space
        self.action_dim = self.action_space.flat_dim
        self.mu = mu
        self.theta = theta
        self.sigma = sigma
        self.state = np.ones(self.action_dim) * self.mu

    def evolve_state(self):
        x = self.state
        dx = self.theta * (self.mu - x) + self.sigma * np.random.randn(len(x))
        self.state = x + dx
        return self.state

    def reset(self):
        self.state = np.ones(self.action_dim) * self.mu

    def get_action(self, obs, policy):
        """Policy action plus the next OU state, clipped to the action bounds; flat shape."""
        action = np.asarray(policy.get_action(obs)).reshape(-1)
        ou_state = self.evolve_state()
        low, high = self.action_space.bounds
        return np.clip(action + ou_state, np.reshape(low, -1), np.reshape(high, -1))
