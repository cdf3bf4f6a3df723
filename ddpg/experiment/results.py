"""Reading ``progress.csv`` files, combining learning curves over seeds, writing summaries.

Shared by ``ddpg.experiment.plot`` (figures) and ``benchmarks/learning.py`` (summaries), and
kept free of matplotlib so that summaries work where only the library's own requirements are
installed.

Conventions, chosen once here so that every figure and table means the same thing:

* A **run** is one ``progress.csv`` (one seed). Its folder is the *run folder*; by default the
  run's **group** is the name of the folder above it, so ``runs/bench/pendulum/seed_1`` belongs
  to group ``pendulum`` and its seeds are averaged together.
* Rows whose value (or x) is empty or not a finite number are skipped: an epoch without an
  evaluation leaves ``AverageReturn`` empty (see ``DDPG.eval_interval``).
* The spread over seeds is the **population standard deviation** (``numpy.std``, ddof 0), as
  rllab's and Stable-Baselines3's logs use for their ``Std`` columns.
* Seeds whose curves have different x points are **interpolated linearly onto the union of
  their x points, restricted to the range that every seed covers** (no extrapolation), so each
  point of a mean curve averages all the group's seeds. Runs of one preset evaluate at the same
  steps, so this normally changes nothing; it matters when comparing runs of different epoch
  lengths, or while one seed is still running (the group's curve then stops where the
  shortest seed stops, and :func:`aggregate` says which seed limits it).
"""
import csv
import fnmatch
import json
import math
import os

import numpy as np

from ddpg import hyperparams

__all__ = ["PROGRESS_FILE", "find_progress_files", "read_rows", "read_curve",
           "group_of", "group_runs", "run_settings", "aggregate", "mean_std", "write_json"]

PROGRESS_FILE = "progress.csv"


def find_progress_files(paths):
    """The ``progress.csv`` files under ``paths``, sorted, without duplicates.

    Each path may be a ``progress.csv`` (any name, in fact: a file is taken as it is), a run
    folder holding one, or any folder above run folders, searched recursively. Folders whose
    name starts with a dot are skipped: the benchmark script moves failed runs into
    ``.failed`` so that they stay inspectable without polluting figures and summaries.
    """
    found = []
    for path in paths:
        if os.path.isfile(path):
            found.append(os.path.normpath(path))
            continue
        if not os.path.isdir(path):
            raise FileNotFoundError("no such file or folder: %s" % (path,))
        for root, dirs, files in os.walk(path):
            dirs[:] = sorted(d for d in dirs if not d.startswith("."))
            if PROGRESS_FILE in files:
                found.append(os.path.normpath(os.path.join(root, PROGRESS_FILE)))
    unique = []
    for path in found:
        if path not in unique:
            unique.append(path)
    return sorted(unique)


def read_rows(path):
    """All rows of a CSV file as dictionaries of strings (the header gives the keys)."""
    with open(path, newline="") as csv_file:
        return list(csv.DictReader(csv_file))


def _number(text):
    """``float(text)``, or None for an empty cell or anything that is not a finite number."""
    if text is None or text == "":
        return None
    try:
        value = float(text)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def read_curve(path, key="AverageReturn", x="TotalEnvSteps"):
    """Arrays ``(xs, ys)`` of the rows of ``path`` where both ``x`` and ``key`` are numbers.

    Raises ``KeyError`` naming the columns that exist when either column is missing, since a
    misspelt ``--key`` would otherwise give an empty figure.
    """
    rows = read_rows(path)
    columns = list(rows[0].keys()) if rows else []
    for column in (x, key):
        if rows and column not in columns:
            raise KeyError("%s has no column %r; its columns are: %s"
                           % (path, column, ", ".join(columns)))
    xs, ys = [], []
    for row in rows:
        x_value, y_value = _number(row.get(x)), _number(row.get(key))
        if x_value is not None and y_value is not None:
            xs.append(x_value)
            ys.append(y_value)
    return np.asarray(xs, dtype=np.float64), np.asarray(ys, dtype=np.float64)


