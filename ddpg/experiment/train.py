"""``ddpg-train`` (``examples/run_ddpg.py``): train DDPG or TD3 from the command line.

With no arguments this is the MXNet example's ``run.py``: ``normalize(CartpoleEnv())``, the
original 32-unit networks, ``max_path_length=100``, ``epoch_length=1000``,
``memory_start_size=10000``, 1000 epochs, ``qfunc_lr=1e-3``, ``policy_lr=1e-4``, seed 12345.
Every hyperparameter can be overridden; ``--env`` takes ``cartpole`` or any gymnasium id.

    ddpg-train --n-epochs 20 --log-dir runs/cartpole
    ddpg-train --env Pendulum-v1 --n-epochs 20 --memory-start-size 1000

A checkpoint is saved in the run folder (``--log-dir``) after every epoch
(``--snapshot-mode``); a run is continued with ``--resume`` (its settings come from the
checkpoint); ``--tensorboard`` also writes TensorBoard event files there
(docs/tensorboard-and-export.md):

    ddpg-train --resume runs/cartpole/params --n-epochs 40

Checkpoints hold no pickle and resuming reads data only; a checkpoint of the older, pickled
format opens only with ``--trust-pickle`` (see docs/checkpoints.md).
"""
import os

from ddpg import logger
from ddpg.experiment.build import prepare_run
from ddpg.experiment.resume import continue_progress
from ddpg.experiment.run_logs import close_logging, setup_logging, setup_tensorboard
from ddpg.experiment.script import run_script

__all__ = ["main", "entry"]


def main(argv=None):
    """Train the run that the command line ``argv`` describes; return the algorithm."""
    # everything is parsed, built and checked (and a --resume checkpoint restored) before
    # the log folder is created: a run that fails before training leaves nothing behind
    args, env, max_path_length, algo = prepare_run(argv)
    if args.resume:
        # rows written after the checkpoint (a run killed before its next save) go, now that
        # the restore has succeeded
        continue_progress(args.log_dir, algo.epoch)
    setup_logging(args.log_dir, args)
    if args.log_dir:
        logger.log("Run folder: %s" % os.path.abspath(args.log_dir))
    if args.resume:
        logger.log("Resumed from %s at epoch %d; training to epoch %d"
                   % (args.resume, algo.epoch, algo.n_epochs))
    setup_tensorboard(args, algo)
    logger.log("Training DDPG on %s (ctx %s, max_path_length %d)"
               % (args.env, algo.ctx, max_path_length))
    if args.log_dir:
        logger.set_snapshot_dir(args.log_dir)
        logger.set_snapshot_mode(args.snapshot_mode)
        logger.set_snapshot_gap(args.snapshot_gap)
    try:
        algo.train()
    finally:
        close_logging(args.log_dir)
    return algo


def entry():
    """The ``ddpg-train`` console script."""
    run_script(main, prog="ddpg-train")
