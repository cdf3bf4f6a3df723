"""Learning curves from ``progress.csv`` files: mean +- std over seeds, one line per group.

    ddpg-plot runs/bench/pendulum -o docs/pendulum.png --hline "SB3 zoo=-152"
    ddpg-plot runs/a runs/b -o both.png --label "small=*runs/a*" --label "big=*runs/b*"

Arguments are ``progress.csv`` files, run folders, or folders above them (searched
recursively). x is the ``TotalEnvSteps`` column (training environment steps; evaluation steps
are not counted), y the ``--key`` column (default ``AverageReturn``, the deterministic
evaluation return). How runs are grouped, how seeds with different x points are combined and
which std is drawn is documented in :mod:`ddpg.experiment.results`.

matplotlib is imported only when a figure is drawn (with the non-interactive Agg backend, so
this works on machines without a display), and only this module needs it: it is a benchmark
requirement (``requirements-bench.txt``), not a requirement of the library. ``ddpg-plot`` and
``python -m ddpg.plot`` are the same command.
"""
import argparse
import functools
import os
import sys

from ddpg.experiment.results import aggregate, find_progress_files, group_runs, read_curve
from ddpg.experiment.script import check_output, run_script

__all__ = ["import_pyplot", "plot_curves", "parse_pair", "build_parser", "main", "entry", "PROG"]

#: The command's name in its messages when run as ``python -m ddpg.plot``; the console script
#: ``ddpg-plot`` passes its own.
PROG = "python -m ddpg.plot"


def import_pyplot():
    """``matplotlib.pyplot`` on the Agg backend, or an ImportError that says what to install."""
    try:
        import matplotlib
    except ImportError as error:
        raise ImportError('plotting needs matplotlib: pip install "mxnet-ddpg[plot]" (%s)'
                          % (error,))
    matplotlib.use("Agg")  # no display needed; must precede the pyplot import
    import matplotlib.pyplot as plt
    return plt


def parse_pair(text, what):
    """Split ``"name=value"`` at its *last* ``=`` (names may contain ``=``, globs rarely do)."""
    name, sep, value = text.rpartition("=")
    if not sep or not name or not value:
        raise argparse.ArgumentTypeError("%s must look like NAME=VALUE, got %r" % (what, text))
    return name, value


def _label_pair(text):
    return parse_pair(text, "--label")


def _hline_pair(text):
    name, value = parse_pair(text, "--hline")
    try:
        return name, float(value)
    except ValueError:
        raise argparse.ArgumentTypeError("--hline value must be a number, got %r" % (value,))


#: The figure's size in inches before the legend's rows are added below the axes.
FIGURE_SIZE = (7, 4.5)
#: The height one legend row adds to the figure, in inches.
LEGEND_ROW_HEIGHT = 0.25


def _legend_below(figure, axes):
    """The legend in one column below the axes (under their x label), the figure grown by
    its rows, so that it never covers the curves however many or long the names."""
    handles, names = axes.get_legend_handles_labels()
    figure.set_size_inches(FIGURE_SIZE[0], FIGURE_SIZE[1] + LEGEND_ROW_HEIGHT * len(names))
    figure.legend(handles, names, loc="outside lower center", ncols=1, fontsize="small",
                  frameon=False)


#: The reference lines' (colour, line style) pairs, in --hline order: grey, olive and cyan
#: (the curves take the colour cycle's first seven), dashed, then dotted, then dash-dotted, so
#: that up to nine published figures in one plot stay told apart.
REFERENCE_STYLES = [(color, linestyle) for linestyle in ("--", ":", "-.")
                    for color in ("C7", "C8", "C9")]


