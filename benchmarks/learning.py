#!/usr/bin/env python
"""Learning benchmark: train a preset for several seeds, then summarise the evaluation returns.

    python benchmarks/learning.py --task pendulum --seeds 1 2 3 4 5
    python benchmarks/learning.py --task hopper --seeds 1 2 3 --parallel 2 --out runs/bench
    python benchmarks/learning.py --task pendulum --seeds 1 --steps 3000 -- --memory-start-size 1000
    python benchmarks/learning.py --task pendulum --summarize-only

Each run is a subprocess ``examples/run_ddpg.py --preset TASK --seed S --log-dir
OUT/TASK/seed_S`` (flags after ``--`` are passed on to it), so a benchmark run is exactly what a
user gets from the example script. DDPG evaluates the deterministic policy on a separate copy of
the environment after every epoch (``AverageReturn`` in ``progress.csv``).

Folders and reruns, so that long benchmarks can be stopped and continued:

* a run that exits successfully gets ``benchmark.json`` (its command, settings, wall time) in its
  folder; a rerun skips such runs unless ``--overwrite``, and warns when the finished run was
  asked for with other settings (``--steps`` or extra flags);
* a folder without ``benchmark.json`` but with a checkpoint (``params/``, saved after every
  epoch) is an interrupted run: a rerun continues it from that checkpoint to the same number
  of epochs (``run_ddpg.py --resume params --n-epochs N``; the continued run is the same run,
  as if never stopped), appending to its ``output.log``; a run asked for with other settings
  than it was started with is left as it is, with a warning. Each piece's command and wall
  time are kept in ``benchmark_pieces.json``; an interrupted piece counts until its last
  checkpoint, and ``benchmark.json`` gives the sum;
* a folder without ``benchmark.json`` and without a checkpoint is a failed run: a rerun moves
  it to ``OUT/TASK/.failed/`` (kept for its logs; dot-folders are ignored by summaries and
  plots) and starts that seed again from scratch;
* each run's console output goes to ``output.log`` in its folder, next to the example script's
  ``progress.csv``, ``debug.log`` and ``params.json``; the run's working directory is its folder,
  so files an environment drops in the current directory (MuJoCo's ``MUJOCO_LOG.TXT``) stay
  there.

With ``--parallel N`` up to N runs go at once, each with its own thread budget
(``OMP_NUM_THREADS``, ``MXNET_CPU_WORKER_NTHREADS``, ``MKL_NUM_THREADS``,
``OPENBLAS_NUM_THREADS`` = ``--threads``, by default the CPU count divided by N), so that
parallel runs do not oversubscribe the cores and slow each other down.

The summary (printed, and written to ``OUT/TASK/summary.json``) covers every finished seed
folder of the task. Over seeds it gives the mean and population std (ddof 0) of:

* ``final_return``: the last evaluation's AverageReturn (what SB3's zoo and CleanRL report);
* ``last10_return``: each seed's mean of its final 10 evaluations (all of them when it has
  fewer), the figure the TD3 authors now recommend: less noisy than the last evaluation,
  without the optimism of a maximum;
* ``best_return``: each seed's best evaluation over training;
* ``max_of_mean_curve``: the maximum over evaluations of the seed-averaged curve, the TD3
  paper's metric ("max average return"), with the step count where it is reached;
* ``train_return_last``: the return of the training (exploration) episodes that ended in the
  last ``--train-return-window`` environment steps (default 100,000), averaged over those
  episodes (``AverageEsReturn`` weighted by ``NumEsEpisodes``), CleanRL's metric;

* ``final_eval`` (``--final-eval-episodes N``, by default the preset's: 750 for pendulum, as
  the SB3 zoo's benchmark measured its figure): after training, each seed's final policy (its
  last checkpoint) is evaluated by ``examples/evaluate.py`` on N deterministic episodes on an
  environment seeded with the run's seed + 1000, written to ``final_eval.json`` in the run
  folder; the summary gives the mean and std over seeds of the per-seed mean returns;

plus the environment steps, wall time per seed and in total (sum over seeds), and for a
preset with a "solved" threshold (the cart-pole: 950) the first epoch at which each seed's
AverageReturn reaches it.
"""
import argparse
import copy
import datetime
import json
import math
import os
import shutil
import subprocess
import sys
import time

