#!/usr/bin/env python
"""Train DDPG from the command line.

With no arguments this is the MXNet example's ``run.py``: ``normalize(CartpoleEnv())``, the
original 32-unit networks, ``max_path_length=100``, ``epoch_length=1000``,
``memory_start_size=10000``, 1000 epochs, ``qfunc_lr=1e-3``, ``policy_lr=1e-4``, seed 12345.
Every hyperparameter can be overridden; ``--env`` takes ``cartpole`` or any gymnasium id.

    python examples/run_ddpg.py --n-epochs 20 --log-dir runs/cartpole
    python examples/run_ddpg.py --env Pendulum-v1 --n-epochs 20 --memory-start-size 1000

With ``--log-dir`` a checkpoint is saved there after every epoch (``--snapshot-mode``); a run
is continued with ``--resume`` (its settings come from the checkpoint):

    python examples/run_ddpg.py --resume runs/cartpole/params --n-epochs 40

Checkpoints hold no pickle and resuming reads data only; a checkpoint of the older, pickled
format opens only with ``--trust-pickle`` (see docs/checkpoints.md).
"""
import os
import sys

# Run from a checkout without installing: make the repository's ddpg importable.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir))

from ddpg import logger  # noqa: E402
# The parser and the builders live in the library, where Ray Tune sweeps (ddpg.tune) use them
# too; the names stay importable from here (tests and examples/evaluate.py use them).
from ddpg.experiment import (  # noqa: E402,F401
    CARTPOLE_MAX_PATH_LENGTH, FALLBACK_MAX_PATH_LENGTH, RESUME_FLAGS, build_parser,
    close_logging, continue_progress, explicit_flags, make_algorithm, make_env, make_strategy,
    resumed_args,
    setup_logging, updates_per_sample)
from ddpg.errors import CheckpointError  # noqa: E402
from ddpg.presets import parse_args_with_preset  # noqa: E402

__all__ = ["CARTPOLE_MAX_PATH_LENGTH", "FALLBACK_MAX_PATH_LENGTH", "RESUME_FLAGS",
           "build_parser", "explicit_flags", "make_env", "make_strategy", "resumed_args",
           "setup_logging", "updates_per_sample", "main"]


def main(argv=None):
    # --preset supplies the defaults; flags given explicitly override it
    args = parse_args_with_preset(build_parser(), argv)
    if args.resume:
        args = resumed_args(args, argv)
    env, max_path_length = make_env(args)
    setup_logging(args.log_dir, args)
    algo = make_algorithm(args, env, max_path_length)
    if args.resume:
        algo.restore(args.resume, trust_pickle=args.trust_pickle)
        # rows written after the checkpoint (a run killed before its next save) go, once the
        # restore has succeeded; the CSV output is reopened on the trimmed file
        if continue_progress(args.log_dir, algo.epoch):
            progress = os.path.join(args.log_dir, "progress.csv")
            logger.remove_tabular_output(progress)
            logger.add_tabular_output(progress)
        logger.log("Resumed from %s at epoch %d; training to epoch %d"
                   % (args.resume, algo.epoch, algo.n_epochs))
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


if __name__ == "__main__":
    try:
        main()
    except CheckpointError as error:  # a message naming the fix, not a traceback
        sys.exit("error: %s" % error)