def plot_curves(paths, output, key="AverageReturn", x="TotalEnvSteps", title=None,
                labels=(), hlines=(), log=print):
    """Draw the groups found under ``paths`` into the image file ``output``.

    Returns ``{group: {"runs": [...], "x": grid, "mean": ..., "std": ...}}`` so that callers
    (and tests) can check what was drawn. Runs with no data point for ``key`` are left out
    with a message rather than failing the whole figure: a run that crashed before its first
    evaluation should not hide the others.
    """
    progress_files = find_progress_files(paths)
    if not progress_files:
        raise ValueError("no progress.csv found under %s" % (", ".join(paths),))
    plt = import_pyplot()
    drawn = {}
    figure, axes = plt.subplots(figsize=FIGURE_SIZE, layout="constrained")
    try:
        for group, files in group_runs(progress_files, labels).items():
            curves, used = [], []
            for path in files:
                xs, ys = read_curve(path, key=key, x=x)
                if len(xs) == 0:
                    log("skipping %s: no rows with both %s and %s" % (path, x, key))
                    continue
                curves.append((xs, ys))
                used.append(path)
            if not curves:
                continue
            grid, mean, std, limited_by = aggregate(curves)
            if limited_by is not None:
                log("group %s: curve stops at %s=%g, where %s ends"
                    % (group, x, grid[-1], used[limited_by]))
            name = "%s (%d seed%s)" % (group, len(curves), "" if len(curves) == 1 else "s")
            line, = axes.plot(grid, mean, label=name, marker="." if len(grid) < 30 else None)
            if len(curves) > 1:
                axes.fill_between(grid, mean - std, mean + std, color=line.get_color(),
                                  alpha=0.2, linewidth=0)
            drawn[group] = {"runs": used, "x": grid, "mean": mean, "std": std}
        if not drawn:
            raise ValueError("none of the runs under %s has a %s value"
                             % (", ".join(paths), key))
        for index, (name, value) in enumerate(hlines):
            color, linestyle = REFERENCE_STYLES[index % len(REFERENCE_STYLES)]
            axes.axhline(value, linestyle=linestyle, linewidth=1, color=color,
                         label="%s (%g)" % (name, value))
        axes.set_xlabel("environment steps" if x == "TotalEnvSteps" else x)
        axes.set_ylabel(key + (" (mean ± std over seeds)"
                               if any(len(g["runs"]) > 1 for g in drawn.values()) else ""))
        axes.set_title(title or "%s over %s" % (key, "environment steps"
                                                if x == "TotalEnvSteps" else x))
        axes.grid(True, alpha=0.3)
        _legend_below(figure, axes)
        parent = os.path.dirname(os.path.abspath(output))
        os.makedirs(parent, exist_ok=True)
        figure.savefig(output, dpi=120, bbox_inches="tight")
    finally:
        plt.close(figure)
    return drawn


def build_parser(prog=PROG):
    parser = argparse.ArgumentParser(
        prog=prog,
        description="Plot mean +- std learning curves over seeds from progress.csv files. "
                    "Runs are grouped by the folder above their run folder "
                    "(runs/bench/pendulum/seed_1 -> pendulum) unless --label says otherwise, "
                    "and split by environment id and settings (each run's params.json): "
                    "runs of different tasks are never averaged together.")
    parser.add_argument("paths", nargs="+",
                        help="progress.csv files, run folders, or folders above them")
    parser.add_argument("-o", "--output", required=True, help="image file to write (.png, ...)")
    parser.add_argument("--key", default="AverageReturn", help="column to plot")
    parser.add_argument("--x", default="TotalEnvSteps", help="column for the x axis")
    parser.add_argument("--title", default=None, help="figure title")
    parser.add_argument("--label", action="append", type=_label_pair, default=[],
                        metavar="NAME=GLOB",
                        help="put runs whose path matches GLOB (fnmatch; * matches /) in group "
                             "NAME; the first matching --label wins; repeatable")
    parser.add_argument("--hline", action="append", type=_hline_pair, default=[],
                        metavar="LABEL=VALUE",
                        help="horizontal reference line, e.g. a published result; repeatable")
    return parser


def main(argv=None, prog=PROG):
    args = build_parser(prog).parse_args(argv)
    try:
        check_output("-o", args.output)
        drawn = plot_curves(args.paths, args.output, key=args.key, x=args.x, title=args.title,
                            labels=args.label, hlines=args.hline)
    except (ImportError, ValueError, KeyError, FileNotFoundError) as error:
        message = error.args[0] if isinstance(error, KeyError) and error.args else error
        print("%s: error: %s" % (prog, message), file=sys.stderr)
        return 2
    for group, data in drawn.items():
        print("%s: %d run(s), final %s %.6g +- %.6g at %s=%g"
              % (group, len(data["runs"]), args.key, data["mean"][-1], data["std"][-1],
                 args.x, data["x"][-1]))
    print("wrote %s" % (args.output,))
    return 0


def entry():
    """The ``ddpg-plot`` console script."""
    sys.exit(run_script(functools.partial(main, prog="ddpg-plot"), prog="ddpg-plot"))
