"""One trial of a Ray Tune sweep: the function Tune runs, the training, its reports and restore.

A trial is a run of ``examples/run_ddpg.py`` inside a Tune actor process:

* **Threads set before MXNet loads.** MXNet reads its thread settings (OpenMP, its OpenBLAS,
  its engine) when it is imported or first used, and fixes its oneDNN choice at its first
  operator, for the whole process. Ray sets ``OMP_NUM_THREADS`` to the actor's CPU count
  before it loads the trial function; the function Tune ships (:func:`make_trainable`) is a
  closure, which Ray's cloudpickle sends by value, so loading it imports nothing of ours and
  MXNet is not loaded until the function has set :data:`THREAD_VARIABLES` to the trial's
  thread count. The trial records what it found and set in ``trial.json``.
* **The configuration is run_ddpg.py's.** :func:`ddpg.experiment.args_from_config` parses
  it with the script's own parser, and the script's builders make the environment and the
  algorithm, so a trial trains exactly what ``run_ddpg.py`` would with the same flags.
* **Tune sees our logger's rows.** After every epoch (``DDPG.train(epoch_callback=...)``,
  called after the epoch's snapshot) the trial reports the row our logger has just written
  to ``progress.csv`` (``logger.last_tabular()``) to Tune (``tune.report``).
* **Checkpoints are our checkpoints.** Every ``checkpoint_freq`` epochs (and after the last)
  the trial writes ``DDPG.save`` into a Tune checkpoint (folder ``ddpg/``, which
  ``DDPG.restore`` and ``run_ddpg.py --resume`` accept) with the rows of ``progress.csv`` so
  far; a trial that Tune restarts gets it back, restores it and continues with the next
  epoch, its ``progress.csv`` continued from the checkpoint's rows.
* **The trial's folder is a run folder.** ``progress.csv``, ``debug.log`` and
  ``run_args.json`` (run_ddpg.py's ``params.json``) go to Tune's trial working directory,
  which Tune copies into the trial's folder.

Ray is imported only inside the functions that run in a trial.
"""
import contextlib
import json
import os
import shutil
import socket
import tempfile
import time

from ddpg import experiment, logger
from ddpg.experiment.sweep_results import PROGRESS_FILE, TRIAL_FILE

__all__ = ["THREAD_VARIABLES", "make_trainable", "run_trial"]

#: The thread settings a trial sets from its CPU count (as benchmarks/learning.py does).
THREAD_VARIABLES = ("OMP_NUM_THREADS", "MXNET_CPU_WORKER_NTHREADS", "MKL_NUM_THREADS",
                    "OPENBLAS_NUM_THREADS")
#: run_ddpg.py's params.json in a trial's folder (Tune's own params.json is the config).
RUN_ARGS_FILE = "run_args.json"
#: Inside a Tune checkpoint: the DDPG checkpoint and the progress rows it belongs to (not
#: named progress.csv, so that ddpg.experiment.plot does not take checkpoints for runs).
CHECKPOINT_ALGO = "ddpg"
CHECKPOINT_PROGRESS = "progress_checkpoint.csv"


def make_trainable(checkpoint_freq=1, threads=None):
    """The function Tune runs for each trial (its name, ``ddpg``, names the trials).

    It is a closure on purpose: Ray's cloudpickle sends closures by value, so the worker does
    not import :mod:`ddpg` (and MXNet) while loading it. It sets the thread variables from
    ``threads`` or else from the trial's CPU share (at least 1) first, then imports this
    module and calls :func:`run_trial`.
    """
    if isinstance(checkpoint_freq, bool) or int(checkpoint_freq) != checkpoint_freq \
            or checkpoint_freq < 1:
        raise ValueError("checkpoint_freq must be a positive integer, got %r"
                         % (checkpoint_freq,))
    if threads is not None and (isinstance(threads, bool) or int(threads) != threads
                                or threads < 1):
        raise ValueError("threads must be a positive integer or None, got %r" % (threads,))
    variables = THREAD_VARIABLES

    def ddpg(config):
        import math as _math
        import os as _os
        import sys as _sys
        import time as _time
        from ray import tune as _tune
        resources = _tune.get_context().get_trial_resources().required_resources
        count = threads or max(1, int(_math.floor(resources.get("CPU", 1))))
        worker = {"started": _time.time(),
                  "mxnet_loaded_before_thread_settings": "mxnet" in _sys.modules,
                  "OMP_NUM_THREADS_set_by_ray": _os.environ.get("OMP_NUM_THREADS"),
                  "threads": count}
        for variable in variables:
            _os.environ[variable] = str(count)
        from ddpg.experiment.trial import run_trial
        run_trial(config, checkpoint_freq=checkpoint_freq, gpus=resources.get("GPU", 0),
                  worker=worker)

    return ddpg


def _write_trial_file(trial_dir, config, worker):
    with open(os.path.join(trial_dir, TRIAL_FILE), "w") as trial_file:
        json.dump({"config": config, "worker": worker}, trial_file, indent=2, sort_keys=True,
                  default=str)


