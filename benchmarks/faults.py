#!/usr/bin/env python
"""Faults, measured: SIGKILL a training run again and again, resume it, compare the end.

Runs ``examples/run_ddpg.py`` (a checkpoint after every epoch, snapshot mode 'last') twice:

* the reference: uninterrupted;
* the faulted run: killed with SIGKILL ``--kills`` times at random moments, and after each
  kill resumed with ``run_ddpg.py --resume <log dir>/params`` from its last checkpoint (or
  started afresh in an emptied folder when the kill came before the first checkpoint was
  complete). Half of the kills aim at a save: the script waits until a checkpoint is being
  written (a hidden staging folder appears in the log folder) and kills it then; the others
  come at a uniformly random moment of training, within a window of twice the reference's
  training time divided by the number of kills, so that the kills spread over the run.

At the end it compares the final parameters of all networks (``params/*.params``, bit for
bit) and the rows of ``progress.csv`` (every column except the wall-clock ``Time``) of the
two runs, and prints the kills survived, how many hit a save in progress, and whether the end
state is bit-identical. Exits with status 1 if it is not.

    python benchmarks/faults.py --kills 20
    python benchmarks/faults.py --kills 3 --json out.json -- --env Pendulum-v1 --n-epochs 8

The run's flags follow ``--``; they are added after ``DEFAULT_RUN`` (a small cart-pole run)
and win over it. The script sets ``--log-dir`` and ``--resume``. Each resume starts a new
Python process, so the figure also covers MXNet's process-wide choices (see ddpg.backend.kernels).
"""
import argparse
import csv
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.join(HERE, os.pardir)
sys.path.insert(0, REPO)

from ddpg.checkpoint import CheckpointReader  # noqa: E402
from ddpg.experiment import split_run_flags  # noqa: E402
from ddpg.experiment.results import write_json  # noqa: E402

SCRIPT = os.path.join(REPO, "examples", "run_ddpg.py")
#: A small cart-pole run: 12 epochs of 200 steps, small networks, frequent checkpoints.
DEFAULT_RUN = ["--n-epochs", "12", "--epoch-length", "200", "--memory-start-size", "100",
               "--eval-samples", "100", "--memory-size", "20000", "--ctx", "cpu",
               "--policy-hidden-sizes", "16", "16", "--qfunc-hidden-sizes", "16", "16", "16",
               "--no-progress-bar", "--seed", "5"]
#: progress.csv columns that measure wall-clock time, not the run.
TIME_COLUMNS = ("Time",)
#: The line run_ddpg.py logs when training starts (after imports and any restore), for any
#: algorithm: "Training DDPG on ...", "Training D4PG on ...".
STARTED = re.compile(r"Training \S+ on ")


def build_parser():
    parser = argparse.ArgumentParser(
        description="SIGKILL run_ddpg.py at random moments, resume it each time, and compare "
                    "the end state with an uninterrupted run. Flags after -- go to "
                    "run_ddpg.py.")
    parser.add_argument("--kills", type=int, default=20, help="number of SIGKILLs")
    parser.add_argument("--seed", type=int, default=0, help="seed of the kill moments")
    parser.add_argument("--out", default=None,
                        help="working folder (default: a new temporary folder, removed)")
    parser.add_argument("--json", default=None, metavar="OUT.json",
                        help="also write the figures as JSON")
    parser.add_argument("--timeout", type=float, default=1800,
                        help="seconds one run_ddpg.py process may take")
    return parser


def _environment():
    env = dict(os.environ)
    env["PYTHONUNBUFFERED"] = "1"  # the "Training" line must arrive when it is printed
    return env


def _start(args):
    return subprocess.Popen([sys.executable, SCRIPT] + args, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, env=_environment())


def _wait_started(process, deadline):
    """Read the process's output until training starts; False if it ended first."""
    while time.time() < deadline:
        line = process.stdout.readline()
        if not line:
            return False
        if STARTED.search(line):
            return True
    return False


def _hidden(log_dir):
    try:
        return {name for name in os.listdir(log_dir) if name.startswith(".")}
    except OSError:
        return set()


def _saving(log_dir, leftovers):
    """Whether a checkpoint is being written now: a hidden staging folder exists that is not
    one of the ``leftovers`` of an earlier killed save (the next save removes those)."""
    return bool(_hidden(log_dir) - leftovers)


def _drain(process):
    """Read (and drop) the rest of the output in the background so the pipe never fills."""
    thread = threading.Thread(target=process.stdout.read, daemon=True)
    thread.start()
    return thread


def _kill_once(process, log_dir, rng, aim_at_save, window):
    """Kill ``process`` at a random moment (``aim_at_save``: while it saves); returns
    ``(killed, during_save)``; ``killed`` is False if the run finished first."""
    _drain(process)
    leftovers = _hidden(log_dir)
    deadline = time.time() + (window * 4 if aim_at_save else rng.uniform(0, window))
    while time.time() < deadline:
        if process.poll() is not None:
            return False, False
        if aim_at_save and _saving(log_dir, leftovers):
            time.sleep(rng.uniform(0, 0.003))
            break
        time.sleep(0.0005 if aim_at_save else 0.01)
    if process.poll() is not None:
        return False, False
    during_save = _saving(log_dir, leftovers)
    process.send_signal(signal.SIGKILL)
    process.wait()
    return True, during_save


