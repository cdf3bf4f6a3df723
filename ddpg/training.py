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

So a new collector or replay memory changes this module, not the algorithm. Reading
:meth:`TrainingLoop.train` top to bottom follows a run: an epoch is ``epoch_length`` calls of
:meth:`TrainingLoop.explore_step`, each followed by the updates due; then the divergence
check, the evaluation and the epoch's row; then the checkpoint.
"""
import dataclasses
import sys
import time

import numpy as np
import pyprind

from ddpg import checkpoint, faults
from ddpg.backend import seeding
from ddpg.replay_mem import ReplayMem
from ddpg.training_state import STATE_FIELDS, TrainingState

__all__ = ["TrainingLoop", "with_state_views"]


class TrainingLoop(object):
    """The training loop of ``algo`` (a :class:`ddpg.DDPG`), its state and replay memory.

    ``state`` and ``memory`` are read by the algorithm's views (``algo.epoch``,
    ``algo.memory``, ...) and by checkpoints; :meth:`restore` is how a checkpoint puts them
    back.
    """

    def __init__(self, algo):
        self.algo = algo
        self.state = TrainingState()
        self.memory = None
        # n_skipped_nonfinite when the epoch began: the first three skips of an epoch are logged
        self._skipped_before_epoch = 0

    # -- the run -----------------------------------------------------------------------------

    def train(self, epoch_callback=None):
        """Run epochs ``state.epoch`` .. ``n_epochs - 1`` (``DDPG.train`` says more)."""
        algo, state = self.algo, self.state
        if self.memory is None:
            self.memory = ReplayMem(obs_dim=algo.env.observation_space.flat_dim,
                                    act_dim=algo.env.action_space.flat_dim,
                                    memory_size=algo.memory_size)
        try:
            if state.obs is None:
                state.obs = self._reset_env()
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

    def run_epoch(self, epoch):
        """``epoch_length`` environment steps with the updates due, then the epoch's row."""
        algo, state, logger = self.algo, self.state, self.algo.logger
        action_shape = tuple(algo.env.action_space.shape)
        act_dim = algo.env.action_space.flat_dim  # a product over the shape: once an epoch
        epoch_start = time.time()
        self._skipped_before_epoch = state.n_skipped_nonfinite
        # values "as they happen" (episode returns, update losses) for TensorBoard
        log_scalars = logger.has_scalar_outputs()
        logger.log("Training started")
        steps = range(algo.epoch_length)
        if algo.progress_bar:
            # an explicit stream: pyprind otherwise prints nothing but a warning when
            # stdout is not a terminal
            steps = pyprind.prog_bar(steps, stream=sys.stderr)
        for _ in steps:
            self.explore_step(action_shape, act_dim, log_scalars)
            if (self.memory.size >= algo.memory_start_size
                    and state.total_env_steps % algo._train_freq == 0):
                self.run_updates(log_scalars)
        logger.log("Training finished")
        faults.check_divergence(epoch, algo.update_stats.averages(),
                                checkpoint.all_network_params(algo))
        algo.evaluate(epoch, self.memory)
        state.strategy_path_returns = []  # the row has recorded them
        state.train_time += time.time() - epoch_start
        logger.record_tabular("TotalEnvSteps", state.total_env_steps)
        logger.record_tabular("NumUpdates", state.itr)
        logger.record_tabular("Time", state.train_time)
        if algo.skip_nonfinite:
            logger.record_tabular("SkippedNonFinite",
                                  state.n_skipped_nonfinite - self._skipped_before_epoch)
        logger.dump_tabular(with_prefix=False)

    def run_updates(self, log_scalars):
        """``gradient_steps`` updates (``algo.do_update``) on batches from the memory; with
        ``log_scalars`` the losses of every ``loss_log_interval``-th one go to TensorBoard."""
        algo, state = self.algo, self.state
        for _ in range(algo._gradient_steps):
            batch = self.memory.get_batch(algo.batch_size)
            algo.do_update(state.itr, batch)
            state.itr += 1
            if log_scalars and state.itr % algo.loss_log_interval == 0:
                for name, value in algo.update_stats.latest().items():
                    algo.logger.record_scalar("train/" + name, value, state.total_env_steps)

    # -- one exploration step ----------------------------------------------------------------

    def explore_step(self, action_shape, act_dim, log_scalars):
        """One environment step of the training episode, its transition stored.

        A new episode when the last one ended; an action (uniform during ``start_steps``,
        else the strategy's around the policy's); the step, with its checks for non-finite
        values; the transition stored; the episode's bookkeeping. ``action_shape`` is the
        shape the environment takes actions in, ``act_dim`` their flat size. With
        ``log_scalars`` an ending episode's return and length are written as
        ``train/EpisodeReturn`` and ``train/EpisodeLength``.
        """
        algo, state = self.algo, self.state
        if state.end:
            self._start_episode()
        obs = state.obs
        act = self._choose_action(obs, act_dim)
        nxt, rwd, end, info = faults.call_env(algo, "step", np.reshape(act, action_shape))
        finite = bool(np.isfinite(rwd) and np.isfinite(nxt).all())
        if not finite:
            end = self._nonfinite_step(nxt, rwd) or end
        state.path_length += 1
        state.total_env_steps += 1
        if finite:
            state.path_return += rwd
            self._store(obs, act, rwd * algo.scale_reward, end, info, nxt)
        if not end and state.path_length >= algo.max_path_length:
            end = True
        state.end = end
        state.obs = nxt
        if end and log_scalars:
            algo.logger.record_scalar("train/EpisodeReturn", state.path_return,
                                      state.total_env_steps)
            algo.logger.record_scalar("train/EpisodeLength", state.path_length,
                                      state.total_env_steps)

    def _reset_env(self):
        """Reset the training environment, checking the first observation."""
        obs = faults.call_env(self.algo, "reset")
        faults.check_reset_observation(obs, self.algo)
        return obs

    def _start_episode(self):
        """Record the ended episode's return, then reset the environment and the strategy."""
        state = self.state
        state.strategy_path_returns.append(state.path_return)
        state.path_length = 0
        state.path_return = 0
        state.episode += 1
        state.obs = self._reset_env()
        self.algo.strategy.reset()

    def _choose_action(self, obs, act_dim):
        """The exploration action for ``obs``: uniform over the action space for the run's
        first ``start_steps`` steps (covering it before the policy means anything), else the
        strategy's action around the policy's (not the target policy's)."""
        algo = self.algo
        if self.state.total_env_steps < algo.start_steps:
            return np.random.uniform(algo._action_low, algo._action_high)
        return faults.check_action(algo.strategy.get_action(obs, algo.policy), act_dim,
                                   algo.strategy, algo)

    def _nonfinite_step(self, nxt, rwd):
        """A NaN/inf observation or reward: raise, or (skip_nonfinite) count and skip it.

        Returns whether the episode must end: an observation that is not finite cannot be
        acted on; a bad reward alone does not stop the episode. The first three skips of an
        epoch are logged.
        """
        algo, state = self.algo, self.state
        parts = faults.nonfinite_parts(nxt, rwd)
        if not algo.skip_nonfinite:
            faults.raise_nonfinite_step(parts, nxt, rwd, algo)
        state.n_skipped_nonfinite += 1
        if state.n_skipped_nonfinite - self._skipped_before_epoch <= 3:
            algo.logger.log("Skipping a transition: " + faults.nonfinite_step_message(
                parts, nxt, rwd, algo))
        return "observation" in parts

    def _store(self, obs, act, rwd, end, info, nxt):
        """Add one transition to the memory, deciding whether its target may bootstrap.

        A time-limit cut (``max_path_length`` here, or the environment's own time limit) is
        not a terminal state. The original dropped the cut transition (or stored it as
        terminal with ``include_horizon_terminal``) and stored the environment's time-limit
        ends as terminal; with ``bootstrap_truncated`` they bootstrap from s' instead.
        ``state.path_length`` already counts this step.
        """
        algo, memory = self.algo, self.memory
        horizon_cut = not end and self.state.path_length >= algo.max_path_length
        env_truncated = bool(end and info and info.get("TimeLimit.truncated", False))
        if not (horizon_cut or env_truncated):
            memory.add_sample(obs, act, rwd, end, nxt)
        elif algo.include_horizon_terminal:
            memory.add_sample(obs, act, rwd, True, nxt)
        elif algo.bootstrap_truncated:
            memory.add_sample(obs, act, rwd, False, nxt)
        elif env_truncated:
            memory.add_sample(obs, act, rwd, True, nxt)
        # else: the original drops a transition cut at max_path_length

    # -- checkpoints -------------------------------------------------------------------------

    def restore(self, saved, memory):
        """Continue from a checkpoint: its replay memory, and its state's fields ``saved``
        (a dict of :class:`TrainingState` fields; a field it lacks, from an older checkpoint,
        keeps its current value)."""
        self.memory = memory
        self.state = dataclasses.replace(self.state, **saved)

    def abandon_episode(self):
        """Start a new episode where the environment's state could not be restored: the
        interrupted episode's partial return is not logged as an exploration return."""
        state = self.state
        state.obs = None
        state.end = False
        state.path_length = 0
        state.path_return = 0
        state.episode += 1
        self.algo.strategy.reset()


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
