"""Environments and the rllab environment interface DDPG is written against.

``Env``/``Step``/``EnvSpec``/``Box`` are the rllab interface; ``GymEnv`` adapts gymnasium (and gym
0.26) environments to it; ``normalize`` is rllab's action/observation/reward normaliser;
``CartpoleEnv`` is the cart-pole of the original example, without Box2D.
"""

from .base import Env, EnvSpec, Step, clone_env, seed_env
from .cartpole import CartpoleEnv
from .gym_env import GymEnv
from .normalized_env import NormalizedEnv, normalize
from .spaces import Box, is_box_space

__all__ = ["Box", "EnvSpec", "Step", "Env", "GymEnv", "normalize", "NormalizedEnv",
           "CartpoleEnv", "clone_env", "seed_env", "is_box_space"]
