#!/usr/bin/env python
"""Train DDPG from the command line: the ``ddpg-train`` command, from a checkout without
installing (same flags; :mod:`ddpg.experiment.train` is the command).

With no arguments this is the MXNet example's ``run.py``: ``normalize(CartpoleEnv())``, the
original 32-unit networks, ``max_path_length=100``, ``epoch_length=1000``,
``memory_start_size=10000``, 1000 epochs, ``qfunc_lr=1e-3``, ``policy_lr=1e-4``, seed 12345.
Every hyperparameter can be overridden; ``--env`` takes ``cartpole`` or any gymnasium id.

    python examples/run_ddpg.py --n-epochs 20 --log-dir runs/cartpole
    python examples/run_ddpg.py --env Pendulum-v1 --n-epochs 20 --memory-start-size 1000

With ``--log-dir`` a checkpoint is saved there after every epoch (``--snapshot-mode``); a run
is continued with ``--resume`` (its settings come from the checkpoint); ``--tensorboard`` also
writes TensorBoard event files there (docs/tensorboard-and-export.md):

    python examples/run_ddpg.py --resume runs/cartpole/params --n-epochs 40

Checkpoints hold no pickle and resuming reads data only; a checkpoint of the older, pickled
format opens only with ``--trust-pickle`` (see docs/checkpoints.md).
"""
import os
import sys

# Run from a checkout without installing: make the repository's ddpg importable.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir))

from ddpg.experiment.script import run_script  # noqa: E402
from ddpg.experiment.train import main  # noqa: E402
# The parser and the builders live in the library, where Ray Tune sweeps (ddpg.experiment.tune) use them
# too; the names stay importable from here (tests and examples/evaluate.py use them).
from ddpg.experiment import (  # noqa: E402,F401
    CARTPOLE_MAX_PATH_LENGTH, FALLBACK_MAX_PATH_LENGTH, RESUME_FLAGS, build_parser,
    close_logging, continue_progress, explicit_flags, make_algorithm, make_env, make_strategy,
    prepare_run, resumed_args, setup_logging, setup_tensorboard, updates_per_sample)

__all__ = ["CARTPOLE_MAX_PATH_LENGTH", "FALLBACK_MAX_PATH_LENGTH", "RESUME_FLAGS",
           "build_parser", "explicit_flags", "make_env", "make_strategy", "resumed_args",
           "setup_logging", "updates_per_sample", "main"]


if __name__ == "__main__":
    run_script(main)