def _has_checkpoint(log_dir):
    return any(os.path.isdir(os.path.join(log_dir, name)) for name in ("params", ".params.old"))


def _command(log_dir, run_flags):
    """The command that (re)starts the faulted run from where it is."""
    if _has_checkpoint(log_dir):
        return ["--resume", os.path.join(log_dir, "params"), "--no-progress-bar"]
    # nothing complete was saved yet: start again, in an empty folder
    shutil.rmtree(log_dir, ignore_errors=True)
    return run_flags + ["--log-dir", log_dir]


def _progress_rows(log_dir):
    with open(os.path.join(log_dir, "progress.csv"), newline="") as handle:
        rows = list(csv.DictReader(handle))
    return [{key: value for key, value in row.items() if key not in TIME_COLUMNS}
            for row in rows]


def _parameters(log_dir):
    reader = CheckpointReader(os.path.join(log_dir, "params"))
    return {network: reader.params(network) for network in reader.manifest["parameters"]}


def _same_parameters(a, b):
    if set(a) != set(b):
        return False
    for network in a:
        if list(a[network]) != list(b[network]):
            return False
        for name in a[network]:
            x, y = a[network][name], b[network][name]
            if x.shape != y.shape or x.tobytes() != y.tobytes():
                return False
    return True


def run(kills, seed, run_flags, out, timeout):
    """The figures: kills requested and survived, kills during saves, whether identical."""
    rng = random.Random(seed)
    reference, faulted = os.path.join(out, "reference"), os.path.join(out, "faulted")
    process = _start(run_flags + ["--log-dir", reference])
    if not _wait_started(process, time.time() + timeout):
        raise SystemExit("the reference run failed before training: " + process.stdout.read())
    started = time.time()
    output = process.stdout.read()
    if process.wait(timeout=timeout) != 0:
        raise SystemExit("the reference run failed:\n" + output[-3000:])
    training_seconds = time.time() - started
    # kill moments uniform in a window that spreads the kills over the run: a life makes
    # about training_seconds / kills of progress on average, partial epochs are lost
    window = max(0.2, 2.0 * training_seconds / max(1, kills))

    done, during_saves, resumes, fresh_starts = 0, 0, 0, 0
    shutil.rmtree(faulted, ignore_errors=True)
    finished = False
    while not finished:
        command = _command(faulted, run_flags)
        if "--resume" in command:
            resumes += 1
        else:
            fresh_starts += 1
        process = _start(command)
        deadline = time.time() + timeout
        if done < kills:
            if not _wait_started(process, deadline):
                process.wait()
                raise SystemExit("the faulted run ended before training started (exit %s)"
                                 % process.returncode)
            # the moment: uniform in the window (or while it saves)
            killed, in_save = _kill_once(process, faulted, rng, aim_at_save=done % 2 == 1,
                                         window=window)
            if killed:
                done += 1
                during_saves += in_save
                continue
        else:
            _drain(process)
        process.wait(timeout=max(1.0, deadline - time.time()))
        if process.returncode != 0:
            raise SystemExit("the faulted run failed (exit %s); its log is in %s"
                             % (process.returncode, faulted))
        finished = True

    same_params = _same_parameters(_parameters(reference), _parameters(faulted))
    reference_rows, faulted_rows = _progress_rows(reference), _progress_rows(faulted)
    same_rows = reference_rows == faulted_rows
    return {"kills_requested": kills, "kills_survived": done, "kills_during_save": during_saves,
            "resumes": resumes, "fresh_restarts": fresh_starts - 1,
            "epochs": len(reference_rows), "reference_training_seconds": round(training_seconds, 1),
            "parameters_identical": same_params, "progress_rows_identical": same_rows,
            "bit_identical": same_params and same_rows, "run_flags": run_flags}


def main(argv=None):
    own, run_flags = split_run_flags(sys.argv[1:] if argv is None else argv)
    options = build_parser().parse_args(own)
    if options.kills < 0:
        build_parser().error("--kills must be at least 0")
    if any(flag.startswith("--log-dir") or flag.startswith("--resume") for flag in run_flags):
        build_parser().error("the script sets --log-dir and --resume itself; leave them out "
                             "of the run's flags")
    run_flags = list(DEFAULT_RUN) + run_flags  # given flags come later: they win
    out = options.out or tempfile.mkdtemp(prefix="ddpg-faults-")
    try:
        figures = run(options.kills, options.seed, run_flags, out, options.timeout)
    finally:
        if options.out is None:
            shutil.rmtree(out, ignore_errors=True)
    print("kills survived: %d of %d (%d during a save); %d resumes from a checkpoint, %d "
          "fresh starts; %d epochs" % (figures["kills_survived"], figures["kills_requested"],
                                       figures["kills_during_save"], figures["resumes"],
                                       figures["fresh_restarts"], figures["epochs"]))
    print("final parameters bit-identical: %s" % ("yes" if figures["parameters_identical"]
                                                  else "NO"))
    print("progress.csv rows identical (Time excluded): %s"
          % ("yes" if figures["progress_rows_identical"] else "NO"))
    print("bit-identical: %s" % ("yes" if figures["bit_identical"] else "NO"))
    if options.json:
        write_json(options.json, figures)
    return 0 if figures["bit_identical"] else 1


if __name__ == "__main__":
    sys.exit(main())
