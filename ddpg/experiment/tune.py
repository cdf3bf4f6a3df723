"""Hyperparameter and seed sweeps on Ray Tune, each trial a run of ``ddpg-train``.

    from ddpg.experiment import tune as ddpg_tune
    ddpg_tune.start_ray()                                   # local Ray, or address="HOST:PORT"
    grid = ddpg_tune.run_sweep({"preset": "pendulum", "qfunc_lr": {"grid": [1e-3, 3e-4]}},
                               seeds=[1, 2, 3], storage="runs/sweeps", name="lr")
    summary = ddpg_tune.summarize("runs/sweeps/lr")         # mean +- std over seeds per config

``ddpg-sweep`` (:mod:`ddpg.experiment.sweep`) is the command line. Ray is an optional
dependency (the ``ray`` extra, :data:`INSTALL_HINT`): this module imports it only inside the
functions that need it, and ``import ddpg`` never imports this module.

This module holds the sweep: connecting to Ray, checking a sweep's arguments, running and
resuming it. What happens inside one trial (threads, training, reports to Tune, restore from
Tune's checkpoint) is :mod:`ddpg.experiment.trial`. The sweep's whole API is importable from
here: the trial function, the search space and the summaries are re-exported.

Why it is built this way:

* **One process per trial.** MXNet fixes its thread and oneDNN settings once per process, so
  Tune runs each trial in its own actor process (``reuse_actors=False``) and the trial sets
  its thread count before MXNet loads (:func:`ddpg.experiment.trial.make_trainable`).
* **Restarts continue from our checkpoints.** A trial that fails is restarted from its last
  checkpoint up to ``max_failures`` times, and :func:`resume_sweep` continues a sweep with
  ``Tuner.restore``; the trial restores its own DDPG checkpoint from Tune's.
* **The trial's folder is a run folder.** Tune copies each trial's working directory into
  the trial's folder (``sync_artifacts``). Tune's own CSV logger is switched off so that
  ``progress.csv`` there is the trial's (Tune keeps its ``result.json``), and
  ``python -m ddpg.plot`` reads the trial folders.
* **Checked before Ray starts, summarised without Ray.** The search space is checked with
  run_ddpg.py's parser (:mod:`ddpg.experiment.search_space`) and results are read from the
  sweep folder's files (:mod:`ddpg.experiment.sweep_results`).
"""
import json
import os
import socket

# re-exported: the sweep's whole API is here
from ddpg.experiment.search_space import (  # noqa: F401
    RESERVED_OPTIONS, SEARCH_KINDS, Search, check_seeds, check_space, is_number, is_ray_domain,
    normalize_name, parse_cli_values, space_from_cli, space_to_json)
from ddpg.experiment.sweep_results import (  # noqa: F401
    PROGRESS_FILE, TRIAL_FILE, format_summary, plot_summary, summarize,
    write_summary)
from ddpg.experiment.trial import THREAD_VARIABLES, make_trainable, run_trial  # noqa: F401

__all__ = ["THREAD_VARIABLES", "RESERVED_OPTIONS", "SEARCH_KINDS", "INSTALL_HINT", "Search",
           "import_ray", "normalize_name", "check_space", "check_seeds", "parse_cli_values",
           "space_from_cli", "space_to_json", "to_param_space", "make_trainable", "run_trial",
           "start_ray", "check_sweep", "run_sweep", "resume_sweep", "summarize",
           "format_summary", "write_summary", "plot_summary"]

INSTALL_HINT = 'pip install "mxnet-ddpg[ray]" (Ray 2.60 needs Python 3.10+)'
#: Written by run_sweep into the sweep folder: what resume_sweep needs.
SWEEP_FILE = "sweep.json"


def import_ray():
    """``(ray, ray.tune)``, or an ImportError that says what to install."""
    try:
        import ray
        from ray import tune
    except ImportError as error:
        raise ImportError("Ray sweeps need Ray Tune, which is not installed: %s (%s)"
                          % (INSTALL_HINT, error))
    return ray, tune


