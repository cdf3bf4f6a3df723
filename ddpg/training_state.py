"""The training loop's state, declared: every counter and piece of episode state, with its
meaning.

:class:`TrainingState` is what :class:`ddpg.training.TrainingLoop` advances and nothing else
assigns; a checkpoint saves it whole and a restore replaces it whole
(:mod:`ddpg.checkpoint.state` reads its fields from here, so a new field is saved and
restored without a second list of names). The replay memory belongs to the loop too, but is
saved on its own (:mod:`ddpg.checkpoint.replay_memory`): it is data, not a counter, and it
holds what it keeps of the episodes in progress (n-step sums, hindsight replay's pending
steps) itself.
"""
import dataclasses
from typing import List, Optional

import numpy as np

__all__ = ["TrainingState", "EnvEpisode", "STATE_FIELDS", "with_state_views"]


@dataclasses.dataclass
class EnvEpisode:
    """The training episode of one more environment (``n_envs > 1``): environment 0's is
    :class:`TrainingState`'s own ``obs``, ``end``, ``path_length`` and ``path_return``."""

    #: The episode's current observation (None before the environment's first reset).
    obs: Optional[np.ndarray] = None
    #: Whether the episode has ended; the environment's next step resets it first.
    end: bool = False
    #: Steps taken in the episode.
    path_length: int = 0
    #: The episode's return so far (unscaled rewards).
    path_return: float = 0


@dataclasses.dataclass
class TrainingState:
    """Where a training run is. The defaults are a run that has not started."""

    #: The next epoch to run (epochs done).
    epoch: int = 0
    #: Updates done; the index of the next update (``do_update(itr, batch)``).
    itr: int = 0
    #: Environment steps (transitions) taken by the training episodes of every environment
    #: (evaluation steps not counted).
    total_env_steps: int = 0
    #: Seconds spent in ``train_epoch``, evaluation included.
    train_time: float = 0.0
    #: The training episode's current observation (None before the first reset); this
    #: and the next three fields are environment 0's when there are several.
    obs: Optional[np.ndarray] = None
    #: Whether the training episode has ended; the next step resets the environment.
    end: bool = False
    #: Steps taken in the training episode.
    path_length: int = 0
    #: The training episode's return so far (unscaled rewards).
    path_return: float = 0
    #: Training episodes started before the current one(s), over every environment.
    episode: int = 0
    #: Transitions skipped for a NaN or infinite value (``skip_nonfinite``), over the run.
    n_skipped_nonfinite: int = 0
    #: Returns of the training episodes that ended since the last evaluation row.
    strategy_path_returns: List[float] = dataclasses.field(default_factory=list)
    #: Successes (``info["is_success"]`` at the last step) of the training episodes that
    #: ended since the last evaluation row, for environments that report them.
    strategy_path_successes: List[float] = dataclasses.field(default_factory=list)
    #: The training episodes of environments 1 .. n_envs - 1 (empty with one environment).
    vector_episodes: List[EnvEpisode] = dataclasses.field(default_factory=list)

    def __setattr__(self, name, value):
        # a misspelt field would otherwise become a new attribute that no checkpoint saves
        if name not in self.__dataclass_fields__:  # pylint: disable=no-member
            raise AttributeError("TrainingState has no field %r" % name)
        object.__setattr__(self, name, value)


#: The names of the fields, in their declared order.
STATE_FIELDS = tuple(field.name for field in dataclasses.fields(TrainingState))


def with_state_views(cls):
    """Give the algorithm class ``cls`` read-only views of its loop's state and memory.

    ``algo.epoch``, ``algo.itr``, ``algo.memory``, ... are what the example's code and the
    checkpoints name; only the loop changes them, so assigning one raises AttributeError
    (as a misspelt name would otherwise create a new attribute silently).
    """
    def view(name):
        return property(lambda algo: getattr(algo.loop.state, name),
                        doc="The training loop's ``%s`` (:class:`ddpg.training_state."
                            "TrainingState`); read-only." % name)
    for name in STATE_FIELDS:
        setattr(cls, name, view(name))
    cls.memory = property(lambda algo: algo.loop.memory,
                          doc="The training loop's replay memory (None before training); "
                              "read-only.")
    return cls
