"""DDPG's training loop, whole: explore a step, store it, update when due, evaluate, log,
checkpoint.

:class:`TrainingLoop` owns the run's :class:`~ddpg.training_state.TrainingState` (counters and
the training episode) and its replay memory; it is the only code that changes them. It reads
the algorithm's settings and talks to it through a narrow interface:

- acting: ``algo.strategy.get_action(obs, algo.policy)`` (the exploration strategy around
  the policy);
- learning: ``algo.do_update(itr, batch)``, whose statistics accumulate in
  ``algo.update_stats``;
- the epoch's row: ``algo.evaluate(epoch, memory)``;
- checkpoints: ``algo.save(path)`` (through the logger's snapshot modes) and the networks'
  parameters (:func:`ddpg.checkpoint.all_network_params`, checked for divergence).

With ``n_envs > 1`` the loop steps several copies of the environment together
(:mod:`ddpg.envs.vector`, in this process or in worker processes): each environment has its
own episode, exploration strategy (a copy of ``algo.strategy``, so one OU process each) and
random generator (numpy's global one for environment 0, ``RandomState(seed + i)`` for
environment ``i``), and the policy acts for all of them in one batched forward pass. Every
step count (``epoch_length``, ``start_steps``, ``memory_start_size``, ``train_freq``) counts
transitions, so ``gradient_steps`` updates per ``train_freq`` transitions keep the
update-to-data ratio of a one-environment run.

The loop talks to the replay memory through its interface only (``add``, ``end_episode``,
``sample``, ``after_update``: :mod:`ddpg.replay`), and to whoever collects the steps through
the collector interface (:mod:`ddpg.collection`): its own environments
(:class:`~ddpg.collection.LocalCollector`) or Ray actors. The counters and the one update
schedule (:meth:`TrainingLoop.run_due_updates`) are the loop's, whoever collects. Reading
:meth:`TrainingLoop.train` top to bottom follows a run: an epoch is the collector's
``steps_per_epoch()`` turns (``epoch_length / n_envs`` steps of every environment, or a chunk
of each actor), each followed by the updates due; then the divergence check, the evaluation
and the epoch's row; then the checkpoint.
"""
import dataclasses
import sys
import time

import numpy as np
import pyprind

from ddpg import checkpoint, faults
from ddpg.backend import seeding
from ddpg.collection import LocalCollector, recorded_steps
from ddpg.envs.spaces import flat_bounds
from ddpg.replay import make_memory
from ddpg.training_envs import TrainingEnvironments
from ddpg.transition_storage import TransitionStorage
from ddpg.training_state import EnvEpisode, TrainingState, with_state_views

__all__ = ["TrainingLoop", "with_state_views"]


