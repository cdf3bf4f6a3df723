#!/usr/bin/env python
"""What an algorithm's update costs against DDPG's, measured alternately in one invocation.

For one configuration of ``benchmarks/throughput.py`` (by default 4: CleanRL's 256-256
networks, batch 256, on Pendulum-v1), each measurement is a fresh process that builds the
algorithm with those sizes and settings (``throughput.make_ours``; D4PG with its default 51
atoms), fills its replay memory with ``--warmup`` steps, then times

* ``--steps`` training steps (environment step, acting, storing, one update): steps/s;
* ``--updates`` calls of the update alone on batches drawn from the memory: ms per update.

An algorithm named with ``+ln`` (``d4pg+ln``) has a LayerNorm in every hidden layer of both
networks (``--layer-norm``), as Acme's D4PG networks.

The algorithms take turns: ``--rounds`` rounds of one measurement each, in the order given in
the first round and reversed in the next (ABBA), so that the machine's drift weighs on all
alike. Prints every measurement, the medians, and each algorithm's median ratio to the first
one's per round (update time and steps/s); ``--json`` writes them to a file.

    python benchmarks/algorithm_cost.py --algos ddpg d4pg --rounds 6
    python benchmarks/algorithm_cost.py --algos ddpg td3 d4pg --config 1 --rounds 2
    python benchmarks/algorithm_cost.py --algos d4pg d4pg+ln --rounds 4
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
LINE = re.compile(r"^(\S+): ([0-9.]+) steps/s, ([0-9.]+) ms per update$", re.M)
#: The suffix of an algorithm's name that adds LayerNorm to its networks.
LAYER_NORM = "+ln"


def worker(algorithm, config, warmup, steps, updates, threads):
    """Measure ``algorithm`` in this process; prints one LINE."""
    os.environ["OMP_NUM_THREADS"] = str(threads)
    sys.path.insert(0, HERE)
    import throughput  # imports ddpg first: MXNet under current numpy needs its stand-ins
    import mxnet as mx
    from ddpg import logger
    from ddpg.experiment.build import ALGORITHMS
    logger.set_log_tabular_only(True)
    name, layer_norm = (algorithm[:-len(LAYER_NORM)], True) if algorithm.endswith(LAYER_NORM) \
        else (algorithm, False)
    speed, algo = throughput.time_ours(config, warmup, steps, mx.cpu(),
                                       algorithm=ALGORITHMS[name], layer_norm=layer_norm)
    batches = [algo.memory.sample(algo.batch_size) for _ in range(updates)]
    mx.nd.waitall()
    start = time.perf_counter()
    for itr, batch in enumerate(batches):
        algo.do_update(algo.itr + itr, batch)
    mx.nd.waitall()
    per_update = (time.perf_counter() - start) / updates
    print("%s: %.1f steps/s, %.3f ms per update" % (algorithm, speed, 1e3 * per_update))


def measure(algorithm, args):
    command = [sys.executable, os.path.abspath(__file__), "--worker", algorithm,
               "--config", args.config, "--warmup", str(args.warmup), "--steps",
               str(args.steps), "--updates", str(args.updates), "--threads", str(args.threads)]
    finished = subprocess.run(command, capture_output=True, text=True)
    if finished.returncode != 0:
        raise SystemExit("the measurement of %s failed:\n%s" % (algorithm,
                                                                 finished.stderr[-3000:]))
    output = finished.stdout
    match = LINE.search(output)
    if match is None or match.group(1) != algorithm:
        raise SystemExit("no measurement of %s in its output:\n%s" % (algorithm, output))
    return float(match.group(2)), float(match.group(3))


def rounds(args):
    """``{algorithm: [(steps/s, ms per update), ...]}``, one per round, in ABBA order."""
    results = {name: [] for name in args.algos}
    for index in range(args.rounds):
        order = args.algos if index % 2 == 0 else list(reversed(args.algos))
        for name in order:
            speed, update = measure(name, args)
            results[name].append((speed, update))
            print("round %d: %s %.1f steps/s, %.3f ms per update"
                  % (index + 1, name, speed, update), flush=True)
    return results


def summarise(results, algos):
    base = algos[0]
    summary = {}
    for name in algos:
        speeds = [speed for speed, _ in results[name]]
        updates = [update for _, update in results[name]]
        summary[name] = {
            "steps_per_s": speeds, "ms_per_update": updates,
            "median_steps_per_s": statistics.median(speeds),
            "median_ms_per_update": statistics.median(updates),
            # per round, against the first algorithm's measurement of the same round
            "median_update_ratio": statistics.median(
                update / other for (_, update), (_, other) in zip(results[name],
                                                                  results[base])),
            "median_speed_ratio": statistics.median(
                speed / other for (speed, _), (other, _) in zip(results[name],
                                                                results[base]))}
    return summary


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--algos", nargs="+", default=["ddpg", "d4pg"],
                        help="--algo names; the first is the one the others are compared with")
    parser.add_argument("--config", default="4", help="a configuration of throughput.py")
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--steps", type=int, default=3000, help="timed training steps")
    parser.add_argument("--updates", type=int, default=1000, help="timed updates")
    parser.add_argument("--warmup", type=int, default=1000,
                        help="steps collected before updates start (not timed)")
    parser.add_argument("--threads", type=int, default=1, help="OMP threads")
    parser.add_argument("--json", metavar="FILE", help="also write the results to FILE")
    parser.add_argument("--worker", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    for name in ("rounds", "steps", "updates", "warmup", "threads"):
        if getattr(args, name) < 1:
            parser.error("--%s must be at least 1" % name)
    return args


def main(argv=None):
    args = parse_args(argv)
    if args.worker:
        worker(args.worker, args.config, args.warmup, args.steps, args.updates, args.threads)
        return
    sys.path.insert(0, HERE)
    from contender_protocol import CONFIGS
    if args.config not in CONFIGS:
        raise SystemExit("--config must be one of %s" % ", ".join(sorted(CONFIGS)))
    print("config %s (%s), %d rounds of %d steps and %d updates, %d thread(s)"
          % (args.config, CONFIGS[args.config][0], args.rounds, args.steps, args.updates,
             args.threads), flush=True)
    summary = summarise(rounds(args), args.algos)
    for name in args.algos:
        row = summary[name]
        print("%s: median %.1f steps/s, %.3f ms per update; against %s, per round: update "
              "time x%.2f, steps/s x%.2f" % (name, row["median_steps_per_s"],
                                             row["median_ms_per_update"], args.algos[0],
                                             row["median_update_ratio"],
                                             row["median_speed_ratio"]))
    if args.json:
        with open(args.json, "w") as handle:
            json.dump({"config": args.config, "rounds": args.rounds, "steps": args.steps,
                       "updates": args.updates, "warmup": args.warmup,
                       "threads": args.threads, "algorithms": summary}, handle, indent=2)
            handle.write("\n")


if __name__ == "__main__":
    main()