import numpy as np

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO)  # run from a checkout without installing

from ddpg import experiment  # noqa: E402
from ddpg.experiment.presets import METADATA, parse_args_with_preset, preset_names  # noqa: E402
from ddpg.experiment.results import aggregate, mean_std, read_curve, read_rows, write_json  # noqa: E402

RUN_SCRIPT = os.path.join(REPO, "examples", "run_ddpg.py")
EVALUATE_SCRIPT = os.path.join(REPO, "examples", "evaluate.py")
MARKER = "benchmark.json"
#: The pieces a run was trained in (one, unless it was interrupted and continued).
PIECES = "benchmark_pieces.json"
#: The checkpoint run_ddpg.py keeps in a run folder (``--log-dir``), relative to it.
CHECKPOINT = "params"
FINAL_EVAL = "final_eval.json"
#: The final evaluation's environment seed is the run's seed plus this: start states that
#: neither training nor the per-epoch evaluations (seed + 1) have seen.
FINAL_EVAL_SEED_OFFSET = 1000
SUMMARY = "summary.json"
FAILED_DIR = ".failed"
#: Flags the benchmark sets itself for every run; passing them after ``--`` is an error.
RESERVED_FLAGS = ("--preset", "--seed", "--log-dir")
THREAD_VARIABLES = ("OMP_NUM_THREADS", "MXNET_CPU_WORKER_NTHREADS", "MKL_NUM_THREADS",
                    "OPENBLAS_NUM_THREADS")


def log(message):
    print(message, flush=True)


# ---------------------------------------------------------------------------------------------
# command line
# ---------------------------------------------------------------------------------------------

def build_parser():
    parser = argparse.ArgumentParser(
        description="Train a preset of examples/run_ddpg.py for several seeds and summarise "
                    "the evaluation returns. Arguments after -- go to run_ddpg.py.",
        usage="%(prog)s --task TASK [TASK ...] [options] [-- run_ddpg.py flags]")
    parser.add_argument("--task", nargs="+", default=None, choices=preset_names(),
                        help="preset(s) to train (required unless --summarize-only)")
    parser.add_argument("--seeds", nargs="+", type=int, default=[1, 2, 3, 4, 5])
    parser.add_argument("--out", default=os.path.join("runs", "bench"),
                        help="runs go to OUT/TASK/seed_S")
    parser.add_argument("--steps", type=int, default=None,
                        help="environment steps per run: sets --n-epochs to "
                             "ceil(steps / epoch_length)")
    parser.add_argument("--parallel", type=int, default=1, help="runs at once")
    parser.add_argument("--threads", type=int, default=None,
                        help="threads per run (default: CPU count / --parallel)")
    parser.add_argument("--overwrite", action="store_true",
                        help="rerun seeds whose folder already holds a finished run")
    parser.add_argument("--summarize-only", action="store_true",
                        help="train nothing; summarise the existing folders (all tasks under "
                             "--out when --task is not given)")
    parser.add_argument("--final-eval-episodes", type=int, default=None,
                        help="after training, evaluate each run's final policy (its last "
                             "checkpoint) on this many deterministic episodes with "
                             "examples/evaluate.py; default: the preset's (pendulum: 750, "
                             "as the SB3 zoo benchmark), else 0 = off; with --summarize-only "
                             "only when given")
    parser.add_argument("--python", default=sys.executable,
                        help="interpreter for the runs")
    return parser


def run_settings(task, extra, seed=0):
    """The run_ddpg.py arguments a run of ``task`` with ``extra`` flags will use.

    Parsing them here checks the extra flags once, before any run starts, and gives the
    effective ``epoch_length`` that ``--steps`` is divided by.
    """
    parser = experiment.build_parser()
    parser.prog = "run_ddpg.py (the flags after --)"
    try:
        return parse_args_with_preset(parser, ["--preset", task, "--seed", str(seed)] + extra)
    except SystemExit:
        raise SystemExit("the flags after -- are not valid run_ddpg.py flags: %s"
                         % " ".join(extra))


