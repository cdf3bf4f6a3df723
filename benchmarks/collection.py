#!/usr/bin/env python
"""Collection rate of several environments, and training speed with them.

Two measurements, one after the other in one invocation (compare figures as ratios within
one run: a machine's speed drifts):

1. **Collection without updates**: transitions per second of the training loop (policy
   forward pass, OU noise, environment steps, replay storage) with ``n_envs`` = 1, 2, 4, 8
   environments stepped in this process (``sync``) or in worker processes (``async``), with
   the presets' network size (256-256, the action joined at the Q network's input), on each
   ``--envs`` task. No update runs (``memory_start_size`` above the steps timed).
2. **Ray actors** (:mod:`ddpg.distributed`): the same collection by K = 1, 2 actor processes
   with one environment each (``--ray-chunk``-sized chunks, asynchronous mode), the learner
   only storing what arrives.
3. **Training**: environment steps per second with one update of batch 256 per transition
   (the same update-to-data ratio in every arrangement) after a warm-up, for 1 environment,
   4 environments sync and 4 async, and 2 Ray actors (deterministic and asynchronous).

    python benchmarks/collection.py                          # Pendulum-v1 and HalfCheetah-v4
    python benchmarks/collection.py --envs Pendulum-v1 --steps 2000 --json out.json

Prints a table per measurement and the hardware (CPU model, cores); ``--json`` also writes
the figures to a file.
"""
import argparse
import json
import os
import platform
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir))

import ddpg  # noqa: E402,F401  (sets MXNet's environment before mxnet loads)
from ddpg import DDPG, logger  # noqa: E402
from ddpg.envs import GymEnv, normalize  # noqa: E402
from ddpg.policies import DeterministicMLPPolicy  # noqa: E402
from ddpg.qfuncs import ContinuousMLPQ  # noqa: E402
from ddpg.strategies import OUStrategy  # noqa: E402

HIDDEN = (256, 256)


def build(env_id, n_envs, vec_env, memory_start_size, epoch_length, seed=0):
    env = normalize(GymEnv(env_id))
    policy = DeterministicMLPPolicy(env.spec, hidden_sizes=HIDDEN, output_init="fanin")
    qfunc = ContinuousMLPQ(env.spec, hidden_sizes=HIDDEN, action_merge_layer=0,
                           output_init="fanin")
    return DDPG(env, policy, qfunc, OUStrategy(env.spec), batch_size=256, n_epochs=1,
                epoch_length=epoch_length, memory_start_size=memory_start_size,
                memory_size=max(memory_start_size, epoch_length) + 256, eval_samples=0,
                eval_interval=None, progress_bar=False, seed=seed, n_envs=n_envs,
                vec_env=vec_env, qfunc_lr=3e-4, policy_lr=3e-4)


