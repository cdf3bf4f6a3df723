"""The package's commands: their names, entry points and what each does (``python -m ddpg``).

One table serves both ends: setup.py declares the console scripts from :data:`COMMANDS`, and
``python -m ddpg`` prints it, so the list a user reads is the list that is installed. setup.py
reads this file before the package's dependencies are installed, by executing it (as it
reads ``ddpg/version.py``): at the top it imports the standard library only.
"""
import sys

__all__ = ["COMMANDS", "PROG", "console_scripts", "describe", "main"]

#: ``(command, entry point, what it does)`` of every console script.
COMMANDS = (
    ("ddpg-train", "ddpg.experiment.train:entry",
     "train DDPG or TD3; without flags, the MXNet example's run.py on the cart-pole"),
    ("ddpg-evaluate", "ddpg.experiment.evaluate:entry",
     "run deterministic episodes with a checkpoint's policy and report their returns"),
    ("ddpg-export", "ddpg.experiment.export:entry",
     "export a checkpoint's policy as an MXNet symbol + params pair and as ONNX"),
    ("ddpg-plot", "ddpg.experiment.plot:entry",
     "plot learning curves from progress.csv files, mean +- std over seeds"),
    ("ddpg-sweep", "ddpg.experiment.sweep:entry",
     "sweep hyperparameters and seeds of ddpg-train runs on Ray Tune (the ray extra)"),
)

#: How ``python -m ddpg`` names itself in its messages.
PROG = "python -m ddpg"


def console_scripts():
    """setup.py's ``console_scripts`` entry points: ``"name = module:function"``."""
    return ["%s = %s" % (name, target) for name, target, _ in COMMANDS]


def describe():
    """The text ``python -m ddpg`` prints: each command and what it does, one line each."""
    width = max(len(name) for name, _, _ in COMMANDS)
    lines = ["ddpg: DDPG on MXNet symbolic executors (import ddpg). Its commands (each takes "
             "--help):", ""]
    lines += ["  %-*s  %s" % (width, name, summary) for name, _, summary in COMMANDS]
    lines += ["", "ddpg-plot and ddpg-export also run as python -m ddpg.plot and "
                  "python -m ddpg.export."]
    return "\n".join(lines)


def main(argv=None):
    """Print :func:`describe` and return 0; ``-h``/``--help`` do the same. Anything else is
    a one-line error on stderr and exit status 2 (the commands take their own arguments)."""
    argv = sys.argv[1:] if argv is None else list(argv)
    unknown = [arg for arg in argv if arg not in ("-h", "--help")]
    if unknown:
        print("%s: error: unrecognized argument %s: it takes none; the commands it lists "
              "take their own (e.g. ddpg-train --help)" % (PROG, unknown[0]), file=sys.stderr)
        return 2
    print(describe())
    return 0
