"""A run's files in its ``--log-dir``: debug.log, progress.csv, params.json, TensorBoard events.

:func:`setup_logging` points the logger at the folder and writes the run's arguments there,
:func:`setup_tensorboard` adds TensorBoard event files (checked beforehand by
:func:`tensorboard_problem`, so that a run does not fail after its setup), and
:func:`close_logging` undoes both. run_ddpg.py and the Ray Tune trials
(:mod:`ddpg.experiment.tune`) share them.
"""
import json
import os

from ddpg import logger

__all__ = ["PATH_ARGUMENTS", "recorded_arguments", "setup_logging", "tensorboard_problem",
           "setup_tensorboard", "close_logging"]

#: The run's arguments that are paths: its files record them relative to the run folder
#: (``log_dir`` is ``.``, a resumed checkpoint ``params``), so that they name no folder of the
#: machine that ran it. Files of older runs may hold absolute paths; nothing reads these two
#: back (a resume finds the run folder from the checkpoint's own path; plots leave them out).
PATH_ARGUMENTS = ("log_dir", "resume")


def recorded_arguments(args, log_dir):
    """``vars(args)`` as the run folder ``log_dir`` records them: :data:`PATH_ARGUMENTS`
    relative to it."""
    values = dict(vars(args))
    for name in PATH_ARGUMENTS:
        if isinstance(values.get(name), str):
            values[name] = os.path.relpath(os.path.abspath(values[name]),
                                           os.path.abspath(log_dir))
    return values


def setup_logging(log_dir, args, params_file="params.json"):
    """Send the logger's text and tables to ``log_dir`` (debug.log, progress.csv) and write
    the run's arguments to ``params_file`` there. Nothing without a ``log_dir``.

    ``params_file`` differs only under Ray Tune, whose own params.json (the trial's
    configuration) lies in the same folder (:mod:`ddpg.experiment.tune`).
    """
    if not log_dir:
        return
    os.makedirs(log_dir, exist_ok=True)
    logger.add_text_output(os.path.join(log_dir, "debug.log"))
    logger.add_tabular_output(os.path.join(log_dir, "progress.csv"))
    with open(os.path.join(log_dir, params_file), "w") as params:
        json.dump(recorded_arguments(args, log_dir), params, indent=2, sort_keys=True)


def tensorboard_problem(args):
    """Why ``--tensorboard`` (or ``--tensorboard-every``) cannot work with ``args`` (a
    one-line message naming the fix), or None. Checked before anything is built, so that a
    run does not fail after setup."""
    if args.tensorboard_every < 1:
        return "--tensorboard-every must be a positive number of updates"
    if not getattr(args, "tensorboard", False):
        return None
    if not args.log_dir:
        return ("--tensorboard writes its event files into the run's folder: leave out "
                "--no-log-dir")
    try:
        import tensorboardX  # noqa: F401  pylint: disable=unused-import,import-outside-toplevel
    except ImportError:
        return "--tensorboard needs tensorboardX, which is not installed: %s" % (
            logger.TENSORBOARD_INSTALL,)
    return None


def setup_tensorboard(args, algo, params_file="params.json"):
    """With ``--tensorboard``: event files in ``args.log_dir`` for ``algo``'s run, the run's
    arguments (``params_file``, written by :func:`setup_logging`) as the text
    ``hyperparameters``. Call it after any restore: a resumed run's events start after the
    checkpoint's environment steps, and TensorBoard drops what an earlier process logged
    from there on (``purge_step``), so the curves continue without a duplicate step; a fresh
    run's curves start over (events of an earlier run in the folder are dropped)."""
    if not getattr(args, "tensorboard", False) or not args.log_dir:
        return
    first_step = algo.total_env_steps + 1 if algo.total_env_steps else 0
    logger.add_tensorboard_output(args.log_dir, step_key="TotalEnvSteps",
                                  purge_step=first_step)
    with open(os.path.join(args.log_dir, params_file)) as params:
        text = params.read()
    # a Markdown code block, so TensorBoard's text tab keeps the JSON's layout
    logger.record_text("hyperparameters", "```\n%s\n```" % text.strip(), first_step)


def close_logging(log_dir):
    """Undo :func:`setup_logging` and :func:`setup_tensorboard` (the files are closed;
    snapshots are switched off)."""
    if not log_dir:
        return
    logger.remove_tensorboard_output(log_dir)
    logger.set_snapshot_dir(None)
    logger.remove_tabular_output(os.path.join(log_dir, "progress.csv"))
    logger.remove_text_output(os.path.join(log_dir, "debug.log"))
