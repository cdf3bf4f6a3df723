"""Who collects the transitions a run learns from: the collector interface, the loop's own
environments as a collector, and the record of steps that collectors elsewhere hand over.

A *collector* (docs/design.md, "The collector") is what :class:`ddpg.training.TrainingLoop`
asks for experience, ``steps_per_epoch()`` times an epoch: ``collect(loop, log_scalars)``
brings transitions into the loop's replay memory and returns how many environment steps
they took; the loop, which alone owns the counters and the one update schedule, then runs the
updates due and calls ``after_updates(loop, itr_before)``. Two implementations:

- :class:`LocalCollector`: the loop's own environments (1 .. N, stepped in this process or in
  worker processes), a step of every environment per call;
- :class:`ddpg.distributed.RayActors`: Ray actor processes, a chunk per call. Each actor runs
  a loop of its own whose replay memory is a :class:`StepRecorder`: the steps (and episode
  ends) its loop hands to a memory, in order, which the learner's loop hands to its own
  memory (:meth:`ddpg.training.TrainingLoop.store_recorded`), each actor's environments under
  environment indices of their own (:func:`actor_env_index`). So n-step sums, hindsight
  episodes and the observation normaliser's statistics are made by the learner's memory
  exactly as from its own environments.
"""
import numpy as np

from ddpg.replay.batch import Transition

__all__ = ["LocalCollector", "StepRecorder", "actor_env_index", "recorded_steps"]


def actor_env_index(n_envs, actor, index):
    """The environment index, in the learner's replay memory, of environment ``index`` of
    actor ``actor`` (each with ``n_envs``): after the learner's own ``n_envs``."""
    return n_envs * (actor + 1) + index


class LocalCollector(object):
    """The loop's own environments (:class:`ddpg.training_envs.TrainingEnvironments`) as a
    collector: each :meth:`collect` is one step of every environment
    (:meth:`ddpg.training.TrainingLoop.explore_step`), ``epoch_length / n_envs`` an epoch."""

    def __init__(self, loop):
        self.loop = loop
        self._action_shapes = None  # (the shape the environment takes, the flat size)

    def start(self):
        """Nothing to start: the loop starts its environments' episodes."""

    def steps_per_epoch(self):
        algo = self.loop.algo
        return algo.epoch_length // algo.n_envs

    def collect(self, loop, log_scalars):
        """A step of every environment, stored; returns the steps taken (``n_envs``)."""
        if self._action_shapes is None:  # flat_dim is a product over the shape: once
            space = loop.algo.env.action_space
            self._action_shapes = (tuple(space.shape), space.flat_dim)
        loop.explore_step(*self._action_shapes, log_scalars)
        return loop.algo.n_envs

    def after_updates(self, loop, itr_before):
        """Nothing: the environments act with the learner's own policy."""

    def end_epoch(self):
        """Hand environment 0's normalisation statistics to the evaluation's environment."""
        self.loop.envs.sync_training_env()

    def record_tabular(self, logger):
        """No columns of its own."""

    def get_checkpoint_state(self):
        """None: the environments' state is the training state's own."""
        return None

    def prepare_checkpoint_state(self, saved, path, log):
        """A checkpoint collected by actors continues with this run's own environments."""
        if saved is not None:
            log("The checkpoint %s was collected by actors; this run collects with its own "
                "environments" % path)
        return lambda: None

    def close(self):
        """Stop the environments' worker processes, if any."""
        self.loop.envs.close()


class StepRecorder(object):
    """The replay memory of a loop whose steps another process's memory takes (an
    experience actor's): it keeps what the loop hands it, in order, until :meth:`take`.

    It provides the storing half of the memory interface (``add``, ``end_episode``,
    ``state_dict``/``load_state_dict``) and is never sampled (``size`` is 0).
    """

    weighted = False
    uses_td_errors = False
    size = 0

    def __init__(self, obs_dim, act_dim):
        self.obs_dim, self.act_dim = int(obs_dim), int(act_dim)
        #: ``(env_index, transition)``, or ``(env_index, None)`` for an episode's end
        self.events = []

    def add(self, transition, env_index=0):
        self.events.append((int(env_index), transition))

    def end_episode(self, env_index=0):
        self.events.append((int(env_index), None))

    def take(self):
        """The recorded steps as arrays (:meth:`state_dict`), forgotten here."""
        recorded = self.state_dict()
        self.events = []
        return recorded

    def state_dict(self):
        """The recorded steps as arrays, one row each, in order: ``env`` (its environment),
        ``stored`` (False: the environment's episode ended there), and the transition's
        ``obs``, ``act``, ``rwd``, ``end``, ``nxt`` (float64, so that nothing is rounded
        before the learner's memory stores it) and, when the steps carry them, ``achieved``
        goals. An episode end's row holds zeros."""
        count = len(self.events)
        arrays = {"env": np.array([index for index, _ in self.events], dtype=np.int64),
                  "stored": np.array([step is not None for _, step in self.events], dtype=bool),
                  "obs": np.zeros((count, self.obs_dim)), "act": np.zeros((count, self.act_dim)),
                  "rwd": np.zeros(count), "end": np.zeros(count),
                  "nxt": np.zeros((count, self.obs_dim))}
        goals = [step.achieved for _, step in self.events
                 if step is not None and step.achieved is not None]
        if goals:
            arrays["achieved"] = np.zeros((count, np.size(goals[0])))
        for row, (_, step) in enumerate(self.events):
            if step is None:
                continue
            arrays["obs"][row] = np.reshape(step.obs, self.obs_dim)
            arrays["act"][row] = np.reshape(step.act, self.act_dim)
            arrays["rwd"][row], arrays["end"][row] = step.rwd, float(step.end)
            arrays["nxt"][row] = np.reshape(step.nxt, self.obs_dim)
            if goals:
                arrays["achieved"][row] = np.reshape(step.achieved, -1)
        return arrays

    def load_state_dict(self, arrays):
        """Take :meth:`state_dict`'s recorded steps back (checked first: ValueError)."""
        self.events = recorded_steps(arrays, self.obs_dim, self.act_dim)


def recorded_steps(arrays, obs_dim, act_dim):
    """The ``(env_index, transition or None)`` of :meth:`StepRecorder.state_dict`'s
    ``arrays``; ValueError when they are not such arrays for these sizes."""
    try:
        count = len(arrays["env"])
        shapes = {"env": (count,), "stored": (count,), "obs": (count, obs_dim),
                  "act": (count, act_dim), "rwd": (count,), "end": (count,),
                  "nxt": (count, obs_dim)}
        for key, shape in shapes.items():
            if np.shape(arrays[key]) != shape:
                raise ValueError("recorded %s of shape %s, expected %s"
                                 % (key, np.shape(arrays[key]), shape))
    except (KeyError, TypeError) as error:
        raise ValueError("malformed recorded steps (%r)" % (error,))
    achieved = arrays.get("achieved")
    events = []
    for row in range(count):
        index = int(arrays["env"][row])
        if not arrays["stored"][row]:
            events.append((index, None))
            continue
        events.append((index, Transition(
            np.array(arrays["obs"][row]), np.array(arrays["act"][row]),
            float(arrays["rwd"][row]), bool(arrays["end"][row]), np.array(arrays["nxt"][row]),
            None if achieved is None else np.array(achieved[row]))))
    return events