def cpu_count():
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


# ---------------------------------------------------------------------------------------------
# running
# ---------------------------------------------------------------------------------------------

class Run(object):
    """One seed of one task: its folder, command and, once started, its process."""

    def __init__(self, task, seed, folder, command, request, pieces=()):
        self.task, self.seed, self.folder = task, seed, folder
        self.command = command
        self.request = request  # what was asked for, to spot reruns with other settings
        self.pieces = list(pieces)  # the earlier pieces of a continued run
        self.process = None
        self.log_file = None
        self.started = None

    @property
    def name(self):
        return "%s seed %d" % (self.task, self.seed)


def plan_task(args, task, extra):
    """The runs of ``task`` that need training, moving unfinished folders out of the way."""
    for flag in RESERVED_FLAGS:
        if any(item == flag or item.startswith(flag + "=") for item in extra):
            raise SystemExit("%s is set by the benchmark for every run; do not pass it after --"
                             % flag)
    settings = run_settings(task, extra)
    n_epochs_flag = []
    n_epochs = settings.n_epochs
    if args.steps is not None:
        if any(item == "--n-epochs" or item.startswith("--n-epochs=") for item in extra):
            raise SystemExit("give either --steps or --n-epochs after --, not both")
        n_epochs = max(1, int(math.ceil(args.steps / float(settings.epoch_length))))
        if n_epochs * settings.epoch_length != args.steps:
            log("%s: --steps %d is not a multiple of epoch_length %d; running %d epochs "
                "(%d steps)" % (task, args.steps, settings.epoch_length, n_epochs,
                                n_epochs * settings.epoch_length))
        n_epochs_flag = ["--n-epochs", str(n_epochs)]
    request = {"task": task, "steps": args.steps, "extra": list(extra)}
    task_dir = os.path.abspath(os.path.join(args.out, task))
    runs = []
    for seed in args.seeds:
        folder = os.path.join(task_dir, "seed_%d" % seed)
        marker = os.path.join(folder, MARKER)
        if os.path.exists(marker) and not args.overwrite:
            with open(marker) as marker_file:
                done = json.load(marker_file)
            if done.get("request") != request:
                log("%s seed %d: WARNING: already finished with other settings (%s); pass "
                    "--overwrite to rerun it with these" % (task, seed, done.get("request")))
            else:
                log("%s seed %d: already finished, skipped (--overwrite reruns it)"
                    % (task, seed))
            continue
        if os.path.exists(folder):
            if args.overwrite and os.path.exists(marker):
                shutil.rmtree(folder)
            elif os.path.exists(os.path.join(folder, CHECKPOINT, "manifest.json")):
                run = continued_run(args, task, seed, folder, request, n_epochs,
                                    fresh_command(args, task, seed, folder, n_epochs_flag,
                                                  extra))
                if run is not None:
                    runs.append(run)
                continue
            else:
                stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
                parked = os.path.join(task_dir, FAILED_DIR, "seed_%d-%s" % (seed, stamp))
                os.makedirs(os.path.dirname(parked), exist_ok=True)
                os.rename(folder, parked)
                log("%s seed %d: unfinished folder moved to %s; starting again"
                    % (task, seed, parked))
        command = fresh_command(args, task, seed, folder, n_epochs_flag, extra)
        runs.append(Run(task, seed, folder, command, request))
    return runs


def fresh_command(args, task, seed, folder, n_epochs_flag, extra):
    """The run_ddpg.py command of a run started from scratch."""
    return ([args.python, RUN_SCRIPT, "--preset", task, "--seed", str(seed), "--log-dir",
             folder, "--no-progress-bar"] + n_epochs_flag + list(extra))


def read_pieces(folder):
    """The pieces recorded in ``folder`` (``[]`` for a run started before they were)."""
    path = os.path.join(folder, PIECES)
    if not os.path.exists(path):
        return []
    with open(path) as pieces_file:
        return json.load(pieces_file)["pieces"]