def _run_folder(progress_path):
    return os.path.dirname(os.path.abspath(progress_path))


def group_of(progress_path, labels=()):
    """The group of a run: the first ``(name, glob)`` of ``labels`` that matches, else the name
    of the folder above the run folder.

    A glob matches the run folder's path or the ``progress.csv`` path, as given or absolute,
    with ``fnmatch`` rules (``*`` also matches ``/``), so ``"*pendulum*"`` catches every run
    with ``pendulum`` anywhere in its path.
    """
    candidates = [progress_path, os.path.dirname(progress_path),
                  os.path.abspath(progress_path), _run_folder(progress_path)]
    for name, pattern in labels:
        if any(fnmatch.fnmatch(candidate, pattern) for candidate in candidates):
            return name
    return os.path.basename(os.path.dirname(_run_folder(progress_path))) or "runs"


#: Files in a run folder that hold run_ddpg.py's arguments (a Tune trial: run_args.json,
#: since Tune's own params.json is the trial's configuration).
RUN_ARGS_FILES = ("run_args.json", "params.json")
#: Arguments that say how a run was carried out, not what it trains: runs that differ only
#: in these (seeds above all) are averaged together.
NOT_SETTINGS = frozenset(["seed", "log_dir", "resume", "n_epochs", "ctx", "no_progress_bar",
                          "snapshot_mode", "snapshot_gap", "debug", "tensorboard",
                          "tensorboard_every", "trust_pickle", "no_log_dir", "overwrite",
                          "ray_address", "video_every", "video_camera"])
#: At most this many differing settings are written into a curve's label.
LABEL_SETTINGS = 4


def run_settings(progress_path):
    """The settings of the run (run_ddpg.py's arguments from its folder, without
    :data:`NOT_SETTINGS`), or None when its folder has no readable arguments file."""
    folder = _run_folder(progress_path)
    for name in RUN_ARGS_FILES:
        path = os.path.join(folder, name)
        if not os.path.isfile(path):
            continue
        try:
            with open(path) as args_file:
                arguments = json.load(args_file)
        except (OSError, ValueError):
            return None
        if isinstance(arguments, dict) and "env" in arguments:
            return _resolved({key: value for key, value in arguments.items()
                              if key not in NOT_SETTINGS})
    return None


def _flag_defaults():
    """ddpg-train's flags and their defaults, for the flags :func:`run_settings` keeps."""
    from ddpg.experiment.cli import build_parser  # pylint: disable=import-outside-toplevel
    return {name: value for name, value in vars(build_parser().parse_args([])).items()
            if name not in NOT_SETTINGS}


def _resolved(settings):
    """``settings`` completed and resolved: a flag newer than the run's arguments file takes
    its default (as it does when the run is resumed), so that the run groups with the newer
    runs of its settings; a flag left at None ("the algorithm's default") is replaced by that
    default: a resumed run's arguments record the value the checkpoint holds
    (``--policy-delay``: 1 for DDPG), and must group with the fresh runs of its seeds."""
    settings = dict(_flag_defaults(), **settings)
    if settings.get("policy_delay", 0) is None:
        algorithm = settings.get("algo", "ddpg")
        known = algorithm in hyperparams.algorithm_names()
        defaults = hyperparams.defaults(algorithm if known else "ddpg")
        settings = dict(settings, policy_delay=defaults["policy_delay"])
    return settings


def _signature(settings):
    return None if settings is None else json.dumps(settings, sort_keys=True, default=str)


def _setting_text(value):
    if isinstance(value, (list, tuple)):
        return " ".join(str(item) for item in value)
    return str(value)


def _label(base, settings, varying, limit=LABEL_SETTINGS):
    if settings is None:
        return base
    parts = [_setting_text(settings.get("env"))]
    shown = [key for key in varying if key != "env"]
    parts.extend("%s=%s" % (key, _setting_text(settings.get(key)))
                 for key in shown[:limit])
    if len(shown) > limit:
        parts.append("+%d more settings" % (len(shown) - limit))
    return "%s (%s)" % (base, ", ".join(parts))


