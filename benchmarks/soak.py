#!/usr/bin/env python
"""Soak test: a long training run with a full replay memory, watching resident memory.

A leak that costs a few bytes per step (a list that is never cleared, an MXNet array created
per update and kept alive, statistics accumulated on the host) is invisible in short tests
and fatal after days. This runs ``--steps`` environment steps (default one million) with a
small network and a replay memory smaller than the run, so that it is full for most of it,
and reports the resident set size (RSS) at the start, the middle and the end. Once the memory
is full nothing should grow: the middle-to-end growth is the number to watch.

    python benchmarks/soak.py                          # 1,000,000 steps (tens of minutes)
    python benchmarks/soak.py --steps 20000 --memory-size 5000 --epoch-length 2000

``--snapshot-dir`` also writes a checkpoint (snapshot mode 'last') after every epoch, to soak
the checkpoint path as well. RSS comes from psutil when it is installed, else from
``/proc/self/status`` (Linux).
"""
import argparse
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir))

import numpy as np  # noqa: E402

import ddpg  # noqa: E402,F401  (sets MXNet's environment before mxnet loads)
import mxnet as mx  # noqa: E402
from ddpg import DDPG, logger  # noqa: E402
from ddpg.envs import CartpoleEnv, GymEnv, normalize  # noqa: E402
from ddpg.policies import DeterministicMLPPolicy  # noqa: E402
from ddpg.qfuncs import ContinuousMLPQ  # noqa: E402
from ddpg.strategies import OUStrategy  # noqa: E402

MIB = 1024.0 * 1024.0


def rss_mib():
    """This process's resident set size in MiB (psutil, else /proc/self/status)."""
    try:
        import psutil
    except ImportError:
        psutil = None
    if psutil is not None:
        return psutil.Process().memory_info().rss / MIB
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024.0  # the line is in kB
    except OSError:
        pass
    raise RuntimeError("cannot measure resident memory here: install psutil")


class SoakDDPG(DDPG):
    """DDPG that records (environment steps, RSS) after every epoch."""

    def train_epoch(self, epoch):
        super(SoakDDPG, self).train_epoch(epoch)
        self.rss_samples.append((self.total_env_steps, rss_mib(), time.time()))


def build(args):
    if args.env == "cartpole":
        env, max_path_length = normalize(CartpoleEnv()), 100
    else:
        inner = GymEnv(args.env)
        env, max_path_length = normalize(inner), inner.horizon or 1000
    hidden = args.hidden
    return SoakDDPG(
        env=env, policy=DeterministicMLPPolicy(env.spec, hidden_sizes=(hidden, hidden)),
        qfunc=ContinuousMLPQ(env.spec, hidden_sizes=(hidden, hidden, hidden)),
        strategy=OUStrategy(env.spec), ctx=args.ctx, batch_size=args.batch_size,
        n_epochs=args.steps // args.epoch_length, epoch_length=args.epoch_length,
        memory_size=args.memory_size, memory_start_size=args.memory_start_size,
        max_path_length=max_path_length, eval_samples=args.eval_samples,
        eval_interval=None, seed=args.seed, progress_bar=False)


def sample_at(samples, steps):
    """The first sample taken at or after ``steps`` environment steps."""
    for sample in samples:
        if sample[0] >= steps:
            return sample
    return samples[-1]


def main(argv=None):
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    parser.add_argument("--steps", type=int, default=1000000)
    parser.add_argument("--memory-size", type=int, default=100000,
                        help="replay memory size; smaller than --steps so that it fills")
    parser.add_argument("--memory-start-size", type=int, default=1000)
    parser.add_argument("--epoch-length", type=int, default=10000)
    parser.add_argument("--eval-samples", type=int, default=100,
                        help="evaluation steps, at the last epoch only")
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--hidden", type=int, default=16, help="units per hidden layer")
    parser.add_argument("--env", default="cartpole", help="'cartpole' or a gymnasium id")
    parser.add_argument("--ctx", default="cpu")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--snapshot-dir", default=None,
                        help="also save a checkpoint there after every epoch")
    args = parser.parse_args(argv)
    if args.steps < args.epoch_length or args.memory_size >= args.steps:
        parser.error("need --steps >= --epoch-length and --memory-size < --steps")

    logger.set_log_tabular_only(True)
    sys.stdout.flush()
    algo = build(args)
    if args.snapshot_dir:
        logger.set_snapshot_dir(args.snapshot_dir)
        logger.set_snapshot_mode("last")
    algo.rss_samples = [(0, rss_mib(), time.time())]
    quiet = open(os.devnull, "w")
    saved_stdout, sys.stdout = sys.stdout, quiet  # the per-epoch tables
    try:
        algo.train()
    finally:
        sys.stdout = saved_stdout
        quiet.close()
    mx.nd.waitall()

    samples = algo.rss_samples
    total = samples[-1][0]
    start, end = samples[0], samples[-1]
    first_full = sample_at(samples[1:], args.memory_size)
    middle = sample_at(samples[1:], total // 2)
    print("soak: %d environment steps, %d updates, replay memory %d (full from step %d), "
          "%s, %d-unit layers, %.0f steps/s"
          % (total, algo.itr, args.memory_size, args.memory_size, args.env, args.hidden,
             total / (end[2] - start[2])))
    print("%-28s %12s %10s" % ("point", "env steps", "RSS MiB"))
    for name, sample in (("start (built)", start), ("memory first full", first_full),
                         ("middle", middle), ("end", end)):
        print("%-28s %12d %10.1f" % (name, sample[0], sample[1]))
    growth = end[1] - middle[1]
    print("growth middle -> end: %+.1f MiB (%+.2f%%), %.1f bytes per step"
          % (growth, 100.0 * growth / middle[1],
             growth * MIB / max(1, end[0] - middle[0])))
    print("largest RSS seen: %.1f MiB" % max(sample[1] for sample in samples))
    return {"samples": samples, "growth_mib": growth}


if __name__ == "__main__":
    np.seterr(all="ignore")
    main()