def continued_run(args, task, seed, folder, request, n_epochs, first_command):
    """The interrupted run in ``folder`` continued from its checkpoint to ``n_epochs``
    epochs, or None (with a warning) when it was asked for with other settings.

    The interrupted piece's wall time is counted up to its checkpoint's last save (the
    work after it is done again); a piece without a record, from before the pieces were
    kept, was ``first_command`` and started when its ``params.json`` was written."""
    pieces = read_pieces(folder)
    if pieces and pieces[0]["request"] != request:
        log("%s seed %d: WARNING: an interrupted run asked for with other settings (%s) is in "
            "%s; it is left as it is (continue it with those settings, or move it away)"
            % (task, seed, pieces[0]["request"], folder))
        return None
    saved = os.path.getmtime(os.path.join(folder, CHECKPOINT, "manifest.json"))
    if not pieces:
        started = os.path.getmtime(os.path.join(folder, "params.json"))
        pieces = [{"request": request, "command": portable_command(first_command, folder),
                   "started_at": started}]
    if pieces[-1].get("wall_time_s") is None:
        pieces[-1]["wall_time_s"] = max(0.0, saved - pieces[-1]["started_at"])
    with open(os.path.join(folder, CHECKPOINT, "manifest.json")) as manifest_file:
        epoch = json.load(manifest_file)["progress"]["epoch"]
    command = [args.python, RUN_SCRIPT, "--resume", CHECKPOINT, "--n-epochs", str(n_epochs),
               "--no-progress-bar"]
    log("%s seed %d: interrupted after epoch %d of %d; continued from its checkpoint"
        % (task, seed, epoch, n_epochs))
    return Run(task, seed, folder, command, request, pieces)


def start(run, threads):
    os.makedirs(run.folder, exist_ok=True)
    env = dict(os.environ)
    for variable in THREAD_VARIABLES:
        env[variable] = str(threads)
    env["PYTHONUNBUFFERED"] = "1"  # output.log follows the run as it goes
    run.log_file = open(os.path.join(run.folder, "output.log"), "a" if run.pieces else "w")
    run.started = time.time()
    write_json(os.path.join(run.folder, PIECES), {"pieces": run.pieces + [{
        "request": run.request, "command": portable_command(run.command, run.folder),
        "started_at": run.started}]})
    run.process = subprocess.Popen(run.command, cwd=run.folder, env=env, stdout=run.log_file,
                                   stderr=subprocess.STDOUT)
    log("%s: started (pid %d, %d thread%s) -> %s" % (run.name, run.process.pid, threads,
                                                     "" if threads == 1 else "s", run.folder))


def portable_command(command, folder):
    """``command`` as benchmark.json records it, naming no folder of this machine: the
    interpreter by its name, absolute paths relative to the repository (``examples/run_ddpg.py``,
    ``runs/bench/pendulum/seed_1``), or to the run folder ``folder`` when outside it."""
    def portable(argument):
        if not os.path.isabs(argument):
            return argument
        inside = os.path.commonpath([REPO, os.path.abspath(argument)]) == REPO
        return os.path.relpath(argument, REPO if inside else folder)
    return [os.path.basename(command[0])] + [portable(argument) for argument in command[1:]]


def finish(run, threads):
    """Record a finished process: the marker on success, the log's tail on failure."""
    wall_time = time.time() - run.started
    run.log_file.close()
    code = run.process.returncode
    if code != 0:
        log("%s: FAILED (exit %d) after %.0f s; its folder is kept: the next run continues it "
            "from its checkpoint, or moves it aside when it has none. Last lines of %s:"
            % (run.name, code, wall_time, os.path.join(run.folder, "output.log")))
        with open(os.path.join(run.folder, "output.log"), errors="replace") as output:
            for line in output.readlines()[-15:]:
                log("    " + line.rstrip())
        return False
    pieces = read_pieces(run.folder)
    pieces[-1]["wall_time_s"] = wall_time
    write_json(os.path.join(run.folder, PIECES), {"pieces": pieces})
    marker = {
        "request": run.request,
        "command": pieces[0]["command"],
        "threads": threads,
        "wall_time_s": sum(piece["wall_time_s"] for piece in pieces),
        "pieces": len(pieces),
        "started": datetime.datetime.fromtimestamp(run.started).isoformat(timespec="seconds"),
        "finished": datetime.datetime.now().isoformat(timespec="seconds"),
    }
    write_json(os.path.join(run.folder, MARKER), marker)
    final = seed_result(run.folder).get("final_return")
    log("%s: finished in %.0f s, final AverageReturn %s"
        % (run.name, wall_time, "n/a" if final is None else "%.6g" % final))
    return True


