"""Hindsight experience replay (Andrychowicz et al. 2017): goals relabelled when sampled.

In a goal-conditioned environment (:mod:`ddpg.envs.goals`) the observation the networks see
is ``[observation, desired_goal]`` and the reward is ``compute_reward(achieved_goal,
desired_goal, info)``. An episode that missed its goal still reached *some* goal: HER
replays its transitions as if that had been the goal. When a batch is sampled, each
transition's desired goal is replaced, with probability ``1 - 1 / (1 + k)`` (``her_k`` = k
relabelled for every real one, the HER authors' ``replay_k``), by a goal the episode
achieved, and every reward of the batch is recomputed with the environment's vectorised
``compute_reward`` (from the achieved goal after the step and the batch's goal; its ``info``
is None, as the Fetch tasks ignore it). Strategies for the new goal, as the HER authors name
them, for the transition at step t of an episode of T steps:

- ``future``: the goal achieved after a step t' drawn uniformly from t..T-1 (the HER
  authors' choice and default);
- ``final``: the goal achieved after the episode's last step;
- ``episode``: the goal achieved after any step of the episode, drawn uniformly.

Storage: whole episodes go into a ring of transitions, contiguously, when they end (each
environment's steps wait in a pending list until then, as in the HER authors' buffer), and
every slot records its step ``offset`` in the episode and the episode's ``length``, so the
relabelling candidates of slot i are the slots ``i - offset .. i - offset + length - 1``
(modulo the ring's size). When the ring overwrites the first steps of an old episode, the
rest of it is renumbered as a shorter episode, so no candidate is ever another episode's.
Sampling draws from the stored episodes only: the memory's ``size`` counts their
transitions, not the pending ones.
"""
import collections

import numpy as np

from ddpg.replay.batch import TransitionBatch, bootstrap_discounts
from ddpg.replay.uniform import ReplayMem, check_arrays

__all__ = ["HER_STRATEGIES", "HER_PENDING", "HindsightReplayMem", "relabel_probability"]

#: The goal-selection strategies of the HER paper this memory implements.
HER_STRATEGIES = ("future", "final", "episode")
#: A saved memory's pending steps, one array per part of a step (``HER_PENDING[i]`` is part
#: ``i`` of ``memory.pending[env][t]``), beside ``pending_envs``: whose step each is.
HER_PENDING = ("pending_obss", "pending_acts", "pending_rwds", "pending_ends", "pending_nxts",
               "pending_achieved")


def relabel_probability(her_k):
    """The share of sampled transitions whose goal is replaced: ``k`` relabelled for every
    real one, ``1 - 1 / (1 + k)`` (the HER authors' ``future_p``)."""
    return 1.0 - 1.0 / (1.0 + her_k)


