#!/usr/bin/env python
"""Training throughput (environment steps/s) of our DDPG in this working tree against an
earlier git revision, measured alternately in one invocation.

A shared machine's speed drifts by several percent within minutes, more than most changes to
the code are worth, so two invocations of ``benchmarks/throughput.py`` an hour apart compare
the machine as much as the code. This script checks the earlier revision out into a temporary
git worktree (``git worktree add --detach``, removed at the end, also on an error, Ctrl-C or
SIGTERM) and measures both trees in turns: for each configuration, ``--rounds`` rounds of one
measurement of each tree, base then current in the first round, current then base in the
next, and so on (ABBA), so that a drift during a round, and the first and second place of a
pair, weigh on both trees alike. Each measurement is a fresh process of that tree's own
``benchmarks/throughput.py`` (our DDPG only: no SB3, JAX or Gluon contender, no breakdown)
with the same interpreter, ``--steps``, ``--warmup`` and ``--threads``; the process reports
which ``ddpg`` package it imported, and a measurement of the wrong tree is an error.

    python benchmarks/compare_revisions.py --base bf5ae61 --configs 1 4 --rounds 6 --steps 3000
    python benchmarks/compare_revisions.py --configs 1 --rounds 2 --steps 300 --warmup 300
    python benchmarks/compare_revisions.py --base HEAD~3 --json comparison.json

Prints every measurement, then per configuration the median steps/s of each tree, the ratio
current/base of each round, their median, and whether that median is within ``--tolerance``
percent of 1. ``--json`` writes the same to a file.
"""
import argparse
import contextlib
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # contender_protocol

from contender_protocol import CONFIGS  # noqa: E402  (standard library only)

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
THROUGHPUT = os.path.join("benchmarks", "throughput.py")
DEFAULT_BASE = "bf5ae61"
#: Runs a tree's throughput.py in this process (its own worker mode: one configuration, no
#: matmul ceiling), then names the ddpg package it ran with.
WRAPPER = ("import runpy, sys; script = sys.argv[1]; sys.argv = sys.argv[1:]; "
           "runpy.run_path(script, run_name='__main__'); import ddpg; "
           "print('ddpg imported from %s' % ddpg.__file__)")
STEPS_LINE = re.compile(r"^config (\S+) .*?: ours ([0-9]+(?:\.[0-9]*)?(?:[eE][-+]?[0-9]+)?) "
                        r"steps/s", re.M)
IMPORTED_LINE = re.compile(r"^ddpg imported from (.+)$", re.M)


class OneLineParser(argparse.ArgumentParser):
    """Bad input is one line naming the flag (exit status 2), not the usage text, so that it
    stands out in a long log."""

    def error(self, message):
        sys.stderr.write("%s: error: %s\n" % (self.prog, message))
        sys.exit(2)


def at_least(minimum, kind=int):
    """An argparse type: a number no smaller than ``minimum`` (zero rounds measure nothing)."""
    def convert(text):
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError("not a number: %r" % text)
        if value < minimum:
            raise argparse.ArgumentTypeError("must be at least %s, not %s" % (minimum, text))
        return value
    return convert


def parse_args(argv=None):
    """The flags, checked before anything runs: a revision git does not know or a --json
    folder that does not exist fails at once, not after an hour of measurements."""
    parser = OneLineParser(prog="compare_revisions.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("--base", default=DEFAULT_BASE,
                        help="the earlier git revision (default %s)" % DEFAULT_BASE)
    parser.add_argument("--configs", nargs="+", default=["1", "4"], choices=sorted(CONFIGS),
                        help="throughput.py's configurations (default 1 4)")
    parser.add_argument("--rounds", type=at_least(1), default=6,
                        help="rounds per configuration, each one measurement per tree")
    parser.add_argument("--steps", type=at_least(1), default=3000, help="timed steps")
    parser.add_argument("--warmup", type=at_least(1), default=1000,
                        help="steps collected before updates start (not timed)")
    parser.add_argument("--threads", type=at_least(1), default=1, help="OMP threads")
    parser.add_argument("--tolerance", type=at_least(0.0, float), default=3.0,
                        help="percent: the verdict says whether the median ratio is within it")
    parser.add_argument("--json", metavar="FILE", help="also write the results to FILE")
    args = parser.parse_args(argv)
    if args.json:
        folder = os.path.dirname(os.path.abspath(args.json))
        if not os.path.isdir(folder):
            parser.error("--json: no folder '%s'" % folder)
    args.base_commit = resolve_revision(args.base)
    if args.base_commit is None:
        parser.error("--base: no git revision '%s'" % args.base)
    return args


