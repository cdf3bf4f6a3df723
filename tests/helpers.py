"""Small rllab-style environments for tests (plain classes, no gym, no ddpg.envs.Env base)."""
import numpy as np

from ddpg.envs import Box, EnvSpec, Step


class PointEnv(object):
    """A point moved by bounded actions toward the origin; the rllab interface, by duck typing.

    Reward is minus the squared distance; an episode ends (terminal) when the point comes
    within 0.1 of the origin. It keeps its own random stream so ``seed`` makes it repeatable.
    """

    def __init__(self, obs_dim=2, act_dim=2, action_bound=1.0):
        self.obs_dim, self.act_dim = obs_dim, act_dim
        self.observation_space = Box(-np.inf, np.inf, shape=(obs_dim,))
        self.action_space = Box(-action_bound, action_bound, shape=(act_dim,))
        self.spec = EnvSpec(self.observation_space, self.action_space)
        self.rng = np.random.RandomState(0)
        self.state = None
        self.actions_seen = []

    def seed(self, seed):
        self.rng = np.random.RandomState(seed)

    def reset(self):
        self.state = self.rng.uniform(-1, 1, size=self.obs_dim)
        return self.state.copy()

    def step(self, action):
        self.actions_seen.append(np.array(action))
        action = np.asarray(action, dtype=np.float64)
        assert action.shape == (self.act_dim,), action.shape
        move = np.zeros(self.obs_dim)
        k = min(self.obs_dim, self.act_dim)
        move[:k] = 0.1 * np.clip(action[:k], -1, 1)
        self.state = self.state + move
        reward = -float(np.sum(self.state ** 2))
        done = bool(np.sum(self.state ** 2) < 0.01)
        return Step(self.state.copy(), reward, done, {})
