"""Text output of the logger: how a log line reads, and the files lines are appended to.

A line reads ``"<date> <time>.<us> <TZ> | <prefixes><message>"`` as in rllab; rllab's colour
names colour it on the terminal only, files get plain text.
"""

import datetime

from ddpg.logging.fileio import make_parent_dirs

__all__ = ["ANSI_COLORS", "timestamped", "colorize", "TextOutput"]

#: rllab's ``colorize`` palette, so ``log(s, color="red")`` calls keep working.
ANSI_COLORS = {
    "gray": 30, "red": 31, "green": 32, "yellow": 33, "blue": 34,
    "magenta": 35, "cyan": 36, "white": 37, "crimson": 38,
}


def timestamped(line):
    """``line`` after the local date and time (microseconds, time zone) and ``" | "``."""
    now = datetime.datetime.now().astimezone()
    stamp = now.strftime("%Y-%m-%d %H:%M:%S.%f")
    tz = now.strftime("%Z")
    if tz:
        stamp += " " + tz
    return "%s | %s" % (stamp, line)


def colorize(line, color):
    """``line`` in the terminal colour ``color`` (a key of :data:`ANSI_COLORS`).

    An unknown colour raises ``ValueError``.
    """
    if color not in ANSI_COLORS:
        raise ValueError("unknown color %r; expected one of %s"
                         % (color, sorted(ANSI_COLORS)))
    return "\x1b[%dm%s\x1b[0m" % (ANSI_COLORS[color], line)


class TextOutput(object):
    """One text file every log line is appended to, flushed line by line (parent folders
    created)."""

    def __init__(self, path):
        self.path = path
        make_parent_dirs(path)
        self._fh = open(path, "a", encoding="utf-8")

    def write_line(self, line):
        self._fh.write(line + "\n")
        self._fh.flush()

    def close(self):
        self._fh.close()
