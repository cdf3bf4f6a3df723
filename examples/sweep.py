#!/usr/bin/env python
"""``ddpg-sweep`` from a checkout, without installing: sweeps of run_ddpg.py runs on Ray Tune.

    python examples/sweep.py --grid qfunc_lr=1e-3,3e-4 --seeds 1 2 3 --name lr \\
        -- --preset pendulum --n-epochs 10

The command is :mod:`ddpg.experiment.sweep` (its docstring and ``--help`` describe it, and
docs/sweeps.md); this script runs it with the same flags.
"""
import os
import sys

# Run from a checkout without installing: make the repository's ddpg importable.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir))

from ddpg.experiment.script import run_script  # noqa: E402
from ddpg.experiment.sweep import build_parser, main  # noqa: E402,F401

if __name__ == "__main__":
    sys.exit(run_script(main))