def git(*args):
    """A git command on this repository; its output, or None when it fails."""
    result = subprocess.run(["git", "-C", REPO] + list(args), capture_output=True, text=True)
    return result.stdout.strip() if result.returncode == 0 else None


def resolve_revision(revision):
    """The commit ``revision`` names, or None: a worktree needs a commit, not any object."""
    if revision.startswith("-"):
        return None
    return git("rev-parse", "--verify", "--quiet", revision + "^{commit}") or None


@contextlib.contextmanager
def base_worktree(commit):
    """A detached worktree of ``commit`` in a temporary folder, removed (with git's record of
    it) when the block ends, however it ends: a left-over worktree would block the branch
    and clutter ``git worktree list``."""
    folder = tempfile.mkdtemp(prefix="compare-revisions-")
    tree = os.path.join(folder, "base")
    try:
        if git("worktree", "add", "--detach", tree, commit) is None:
            raise RuntimeError("git worktree add --detach %s %s failed" % (tree, commit))
        yield tree
    finally:
        git("worktree", "remove", "--force", tree)
        shutil.rmtree(folder, ignore_errors=True)
        git("worktree", "prune")


def round_order(index):
    """The trees of round ``index`` (0-based) in the order they run: base first in even
    rounds, current first in odd ones (ABBA), so that neither always runs second."""
    return ("base", "current") if index % 2 == 0 else ("current", "base")


def measure_command(python, tree, config, args):
    """The command and environment that measure ``tree``: its own throughput.py, with its
    own folder first on PYTHONPATH (throughput.py also puts it first on sys.path)."""
    command = [python, "-c", WRAPPER, os.path.join(tree, THROUGHPUT), "--worker", config,
               "--steps", str(args.steps), "--warmup", str(args.warmup),
               "--threads", str(args.threads), "--skip-sb3", "--skip-jax", "--skip-gluon",
               "--no-breakdown"]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [tree] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]))
    return command, env


def parse_steps_per_s(output, config):
    """Our steps/s from throughput.py's output (its line ``config 1 (...): ours 1234.5
    steps/s (...)``); an error unless exactly one such line names ``config``."""
    found = [float(value) for name, value in STEPS_LINE.findall(output) if name == config]
    if len(found) != 1:
        raise ValueError("expected one 'config %s ...: ours N steps/s' line in throughput.py's "
                         "output, found %d:\n%s" % (config, len(found), output[-2000:]))
    return found[0]


def check_imported_from(output, tree):
    """That the measured process imported the ``ddpg`` package of ``tree`` (an installed
    or editable copy of another tree would make the comparison compare nothing)."""
    found = IMPORTED_LINE.findall(output)
    expected = os.path.realpath(os.path.join(tree, "ddpg"))
    if not found or os.path.dirname(os.path.realpath(found[-1].strip())) != expected:
        raise RuntimeError("the measurement of %s imported ddpg from %s, not from %s"
                           % (tree, found[-1].strip() if found else "nowhere", expected))


def measure(tree, config, args):
    """Steps/s of one fresh process of ``tree``'s throughput.py on ``config``."""
    command, env = measure_command(sys.executable, tree, config, args)
    result = subprocess.run(command, cwd=tree, env=env, capture_output=True, text=True)
    if result.returncode != 0:
        raise RuntimeError("throughput.py of %s failed (exit %d):\n%s"
                           % (tree, result.returncode, result.stderr[-3000:]))
    check_imported_from(result.stdout, tree)
    return parse_steps_per_s(result.stdout, config)