def _unique_label(groups, base, settings, varying):
    """The group's label, with every differing setting when the first :data:`LABEL_SETTINGS`
    do not set it apart from a group already labelled, and numbered as a last resort (two
    settings written alike): no group is ever drawn over another."""
    label = _label(base, settings, varying)
    if label in groups:
        label = _label(base, settings, varying, limit=len(varying))
    number, unique = 1, label
    while unique in groups:
        number += 1
        unique = "%s #%d" % (label, number)
    return unique


def group_runs(progress_paths, labels=()):
    """``{group label: [progress paths]}``, groups in the order they first appear.

    Runs are first gathered by :func:`group_of` (a ``--label`` glob, else the folder above
    the run folder), then split by their settings (:func:`run_settings`: environment id and
    hyperparameters from the run's params.json), so that runs of different tasks or settings
    are never averaged into one curve. A label is the group's name followed by the
    environment id and the settings that differ between the groups of that name, e.g.
    ``pendulum (Pendulum-v1)`` or ``lr (Pendulum-v1, qfunc_lr=0.001)``. Runs without a
    params.json keep the name alone.
    """
    by_name = {}
    for path in progress_paths:
        settings = run_settings(path)
        variants = by_name.setdefault(group_of(path, labels), {})
        variants.setdefault(_signature(settings), (settings, []))[1].append(path)
    groups = {}
    for name, variants in by_name.items():
        known = [settings for settings, _ in variants.values() if settings is not None]
        keys = sorted(set().union(*[set(settings) for settings in known])) if known else []
        varying = [key for key in keys
                   if len({_signature({"v": settings.get(key)}) for settings in known}) > 1]
        for settings, paths in variants.values():
            groups[_unique_label(groups, name, settings, varying)] = paths
    return groups


def mean_std(values):
    """Mean and population std (ddof 0) of a sequence; ``(nan, nan)`` when it is empty."""
    values = np.asarray(values, dtype=np.float64)
    if values.size == 0:
        return float("nan"), float("nan")
    return float(np.mean(values)), float(np.std(values))


def aggregate(curves):
    """Mean and std over seeds of several ``(xs, ys)`` curves.

    Returns ``(grid, mean, std, limited_by)``: the grid is the sorted union of the curves' x
    points inside ``[max of first x, min of last x]`` (the range all curves cover), each curve
    is linearly interpolated onto it, and ``limited_by`` is the index of the curve that ends
    first (the one to blame when a group's line is shorter than expected), or None when all
    end at the same x. Empty curves are an error: a seed without a single data point cannot be
    averaged with the others.
    """
    if not curves:
        raise ValueError("no curves to aggregate")
    for index, (xs, _) in enumerate(curves):
        if len(xs) == 0:
            raise ValueError("curve %d has no data points" % index)
    sorted_curves = []
    for xs, ys in curves:
        order = np.argsort(xs, kind="stable")
        sorted_curves.append((np.asarray(xs)[order], np.asarray(ys)[order]))
    start = max(xs[0] for xs, _ in sorted_curves)
    ends = [xs[-1] for xs, _ in sorted_curves]
    stop = min(ends)
    union = np.unique(np.concatenate([xs for xs, _ in sorted_curves]))
    grid = union[(union >= start) & (union <= stop)]
    if grid.size == 0:
        raise ValueError("the curves have no x range in common (starts up to %g, ends from %g)"
                         % (start, stop))
    stacked = np.stack([np.interp(grid, xs, ys) for xs, ys in sorted_curves])
    limited_by = None if max(ends) == stop else int(np.argmin(ends))
    return grid, stacked.mean(axis=0), stacked.std(axis=0), limited_by


def write_json(path, data):
    """Write ``data`` through a temporary file and a rename: no half-written file is seen."""
    temporary = path + ".tmp"
    with open(temporary, "w") as json_file:
        json.dump(data, json_file, indent=2, sort_keys=True)
        json_file.write("\n")
    os.replace(temporary, path)
