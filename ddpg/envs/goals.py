"""Goal-conditioned environments: gymnasium's dict observations as one flat vector.

A goal-conditioned environment (gymnasium-robotics' Fetch tasks, any ``GoalEnv``) observes a
dict of ``observation``, ``achieved_goal`` and ``desired_goal`` and computes its reward from
the two goals with ``compute_reward(achieved_goal, desired_goal, info)``, vectorised over a
leading batch dimension. DDPG's networks take one flat vector: they see the observation and
the desired goal side by side (``[observation, desired_goal]``, the HER authors' network
input), while the achieved goal goes to the replay memory through ``info["achieved_goal"]``,
so that hindsight relabelling (:mod:`ddpg.replay.her`) can put another goal in the desired
goal's place and recompute the reward.
"""
import numpy as np

__all__ = ["GOAL_KEYS", "GoalLayout", "is_goal_space"]

#: The keys of a goal-conditioned observation (gymnasium's ``GoalEnv``).
GOAL_KEYS = ("observation", "achieved_goal", "desired_goal")


def is_goal_space(space):
    """Whether ``space`` is a dict space with exactly the goal keys, each a Box."""
    spaces = getattr(space, "spaces", None)
    if not isinstance(spaces, dict) or set(spaces) != set(GOAL_KEYS):
        return False
    return all(hasattr(spaces[key], "low") and hasattr(spaces[key], "high")
               for key in GOAL_KEYS)


class GoalLayout(object):
    """Where the parts of a goal observation sit in the flat vector the networks see.

    ``obs_dim`` values of ``observation``, then ``goal_dim`` values of ``desired_goal``;
    ``flat_dim`` in all. ``low``/``high`` are the flat vector's bounds.
    """

    def __init__(self, space):
        parts = space.spaces
        self.obs_dim = int(np.prod(parts["observation"].shape))
        self.goal_dim = int(np.prod(parts["desired_goal"].shape))
        achieved_dim = int(np.prod(parts["achieved_goal"].shape))
        if achieved_dim != self.goal_dim:
            raise ValueError("a goal-conditioned environment's achieved_goal and desired_goal "
                             "must have the same size; got %d and %d"
                             % (achieved_dim, self.goal_dim))
        self.flat_dim = self.obs_dim + self.goal_dim
        self.low = np.concatenate([np.reshape(parts["observation"].low, -1),
                                   np.reshape(parts["desired_goal"].low, -1)])
        self.high = np.concatenate([np.reshape(parts["observation"].high, -1),
                                    np.reshape(parts["desired_goal"].high, -1)])

    def flatten(self, observation):
        """``[observation, desired_goal]`` of one dict observation, float64."""
        return np.concatenate([np.reshape(observation["observation"], -1),
                               np.reshape(observation["desired_goal"], -1)]).astype(np.float64)

    @staticmethod
    def achieved(observation):
        """The achieved goal of one dict observation, flat float64."""
        return np.reshape(observation["achieved_goal"], -1).astype(np.float64)

    def with_goals(self, flat_observations, goals):
        """Copies of flat observations ``(n, flat_dim)`` with their desired goals replaced by
        ``goals`` ``(n, goal_dim)``."""
        relabelled = np.array(flat_observations, copy=True)
        relabelled[:, self.obs_dim:] = goals
        return relabelled

    def desired(self, flat_observations):
        """The desired goals ``(n, goal_dim)`` of flat observations ``(n, flat_dim)``."""
        return np.asarray(flat_observations)[:, self.obs_dim:]