def verdict(median_ratio, tolerance):
    """One line on the median ratio current/base against ``tolerance`` percent."""
    change = 100.0 * (median_ratio - 1.0)
    return "%s %g%% of base: current/base %.3f (%.1f%% %s)" % (
        "within" if abs(change) <= tolerance else "NOT within", tolerance, median_ratio,
        abs(change), "faster" if change > 0 else "slower")


def summarise(base, current, tolerance):
    """Medians of each tree, the ratio current/base of each round (the two measurements of a
    round ran next to each other, so the ratio cancels the machine's drift), their median
    and the verdict."""
    if len(base) != len(current) or not base:
        raise ValueError("need one base and one current measurement per round")
    ratios = [c / b for b, c in zip(base, current)]
    median_ratio = statistics.median(ratios)
    return {"base_steps_per_s": list(base), "current_steps_per_s": list(current),
            "median_base": statistics.median(base),
            "median_current": statistics.median(current),
            "ratios": ratios, "median_ratio": median_ratio,
            "within_tolerance": abs(median_ratio - 1.0) * 100.0 <= tolerance,
            "verdict": verdict(median_ratio, tolerance)}


def compare_config(trees, config, args):
    """The rounds of one configuration, printed as they finish; its summary."""
    values = {"base": [], "current": []}
    for index in range(args.rounds):
        parts = []
        for name in round_order(index):
            values[name].append(measure(trees[name], config, args))
            parts.append("%s %.1f" % (name, values[name][-1]))
        print("config %s round %d/%d: %s steps/s, ratio current/base %.3f"
              % (config, index + 1, args.rounds, ", ".join(parts),
                 values["current"][-1] / values["base"][-1]))
        sys.stdout.flush()
    return summarise(values["base"], values["current"], args.tolerance)


def print_summary(config, summary):
    """The lines of one configuration's result."""
    print("config %s (%s):" % (config, CONFIGS[config][0]))
    print("  median steps/s: base %.1f, current %.1f"
          % (summary["median_base"], summary["median_current"]))
    print("  ratios current/base: %s; median %.3f"
          % (" ".join("%.3f" % r for r in summary["ratios"]), summary["median_ratio"]))
    print("  %s" % summary["verdict"])


def raise_on_sigterm():
    """SIGTERM (``timeout``, a CI's cancel) as SystemExit, so that the worktree is removed."""
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))


def main(argv=None):
    """Checks the flags, then measures both trees configuration by configuration, the base
    tree's worktree living only as long as the measurements."""
    args = parse_args(argv)
    raise_on_sigterm()
    head = git("rev-parse", "HEAD")
    dirty = bool(git("status", "--porcelain", "--untracked-files=no"))
    print("base %s (%s) against the working tree %s at %s%s; %d round%s of %d steps "
          "(warm-up %d), %d thread%s, %s"
          % (args.base, args.base_commit[:10], REPO, head[:10] if head else "?",
             " with changes" if dirty else "", args.rounds, "" if args.rounds == 1 else "s",
             args.steps, args.warmup, args.threads, "" if args.threads == 1 else "s",
             sys.executable))
    sys.stdout.flush()
    results = {}
    with base_worktree(args.base_commit) as base_tree:
        trees = {"base": base_tree, "current": REPO}
        for config in args.configs:
            results[config] = compare_config(trees, config, args)
    for config in args.configs:
        print_summary(config, results[config])
    if args.json:
        settings = {name: getattr(args, name) for name in
                    ("base", "base_commit", "configs", "rounds", "steps", "warmup", "threads",
                     "tolerance")}
        settings.update(current_commit=head, current_has_changes=dirty)
        with open(args.json, "w") as out:
            json.dump({"settings": settings, "configs": results}, out, indent=2)
        print("wrote %s" % args.json)


if __name__ == "__main__":
    main()