class TrainingLoop(object):
    """The training loop of ``algo`` (a :class:`ddpg.DDPG`), its state and replay memory.

    ``state`` and ``memory`` are read by the algorithm's views (``algo.epoch``,
    ``algo.memory``, ...) and by checkpoints; :meth:`restore` is how a checkpoint puts them
    back.
    """

    def __init__(self, algo, memory_factory=None):
        self.algo = algo
        self.state = TrainingState()
        self.memory = None
        #: makes the replay memory (:meth:`new_memory`): by default the kind the run's
        #: settings ask for; ``memory_factory(observe, transitions_done)`` when given (an
        #: experience actor's loop records its steps for the learner's memory)
        self._memory_factory = memory_factory
        # n_skipped_nonfinite when the epoch began: the first three skips of an epoch are logged
        self._skipped_before_epoch = 0
        #: the environments with their strategies and generators
        self.envs = TrainingEnvironments(algo)
        #: what a step stores (1-step, n-step or hindsight transitions)
        self.storage = TransitionStorage(self)
        #: the action space's ``(low, high)``, flat float64: the warm-up's uniform range
        self.action_bounds = flat_bounds(algo.env.action_space)
        #: the run's update schedule ``(train_freq, gradient_steps)``, read from the config
        #: at first use (an actor's loop never updates, and ActorRun has no config)
        self._schedule = None
        #: what collects the transitions (:mod:`ddpg.collection`): the environments above,
        #: or what replaces them (:class:`ddpg.distributed.RayActors`, through its attach())
        self.collector = LocalCollector(self)

    # -- the environments --------------------------------------------------------------------

    def episode_of(self, index):
        """Environment ``index``'s training episode (the state itself for environment 0)."""
        return self.state if index == 0 else self.state.vector_episodes[index - 1]

    def close(self):
        """Stop the environments' worker processes, if any (``vec_env="async"``), and the
        collector's."""
        self.envs.close()
        self.collector.close()

    # -- the run -----------------------------------------------------------------------------

    def train(self, epoch_callback=None):
        """Run epochs ``state.epoch`` .. ``n_epochs - 1`` of ``epoch_length`` steps each.

        The loop's state (replay memory, counters, the current episodes) lives on this object,
        not in local variables, so a restored algorithm continues where it stopped.

        After each epoch ``logger.save_itr_params(epoch, algo.save)`` writes a checkpoint when
        a snapshot folder is set (following the snapshot mode), then
        ``epoch_callback(algo, epoch)`` is called when given (the epoch's statistics are in
        ``logger.last_tabular()``; ``algo.epoch`` already counts it, so a checkpoint saved
        there resumes with the next epoch). On Ctrl-C a checkpoint is saved to
        ``<snapshot folder>/interrupted`` before the KeyboardInterrupt propagates.
        """
        algo, state = self.algo, self.state
        try:
            self.start()
            while state.epoch < algo.n_epochs:
                # MXNet's generator state cannot be saved: reseeding it per epoch makes a run
                # resumed at an epoch boundary draw what the uninterrupted run draws
                seeding.seed_epoch(algo.seed, state.epoch)
                with algo.logger.prefix("epoch #%d | " % state.epoch):
                    algo.train_epoch(state.epoch)
                state.epoch += 1
                algo.logger.save_itr_params(state.epoch - 1, algo.save)
                if epoch_callback is not None:
                    epoch_callback(algo, state.epoch - 1)
        except KeyboardInterrupt:
            if algo.progress_bar:
                sys.stderr.write("\n")  # end the progress bar's line before the messages
            checkpoint.save_interrupted(algo)
            raise

    def start(self):
        """Make what a run needs before its first step, where a checkpoint has not: the
        replay memory, the environments' episodes and their first observations."""
        algo, state = self.algo, self.state
        if self.memory is None:
            self.memory = self.new_memory()
        if len(state.vector_episodes) != algo.n_envs - 1:
            state.vector_episodes = [EnvEpisode() for _ in range(algo.n_envs - 1)]
        unstarted = [index for index in range(algo.n_envs)
                     if self.episode_of(index).obs is None]
        if unstarted:
            for index, obs in zip(unstarted, self._reset_envs(unstarted)):
                self.episode_of(index).obs = obs
        self.collector.start()

    def new_memory(self):
        """An empty replay memory of the kind the run's settings ask for
        (:func:`ddpg.replay.make_memory`), wired to this loop: the observation normaliser
        (``obs_norm``) sees what it stores, and it can read the run's transition count."""
        normalizer = self.algo.obs_normalizer
        observe = None if normalizer is None else normalizer.update
        transitions_done = lambda: self.state.total_env_steps  # noqa: E731
        if self._memory_factory is not None:
            return self._memory_factory(observe, transitions_done)
        return make_memory(self.algo.config, self.algo.env, observe=observe,
                           transitions_done=transitions_done)

    def run_epoch(self, epoch):
        """``epoch_length`` environment steps with the updates due, then the epoch's row.

        The collector (:mod:`ddpg.collection`) brings the steps in, ``steps_per_epoch()``
        turns; after each, the loop runs the updates they make due (:meth:`run_due_updates`)
        and lets the collector react to them (Ray actors publish new weights)."""
        algo, state, logger = self.algo, self.state, self.algo.logger
        epoch_start = time.time()
        self._skipped_before_epoch = state.n_skipped_nonfinite
        # values "as they happen" (episode returns, update losses) for TensorBoard
        log_scalars = logger.has_scalar_outputs()
        logger.log("Training started")
        collector = self.collector
        steps = range(collector.steps_per_epoch())
        if algo.progress_bar:
            # an explicit stream: pyprind otherwise prints nothing but a warning when
            # stdout is not a terminal
            steps = pyprind.prog_bar(steps, stream=sys.stderr)
        for _ in steps:
            self.collect_turn(log_scalars)
        logger.log("Training finished")
        collector.end_epoch()
        faults.check_divergence(epoch, algo.update_stats.averages(),
                                checkpoint.all_network_params(algo))
        algo.evaluate(epoch, self.memory)
        self.take_exploration_returns()  # the row has recorded them
        state.train_time += time.time() - epoch_start
        logger.record_tabular("TotalEnvSteps", state.total_env_steps)
        logger.record_tabular("NumUpdates", state.itr)
        logger.record_tabular("Time", state.train_time)
        collector.record_tabular(logger)
        if algo.skip_nonfinite:
            logger.record_tabular("SkippedNonFinite",
                                  state.n_skipped_nonfinite - self._skipped_before_epoch)
        logger.dump_tabular(with_prefix=False)

    def update_schedule(self):
        """``(train_freq, gradient_steps)`` of the run's config
        (:meth:`ddpg.config.DDPGConfig.update_schedule`)."""
        if self._schedule is None:
            self._schedule = self.algo.config.update_schedule()
        return self._schedule

    def collect_turn(self, log_scalars):
        """One turn of the collector (a step of every environment, or an actor's chunk),
        then the updates it makes due, then the collector's reaction to them."""
        itr_before = self.state.itr
        taken = self.collector.collect(self, log_scalars)
        self.run_due_updates(taken, log_scalars)
        self.collector.after_updates(self, itr_before)

    def run_due_updates(self, taken, log_scalars):
        """The run's one update schedule, after ``taken`` more environment steps:
        ``gradient_steps`` updates each time the transition count passes a multiple of
        ``train_freq``, once the memory holds ``memory_start_size`` transitions, and at least
        one (a hindsight memory holds none until an episode ends)."""
        algo, total = self.algo, self.state.total_env_steps
        train_freq = self.update_schedule()[0]
        due = total // train_freq - (total - taken) // train_freq
        if due and self.memory.size >= max(algo.memory_start_size, 1):
            self.run_updates(log_scalars, due)

    def store_recorded(self, recorded, first_env_index, steps, returns, successes,
                       log_scalars):
        """Steps collected elsewhere (an actor's :class:`ddpg.collection.StepRecorder`
        arrays ``recorded``) into the memory, each recorded environment ``i`` as environment
        ``first_env_index + i``; then counted: ``steps`` environment steps, the ``returns``
        and ``successes`` of the episodes that ended (with ``log_scalars`` each return goes
        to TensorBoard at the run's step count)."""
        state, memory = self.state, self.memory
        obs_dim, act_dim = memory.obs_dim, memory.act_dim
        for env_index, transition in recorded_steps(recorded, obs_dim, act_dim):
            if transition is None:
                memory.end_episode(first_env_index + env_index)
            else:
                memory.add(transition, first_env_index + env_index)
        state.total_env_steps += steps
        state.episode += len(returns)
        state.strategy_path_returns.extend(returns)
        state.strategy_path_successes.extend(successes)
        if log_scalars:
            for episode_return in returns:
                self.algo.logger.record_scalar("train/EpisodeReturn", episode_return,
                                               state.total_env_steps)

    def take_exploration_returns(self):
        """The returns of the exploration episodes finished since the last call, which
        start again from none (an epoch's row and an actor's chunk each report their own)."""
        returns, self.state.strategy_path_returns = self.state.strategy_path_returns, []
        self.state.strategy_path_successes = []
        return returns

    def run_updates(self, log_scalars, times=1):
        """``times * gradient_steps`` updates (``algo.do_update``) on batches from the memory;
        with ``log_scalars`` the losses of every ``loss_log_interval``-th one go to
        TensorBoard."""
        algo, state, memory = self.algo, self.state, self.memory
        for _ in range(times * self.update_schedule()[1]):
            batch = memory.sample(algo.batch_size)
            algo.do_update(state.itr, batch)
            memory.after_update(batch, algo.td_errors() if memory.uses_td_errors else None)
            state.itr += 1
            if log_scalars and state.itr % algo.loss_log_interval == 0:
                for name, value in algo.update_stats.latest().items():
                    algo.logger.record_scalar("train/" + name, value, state.total_env_steps)

    # -- one exploration step ----------------------------------------------------------------

    def explore_step(self, action_shape, act_dim, log_scalars):
        """One step of every environment's training episode, the transitions stored.

        A new episode in each environment whose last one ended; the actions (uniform during
        ``start_steps``, else the strategies' around the policy's); the steps, with their
        checks for non-finite values; the transitions stored, environment 0's first; each
        episode's bookkeeping. ``action_shape`` is the shape the environment takes actions
        in, ``act_dim`` their flat size. With ``log_scalars`` an ending episode's return and
        length are written as ``train/EpisodeReturn`` and ``train/EpisodeLength``.
        """
        algo, state = self.algo, self.state
        indices = range(algo.n_envs)
        # the transitions of a step are counted in their environments' order: environment
        # index's is the run's transition number first + index
        first = state.total_env_steps + 1
        ended = [index for index in indices if self.episode_of(index).end]
        if ended:
            self._start_episodes(ended)
        observations = [self.episode_of(index).obs for index in indices]
        actions = self._choose_actions(observations, act_dim, first)
        results = self.envs.call("step", [np.reshape(act, action_shape) for act in actions],
                                 first_transition=first)
        for index, obs, act, (nxt, rwd, end, info) in zip(indices, observations, actions,
                                                          results):
            episode = self.episode_of(index)
            finite = bool(np.isfinite(rwd) and np.isfinite(nxt).all())
            if not finite:
                end = self._nonfinite_step(index, first + index, nxt, rwd) or end
            episode.path_length += 1
            state.total_env_steps += 1
            if finite:
                episode.path_return += rwd
                self.storage.store(index, obs, act, rwd * algo.scale_reward, end, info, nxt,
                                   episode.path_length)
            else:  # not stored: n-step sums (or a hindsight episode) end at obs
                self.storage.end_episode(index)
            if not end and episode.path_length >= algo.max_path_length:
                end = True
            episode.end = end
            episode.obs = nxt
            if end and log_scalars:
                algo.logger.record_scalar("train/EpisodeReturn", episode.path_return,
                                          state.total_env_steps)
                algo.logger.record_scalar("train/EpisodeLength", episode.path_length,
                                          state.total_env_steps)

    def _reset_envs(self, indices):
        """Reset the training environments ``indices``, checking the first observations."""
        observations = self.envs.call("reset", indices)
        for obs in observations:
            faults.check_reset_observation(obs, self.algo)
        return observations

    def _start_episodes(self, indices):
        """Record the ended episodes' returns, then reset their environments and
        strategies."""
        state = self.state
        for index in indices:
            episode = self.episode_of(index)
            state.strategy_path_returns.append(episode.path_return)
            episode.path_length = 0
            episode.path_return = 0
            state.episode += 1
        for index, obs in zip(indices, self._reset_envs(indices)):
            self.episode_of(index).obs = obs
            self.envs.strategies[index].reset()

    def _choose_actions(self, observations, act_dim, first_transition):
        """The exploration actions for each environment's observation: uniform over the
        action space for the run's first ``start_steps`` transitions (covering it before the
        policy means anything), drawn from the environment's generator; else its strategy's
        action around the policy's (not the target policy's). The i-th environment's
        transition is the run's ``first_transition + i`` (what a fault names)."""
        algo = self.algo
        if self.state.total_env_steps < algo.start_steps:
            low, high = self.action_bounds
            return [generator.uniform(low, high)
                    for generator in self.envs.generators]
        policies = self.envs.acting_policies(observations)
        actions = []
        for index, (obs, strategy, policy) in enumerate(zip(observations,
                                                             self.envs.strategies, policies)):
            actions.append(faults.check_action(strategy.get_action(obs, policy), act_dim,
                                               strategy, algo, index,
                                               first_transition + index))
        return actions

    def _nonfinite_step(self, index, transition, nxt, rwd):
        """A NaN/inf observation or reward in environment ``index``'s step, the run's
        ``transition``: raise, or (skip_nonfinite) count and skip it.

        Returns whether the episode must end: an observation that is not finite cannot be
        acted on; a bad reward alone does not stop the episode. The first three skips of an
        epoch are logged.
        """
        algo, state = self.algo, self.state
        parts = faults.nonfinite_parts(nxt, rwd)
        if not algo.skip_nonfinite:
            faults.raise_nonfinite_step(parts, nxt, rwd, algo, index, transition)
        state.n_skipped_nonfinite += 1
        if state.n_skipped_nonfinite - self._skipped_before_epoch <= 3:
            algo.logger.log("Skipping a transition: " + faults.nonfinite_step_message(
                parts, nxt, rwd, algo, index, transition))
        return "observation" in parts

    # -- checkpoints -------------------------------------------------------------------------

    def restore(self, saved, memory):
        """Continue from a checkpoint: its replay memory, and its state's fields ``saved``
        (a dict of :class:`TrainingState` fields; a field it lacks, from an older checkpoint,
        keeps its current value)."""
        self.memory = memory
        self.state = dataclasses.replace(self.state, **saved)

    def abandon_episode(self, index=0):
        """Start a new episode in environment ``index``, whose state could not be restored:
        the interrupted episode's partial return is not logged as an exploration return."""
        self.storage.end_episode(index)  # n-step sums bootstrap from where it stopped
        episode = self.episode_of(index)
        episode.obs = None
        episode.end = False
        episode.path_length = 0
        episode.path_return = 0
        self.state.episode += 1
        self.envs.strategies[index].reset()
