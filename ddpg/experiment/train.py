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

``--video-every N`` records one deterministic episode after every N-th epoch into
``videos/epoch_N.mp4`` (:mod:`ddpg.experiment.epoch_videos`).

Checkpoints hold no pickle and resuming reads data only; a checkpoint of the older, pickled
format opens only with ``--trust-pickle`` (see docs/checkpoints.md).
"""
import os

from ddpg import logger
from ddpg.experiment.build import prepare_run
from ddpg.experiment.epoch_videos import chain_callbacks, epoch_videos
from ddpg.experiment.resume import continue_progress
from ddpg.experiment.run_folder import (INTERRUPTED, checkpoint_epoch, claim_run_folder,
                                        newest_checkpoint)
from ddpg.experiment.run_logs import close_logging, setup_logging, setup_tensorboard
from ddpg.experiment.script import RunInterrupted, RunWriteError, run_script

__all__ = ["main", "entry"]


def main(argv=None):
    """Train the run that the command line ``argv`` describes; return the algorithm.

    Ctrl-C saves ``interrupted/`` in the run folder and raises :class:`RunInterrupted`
    (which :func:`ddpg.experiment.script.run_script` turns into the line naming the
    checkpoint to resume); a file of the run that cannot be written (a full disk) raises
    :class:`RunWriteError`, naming the last complete checkpoint.
    """
    # everything is parsed, built and checked (and a --resume checkpoint restored) before
    # the run folder is touched: a run that fails before training leaves nothing behind
    args, env, max_path_length, algo = prepare_run(argv)
    videos = epoch_videos(args, seed=int(args.seed) + algo.n_envs)
    if not args.log_dir:
        logger.log("--no-log-dir: this run saves nothing (no progress.csv, no checkpoints)")
        return _train(args, algo, max_path_length, None, None)
    with claim_run_folder(args, resumed_from=args.resume) as folder:
        if args.resume:
            # rows written after the checkpoint (a run killed before its next save) go, now
            # that the restore has succeeded
            continue_progress(args.log_dir, algo.epoch)
        setup_logging(args.log_dir, args)
        logger.log("Run folder: %s" % os.path.abspath(args.log_dir))
        return _train(args, algo, max_path_length, folder, videos)


def _train(args, algo, max_path_length, folder, videos):
    if args.resume:
        logger.log("Resumed from %s at epoch %d; training to epoch %d"
                   % (args.resume, algo.epoch, algo.n_epochs))
    setup_tensorboard(args, algo)
    logger.log("Training %s on %s (ctx %s, max_path_length %d)"
               % (args.algo.upper(), args.env, algo.ctx, max_path_length))
    if folder is not None:
        logger.set_snapshot_dir(args.log_dir)
        logger.set_snapshot_mode(args.snapshot_mode)
        logger.set_snapshot_gap(args.snapshot_gap)
    try:
        algo.train(epoch_callback=chain_callbacks(folder and folder.after_epoch,
                                                  videos and videos.after_epoch))
    except KeyboardInterrupt:
        raise _interruption(args, algo) from None
    except OSError as error:
        if folder is None:
            raise
        raise RunWriteError(_write_error_message(args, error)) from error
    finally:
        algo.close()  # worker processes and actors
        close_logging(args.log_dir)
    return algo


def _interruption(args, algo):
    """What Ctrl-C left: the checkpoint to resume from, or why nothing was saved."""
    if not args.log_dir:
        return RunInterrupted(algo.epoch, None, "--no-log-dir")
    if args.snapshot_mode == "none":
        return RunInterrupted(algo.epoch, None, "--snapshot-mode none")
    return RunInterrupted(algo.epoch, os.path.join(args.log_dir, INTERRUPTED))


def _write_error_message(args, error):
    newest = newest_checkpoint(args.log_dir)
    if newest:
        kept = ("the last complete checkpoint, %s (%d epochs trained), is unchanged: resume "
                "from it once there is room" % (newest, checkpoint_epoch(newest)))
    else:
        kept = "no checkpoint of this run was completed"
    return "a file of the run in %s could not be written (%s); %s" % (args.log_dir, error,
                                                                       kept)


def entry():
    """The ``ddpg-train`` console script."""
    run_script(main, prog="ddpg-train")