def to_param_space(space, seeds, tune):
    """Tune's ``param_space``: the checked ``space`` with ``seed`` as a grid over ``seeds``."""
    param_space = {name: (value.to_tune(tune) if isinstance(value, Search) else value)
                   for name, value in space.items()}
    param_space["seed"] = tune.grid_search(check_seeds(seeds))
    return param_space


# ---------------------------------------------------------------------------------------------
# Ray and the sweep
# ---------------------------------------------------------------------------------------------

def _check_reachable(address, timeout=5.0):
    """Fail fast on a ``HOST:PORT`` nobody answers: ``ray.init`` would retry for minutes."""
    host, sep, port = address.rpartition(":")
    if not sep or not port.isdigit():
        return  # "auto", "ray://...": Ray checks those itself
    try:
        socket.create_connection((host.strip("[]") or "127.0.0.1", int(port)),
                                 timeout=timeout).close()
    except OSError as error:
        raise ConnectionError(
            "cannot reach a Ray cluster at %s (%s). Start one with `ray start --head` on "
            "the head node and pass its GCS address (HOST:6379 by default), or leave out "
            "--address to run on a local Ray started in this process" % (address, error))


def start_ray(address=None, num_cpus=None, temp_dir=None, trial_output=False):
    """Connect to the cluster at ``address`` or start a local Ray in this process.

    Returns True when this call initialised Ray (the caller then shuts it down), False when
    Ray was already initialised. ``num_cpus`` and ``temp_dir`` apply to a local Ray only
    (Ray's default folder is /tmp/ray; socket paths under it must stay short). The trials'
    console output goes to their folders (``stdout``, ``stderr``, ``debug.log``); with
    ``trial_output`` it is also shown here, interleaved.
    """
    ray, _ = import_ray()
    if ray.is_initialized():
        return False
    if address:
        if num_cpus is not None or temp_dir is not None:
            raise ValueError("num_cpus and temp_dir apply to a local Ray only; the cluster "
                             "at %s has its own" % (address,))
        _check_reachable(address)
        try:
            ray.init(address=address, log_to_driver=trial_output)
        except (ConnectionError, ray.exceptions.RayError) as error:
            hint = ""
            if os.environ.get("RAY_AUTH_MODE", "").lower() != "token" and address != "auto":
                # Ray sends its token to an explicit address only in token mode
                hint = (". If the cluster uses token authentication (the default of `ray "
                        "start`), set RAY_AUTH_MODE=token and make its token available "
                        "(~/.ray/auth_token, RAY_AUTH_TOKEN_PATH or RAY_AUTH_TOKEN)")
            raise ConnectionError("cannot connect to the Ray cluster at %s: %s%s"
                                  % (address, error, hint))
        return True
    options = {"include_dashboard": False, "log_to_driver": trial_output}
    if num_cpus is not None:
        options["num_cpus"] = num_cpus
    if temp_dir is not None:
        options["_temp_dir"] = os.path.abspath(temp_dir)
    ray.init(**options)
    return True


def _check_resources(ray, cpus, gpus):
    """A trial that no node can hold would wait forever: say so before starting."""
    total = ray.cluster_resources()
    if total.get("CPU", 0) < cpus or total.get("GPU", 0) < gpus:
        raise ValueError("each trial asks for %g CPU(s) and %g GPU(s) but the Ray cluster has "
                         "%g CPU(s) and %g GPU(s) in all" % (cpus, gpus, total.get("CPU", 0),
                                                             total.get("GPU", 0)))


def _no_tune_csv_logger(tune_module):
    """Tune's CSV logger with its writing switched off: Tune adds its own unless one is
    given, and its progress.csv would land where the trial's own progress.csv goes."""
    from ray.tune.logger import CSVLoggerCallback

    class TrialWritesProgressCsv(CSVLoggerCallback):
        def log_trial_result(self, iteration, trial, result):
            pass

        def log_trial_end(self, trial, failed=False):
            pass

    return TrialWritesProgressCsv()


