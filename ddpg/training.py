"""DDPG's training loop: epochs of exploration steps and updates, a checkpoint after each.

The loop's state (replay memory, counters, the current episode) lives on the algorithm
object, not in local variables, so that a checkpoint saves it (:mod:`ddpg.checkpoint`) and a
restored algorithm continues where it stopped; :func:`init_state` sets it for a new run.
Each step of an epoch is :func:`ddpg.exploration.step`, followed by the updates due
(``DDPG.do_update``); each epoch ends with ``DDPG.evaluate`` and the row of statistics.
"""
import sys
import time

import pyprind

from ddpg import checkpoint, exploration, faults, logger
from ddpg.backend import seeding
from ddpg.replay_mem import ReplayMem


def init_state(algo):
    """The training state of a run that has not started."""
    algo.memory = None
    algo.epoch = 0  # the next epoch to run
    algo.itr = 0  # updates done
    algo.total_env_steps = 0
    algo.train_time = 0.0  # seconds spent in train_epoch, evaluation included
    algo.obs = None  # the current observation of the training episode
    algo.end = False  # whether that episode has ended (reset before the next step)
    algo.path_length = 0
    algo.path_return = 0
    algo.episode = 0  # index of the current training episode
    algo.n_skipped_nonfinite = 0  # transitions skipped by skip_nonfinite
    # JSON-able information saved in checkpoints' manifests (run_ddpg.py: its arguments)
    algo.checkpoint_metadata = {}
    # logging (update statistics are summed on the device: algo.update_stats)
    algo.strategy_path_returns = []


def train(algo, epoch_callback=None):
    """Run epochs ``algo.epoch`` .. ``n_epochs - 1`` (``DDPG.train``, which says more)."""
    if algo.memory is None:
        algo.memory = ReplayMem(obs_dim=algo.env.observation_space.flat_dim,
                                act_dim=algo.env.action_space.flat_dim,
                                memory_size=algo.memory_size)
    try:
        if algo.obs is None:
            algo.obs = exploration.reset_env(algo)
        while algo.epoch < algo.n_epochs:
            # MXNet's generator state cannot be saved: reseeding it per epoch makes a run
            # resumed at an epoch boundary draw what the uninterrupted run draws
            seeding.seed_epoch(algo.seed, algo.epoch)
            with logger.prefix("epoch #%d | " % algo.epoch):
                algo.train_epoch(algo.epoch)
            algo.epoch += 1
            logger.save_itr_params(algo.epoch - 1, algo.save)
            if epoch_callback is not None:
                epoch_callback(algo, algo.epoch - 1)
    except KeyboardInterrupt:
        if algo.progress_bar:
            sys.stderr.write("\n")  # end the progress bar's line before the messages
        checkpoint.save_interrupted(algo)
        raise


def run_epoch(algo, epoch):
    """``epoch_length`` environment steps with the updates due, then the epoch's statistics."""
    memory = algo.memory
    action_shape = tuple(algo.env.action_space.shape)
    act_dim = algo.env.action_space.flat_dim
    epoch_start = time.time()
    algo._skipped_before_epoch = algo.n_skipped_nonfinite
    # values "as they happen" (episode returns, update losses) for TensorBoard
    log_scalars = logger.has_scalar_outputs()
    logger.log("Training started")
    steps = range(algo.epoch_length)
    if algo.progress_bar:
        # an explicit stream: pyprind otherwise prints nothing but a warning when
        # stdout is not a terminal
        steps = pyprind.prog_bar(steps, stream=sys.stderr)
    for _ in steps:
        exploration.step(algo, memory, action_shape, act_dim, log_scalars)
        if (memory.size >= algo.memory_start_size
                and algo.total_env_steps % algo._train_freq == 0):
            run_updates(algo, memory, log_scalars)
    logger.log("Training finished")
    faults.check_divergence(epoch, algo.update_stats.averages(),
                            checkpoint.all_network_params(algo))
    algo.evaluate(epoch, memory)
    algo.train_time += time.time() - epoch_start
    logger.record_tabular("TotalEnvSteps", algo.total_env_steps)
    logger.record_tabular("NumUpdates", algo.itr)
    logger.record_tabular("Time", algo.train_time)
    if algo.skip_nonfinite:
        logger.record_tabular("SkippedNonFinite",
                              algo.n_skipped_nonfinite - algo._skipped_before_epoch)
    logger.dump_tabular(with_prefix=False)


def run_updates(algo, memory, log_scalars):
    """``gradient_steps`` updates (``algo.do_update``) on batches from ``memory``; with
    ``log_scalars`` the losses of every ``loss_log_interval``-th one go to TensorBoard."""
    for _ in range(algo._gradient_steps):
        batch = memory.get_batch(algo.batch_size)
        algo.do_update(algo.itr, batch)
        algo.itr += 1
        if log_scalars and algo.itr % algo.loss_log_interval == 0:
            for name, value in algo.update_stats.latest().items():
                logger.record_scalar("train/" + name, value, algo.total_env_steps)
