"""``ddpg-sweep`` (``examples/sweep.py``): hyperparameter and seed sweeps of ``ddpg-train`` runs
on Ray Tune.

    ddpg-sweep --grid qfunc_lr=1e-3,3e-4 --seeds 1 2 3 --name lr \\
        -- --preset pendulum --n-epochs 10
    ddpg-sweep --loguniform policy_lr=1e-5,1e-3 --num-samples 4 --seeds 1 2 --name plr \\
        -- --preset pendulum
    ddpg-sweep --resume --name lr                 # continue an interrupted sweep
    ddpg-sweep --summarize-only --name lr          # table and figure again
    ddpg-sweep --address HEAD:6379 --grid ...      # on an existing cluster

Every trial is the run ``ddpg-train`` makes from the flags after ``--`` plus the trial's
hyperparameters and seed; names are ddpg-train's options (``qfunc_lr`` or ``qfunc-lr``).
Without ``--address`` a local Ray is started in this process. At the end the results table
(each configuration's final metric, mean +- std over seeds, best first) is printed and written
to ``STORAGE/NAME/results.csv`` and ``results.json``, and the curves to ``curves.png``. See
:mod:`ddpg.experiment.tune` and docs/sweeps.md. Ray is the ``ray`` extra
(``pip install "mxnet-ddpg[ray]"``).
"""
import argparse
import datetime
import os
import sys

from ddpg import experiment
from ddpg.experiment import tune as ddpg_tune
from ddpg.experiment.build import check_env_id
from ddpg.experiment.script import HelpFormatter, add_debug_flag, run_script

__all__ = ["build_parser", "read_space_option", "run_flags", "check_environment", "report",
           "main", "entry"]


def build_parser():
    parser = argparse.ArgumentParser(
        description="Sweep hyperparameters and seeds of ddpg-train runs as Ray Tune "
                    "trials. Arguments after -- are ddpg-train flags shared by every trial.",
        usage="%(prog)s [options] [-- ddpg-train flags]",
        formatter_class=HelpFormatter)
    space = parser.add_argument_group("search space (names are ddpg-train options)")
    space.add_argument("--grid", action="append", default=[], metavar="NAME=V1,V2",
                       help="try every value (grids are crossed); lists of numbers are "
                            "separated by spaces: policy_hidden_sizes='64 64,400 300'")
    space.add_argument("--choice", action="append", default=[], metavar="NAME=V1,V2",
                       help="draw one of the values per sample (random search)")
    space.add_argument("--uniform", action="append", default=[], metavar="NAME=LOW,HIGH",
                       help="draw uniformly between LOW and HIGH per sample")
    space.add_argument("--loguniform", action="append", default=[], metavar="NAME=LOW,HIGH",
                       help="draw log-uniformly between LOW and HIGH per sample")
    space.add_argument("--space", default=None, metavar="JSON",
                       help="search space as a JSON object or a .json file: "
                            '{"qfunc_lr": {"grid": [0.001, 0.0003]}, "policy_lr": '
                            '{"loguniform": [1e-5, 1e-3]}, "batch_size": 64}')
    space.add_argument("--num-samples", type=int, default=1,
                       help="random draws of --choice/--uniform/--loguniform (each runs "
                            "with every seed, crossed with the grids)")
    space.add_argument("--search-seed", type=int, default=0,
                       help="seed of the random draws")
    space.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3],
                       help="ddpg-train --seed of the trials: every configuration runs "
                            "with each")

    run = parser.add_argument_group("trials")
    run.add_argument("--max-concurrent", type=int, default=None,
                     help="trials at once (default: as many as the CPUs allow)")
    run.add_argument("--cpus-per-trial", type=float, default=1.0,
                     help="CPUs Ray reserves for each trial")
    run.add_argument("--gpus-per-trial", type=float, default=0.0,
                     help="GPU share per trial (0.5: two trials per GPU); above 0 trials "
                          "train on the GPU")
    run.add_argument("--threads-per-trial", type=int, default=None,
                     help="OMP/MXNet/MKL/OpenBLAS threads (default: the trial's whole CPUs)")
    run.add_argument("--checkpoint-freq", type=int, default=1,
                     help="checkpoint every N epochs (and after the last)")
    run.add_argument("--keep-checkpoints", type=int, default=2,
                     help="checkpoints kept per trial (the latest)")
    run.add_argument("--max-failures", type=int, default=0,
                     help="restart a failed trial from its last checkpoint up to N times "
                          "(-1: without limit)")

    where = parser.add_argument_group("Ray and output")
    where.add_argument("--address", default=None,
                       help="an existing Ray cluster (HOST:PORT of its head, or 'auto'); "
                            "default: a local Ray started in this process")
    where.add_argument("--num-cpus", type=int, default=None,
                       help="local Ray only: CPUs it may use (default: all)")
    where.add_argument("--ray-temp-dir", default=None,
                       help="local Ray only: its session folder (default /tmp/ray)")
    where.add_argument("--storage", default=os.path.join("runs", "sweeps"),
                       help="folder (shared by all nodes on a cluster) holding sweeps")
    where.add_argument("--name", default=None,
                       help="the sweep's folder under --storage (default: sweep_<time>)")
    where.add_argument("--resume", action="store_true",
                       help="continue the sweep --name: unfinished and failed trials go on "
                            "from their last checkpoints")
    where.add_argument("--summarize-only", action="store_true",
                       help="train nothing: print and write the results of sweep --name")
    where.add_argument("--metric", default="AverageReturn",
                       help="progress.csv column that ranks the configurations")
    where.add_argument("--mode", choices=["max", "min"], default="max",
                       help="rank configurations by the highest or the lowest --metric")
    where.add_argument("--verbose", type=int, choices=[0, 1, 2], default=1,
                       help="Tune's console output")
    where.add_argument("--trial-output", action="store_true",
                       help="also show the trials' own output here (it is always in their "
                            "folders: stdout, stderr, debug.log)")
    add_debug_flag(where)
    return parser


