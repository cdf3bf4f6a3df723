"""Distributed experience collection: actor processes on Ray feeding one learner.

:class:`RayActors` (:mod:`ddpg.distributed.ray_actors`) attaches to a :class:`ddpg.DDPG`'s
training loop; :class:`ExperienceActor` (:mod:`ddpg.distributed.actor`) is the work of one
actor, with no Ray in it. Ray itself is imported only when actors start.
"""
from ddpg.distributed.actor import ExperienceActor
from ddpg.distributed.ray_actors import RayActors

__all__ = ["RayActors", "ExperienceActor"]
