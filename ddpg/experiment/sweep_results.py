"""The results of a sweep (:mod:`ddpg.experiment.tune`), read from its folder's files, not Ray.

:func:`summarize` groups the trials of a sweep folder by configuration (the trial's
configuration without its seed), so that a finished, interrupted or resumed sweep can be
summarised without starting Ray (``ddpg-sweep --summarize-only``). Each trial folder
holds ``trial.json`` (its configuration) and the ``progress.csv`` our logger wrote.
"""
import csv
import glob
import json
import os

from ddpg.experiment.results import PROGRESS_FILE, mean_std, read_curve

__all__ = ["TRIAL_FILE", "PROGRESS_FILE", "cell_value", "summarize", "format_summary",
           "write_summary", "plot_summary"]

#: What a trial writes in its folder (:mod:`ddpg.experiment.trial`): its configuration and
#: worker settings.
TRIAL_FILE = "trial.json"


def cell_value(text):
    """A progress.csv cell as an int or float (or the text itself); None when empty."""
    if text is None or text == "":
        return None
    try:
        return int(text)
    except ValueError:
        pass
    try:
        return float(text)
    except ValueError:
        return text



def _trial_folders(folder):
    found = []
    for entry in sorted(os.listdir(folder)):
        path = os.path.join(folder, entry)
        if not entry.startswith(".") and os.path.isfile(os.path.join(path, TRIAL_FILE)):
            found.append(path)
    return found


def _canonical(config):
    return json.dumps(config, sort_keys=True, default=str)


def _format_value(value):
    if isinstance(value, float):
        return "%.4g" % value
    if isinstance(value, list):
        return "-".join(_format_value(v) for v in value)
    return str(value)


def summarize(folder, metric="AverageReturn", mode="max"):
    """The sweep in ``folder`` per configuration (the trial's config without its seed).

    For each configuration: the seeds, each seed's final ``metric`` (its last value in the
    trial's progress.csv), their mean and population std, the epochs and environment steps
    done, and the trial folders. Configurations are sorted best first (``mode`` "max" or
    "min"); those without a value come last. ``varying`` lists the options whose values
    differ between configurations, which is what their labels show.
    """
    if mode not in ("max", "min"):
        raise ValueError("mode must be 'max' or 'min', got %r" % (mode,))
    trials = _trial_folders(folder)
    if not trials:
        raise ValueError("no trials in %s (folders with %s)" % (folder, TRIAL_FILE))
    groups, columns = {}, set()
    for trial in trials:
        with open(os.path.join(trial, TRIAL_FILE)) as trial_file:
            config = dict(json.load(trial_file)["config"])
        seed = config.pop("seed", None)
        progress = os.path.join(trial, PROGRESS_FILE)
        final, epochs, steps = None, 0, 0
        if os.path.exists(progress):
            with open(progress, newline="") as csv_file:
                rows = list(csv.DictReader(csv_file))
            if rows:
                columns.update(rows[0])
                epochs = len(rows)
                steps = cell_value(rows[-1].get("TotalEnvSteps")) or 0
                if metric in rows[0]:
                    values = read_curve(progress, key=metric)[1]
                    final = float(values[-1]) if len(values) else None
        group = groups.setdefault(_canonical(config), {"config": config, "runs": []})
        group["runs"].append({"seed": seed, "final": final, "epochs": epochs,
                              "env_steps": steps, "folder": trial})
    if columns and metric not in columns:
        raise ValueError("the trials' progress.csv files have no column %r; their columns "
                         "are: %s" % (metric, ", ".join(sorted(columns))))
    names = sorted(set().union(*(g["config"] for g in groups.values())))
    varying = [name for name in names
               if len({_canonical(g["config"].get(name)) for g in groups.values()}) > 1]
    configs = []
    for group in groups.values():
        runs = sorted(group["runs"], key=lambda run: (run["seed"] is None, run["seed"]))
        finals = [run["final"] for run in runs if run["final"] is not None]
        mean, std = mean_std(finals) if finals else (None, None)
        configs.append({
            "label": ", ".join("%s=%s" % (name, _format_value(group["config"].get(name)))
                               for name in varying) or "all trials",
            "config": group["config"], "seeds": [run["seed"] for run in runs],
            "n_with_result": len(finals), "mean": mean, "std": std, "runs": runs})
    sign = -1.0 if mode == "max" else 1.0
    configs.sort(key=lambda c: (c["mean"] is None, 0.0 if c["mean"] is None
                                else sign * c["mean"]))
    return {"folder": os.path.abspath(folder), "metric": metric, "mode": mode,
            "varying": varying, "configs": configs}