def execute(runs, parallel, threads):
    """Run ``runs`` with at most ``parallel`` at a time; True when all succeeded.

    On Ctrl-C (or any error) the runs still going are stopped, so no orphan keeps training;
    their folders have no marker and are continued from their checkpoints on the next
    invocation.
    """
    pending, active, ok = list(runs), [], True
    try:
        while pending or active:
            while pending and len(active) < parallel:
                run = pending.pop(0)
                start(run, threads)
                active.append(run)
            time.sleep(0.2)
            for run in list(active):
                if run.process.poll() is not None:
                    active.remove(run)
                    ok = finish(run, threads) and ok
    finally:
        for run in active:
            if run.process.poll() is None:
                log("%s: stopping (pid %d)" % (run.name, run.process.pid))
                run.process.terminate()
                try:
                    run.process.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    run.process.kill()
                    run.process.wait()
            run.log_file.close()
    return ok


def final_eval_episodes(args, task):
    """Episodes of the final evaluation for ``task``: the flag, else the preset's, else 0."""
    if args.final_eval_episodes is not None:
        return args.final_eval_episodes
    return METADATA.get(task, {}).get("final_eval_episodes", 0)


def read_final_eval(folder):
    path = os.path.join(folder, FINAL_EVAL)
    if not os.path.exists(path):
        return None
    with open(path) as eval_file:
        return json.load(eval_file)


def run_final_evals(args, task_dir, episodes, threads):
    """Evaluate the final policy of each finished seed of ``task_dir`` on ``episodes`` episodes.

    A per-epoch evaluation of 10 episodes is too noisy to compare with a published figure
    measured on hundreds (Pendulum's returns vary by about 85 between start states), so the
    final policy gets its own evaluation, written to ``final_eval.json`` in the run folder.
    Folders already holding one for the same number of episodes and the same checkpoint
    epoch are skipped. Returns True when every evaluation succeeded.
    """
    ok = True
    env = dict(os.environ)
    for variable in THREAD_VARIABLES:
        env[variable] = str(threads)
    for seed, folder in seed_folders(task_dir).items():
        checkpoint = os.path.join(folder, "params")
        if not os.path.exists(os.path.join(folder, MARKER)) or not os.path.isdir(checkpoint):
            continue
        epochs = read_curve(os.path.join(folder, "progress.csv"), key="AverageReturn",
                            x="Epoch")[0]
        done = read_final_eval(folder)
        if (done is not None and done.get("episodes") == episodes and len(epochs)
                and done.get("epoch") == int(epochs[-1]) + 1):
            continue
        command = [args.python, EVALUATE_SCRIPT, checkpoint, "--episodes", str(episodes),
                   "--seed", str(seed + FINAL_EVAL_SEED_OFFSET),
                   "--json", os.path.join(folder, FINAL_EVAL), "--overwrite"]
        started = time.time()
        result = subprocess.run(command, cwd=folder, env=env, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, universal_newlines=True)
        if result.returncode != 0:
            ok = False
            log("%s seed %d: final evaluation FAILED (exit %d):\n    %s" % (
                os.path.basename(task_dir), seed, result.returncode,
                "\n    ".join(result.stdout.strip().splitlines()[-10:])))
            continue
        stats = read_final_eval(folder)
        log("%s seed %d: final policy over %d episodes: %.1f +- %.1f (%.0f s)" % (
            os.path.basename(task_dir), seed, episodes, stats["mean"], stats["std"],
            time.time() - started))
    return ok


