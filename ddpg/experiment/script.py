"""How the example scripts report errors: a message naming the flag, not a traceback.

A user who types a wrong value wants to know what is wrong and which flag fixes it; a
traceback of the library's internals says neither. :func:`run_script` runs a script's
``main`` and turns a :class:`UsageError` (a bad flag, found before anything is written) into
one line on stderr and exit status 2, as argparse does for the flags it checks itself. The
faults of a run (:mod:`ddpg.errors`: the environment returned NaN, training diverged, the
environment crashed) are reported the same way with exit status 1. ``--debug`` or
``DDPG_DEBUG=1`` shows the traceback instead. Ctrl-C ends with one line naming the checkpoint
to resume from (exit status 130).
"""
import argparse
import os
import sys
import tempfile

from ddpg.errors import CheckpointError, DivergenceError, EnvError, NonFiniteError

__all__ = ["HelpFormatter", "UsageError", "RunInterrupted", "RunWriteError", "DEBUG_VARIABLE",
           "add_debug_flag", "add_trust_pickle_flag", "output_problem", "check_output",
           "make_output_folder", "debug_requested", "run_script"]

#: Set to 1 to see tracebacks instead of one-line messages.
DEBUG_VARIABLE = "DDPG_DEBUG"


class UsageError(ValueError):
    """A command-line value that cannot work; the message names the flag that fixes it."""


class RunWriteError(RuntimeError):
    """A file of the run could not be written (a full disk); the message names the last
    complete checkpoint."""


class RunInterrupted(KeyboardInterrupt):
    """Ctrl-C stopped training in ``epoch``; ``checkpoint`` is the folder saved to resume
    from, or None and ``unsaved_because`` the flag that made the run save nothing."""

    def __init__(self, epoch, checkpoint, unsaved_because=None):
        super().__init__(epoch, checkpoint, unsaved_because)
        self.epoch = epoch
        self.checkpoint = checkpoint
        self.unsaved_because = unsaved_because


#: Faults of a run (not of its flags): a message, exit status 1.
RUN_FAULTS = (NonFiniteError, DivergenceError, EnvError, CheckpointError, RunWriteError)
#: The exit status of a run stopped by Ctrl-C (128 + SIGINT, as shells report it).
INTERRUPTED_STATUS = 130


class HelpFormatter(argparse.HelpFormatter):
    """Each flag's default once: appended as ``(default: X)`` unless the help already says
    what the default is, and left out where there is none to show (None, a switch's False)."""

    def _get_help_string(self, action):
        text = action.help or ""
        if ("default" in text or action.default in (None, False, [], argparse.SUPPRESS)
                or action.required or not action.option_strings):
            return text
        return text + " (default: %(default)s)"


def add_debug_flag(parser):
    """``--debug`` on a script's parser (:func:`debug_requested` reads it before parsing)."""
    parser.add_argument("--debug", action="store_true",
                        help="show tracebacks instead of one-line error messages (also: "
                             "%s=1)" % DEBUG_VARIABLE)


def add_trust_pickle_flag(parser, when=""):
    """``--trust-pickle``: the one way to open a version-1 (pickled) checkpoint; ``when``
    prefixes its help (``"with --resume: "``)."""
    parser.add_argument("--trust-pickle", action="store_true",
                        help="%salso open a checkpoint of the older, pickled format (version "
                             "1); unpickling can run any code, so only for checkpoints you "
                             "trust" % when)


def output_problem(path):
    """Why the file ``path`` cannot be written, in words, or None.

    A folder of the path that does not exist yet is made when the file is written
    (:func:`make_output_folder`); the nearest one that exists must be a folder in which a
    file can be made, which is tried (a temporary file, removed at once) rather than judged
    from permission bits, which do not bind every user."""
    if os.path.isdir(path):
        return "it is a folder"
    folder = os.path.dirname(os.path.abspath(path))
    while not os.path.lexists(folder):
        folder = os.path.dirname(folder)
    if not os.path.isdir(folder):
        return "%s is a file, not a folder" % folder
    try:
        with tempfile.TemporaryFile(dir=folder):
            pass
    except OSError as error:
        return "nothing can be written in %s (%s)" % (folder, error.strerror or error)
    return None


def check_output(flag, value, overwrite_flag=None, path=None):
    """A :class:`UsageError` naming ``flag VALUE`` unless the file ``path`` (default: the
    flag's ``value``; another for a flag that gives a prefix) can be written; with
    ``overwrite_flag`` (e.g. ``"--overwrite"``, not given) an existing file is refused too,
    naming that flag. Called before any work, so that a result is never lost for want of a
    place to put it."""
    path = value if path is None else path
    problem = output_problem(path)
    if problem:
        raise UsageError("%s %s cannot be written: %s; choose another %s"
                         % (flag, value, problem, flag))
    if overwrite_flag and os.path.lexists(path):
        raise UsageError("%s %s already exists: choose another %s, or pass %s to replace it"
                         % (flag, value, flag, overwrite_flag))


def make_output_folder(path):
    """Make the folder the file ``path`` goes into, if it does not exist yet."""
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)


def debug_requested(argv):
    """Whether ``--debug`` is among the script's own arguments (before a ``--``) or
    ``DDPG_DEBUG`` is set to something other than 0."""
    own = list(argv)
    if "--" in own:
        own = own[:own.index("--")]
    return "--debug" in own or os.environ.get(DEBUG_VARIABLE, "0") not in ("", "0")


def run_script(main, argv=None, prog=None):
    """``main(argv)``; a :class:`UsageError` or a run fault becomes a message and an exit.

    Returns what ``main`` returns. The message is ``PROG: error: MESSAGE`` on stderr; exit
    status 2 for a usage error, 1 for a fault of the run.
    """
    argv = sys.argv[1:] if argv is None else list(argv)
    prog = prog or os.path.basename(sys.argv[0])
    if debug_requested(argv):
        return main(argv)
    try:
        return main(argv)
    except UsageError as error:
        print("%s: error: %s" % (prog, error), file=sys.stderr)
        sys.exit(2)
    except RUN_FAULTS as error:
        print("%s: error: %s\n(%s=1 or --debug shows the traceback)"
              % (prog, error, DEBUG_VARIABLE), file=sys.stderr)
        sys.exit(1)
    except RunInterrupted as interrupted:
        print(interrupted_message(interrupted, prog), file=sys.stderr)
        sys.exit(INTERRUPTED_STATUS)
    except KeyboardInterrupt:
        # before training started, or a second Ctrl-C while the first one's checkpoint was
        # being saved (the previous checkpoint is then left as it was)
        print("\n%s: interrupted" % prog, file=sys.stderr)
        sys.exit(INTERRUPTED_STATUS)


def interrupted_message(interrupted, prog):
    """The line Ctrl-C ends a run with: where it stopped and how to continue it."""
    if interrupted.checkpoint is None:
        return ("%s: interrupted at epoch %d; nothing was saved (%s)"
                % (prog, interrupted.epoch, interrupted.unsaved_because))
    command = prog if prog.startswith("ddpg-") else "python " + sys.argv[0]
    return ("%s: interrupted at epoch %d: resume with %s --resume %s"
            % (prog, interrupted.epoch, command, interrupted.checkpoint))