def timed_steps(algo, steps):
    """Seconds for ``steps`` transitions of the training loop (episodes, acting, storing,
    the updates due), measured over whole steps of every environment."""
    loop = algo.loop
    loop.start()
    start = time.perf_counter()
    for _ in range(steps // algo.n_envs):
        loop.collect_turn(False)
    if loop.memory.size >= algo.memory_start_size:
        algo.update_stats.averages()  # wait for the device
    return time.perf_counter() - start


def with_actors(algo, n_actors, mode, chunk):
    """``algo`` collecting through ``n_actors`` Ray actors, ``chunk`` transitions a request."""
    from ddpg.distributed import RayActors
    algo.epoch_length = n_actors * chunk * 10 ** 6  # the timed steps are within one epoch
    return RayActors(algo, n_actors, mode=mode, chunk=chunk).attach()


def timed_chunks(algo, steps):
    """Seconds for ``steps`` transitions received from the actors, stored, with the updates
    due."""
    loop, collector = algo.loop, algo.loop.collector
    loop.start()
    start = time.perf_counter()
    for _ in range(steps // collector.chunk):
        loop.collect_turn(False)
    if loop.memory.size >= algo.memory_start_size:
        algo.update_stats.averages()  # wait for the device
    return time.perf_counter() - start


def actor_collection_rate(env_id, n_actors, steps, chunk):
    algo = build(env_id, 1, "sync", memory_start_size=10 ** 7, epoch_length=1)
    with_actors(algo, n_actors, "async", chunk)
    try:
        timed_chunks(algo, 4 * n_actors * chunk)  # the actors' processes start
        return steps / timed_chunks(algo, steps)
    finally:
        algo.close()


def actor_training_rate(env_id, n_actors, mode, steps, warmup, chunk):
    algo = build(env_id, 1, "sync", memory_start_size=warmup, epoch_length=1)
    with_actors(algo, n_actors, mode, chunk)
    try:
        timed_chunks(algo, warmup + 2 * n_actors * chunk)
        return steps / timed_chunks(algo, steps)
    finally:
        algo.close()


def collection_rate(env_id, n_envs, vec_env, steps):
    algo = build(env_id, n_envs, vec_env, memory_start_size=10 ** 7, epoch_length=n_envs)
    try:
        timed_steps(algo, 8 * n_envs)  # first binds and episodes
        return steps / timed_steps(algo, steps)
    finally:
        algo.close()


def training_rate(env_id, n_envs, vec_env, steps, warmup):
    algo = build(env_id, n_envs, vec_env, memory_start_size=warmup, epoch_length=n_envs)
    try:
        timed_steps(algo, warmup + 256)
        return steps / timed_steps(algo, steps)
    finally:
        algo.close()


def cpu_model():
    try:
        with open("/proc/cpuinfo") as handle:
            for line in handle:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--envs", nargs="+", default=["Pendulum-v1", "HalfCheetah-v4"])
    parser.add_argument("--n-envs", type=int, nargs="+", default=[1, 2, 4, 8])
    parser.add_argument("--steps", type=int, default=4000,
                        help="transitions timed per collection figure")
    parser.add_argument("--train-steps", type=int, default=1000,
                        help="transitions timed per training figure (one update each)")
    parser.add_argument("--actors", type=int, nargs="+", default=[1, 2],
                        help="Ray actor counts of the collection figures")
    parser.add_argument("--ray-chunk", type=int, default=100,
                        help="transitions an actor collects per request")
    parser.add_argument("--skip-ray", action="store_true", help="no Ray actor figures")
    parser.add_argument("--skip-training", action="store_true")
    parser.add_argument("--json", default=None, help="also write the figures here")
    args = parser.parse_args(argv)
    logger.set_log_tabular_only(True)
    hardware = "%s, %d cores" % (cpu_model(), os.cpu_count())
    print("hardware: %s; networks %s, batch 256" % (hardware, "-".join(map(str, HIDDEN))))
    results = {"hardware": hardware, "collection": {}, "training": {}}
    if not args.skip_ray:
        import ray
        # one local cluster for every figure (a CPU per actor, as RayActors asks)
        ray.init(num_cpus=max(os.cpu_count(), max(args.actors + [2])),
                 include_dashboard=False, logging_level="WARNING")
    for env_id in args.envs:
        print("\ncollection without updates, %s (transitions/s)" % env_id)
        print("%8s %10s %10s" % ("n_envs", "sync", "async"))
        for n_envs in args.n_envs:
            row = {mode: collection_rate(env_id, n_envs, mode, args.steps)
                   for mode in ("sync", "async")}
            results["collection"]["%s/%d" % (env_id, n_envs)] = row
            print("%8d %10.0f %10.0f" % (n_envs, row["sync"], row["async"]), flush=True)
        if not args.skip_ray:
            print("\ncollection without updates by Ray actors (one environment each, "
                  "chunks of %d), %s (transitions/s)" % (args.ray_chunk, env_id))
            for n_actors in args.actors:
                rate = actor_collection_rate(env_id, n_actors, args.steps, args.ray_chunk)
                results["collection"]["%s/ray%d" % (env_id, n_actors)] = rate
                print("%8s %10.0f" % ("K=%d" % n_actors, rate), flush=True)
        if args.skip_training:
            continue
        print("\ntraining, one update of batch 256 per transition, %s (steps/s)" % env_id)
        for label, n_envs, mode in (("1 environment", 1, "sync"),
                                    ("4 environments, sync", 4, "sync"),
                                    ("4 environments, async", 4, "async")):
            rate = training_rate(env_id, n_envs, mode, args.train_steps, warmup=1000)
            results["training"]["%s/%s" % (env_id, label)] = rate
            print("%-28s %8.0f" % (label, rate), flush=True)
        for mode in ([] if args.skip_ray else ["deterministic", "async"]):
            label = "2 Ray actors, %s" % mode
            rate = actor_training_rate(env_id, 2, mode, args.train_steps, 1000,
                                       args.ray_chunk)
            results["training"]["%s/%s" % (env_id, label)] = rate
            print("%-28s %8.0f" % (label, rate), flush=True)
    if args.json:
        with open(args.json, "w") as handle:
            json.dump(results, handle, indent=2, sort_keys=True)
    return results


if __name__ == "__main__":
    main()