# ---------------------------------------------------------------------------------------------
# summaries
# ---------------------------------------------------------------------------------------------

def seed_result(folder, solved_return=None):
    """Per-seed numbers from a run folder's progress.csv (and benchmark.json when present)."""
    progress = os.path.join(folder, "progress.csv")
    result = {"folder": folder, "final_return": None}
    if not os.path.exists(progress):
        return result
    rows = read_rows(progress)
    steps, returns = read_curve(progress, key="AverageReturn", x="TotalEnvSteps")
    epochs, _ = read_curve(progress, key="AverageReturn", x="Epoch")
    if len(returns):
        best = int(returns.argmax())
        result.update({
            "final_return": float(returns[-1]),
            "last10_return": float(np.mean(returns[-LAST_EVALUATIONS:])),
            "final_epoch": int(epochs[-1]),
            "final_env_steps": int(steps[-1]),
            "best_return": float(returns[best]),
            "best_epoch": int(epochs[best]),
            "evaluations": len(returns),
        })
    if rows and rows[-1].get("Time"):
        result["train_time_s"] = float(rows[-1]["Time"])
    result["train_return_last"] = train_return_last(progress)
    if rows and rows[-1].get("TotalEnvSteps"):
        result["env_steps"] = int(float(rows[-1]["TotalEnvSteps"]))
    if solved_return is not None:
        solved = [(int(e), int(s)) for e, s, r in zip(epochs, steps, returns)
                  if r >= solved_return]
        result["solved_epoch"] = solved[0][0] if solved else None
        result["solved_env_steps"] = solved[0][1] if solved else None
    final_eval = read_final_eval(folder)
    if final_eval is not None:
        result["final_eval"] = {key: final_eval[key] for key in
                                ("episodes", "mean", "std", "seed", "epoch")}
    marker = os.path.join(folder, MARKER)
    if os.path.exists(marker):
        with open(marker) as marker_file:
            done = json.load(marker_file)
        result["wall_time_s"] = done.get("wall_time_s")
        result["request"] = done.get("request")
    return result


#: The evaluations at the end of a run that ``last10_return`` averages (the TD3 authors'
#: recommended figure: the mean of the final 10 evaluations).
LAST_EVALUATIONS = 10
#: Environment steps at the end of a run whose training episodes ``train_return_last`` averages.
TRAIN_RETURN_WINDOW = 100000


def train_return_last(progress, window=TRAIN_RETURN_WINDOW):
    """Mean return of the training episodes counted in the epochs of the last ``window`` steps.

    Each epoch's ``AverageEsReturn`` is weighted by its ``NumEsEpisodes``, so the result is the
    mean over episodes, not over epochs. None when no such epoch recorded an episode.
    """
    rows = read_rows(progress)
    if not rows or not rows[-1].get("TotalEnvSteps"):
        return None
    last = float(rows[-1]["TotalEnvSteps"])
    total = count = 0.0
    for row in rows:
        if not row.get("AverageEsReturn") or float(row["TotalEnvSteps"]) <= last - window:
            continue
        episodes = float(row["NumEsEpisodes"])
        total += float(row["AverageEsReturn"]) * episodes
        count += episodes
    return total / count if count else None


def seed_folders(task_dir):
    """``{seed: folder}`` of the ``seed_N`` folders directly inside ``task_dir``."""
    found = {}
    if os.path.isdir(task_dir):
        for name in os.listdir(task_dir):
            path = os.path.join(task_dir, name)
            if name.startswith("seed_") and os.path.isdir(path):
                try:
                    found[int(name[len("seed_"):])] = path
                except ValueError:
                    continue
    return dict(sorted(found.items()))


