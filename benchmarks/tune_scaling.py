#!/usr/bin/env python
"""Aggregate training throughput of Ray Tune sweeps with 1 and with 2 trials at a time.

    python benchmarks/tune_scaling.py                       # 4 Pendulum trials of 3000 steps
    python benchmarks/tune_scaling.py --trials 2 -- --n-epochs 1 --epoch-length 200

The same trials (seeds 1..--trials of one run_ddpg.py configuration, the flags after ``--``
over the defaults below) run as a sweep once per concurrency level C of ``--concurrency``
(default 1 and 2), each on a fresh local Ray with ``--num-cpus`` CPUs (default: all) and
``num_cpus / C`` CPUs and threads per trial, so C=1 gives one trial all the cores and C=2
two trials one core each. For each level it prints the environment steps of all trials
(``TotalEnvSteps``, training steps only) over the wall time of the sweep, **Ray's start-up
excluded** (trial processes starting up are included: a sweep pays for them), the mean
per-trial training rate (steps over each trial's own ``Time`` column, evaluation included),
and the ratio of the aggregate rates. Results go to ``OUT/<time>/summary.json``; the sweeps'
folders stay beside it.

It measures; it does not test (``tests/test_tune.py`` does). Run it on a quiet machine: other
processes on the cores change the figures.
"""
import argparse
import datetime
import json
import os
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO)  # run from a checkout without installing

from ddpg import experiment  # noqa: E402
from ddpg.experiment import tune as ddpg_tune  # noqa: E402
from ddpg.experiment.results import read_rows  # noqa: E402

#: Pendulum with the pendulum preset's networks, shortened so that updates start early:
#: 3 epochs of 1000 steps, updates after 1000 (uniform random) steps, 1 evaluation episode.
DEFAULT_RUN = ["--preset", "pendulum", "--n-epochs", "3", "--epoch-length", "1000",
               "--memory-start-size", "1000", "--start-steps", "1000", "--eval-samples", "200"]


def build_parser():
    parser = argparse.ArgumentParser(
        description="Aggregate env steps/s of the same Ray Tune trials run 1 and 2 at a time. "
                    "Flags after -- are run_ddpg.py flags over the defaults (%s)."
                    % " ".join(DEFAULT_RUN),
        usage="%(prog)s [options] [-- run_ddpg.py flags]")
    parser.add_argument("--trials", type=int, default=4, help="trials (seeds 1..N)")
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 2],
                        help="trials at once, one sweep per value")
    parser.add_argument("--num-cpus", type=int, default=os.cpu_count(),
                        help="CPUs of the local Ray, shared by the trials running at once")
    parser.add_argument("--out", default=os.path.join("runs", "tune_scaling"))
    parser.add_argument("--ray-temp-dir", default=None,
                        help="the local Ray's session folder (default /tmp/ray)")
    return parser


def trial_figures(sweep_folder):
    """Per trial: its final TotalEnvSteps, training time and thread count."""
    figures = []
    for name in sorted(os.listdir(sweep_folder)):
        folder = os.path.join(sweep_folder, name)
        if not os.path.isfile(os.path.join(folder, "trial.json")):
            continue
        with open(os.path.join(folder, "trial.json")) as trial_file:
            worker = json.load(trial_file)["worker"]
        rows = read_rows(os.path.join(folder, "progress.csv"))
        figures.append({"folder": folder, "env_steps": int(rows[-1]["TotalEnvSteps"]),
                        "train_time_s": float(rows[-1]["Time"]),
                        "threads": worker["threads"]})
    return figures


def run_level(concurrency, args, space, folder):
    """One sweep of all trials with ``concurrency`` at a time; its figures."""
    import ray
    cpus = args.num_cpus / float(concurrency)
    started = time.time()
    ddpg_tune.start_ray(num_cpus=args.num_cpus, temp_dir=args.ray_temp_dir)
    ray_start = time.time() - started
    try:
        began = time.time()
        grid = ddpg_tune.run_sweep(space, seeds=list(range(1, args.trials + 1)),
                                   storage=folder, name="concurrency_%d" % concurrency,
                                   max_concurrent=concurrency, cpus_per_trial=cpus,
                                   verbose=0)
        wall = time.time() - began
    finally:
        ray.shutdown()
    if grid.num_errors:
        raise SystemExit("%d trial(s) failed at concurrency %d: see %s"
                         % (grid.num_errors, concurrency, folder))
    trials = trial_figures(os.path.join(folder, "concurrency_%d" % concurrency))
    steps = sum(trial["env_steps"] for trial in trials)
    return {"concurrency": concurrency, "cpus_per_trial": cpus,
            "threads_per_trial": sorted({trial["threads"] for trial in trials}),
            "trials": len(trials), "env_steps": steps, "wall_s": wall,
            "ray_start_s": ray_start, "aggregate_steps_per_s": steps / wall,
            "mean_trial_train_steps_per_s": sum(t["env_steps"] / t["train_time_s"]
                                                for t in trials) / len(trials)}


def main(argv=None):
    own, run_argv = experiment.split_run_flags(sys.argv[1:] if argv is None else argv)
    args = build_parser().parse_args(own)
    if args.trials < 1 or any(c < 1 or c > args.num_cpus for c in args.concurrency):
        raise SystemExit("--trials must be positive and each --concurrency between 1 and "
                         "--num-cpus (%d)" % args.num_cpus)
    try:
        space = ddpg_tune.check_space(experiment.explicit_flags(
            DEFAULT_RUN + run_argv, parser_class=experiment.RaisingArgumentParser))
    except ValueError as error:
        raise SystemExit("tune_scaling.py: error: %s" % (error,))
    folder = os.path.abspath(os.path.join(
        args.out, datetime.datetime.now().strftime("%Y-%m-%d_%H-%M-%S")))
    levels = []
    for concurrency in args.concurrency:
        print("concurrency %d: %d trials, %g CPU(s) each ..."
              % (concurrency, args.trials, args.num_cpus / float(concurrency)), flush=True)
        levels.append(run_level(concurrency, args, space, folder))
    header = ("concurrent", "cpus/trial", "threads", "trials", "env steps", "wall s",
              "aggregate steps/s", "per-trial train steps/s")
    rows = [(str(l["concurrency"]), "%g" % l["cpus_per_trial"],
             ",".join(str(t) for t in l["threads_per_trial"]), str(l["trials"]),
             str(l["env_steps"]), "%.1f" % l["wall_s"], "%.0f" % l["aggregate_steps_per_s"],
             "%.0f" % l["mean_trial_train_steps_per_s"]) for l in levels]
    widths = [max(len(r[i]) for r in [header] + rows) for i in range(len(header))]
    print()
    for row in [header] + rows:
        print("  ".join(cell.rjust(width) for cell, width in zip(row, widths)))
    summary = {"run_ddpg_flags": DEFAULT_RUN + run_argv, "num_cpus": args.num_cpus,
               "levels": levels}
    if len(levels) > 1:
        ratio = levels[-1]["aggregate_steps_per_s"] / levels[0]["aggregate_steps_per_s"]
        summary["ratio_last_to_first"] = ratio
        print("aggregate steps/s, concurrency %d over %d: %.2f (Ray start-up, excluded: %s s)"
              % (levels[-1]["concurrency"], levels[0]["concurrency"], ratio,
                 ", ".join("%.1f" % l["ray_start_s"] for l in levels)))
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "summary.json"), "w") as summary_file:
        json.dump(summary, summary_file, indent=2)
    print("wrote %s" % os.path.join(folder, "summary.json"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