def _trainable(tune, settings):
    resources = {"cpu": settings["cpus_per_trial"]}
    if settings["gpus_per_trial"]:
        resources["gpu"] = settings["gpus_per_trial"]
    return tune.with_resources(make_trainable(settings["checkpoint_freq"],
                                              settings["threads_per_trial"]), resources)


def _run_config(tune, settings, storage, name, verbose):
    return tune.RunConfig(
        name=name, storage_path=storage, verbose=verbose,
        failure_config=tune.FailureConfig(max_failures=settings["max_failures"]),
        checkpoint_config=tune.CheckpointConfig(num_to_keep=settings["keep_checkpoints"]),
        # the trial's working directory (progress.csv, debug.log, trial.json) is copied into
        # its folder at every checkpoint, every 30 s and at the end
        sync_config=tune.SyncConfig(sync_artifacts=True, sync_period=30),
        callbacks=[_no_tune_csv_logger(tune)], log_to_file=True)


def check_sweep(space, seeds=(1, 2, 3), num_samples=1, max_concurrent=None,
                cpus_per_trial=1, gpus_per_trial=0, threads_per_trial=None, checkpoint_freq=1,
                keep_checkpoints=2, max_failures=0):
    """Check a sweep's arguments (see :func:`run_sweep`) without Ray; returns the checked
    space and the trial settings, or raises ``ValueError`` saying what is wrong."""
    space = check_space(space)
    check_seeds(seeds)
    settings = _settings(cpus_per_trial, gpus_per_trial, threads_per_trial, checkpoint_freq,
                         keep_checkpoints, max_failures)
    if isinstance(num_samples, bool) or int(num_samples) != num_samples or num_samples < 1:
        raise ValueError("num_samples must be a positive integer, got %r" % (num_samples,))
    if num_samples > 1 and not any(is_ray_domain(value) or (
            isinstance(value, Search) and value.kind != "grid") for value in space.values()):
        raise ValueError("num_samples=%d would repeat identical trials: nothing in the space "
                         "is drawn at random (choice, uniform, loguniform); give more seeds "
                         "instead" % (num_samples,))
    if max_concurrent is not None and (isinstance(max_concurrent, bool)
                                       or int(max_concurrent) != max_concurrent
                                       or max_concurrent < 1):
        raise ValueError("max_concurrent must be a positive integer, got %r"
                         % (max_concurrent,))
    return space, settings


