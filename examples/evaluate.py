#!/usr/bin/env python
"""``ddpg-evaluate`` from a checkout, without installing: a saved policy's returns.

    python examples/evaluate.py runs/pendulum/params --episodes 10

The command is :mod:`ddpg.experiment.evaluate` (its docstring and ``--help`` describe it);
this script runs it with the same flags.
"""
import os
import sys

# Run from a checkout without installing: make the repository's ddpg importable.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir))

from ddpg.experiment.script import run_script  # noqa: E402
# the names the tests and benchmarks use from this script
from ddpg.experiment.evaluate import (  # noqa: E402,F401
    OnnxPolicy, RenderError, build_parser, load_policy, main, run_episode, run_episodes,
    write_gif)

if __name__ == "__main__":
    run_script(main)