def read_space_option(text):
    """--space's value: inline JSON, or the path of a file holding it."""
    if text and not text.lstrip().startswith("{") and os.path.isfile(text):
        with open(text) as space_file:
            return space_file.read()
    return text


def run_flags(run_argv):
    """The ddpg-train flags given after --, as {option: value}; errors as ValueError."""
    try:
        return experiment.explicit_flags(run_argv,
                                         parser_class=experiment.RaisingArgumentParser)
    except ValueError as error:
        raise ValueError("ddpg-train flags after --: %s" % (error,))


def check_environment(run_argv):
    """Make the trials' environment once, so that a wrong ``-- --env`` is an error here
    rather than in every trial (as ddpg-train would say it, naming --env)."""
    given = run_flags(run_argv)
    if "env" in given:
        check_env_id(given["env"])


def report(args, folder):
    """Print the results table, write results.csv/json and curves.png; returns the summary."""
    summary = ddpg_tune.summarize(folder, metric=args.metric, mode=args.mode)
    print("\nSweep %s: final %s per configuration, mean +- std over seeds (%s first)"
          % (folder, args.metric, "highest" if args.mode == "max" else "lowest"))
    for line in ddpg_tune.format_summary(summary):
        print(line)
    for path in ddpg_tune.write_summary(summary):
        print("wrote %s" % (path,))
    try:
        print("wrote %s" % (ddpg_tune.plot_summary(summary),))
    except (ImportError, ValueError) as error:
        print("no curves.png: %s" % (error,))
    return summary


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    own, run_argv = experiment.split_run_flags(argv)
    parser = build_parser()
    args = parser.parse_args(own)
    searching = args.grid or args.choice or args.uniform or args.loguniform or args.space
    if (args.resume or args.summarize_only) and not args.name:
        parser.error("--resume and --summarize-only need the --name of the sweep")
    if args.resume and args.summarize_only:
        parser.error("--resume and --summarize-only exclude each other")
    if (args.resume or args.summarize_only) and (searching or run_argv):
        parser.error("a sweep keeps the search space and ddpg-train flags it started with; "
                     "give none with --resume or --summarize-only")
    name = args.name or "sweep_" + datetime.datetime.now().strftime("%Y-%m-%d_%H-%M-%S")
    folder = os.path.join(os.path.abspath(args.storage), name)
    if args.summarize_only:
        try:
            report(args, folder)
        except (OSError, ValueError) as error:
            parser.error(str(error))
        return 0

    space = None
    if not args.resume:
        try:
            space = ddpg_tune.space_from_cli(
                grid=args.grid, choice=args.choice, uniform=args.uniform,
                loguniform=args.loguniform, space_json=read_space_option(args.space),
                fixed=run_flags(run_argv))
            check_environment(run_argv)
            ddpg_tune.check_sweep(
                space, seeds=args.seeds, num_samples=args.num_samples,
                max_concurrent=args.max_concurrent, cpus_per_trial=args.cpus_per_trial,
                gpus_per_trial=args.gpus_per_trial, threads_per_trial=args.threads_per_trial,
                checkpoint_freq=args.checkpoint_freq, keep_checkpoints=args.keep_checkpoints,
                max_failures=args.max_failures)
        except ValueError as error:
            parser.error(str(error))
    try:
        started = ddpg_tune.start_ray(args.address, num_cpus=args.num_cpus,
                                      temp_dir=args.ray_temp_dir,
                                      trial_output=args.trial_output)
    except ImportError as error:
        print("%s: error: %s" % (parser.prog, error), file=sys.stderr)
        return 2
    except (ConnectionError, ValueError) as error:
        parser.error(str(error))
    try:
        if args.resume:
            results = ddpg_tune.resume_sweep(args.storage, name, verbose=args.verbose)
        else:
            results = ddpg_tune.run_sweep(
                space, seeds=args.seeds, storage=args.storage, name=name,
                num_samples=args.num_samples, search_seed=args.search_seed,
                max_concurrent=args.max_concurrent, cpus_per_trial=args.cpus_per_trial,
                gpus_per_trial=args.gpus_per_trial, threads_per_trial=args.threads_per_trial,
                checkpoint_freq=args.checkpoint_freq, keep_checkpoints=args.keep_checkpoints,
                max_failures=args.max_failures, verbose=args.verbose)
    except ValueError as error:
        parser.error(str(error))
    finally:
        if started:
            import ray
            ray.shutdown()
    try:
        report(args, folder)
    except ValueError as error:  # e.g. no trial got as far as starting
        print("no results table: %s" % (error,), file=sys.stderr)
    unfinished = len(results) - results.num_terminated - results.num_errors
    if results.num_errors or unfinished:
        print("%d trial(s) failed (see error.txt in their folders) and %d did not finish "
              "(interrupted); continue them with: ddpg-sweep --resume "
              "--storage %s --name %s" % (results.num_errors, unfinished, args.storage, name),
              file=sys.stderr)
        return 1
    return 0


def entry():
    """The ``ddpg-sweep`` console script."""
    sys.exit(run_script(main, prog="ddpg-sweep"))