class HindsightReplayMem(ReplayMem):
    """A :class:`ReplayMem` of whole episodes whose batches are relabelled with hindsight goals.

    ``layout`` is the environment's :class:`ddpg.envs.goals.GoalLayout` (where the desired
    goal sits in a flat observation), ``compute_reward`` the environment's vectorised reward,
    ``strategy`` one of :data:`HER_STRATEGIES` and ``her_k`` the relabelled-to-real ratio.
    ``n_envs`` pending episodes are kept, one per environment. ``observe`` (the observation
    normaliser's ``update``) sees a stored episode's observations under relabelled goals, as
    its batches will carry them.
    """

    def __init__(self, obs_dim, act_dim, memory_size, layout, compute_reward,
                 strategy="future", her_k=4, n_envs=1, scale_reward=1.0, discount=0.99,
                 observe=None):
        super(HindsightReplayMem, self).__init__(obs_dim, act_dim, memory_size)
        self.discount, self.observe = discount, observe
        if strategy not in HER_STRATEGIES:
            raise ValueError("her_strategy must be one of %s, got %r"
                             % (", ".join(HER_STRATEGIES), strategy))
        if not her_k >= 0:
            raise ValueError("her_k must be non-negative, got %r" % (her_k,))
        self.layout = layout
        self.compute_reward = compute_reward
        self.strategy = strategy
        self.her_k = her_k
        self.scale_reward = scale_reward
        self.goal_dim = layout.goal_dim
        #: the goal achieved after each stored step (the relabelling candidates)
        self.achieved = np.zeros((self.memory_size, self.goal_dim), dtype=np.float32)
        self.offsets = np.zeros((self.memory_size,), dtype=np.int64)
        self.lengths = np.zeros((self.memory_size,), dtype=np.int64)
        #: environment index -> its episode so far: a list of (obs, act, rwd, end, nxt,
        #: achieved); environments 0 .. n_envs - 1 from the start, others when they arrive
        self.pending = collections.defaultdict(list, {index: [] for index in range(n_envs)})

    @classmethod
    def build(cls, settings, env, observe=None, transitions_done=None):
        return cls(env.observation_space.flat_dim, env.action_space.flat_dim,
                   settings.memory_size, env.goal_layout, env.compute_reward,
                   strategy=settings.her_strategy, her_k=settings.her_k, n_envs=settings.n_envs,
                   scale_reward=settings.scale_reward, discount=settings.discount,
                   observe=observe)

    # -- storing --------------------------------------------------------------------------

    def add(self, transition, env_index=0):
        """The step joins environment ``env_index``'s pending episode (its achieved goal
        is ``transition.achieved``)."""
        if transition.achieved is None:
            raise ValueError("hindsight replay needs the goal each step achieved "
                             "(info['achieved_goal'] of a goal environment)")
        self.add_step(env_index, *transition)

    def add_step(self, env_index, obs, act, rwd, end, nxt, achieved):
        """Add a step to environment ``env_index``'s pending episode."""
        self.pending[env_index].append((np.asarray(obs, dtype=np.float32).reshape(-1),
                                        np.asarray(act, dtype=np.float32).reshape(-1),
                                        float(rwd), float(end),
                                        np.asarray(nxt, dtype=np.float32).reshape(-1),
                                        np.asarray(achieved, dtype=np.float32).reshape(-1)))

    def end_episode(self, env_index=0):
        """Store environment ``env_index``'s pending episode whole; returns its slots (an
        empty array when it had no steps). ``observe`` sees its observations under the goals
        its batches will carry (relabelled as when sampled: this draws from numpy's global
        generator, only when there is an ``observe``)."""
        slots = self._store_episode(env_index)
        if self.observe is not None and len(slots):
            self.observe(self.relabelled_observations(slots))
        return slots

    def _store_episode(self, env_index):
        steps, self.pending[env_index] = self.pending[env_index], []
        length = len(steps)
        if length == 0:
            return np.zeros((0,), dtype=np.int64)
        if length > self.memory_size:
            raise ValueError("an episode of %d steps does not fit a hindsight replay memory "
                             "of %d transitions: raise memory_size" % (length, self.memory_size))
        slots = (self.top + np.arange(length)) % self.memory_size
        self._renumber_overwritten(slots)
        self.obss[slots] = [step[0] for step in steps]
        self.acts[slots] = [step[1] for step in steps]
        self.rwds[slots] = [step[2] for step in steps]
        self.ends[slots] = [step[3] for step in steps]
        self.nxts[slots] = [step[4] for step in steps]
        self.achieved[slots] = [step[5] for step in steps]
        self.offsets[slots] = np.arange(length)
        self.lengths[slots] = length
        size = min(self.size + length, self.memory_size)  # both at once (see ReplayMem)
        self.top, self.size = int((self.top + length) % self.memory_size), size
        return slots

    def _renumber_overwritten(self, slots):
        """Before ``slots`` are overwritten: the episode whose first steps they hold keeps
        its remaining steps as a shorter episode (every other stored episode they touch is
        overwritten whole, or not at all)."""
        last = slots[-1]
        if self.size < self.memory_size and last >= self.size:
            return  # nothing stored there yet (a memory not full is written from slot 0)
        remaining = self.lengths[last] - self.offsets[last] - 1  # the old episode's steps
        if remaining <= 0:  # after the last overwritten slot
            return
        after = (last + 1 + np.arange(remaining)) % self.memory_size
        self.offsets[after] -= self.offsets[after[0]]
        self.lengths[after] = remaining

    # -- sampling -------------------------------------------------------------------------

    def goal_slots(self, slots, uniforms):
        """The slots whose achieved goals relabel ``slots``, by the strategy, from
        ``uniforms`` in [0, 1) (one per slot)."""
        offsets, lengths = self.offsets[slots], self.lengths[slots]
        if self.strategy == "future":
            steps = (uniforms * (lengths - offsets)).astype(np.int64)
        elif self.strategy == "final":
            steps = lengths - offsets - 1
        else:  # episode
            steps = (uniforms * lengths).astype(np.int64) - offsets
        return (slots + steps) % self.memory_size

    def relabelled_goals(self, slots):
        """The desired goals of the transitions in ``slots`` after relabelling: each replaced
        with probability :func:`relabel_probability` by a goal the strategy picks. Draws from
        numpy's global generator (seeded by DDPG): which are replaced, then where from."""
        replaced = np.random.uniform(size=len(slots)) < relabel_probability(self.her_k)
        uniforms = np.random.uniform(size=len(slots))
        goals = self.layout.desired(self.obss[slots]).copy()
        goals[replaced] = self.achieved[self.goal_slots(slots, uniforms)][replaced]
        return goals

    def relabelled_observations(self, slots):
        """The observations in ``slots`` with relabelled goals (what the observation
        normaliser learns from a stored episode)."""
        return self.layout.with_goals(self.obss[slots], self.relabelled_goals(slots))

    def relabel(self, slots):
        """The transitions in ``slots`` with hindsight goals: ``(obss, rwds, nxts)`` with the
        relabelled goals (:meth:`relabelled_goals`) in place and every reward recomputed from
        the goal achieved after the step, times ``scale_reward``."""
        goals = self.relabelled_goals(slots)
        rewards = np.asarray(self.compute_reward(self.achieved[slots], goals, None),
                             dtype=np.float64).reshape(-1) * self.scale_reward
        return (self.layout.with_goals(self.obss[slots], goals), rewards.astype(np.float32),
                self.layout.with_goals(self.nxts[slots], goals))

    def get_batch(self, batch_size):
        """A uniform batch of stored transitions (with replacement), relabelled
        (:meth:`relabel`): the example's 5-tuple as a :class:`TransitionBatch`."""
        if self.size == 0:
            raise ValueError("cannot sample from an empty ReplayMem: no episode has ended")
        slots = np.random.randint(0, self.size, size=batch_size)
        obss, rwds, nxts = self.relabel(slots)
        return TransitionBatch(obss, self.acts[slots], rwds, self.ends[slots], nxts)

    def sample(self, batch_size):
        """:meth:`get_batch`'s relabelled batch with its bootstrap discounts."""
        batch = self.get_batch(batch_size)
        batch.discounts = bootstrap_discounts(batch[3], self.discount)
        return batch

    # -- state ----------------------------------------------------------------------------

    def state_dict(self):
        """:meth:`ReplayMem.state_dict` with each slot's ``achieved`` goal, step ``offsets``
        and episode ``lengths``, and the unfinished episodes' steps (:data:`HER_PENDING`,
        with ``pending_envs``: whose step each is)."""
        size = self.size
        arrays = super(HindsightReplayMem, self).state_dict()
        arrays.update(achieved=self.achieved[:size], offsets=self.offsets[:size],
                      lengths=self.lengths[:size])
        steps = [(index, step) for index in sorted(self.pending)
                 for step in self.pending[index]]
        arrays["pending_envs"] = np.array([index for index, _ in steps], dtype=np.int64)
        for part, (key, dim) in enumerate(zip(HER_PENDING, self._pending_dims())):
            values = np.array([step[part] for _, step in steps], dtype=np.float32)
            arrays[key] = values.reshape((len(steps),) if dim is None else (len(steps), dim))
        return arrays

    def _pending_dims(self):
        """The size of each part of a pending step (None: a number)."""
        return (self.obs_dim, self.act_dim, None, None, self.obs_dim, self.goal_dim)

    def _expected_arrays(self, size):
        expected = super(HindsightReplayMem, self)._expected_arrays(size)
        expected.update(achieved=(size, self.goal_dim), offsets=(size,), lengths=(size,))
        return expected

    def _check_state(self, arrays):
        super(HindsightReplayMem, self)._check_state(arrays)
        n_pending = len(arrays["pending_envs"]) if "pending_envs" in arrays else -1
        expected = {"pending_envs": (n_pending,)}
        for key, dim in zip(HER_PENDING, self._pending_dims()):
            expected[key] = (n_pending,) if dim is None else (n_pending, dim)
        check_arrays(arrays, expected)
        envs = np.asarray(arrays["pending_envs"])
        if envs.size and envs.min() < 0:
            raise ValueError("has an unfinished episode of environment %d" % envs.min())

    def _load_state(self, arrays):
        super(HindsightReplayMem, self)._load_state(arrays)
        size = self.size
        self.achieved[:size] = arrays["achieved"]
        self.offsets[:size] = arrays["offsets"]
        self.lengths[:size] = arrays["lengths"]
        self.pending = collections.defaultdict(list, {index: [] for index in self.pending})
        for row, index in enumerate(np.asarray(arrays["pending_envs"])):
            self.pending[int(index)].append(tuple(
                arrays[key][row] if np.ndim(arrays[key]) > 1 else float(arrays[key][row])
                for key in HER_PENDING))