def format_summary(summary):
    """The summary as text table lines, best configuration first."""
    metric = summary["metric"]
    header = ["rank", "config", "seeds", "final %s (mean +- std)" % metric, "epochs",
              "env steps"]
    rows = []
    for rank, config in enumerate(summary["configs"], 1):
        runs = config["runs"]
        result = ("no result" if config["mean"] is None
                  else "%.4g +- %.4g" % (config["mean"], config["std"]))
        if config["n_with_result"] < len(runs):
            result += " (%d of %d seeds)" % (config["n_with_result"], len(runs))
        rows.append([str(rank), config["label"], " ".join(str(s) for s in config["seeds"]),
                     result, _span(run["epochs"] for run in runs),
                     _span(run["env_steps"] for run in runs)])
    widths = [max(len(row[i]) for row in [header] + rows) for i in range(len(header))]
    lines = ["  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip()
             for row in [header] + rows]
    lines.insert(1, "  ".join("-" * width for width in widths))
    return lines


def _span(values):
    """"3" when all values are 3, "2-3" when they range from 2 to 3."""
    values = sorted(set(values))
    return str(values[0]) if len(values) == 1 else "%s-%s" % (values[0], values[-1])


def write_summary(summary, folder=None):
    """Write ``results.json`` (everything) and ``results.csv`` (one row per configuration,
    best first) into the sweep folder; returns their paths."""
    folder = folder or summary["folder"]
    json_path = os.path.join(folder, "results.json")
    csv_path = os.path.join(folder, "results.csv")
    with open(json_path, "w") as json_file:
        json.dump(summary, json_file, indent=2, default=str)
    names = sorted(set().union(*(c["config"] for c in summary["configs"])))
    metric = summary["metric"]
    with open(csv_path, "w", newline="") as csv_file:
        writer = csv.writer(csv_file)
        writer.writerow(["rank"] + names + ["seeds", "n_with_result", metric + "_mean",
                                            metric + "_std", "final_per_seed"])
        for rank, config in enumerate(summary["configs"], 1):
            writer.writerow(
                [rank] + [_canonical(config["config"][n]) if isinstance(
                    config["config"].get(n), (list, dict)) else config["config"].get(n, "")
                    for n in names]
                + [" ".join(str(s) for s in config["seeds"]), config["n_with_result"],
                   "" if config["mean"] is None else repr(config["mean"]),
                   "" if config["std"] is None else repr(config["std"]),
                   " ".join("" if run["final"] is None else repr(run["final"])
                            for run in config["runs"])])
    return json_path, csv_path


def plot_summary(summary, output=None, log=print):
    """Draw ``curves.png`` in the sweep folder with ``python -m ddpg.plot``'s plotting: one
    line per configuration, mean +- std over its seeds, against environment steps."""
    from ddpg.experiment.plot import plot_curves
    output = output or os.path.join(summary["folder"], "curves.png")
    paths, labels = [], []
    for config in summary["configs"]:
        for run in config["runs"]:
            progress = os.path.join(run["folder"], PROGRESS_FILE)
            if os.path.exists(progress):
                paths.append(progress)
                labels.append((config["label"], glob.escape(os.path.abspath(run["folder"]))))
    if not paths:
        raise ValueError("no trial of %s has a progress.csv yet" % (summary["folder"],))
    plot_curves(paths, output, key=summary["metric"], labels=labels,
                title="%s: %s" % (os.path.basename(summary["folder"]), summary["metric"]),
                log=log)
    return output
