"""``run_ddpg.py --resume``: the run's settings from its checkpoint, and its progress.csv.

A resumed run trains what the checkpoint's run trained: its arguments come from the
checkpoint's manifest (``metadata.run_args``, written by :func:`ddpg.experiment.make_algorithm`),
and only the flags of :data:`RESUME_FLAGS`, which say how to continue, may be given with
``--resume``. Every check is made before anything is written; after the restore,
:func:`continue_progress` drops the progress.csv rows the checkpoint does not hold.
"""
import argparse
import csv
import os

from ddpg.checkpoint import read_manifest
from ddpg.checkpoint.format import MANIFEST
from ddpg.errors import CheckpointError
from ddpg.experiment.cli import INVOCATION_FLAGS, RESUME_FLAGS, explicit_flags
from ddpg.experiment.run_folder import newest_checkpoint
from ddpg.experiment.script import UsageError

# RESUME_FLAGS and INVOCATION_FLAGS are the command line's (ddpg.experiment.cli), named here
# too, where they are used
__all__ = ["RESUME_FLAGS", "INVOCATION_FLAGS", "resumed_args", "checkpoint_run_folder",
           "continue_progress"]


def resumed_args(args, argv):
    """The arguments saved in the checkpoint ``args.resume``, continuation flags applied.

    The resumed run writes to the folder the checkpoint lies in (``runs/x`` for
    ``runs/x/params``), found from the checkpoint's own path and never from the current
    folder, unless ``--log-dir`` is given. A checkpoint that cannot be read, was not written
    by run_ddpg.py or has already trained ``--n-epochs`` epochs is a :class:`UsageError`;
    nothing is written before these checks.
    """
    given = explicit_flags(argv)
    refused = sorted(set(given) - set(RESUME_FLAGS))
    if refused:
        raise UsageError("--resume takes the run's settings from the checkpoint; %s "
                         "cannot be changed when resuming (a new run with other settings: "
                         "leave out --resume)"
                         % ", ".join("--" + flag.replace("_", "-") for flag in refused))
    _refuse_run_folder(args.resume)
    try:
        manifest = read_manifest(args.resume)
    except CheckpointError as error:
        raise UsageError("--resume %s: %s" % (args.resume, error)) from error
    saved = manifest.get("metadata", {}).get("run_args")
    if not isinstance(saved, dict):
        raise UsageError("--resume %s was not written by run_ddpg.py (its manifest has no "
                         "run_args); restore it from Python with DDPG.restore" % args.resume)
    merged = dict(vars(args))  # flags newer than the checkpoint keep their defaults
    merged.update(saved)
    # --policy-delay was TD3's alone (default 2) before DDPG had it: the value the algorithm
    # used is in the manifest's hyperparameters (none: the algorithm's default)
    merged["policy_delay"] = manifest.get("hyperparameters", {}).get("policy_delay")
    merged.update(given)
    if merged.get("no_log_dir"):
        merged["log_dir"] = None
    elif "log_dir" not in given:
        merged["log_dir"] = checkpoint_run_folder(args.resume)
    done = int(manifest.get("progress", {}).get("epoch", 0))
    if merged["n_epochs"] <= done:
        raise UsageError("--resume %s has already trained %d epoch%s (n_epochs %d): pass "
                         "--n-epochs N with N > %d to continue it"
                         % (args.resume, done, "" if done == 1 else "s",
                            merged["n_epochs"], done))
    return argparse.Namespace(**merged)


def _refuse_run_folder(path):
    """``--resume`` names a checkpoint folder; given a run folder, say which checkpoint in it
    to name."""
    if os.path.isfile(os.path.join(path, MANIFEST)) or not os.path.isdir(path):
        return
    newest = newest_checkpoint(path)
    if newest:
        raise UsageError("--resume %s is a run folder, not a checkpoint: resume its newest "
                         "checkpoint with --resume %s" % (path, newest))


def checkpoint_run_folder(checkpoint_path):
    """The run folder a run_ddpg.py checkpoint belongs to: the folder it lies in.

    run_ddpg.py saves its checkpoints (``params/``, ``itr_N/``, ``interrupted/``) in its
    ``--log-dir``, next to ``params.json``. A checkpoint elsewhere (a sweep trial's
    ``checkpoint_N/ddpg``) has no run folder around it: the user must say where the resumed
    run writes, with ``--log-dir``.
    """
    # the folder in the user's own terms (relative when the checkpoint's path is), so that
    # messages name paths as the user typed them
    folder = os.path.dirname(os.path.normpath(checkpoint_path)) or os.curdir
    if not any(os.path.isfile(os.path.join(folder, name))
               for name in ("params.json", "progress.csv")):
        raise UsageError("--resume %s: the folder it lies in (%s) is not a run_ddpg.py run "
                         "folder (no params.json or progress.csv); pass --log-dir DIR for "
                         "the resumed run's logs and checkpoints"
                         % (checkpoint_path, os.path.abspath(folder)))
    return folder


def continue_progress(log_dir, epoch):
    """Keep only the rows of ``log_dir``/progress.csv that the checkpoint of ``epoch`` holds.

    A run that was killed after writing an epoch's row but before that epoch's checkpoint
    was complete has rows the resumed run writes again (and perhaps a last line cut short):
    they are dropped, atomically, so the continued progress.csv has each epoch once, as the
    uninterrupted run's has. Returns the number of lines dropped.
    """
    path = os.path.join(log_dir, "progress.csv") if log_dir else None
    if not path or not os.path.isfile(path):
        return 0
    with open(path, newline="", encoding="utf-8") as handle:
        lines = handle.read().split("\n")
    if len(lines) < 2:
        return 0
    header = next(csv.reader([lines[0]]))
    if "Epoch" not in header:
        return 0
    column = header.index("Epoch")
    complete, last = lines[1:-1], lines[-1]  # the last piece is "" unless cut short
    kept = []
    for line in complete:
        cells = next(csv.reader([line]), [])
        try:
            if int(cells[column]) < epoch:
                kept.append(line)
        except (IndexError, ValueError):
            continue  # a damaged line
    dropped = len(complete) - len(kept) + (1 if last else 0)
    if dropped:
        temporary = path + ".trim"
        with open(temporary, "w", newline="", encoding="utf-8") as handle:
            handle.write("\n".join([lines[0]] + kept) + "\n")
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, path)
    return dropped
