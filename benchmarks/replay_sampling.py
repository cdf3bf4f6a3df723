"""Time drawing a batch from a full replay memory: prioritised (sum tree) against uniform.

    python benchmarks/replay_sampling.py                      # 1M transitions, batch 256
    python benchmarks/replay_sampling.py --memory-size 100000 --batch-size 64 --repeats 2000

Fills one memory of each kind with ``--memory-size`` transitions of HalfCheetah's sizes (17
observation and 6 action values), gives the prioritised one distinct random priorities, then
times, interleaved in one process, ``get_batch`` (the training loop's draw) and, for the
prioritised memory, the priority update that follows each update
(``update_priorities`` of the batch's slots). Prints microseconds per call (the median of
``--rounds`` rounds of ``--repeats`` calls each) and the ratios.
"""
import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from ddpg.replay import PrioritizedReplayMem  # noqa: E402
from ddpg.replay_mem import ReplayMem  # noqa: E402


def fill(memory, size, obs_dim, act_dim, rng):
    """``size`` random transitions, written in blocks straight into the arrays (adding a
    million one by one would time the filling, not the sampling)."""
    memory.obss[:size] = rng.normal(size=(size, obs_dim))
    memory.acts[:size] = rng.uniform(-1, 1, size=(size, act_dim))
    memory.rwds[:size] = rng.normal(size=size)
    memory.nxts[:size] = rng.normal(size=(size, obs_dim))
    memory.size, memory.top = size, 0 if size == memory.memory_size else size


def per_call_us(function, repeats):
    began = time.perf_counter()
    for _ in range(repeats):
        function()
    return (time.perf_counter() - began) / repeats * 1e6


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--memory-size", type=int, default=1000000)
    parser.add_argument("--batch-size", type=int, default=256)
    parser.add_argument("--repeats", type=int, default=500, help="calls per round")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    if args.memory_size < args.batch_size or min(args.batch_size, args.repeats,
                                                 args.rounds) < 1:
        parser.error("--memory-size must be at least --batch-size, and --batch-size, "
                     "--repeats and --rounds positive")
    rng = np.random.RandomState(args.seed)
    obs_dim, act_dim = 17, 6
    uniform = ReplayMem(obs_dim, act_dim, args.memory_size)
    prioritized = PrioritizedReplayMem(obs_dim, act_dim, args.memory_size)
    for memory in (uniform, prioritized):
        fill(memory, args.memory_size, obs_dim, act_dim, rng)
    prioritized.update_priorities(np.arange(args.memory_size),
                                  rng.exponential(size=args.memory_size))
    prioritized.beta = 0.4
    np.random.seed(args.seed)
    td_errors = rng.normal(size=args.batch_size)

    def prioritized_update():
        batch = prioritized.get_batch(args.batch_size)
        prioritized.update_priorities(batch.indices, td_errors)

    timings = {"uniform get_batch": [], "prioritized get_batch": [],
               "prioritized get_batch + update_priorities": []}
    calls = {"uniform get_batch": lambda: uniform.get_batch(args.batch_size),
             "prioritized get_batch": lambda: prioritized.get_batch(args.batch_size),
             "prioritized get_batch + update_priorities": prioritized_update}
    for _ in range(args.rounds):
        for name, call in calls.items():
            timings[name].append(per_call_us(call, args.repeats))
    medians = {name: float(np.median(values)) for name, values in timings.items()}
    print("memory of %d transitions (17 + 6 values), batch %d, median of %d rounds of %d "
          "calls" % (args.memory_size, args.batch_size, args.rounds, args.repeats))
    base = medians["uniform get_batch"]
    for name, value in medians.items():
        print("%-44s %9.1f us  %5.2fx uniform" % (name, value, value / base))
    return medians


if __name__ == "__main__":
    main()