def summarize_task(task_dir, task):
    """Summarise the finished seeds of ``task_dir``; write summary.json; return the summary."""
    solved_return = METADATA.get(task, {}).get("solved_return")
    finished, unfinished = {}, []
    for seed, folder in seed_folders(task_dir).items():
        result = seed_result(folder, solved_return)
        if os.path.exists(os.path.join(folder, MARKER)) and result["final_return"] is not None:
            finished[seed] = result
        else:
            unfinished.append(seed)
    summary = {"task": task, "task_dir": task_dir, "seeds": sorted(finished),
               "unfinished_seeds": unfinished, "std": "population (ddof 0) over seeds",
               "per_seed": {str(seed): result for seed, result in finished.items()}}
    params = os.path.join(task_dir, "seed_%d" % min(finished), "params.json") if finished \
        else None
    if params and os.path.exists(params):
        with open(params) as params_file:
            summary["env"] = json.load(params_file).get("env")
    if finished:
        results = list(finished.values())
        requests = {json.dumps(r.get("request"), sort_keys=True) for r in results}
        summary["mixed_settings"] = len(requests) > 1
        for name in ("final_return", "last10_return", "best_return"):
            mean, std = mean_std([r[name] for r in results])
            summary[name] = {"mean": mean, "std": std}
        summary["last10_return"]["evaluations"] = LAST_EVALUATIONS
        train_returns = [r.get("train_return_last") for r in results]
        if all(value is not None for value in train_returns):
            mean, std = mean_std(train_returns)
            summary["train_return_last"] = {"mean": mean, "std": std,
                                            "window_env_steps": TRAIN_RETURN_WINDOW}
        evals = [r.get("final_eval") for r in results]
        if all(evals) and len({e["episodes"] for e in evals}) == 1:
            mean, std = mean_std([e["mean"] for e in evals])
            summary["final_eval"] = {"episodes": evals[0]["episodes"], "mean": mean,
                                     "std": std, "std_over": "seeds (each seed: the mean over "
                                                            "its episodes)"}
        curves = [read_curve(os.path.join(r["folder"], "progress.csv")) for r in results]
        grid, mean_curve, _, _ = aggregate(curves)
        peak = int(mean_curve.argmax())
        summary["max_of_mean_curve"] = {"value": float(mean_curve[peak]),
                                        "env_steps": int(grid[peak])}
        steps = [r["final_env_steps"] for r in results]
        summary["env_steps"] = {"min": min(steps), "max": max(steps)}
        walls = [r.get("wall_time_s") for r in results]
        known = [w for w in walls if w is not None]
        summary["wall_time_s"] = {"per_seed": {str(s): r.get("wall_time_s")
                                               for s, r in finished.items()},
                                  "mean": mean_std(known)[0] if known else None,
                                  "total": float(sum(known)) if known else None}
        if solved_return is not None:
            summary["solved_return"] = solved_return
            summary["solved_epoch"] = {str(s): r["solved_epoch"] for s, r in finished.items()}
    if os.path.isdir(task_dir):
        write_json(os.path.join(task_dir, SUMMARY),
                   relative_folders(summary, os.path.dirname(task_dir)))
    return summary


def relative_folders(summary, root):
    """A copy of ``summary`` whose folders are relative to ``root``, the run root (``--out``).

    summary.json files are committed and compared across machines; absolute paths would tie
    them to the machine that ran them. The printed summary keeps the absolute folders.
    """
    portable = copy.deepcopy(summary)
    portable["task_dir"] = os.path.relpath(summary["task_dir"], root)
    for result in portable["per_seed"].values():
        result["folder"] = os.path.relpath(result["folder"], root)
    return portable