def _trial_args(config, gpus, trial_dir):
    """run_ddpg.py's arguments of the trial: its configuration, logging into ``trial_dir``."""
    ctx = "gpu" if gpus and gpus > 0 else "cpu"
    args = experiment.args_from_config(config, ctx=ctx, no_progress_bar=True,
                                       log_dir=trial_dir)
    problem = experiment.tensorboard_problem(args)
    if problem:
        raise ValueError(problem)
    return args


def _build_algorithm(args, trial_dir, progress, checkpoint):
    """Set up the trial's logging and build its algorithm, restored from Tune's
    ``checkpoint`` (with the progress rows it holds) when there is one.

    Returns ``(algo, restored)``, ``restored`` true when the trial continues a checkpoint.
    """
    # the rows must belong to the state the trial continues from: a restarted trial's rows
    # after its checkpoint were never part of the run that continues
    if os.path.exists(progress):
        os.remove(progress)
    env, max_path_length = experiment.make_env(args)
    with contextlib.ExitStack() as stack:
        restored = stack.enter_context(checkpoint.as_directory()) if checkpoint else None
        if restored and os.path.exists(os.path.join(restored, CHECKPOINT_PROGRESS)):
            shutil.copyfile(os.path.join(restored, CHECKPOINT_PROGRESS), progress)
        experiment.setup_logging(trial_dir, args, params_file=RUN_ARGS_FILE)
        algo = experiment.make_algorithm(args, env, max_path_length)
        # run_ddpg.py --resume on a trial's checkpoint: log where the user says
        algo.checkpoint_metadata["run_args"]["log_dir"] = None
        if restored:
            algo.restore(os.path.join(restored, CHECKPOINT_ALGO))
            logger.log("Resumed from Tune's checkpoint at epoch %d; training to epoch %d"
                       % (algo.epoch, algo.n_epochs))
    return algo, bool(restored)


def _record_worker(worker, algo, restored):
    """Add the process's thread settings, host and MXNet context to ``worker``."""
    if worker.get("mxnet_loaded_before_thread_settings"):
        logger.log("Warning: MXNet was loaded in this worker before the trial set %s; they "
                   "may not apply" % (", ".join(THREAD_VARIABLES),))
    worker.update({variable: os.environ.get(variable) for variable in THREAD_VARIABLES})
    worker.update(pid=os.getpid(), host=socket.gethostname(), ctx=str(algo.ctx),
                  mkldnn=bool(algo.mkldnn), engine=os.environ.get("MXNET_ENGINE_TYPE"),
                  resumed_at_epoch=algo.epoch if restored else None)


def _reporter(tune, checkpoint_freq, progress):
    """The epoch callback that reports the logger's last row to Tune, with a checkpoint
    every ``checkpoint_freq`` epochs and after the last one."""
    def report(trained, epoch):
        metrics = {key: value for key, value in logger.last_tabular().items()
                   if value is not None}
        done = epoch + 1
        if done % checkpoint_freq and done < trained.n_epochs:
            tune.report(metrics)
            return
        with tempfile.TemporaryDirectory(prefix="ddpg-tune-") as staging:
            trained.save(os.path.join(staging, CHECKPOINT_ALGO))
            shutil.copyfile(progress, os.path.join(staging, CHECKPOINT_PROGRESS))
            tune.report(metrics, checkpoint=tune.Checkpoint.from_directory(staging))

    return report


def run_trial(config, checkpoint_freq=1, gpus=0, worker=None):
    """Train one trial of a sweep inside Ray Tune (see the module's docstring).

    Must run in Tune's trial working directory (Tune's default), which becomes the run
    folder. Reports every epoch's progress.csv row to Tune and a checkpoint every
    ``checkpoint_freq`` epochs and after the last one; continues from Tune's checkpoint when
    it hands one back.
    """
    from ray import tune

    if os.environ.get("RAY_CHDIR_TO_TRIAL_DIR", "1") == "0":
        raise RuntimeError("ddpg trials write their run folder in Tune's trial working "
                           "directory; unset RAY_CHDIR_TO_TRIAL_DIR=0")
    trial_dir = os.getcwd()
    worker = dict(worker or {})
    # written first, so that a summary lists even a trial that fails while it is built
    _write_trial_file(trial_dir, config, worker)
    args = _trial_args(config, gpus, trial_dir)
    progress = os.path.join(trial_dir, PROGRESS_FILE)
    algo, restored = _build_algorithm(args, trial_dir, progress, tune.get_checkpoint())
    # event files in the trial's folder, continuing its curves when Tune restarts it
    experiment.setup_tensorboard(args, algo, params_file=RUN_ARGS_FILE)
    _record_worker(worker, algo, restored)
    _write_trial_file(trial_dir, config, worker)
    logger.log("Trial training DDPG on %s (ctx %s, %s threads)"
               % (args.env, algo.ctx, worker.get("threads")))
    try:
        algo.train(epoch_callback=_reporter(tune, checkpoint_freq, progress))
        worker["finished"] = time.time()
        _write_trial_file(trial_dir, config, worker)
    finally:
        experiment.close_logging(trial_dir)
