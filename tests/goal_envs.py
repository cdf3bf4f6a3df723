"""A small goal-conditioned environment for the hindsight replay tests: fast, numpy only.

``PointGoalEnv`` moves a point in the plane by 0.1 * action a step; it observes its position
(``observation`` and ``achieved_goal``) and a goal (``desired_goal``) drawn at reset, and its
reward is 0 within 0.1 of the goal, else -1 (gymnasium-robotics' sparse Fetch reward), with
``info["is_success"]``. Episodes are cut by gymnasium's TimeLimit.
"""
import gymnasium
import numpy as np

THRESHOLD = 0.1


def point_goal_reward(achieved, desired):
    """The sparse reward, vectorised over leading dimensions (what the tests check
    against)."""
    distance = np.linalg.norm(np.asarray(achieved) - np.asarray(desired), axis=-1)
    return -(distance > THRESHOLD).astype(np.float32)


class PointGoalEnv(gymnasium.Env):
    """See the module docstring."""

    def __init__(self):
        box = gymnasium.spaces.Box(-1.0, 1.0, (2,), np.float64)
        self.observation_space = gymnasium.spaces.Dict(
            {"observation": box, "achieved_goal": box, "desired_goal": box})
        self.action_space = gymnasium.spaces.Box(-1.0, 1.0, (2,), np.float32)
        self.position = np.zeros(2)
        self.goal = np.zeros(2)

    def _observation(self):
        return {"observation": self.position.copy(), "achieved_goal": self.position.copy(),
                "desired_goal": self.goal.copy()}

    def reset(self, seed=None, options=None):
        super().reset(seed=seed)
        self.position = self.np_random.uniform(-0.5, 0.5, size=2)
        self.goal = self.np_random.uniform(-0.5, 0.5, size=2)
        return self._observation(), {}

    def step(self, action):
        self.position = np.clip(self.position + 0.1 * np.asarray(action, np.float64), -1, 1)
        reward = float(self.compute_reward(self.position, self.goal, None))
        return self._observation(), reward, False, False, {"is_success": float(reward == 0.0)}

    def compute_reward(self, achieved_goal, desired_goal, info):
        return point_goal_reward(achieved_goal, desired_goal)


def point_goal_env(max_episode_steps=10):
    """A :class:`PointGoalEnv` cut after ``max_episode_steps``."""
    return gymnasium.wrappers.TimeLimit(PointGoalEnv(), max_episode_steps=max_episode_steps)