def format_summary(summary):
    """The summary as printed lines: one headline per task, and the solved epochs if any."""
    task = summary["task"]
    env = summary.get("env")
    head = "%s%s" % (task, " (%s)" % env if env else "")
    if not summary["seeds"]:
        return ["%s: no finished runs in %s%s" % (
            head, summary["task_dir"], "; unfinished seeds %s" % summary["unfinished_seeds"]
            if summary["unfinished_seeds"] else "")]
    steps = summary["env_steps"]
    steps_text = ("%d" % steps["min"] if steps["min"] == steps["max"]
                  else "%d-%d" % (steps["min"], steps["max"]))
    wall = summary["wall_time_s"]
    wall_text = ("wall n/a" if wall["mean"] is None else
                 "wall %.0f s per seed (mean), %.0f s total" % (wall["mean"], wall["total"]))
    n = len(summary["seeds"])
    lines = ["%s, %d seed%s: final AverageReturn %.1f +- %.1f | mean of the final %d "
             "evaluations %.1f +- %.1f | best epoch per seed %.1f +- %.1f | max of the mean "
             "curve %.1f at %d steps | %s env steps | %s" % (
                 head, n, "" if n == 1 else "s", summary["final_return"]["mean"],
                 summary["final_return"]["std"], LAST_EVALUATIONS,
                 summary["last10_return"]["mean"], summary["last10_return"]["std"],
                 summary["best_return"]["mean"],
                 summary["best_return"]["std"], summary["max_of_mean_curve"]["value"],
                 summary["max_of_mean_curve"]["env_steps"], steps_text, wall_text)]
    if "train_return_last" in summary:
        train = summary["train_return_last"]
        lines.append("  training episodes of the last %d steps: %.1f +- %.1f" % (
            train["window_env_steps"], train["mean"], train["std"]))
    if "final_eval" in summary:
        final_eval = summary["final_eval"]
        lines.append("  final policy, %d episodes per seed: %.1f +- %.1f over seeds (per seed: "
                     "%s)" % (final_eval["episodes"], final_eval["mean"], final_eval["std"],
                              ", ".join("%.1f" % r["final_eval"]["mean"]
                                        for r in summary["per_seed"].values())))
    if "solved_epoch" in summary:
        lines.append("  first epoch with AverageReturn >= %g: %s" % (
            summary["solved_return"], ", ".join(
                "seed %s: %s" % (seed, "never" if epoch is None else epoch)
                for seed, epoch in summary["solved_epoch"].items())))
    if summary["unfinished_seeds"]:
        lines.append("  unfinished seeds (left out): %s" % summary["unfinished_seeds"])
    if summary.get("mixed_settings"):
        lines.append("  WARNING: these seeds were run with different settings (see "
                     "summary.json per_seed.request)")
    return lines


def tasks_under(out):
    """Task folders of ``out`` (those holding seed folders), for --summarize-only."""
    if not os.path.isdir(out):
        return []
    return sorted(name for name in os.listdir(out)
                  if not name.startswith(".") and seed_folders(os.path.join(out, name)))


def main(argv=None):
    own, extra = experiment.split_run_flags(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    args = parser.parse_args(own)
    if args.parallel < 1:
        parser.error("--parallel must be at least 1")
    if args.steps is not None and args.steps < 1:
        parser.error("--steps must be positive")
    if args.final_eval_episodes is not None and args.final_eval_episodes < 0:
        parser.error("--final-eval-episodes must be 0 (off) or positive")
    args.seeds = sorted(set(args.seeds), key=args.seeds.index)  # a seed twice = one run
    tasks = args.task
    if not tasks:
        if not args.summarize_only:
            parser.error("--task is required (unless --summarize-only)")
        tasks = tasks_under(args.out)
        if not tasks:
            parser.error("no task folders with seed_N runs under %s" % args.out)
    ok = True
    started = time.time()
    if not args.summarize_only:
        threads = args.threads or max(1, cpu_count() // args.parallel)
        runs = []
        for task in tasks:
            runs.extend(plan_task(args, task, extra))
        ok = execute(runs, args.parallel, threads)
        if runs:
            log("trained %d run(s) in %.0f s" % (len(runs), time.time() - started))
    for task in tasks:
        # --summarize-only evaluates only when asked to (--final-eval-episodes)
        episodes = (final_eval_episodes(args, task) if not args.summarize_only
                    else args.final_eval_episodes or 0)
        if episodes > 0:
            ok = run_final_evals(args, os.path.abspath(os.path.join(args.out, task)), episodes,
                                 args.threads or cpu_count()) and ok
    for task in tasks:
        for line in format_summary(summarize_task(os.path.abspath(os.path.join(args.out, task)),
                                                  task)):
            log(line)
    return 0 if ok else 1


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        sys.exit(130)