def run_sweep(space, seeds=(1, 2, 3), storage="runs/sweeps", name="sweep", num_samples=1,
              search_seed=None, max_concurrent=None, cpus_per_trial=1, gpus_per_trial=0,
              threads_per_trial=None, checkpoint_freq=1, keep_checkpoints=2, max_failures=0,
              verbose=1):
    """Run every configuration of ``space`` with every seed as Tune trials; returns Tune's
    ResultGrid. The sweep's folder is ``storage/name``.

    ``space``: see :func:`check_space`. Random searches are drawn ``num_samples`` times
    (with ``search_seed``), each draw run with every seed (Tune's ``constant_grid_search``);
    grids are crossed. ``max_concurrent`` caps the trials running at once (by default the
    cluster's CPUs divided by ``cpus_per_trial`` do). Each trial gets ``cpus_per_trial``
    CPUs, ``gpus_per_trial`` of a GPU (a fraction shares one; any share trains on the GPU)
    and ``threads_per_trial`` threads (default: its whole CPUs, at least 1). A trial that
    fails is restarted from its last checkpoint up to ``max_failures`` times. Ray must be
    initialised (:func:`start_ray`), or Tune starts a local Ray.
    """
    space, settings = check_sweep(space, seeds, num_samples, max_concurrent, cpus_per_trial,
                                  gpus_per_trial, threads_per_trial, checkpoint_freq,
                                  keep_checkpoints, max_failures)
    ray, tune = import_ray()
    param_space = to_param_space(space, seeds, tune)
    storage = os.path.abspath(storage)
    folder = os.path.join(storage, name)
    if os.path.exists(os.path.join(folder, SWEEP_FILE)):
        raise ValueError("%s already holds a sweep: resume it (--resume) or choose another "
                         "--name" % (folder,))
    if ray.is_initialized():
        _check_resources(ray, settings["cpus_per_trial"], settings["gpus_per_trial"])
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, SWEEP_FILE), "w") as sweep_file:
        json.dump(dict(settings, space=space_to_json(space), seeds=list(seeds),
                       num_samples=num_samples, search_seed=search_seed,
                       max_concurrent=max_concurrent), sweep_file, indent=2, sort_keys=True)
    from ray.tune.search.basic_variant import BasicVariantGenerator
    tuner = tune.Tuner(
        _trainable(tune, settings), param_space=param_space,
        tune_config=tune.TuneConfig(
            num_samples=num_samples,
            # one process per trial: MXNet's thread and oneDNN settings are per process
            reuse_actors=False,
            # a random draw is shared by all seeds (and grid points), so seeds average it;
            # the cap on concurrent trials belongs to this generator (Tune ignores
            # TuneConfig's max_concurrent_trials, with a warning, when a generator is given)
            search_alg=BasicVariantGenerator(constant_grid_search=True,
                                             random_state=search_seed,
                                             max_concurrent=max_concurrent or 0)),
        run_config=_run_config(tune, settings, storage, name, verbose))
    return tuner.fit()


def _settings(cpus_per_trial, gpus_per_trial, threads_per_trial, checkpoint_freq,
              keep_checkpoints, max_failures):
    if not is_number(cpus_per_trial) or cpus_per_trial <= 0:
        raise ValueError("cpus_per_trial must be positive, got %r" % (cpus_per_trial,))
    if not is_number(gpus_per_trial) or gpus_per_trial < 0:
        raise ValueError("gpus_per_trial must be 0 or positive, got %r" % (gpus_per_trial,))
    if gpus_per_trial > 1 and gpus_per_trial != int(gpus_per_trial):
        raise ValueError("gpus_per_trial above 1 must be whole GPUs, got %r"
                         % (gpus_per_trial,))
    for label, value, low in (("keep_checkpoints", keep_checkpoints, 1),
                              ("max_failures", max_failures, -1)):
        if isinstance(value, bool) or int(value) != value or value < low:
            raise ValueError("%s must be an integer >= %d, got %r" % (label, low, value))
    make_trainable(checkpoint_freq, threads_per_trial)  # checks both
    return {"cpus_per_trial": cpus_per_trial, "gpus_per_trial": gpus_per_trial,
            "threads_per_trial": threads_per_trial, "checkpoint_freq": int(checkpoint_freq),
            "keep_checkpoints": int(keep_checkpoints), "max_failures": int(max_failures)}


def resume_sweep(storage, name, verbose=1):
    """Continue the sweep ``storage/name``: unfinished trials resume, errored trials restart
    from their last checkpoint; finished ones stay. Its settings come from its sweep.json."""
    _, tune = import_ray()
    folder = os.path.join(os.path.abspath(storage), name)
    try:
        with open(os.path.join(folder, SWEEP_FILE)) as sweep_file:
            saved = json.load(sweep_file)
    except (OSError, ValueError) as error:
        raise ValueError("%s is not a sweep folder run_sweep wrote (%s)" % (folder, error))
    if not tune.Tuner.can_restore(folder):
        raise ValueError("%s holds no Tune experiment state to resume" % (folder,))
    settings = _settings(*(saved[key] for key in (
        "cpus_per_trial", "gpus_per_trial", "threads_per_trial", "checkpoint_freq",
        "keep_checkpoints", "max_failures")))
    tuner = tune.Tuner.restore(folder, trainable=_trainable(tune, settings),
                               resume_unfinished=True, resume_errored=True)
    return tuner.fit()
