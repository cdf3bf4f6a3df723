"""An rllab-compatible experiment logger.

Code written against rllab does ``from rllab.misc import logger`` and then calls
module-level functions (``logger.log``, ``logger.record_tabular``,
``logger.dump_tabular``, ...).  To keep such code working unchanged with
``from ddpg import logger``, this module exposes the same functions; each one
delegates to a process-wide default :class:`Logger`.  The class itself is
public too, so tests and algorithms can use an isolated instance instead of
sharing global state.

Differences from rllab, all deliberate: every row of a tabular output has the same columns
(rllab writes rows by position under the first row's header, so a key missing from a later
row shifts the columns; here a new key rewrites the file atomically with the widened header,
and a resumed run's output continues with its columns); CSV floats are written with ``repr``
(exact float64; the printed table keeps rllab's ``%g``); ``save_itr_params`` writes to a
temporary name and renames it into place (a crash never leaves a half-written snapshot) and
accepts a callable that writes a checkpoint folder under the same names; no dependencies
beyond numpy (snapshots of objects are plain pickles, as rllab's); TensorBoard output
(:meth:`Logger.add_tensorboard_output`, tensorboardX imported only then) is an addition.
The outputs and helpers the :class:`Logger` drives are in :mod:`ddpg.logging`.
"""

import contextlib
import os
import sys

from ddpg.logging.snapshots import (SNAPSHOT_MODES, check_snapshot_gap, check_snapshot_mode,
                                    save_snapshot, snapshot_name)
from ddpg.logging.tabular import (CsvOutput, csv_cells, misc_stat_items, table_lines,
                                  to_python_scalar)
from ddpg.logging.tensorboard_output import TENSORBOARD_INSTALL, TensorBoardOutput
from ddpg.logging.text_output import TextOutput, colorize, timestamped

__all__ = [
    "Logger", "SNAPSHOT_MODES", "get_default_logger",
    "log", "push_prefix", "pop_prefix", "prefix",
    "push_tabular_prefix", "pop_tabular_prefix", "tabular_prefix",
    "record_tabular", "record_tabular_misc_stat", "dump_tabular", "get_tabular_keys",
    "add_text_output", "remove_text_output", "add_tabular_output", "remove_tabular_output",
    "add_tensorboard_output", "remove_tensorboard_output",
    "has_scalar_outputs", "record_scalar", "record_text", "record_animation",
    "TENSORBOARD_INSTALL",
    "set_snapshot_dir", "get_snapshot_dir", "set_snapshot_mode", "get_snapshot_mode",
    "set_snapshot_gap", "get_snapshot_gap", "save_itr_params",
    "set_log_tabular_only", "get_log_tabular_only", "reset",
]


def _add_output(outputs, path, make):
    """Add ``make(absolute path)`` to ``outputs`` unless that path has one already (adding
    the same file or folder twice is a no-op, so nothing is written twice)."""
    key = os.path.abspath(path)
    if key not in outputs:
        outputs[key] = make(key)


def _remove_output(outputs, path):
    """Close and forget the output of ``path``; an unknown path is ignored."""
    out = outputs.pop(os.path.abspath(path), None)
    if out is not None:
        out.close()


class Logger(object):
    """Prefixed, timestamped text logging; tabular (CSV) logging; snapshots.

    All state that rllab kept in module globals lives on the instance, so independent
    instances do not interfere (the module-level functions use :func:`get_default_logger`).
    Not thread-safe, like rllab's.
    """

    def __init__(self):
        self._prefixes = []
        self._tabular_prefixes = []
        self._tabular = {}  # insertion-ordered: table rows follow record order
        self._last_tabular = {}  # the row of the last dump_tabular
        self._text_outputs = {}  # absolute path -> TextOutput
        self._tabular_outputs = {}  # absolute path -> CsvOutput
        self._tensorboard_outputs = {}  # absolute folder -> TensorBoardOutput
        self._snapshot_dir = None
        self._snapshot_mode = "all"
        self._snapshot_gap = 1
        self._log_tabular_only = False

    def reset(self):
        """Return to the freshly constructed state, closing every output.

        Needed when several experiments run in one process (or in tests): otherwise
        prefixes, half-recorded rows and open files would leak from one run into the next.
        """
        for outputs in (self._text_outputs, self._tabular_outputs, self._tensorboard_outputs):
            for out in outputs.values():
                out.close()
        self.__init__()

    # -- text logging -------------------------------------------------------

    def log(self, s, with_prefix=True, with_timestamp=True, color=None):
        """Print ``s`` and append it to every text output.

        The line reads ``"<date> <time>.<us> <TZ> | <prefixes><s>"`` as in rllab.  ``color``
        (an rllab colour name) only colours the terminal; files get plain text.  Nothing is
        written while ``log_tabular_only`` is set.
        """
        if self._log_tabular_only:
            return
        out = str(s)
        if with_prefix:
            out = "".join(self._prefixes) + out
        if with_timestamp:
            out = timestamped(out)
        print(out if color is None else colorize(out, color))
        for text_output in self._text_outputs.values():
            text_output.write_line(out)
        sys.stdout.flush()

    def push_prefix(self, p):
        """Push a line prefix; prefixes are concatenated, outermost first."""
        self._prefixes.append(str(p))

    def pop_prefix(self):
        """Remove the most recently pushed line prefix."""
        if not self._prefixes:
            raise IndexError("pop_prefix() without a matching push_prefix()")
        self._prefixes.pop()

    @contextlib.contextmanager
    def prefix(self, p):
        """``with logger.prefix("epoch #3 | "):`` pushes ``p`` for the block."""
        self.push_prefix(p)
        try:
            yield
        finally:
            self.pop_prefix()

    # -- tabular logging ----------------------------------------------------

    def push_tabular_prefix(self, p):
        """Push a prefix prepended to the keys recorded from now on."""
        self._tabular_prefixes.append(str(p))

    def pop_tabular_prefix(self):
        """Remove the most recently pushed tabular key prefix."""
        if not self._tabular_prefixes:
            raise IndexError(
                "pop_tabular_prefix() without a matching push_tabular_prefix()")
        self._tabular_prefixes.pop()

    @contextlib.contextmanager
    def tabular_prefix(self, p):
        """``with logger.tabular_prefix("Eval"):`` prefixes keys for the block."""
        self.push_tabular_prefix(p)
        try:
            yield
        finally:
            self.pop_tabular_prefix()

    def record_tabular(self, key, val):
        """Record ``val`` under ``key`` (with the tabular prefixes) for this row.

        Recording the same key twice before a dump keeps the last value, in
        the position of the first recording (rllab would emit the key twice
        and then write the CSV by position).
        """
        self._tabular["".join(self._tabular_prefixes) + str(key)] = val

    def record_tabular_misc_stat(self, key, values, placement="back"):
        """Record Average, Std, Median, Min and Max of ``values``.

        Names follow rllab: ``placement="back"`` gives ``ReturnAverage``,
        ``ReturnStd``...; ``"front"`` gives ``AverageReturn``, ``StdReturn``...
        With no values every statistic is NaN, so the columns still exist and
        a CSV consumer sees "no data" rather than a missing column.
        """
        for name, value in misc_stat_items(key, values, placement):
            self.record_tabular(name, value)

    def get_tabular_keys(self):
        """Keys recorded since the last dump, in record order."""
        return list(self._tabular)

    def dump_tabular(self, with_prefix=True, with_timestamp=True):
        """Print the recorded values as a table, write a CSV row, and clear them.

        Each table line goes through :meth:`log` (so it carries the prefix and timestamp
        unless disabled, and reaches the text outputs).  With ``log_tabular_only`` set, the
        bare table is printed to stdout only, as rllab does.  Nothing recorded means nothing
        printed and no CSV row.
        """
        if not self._tabular:
            return
        lines = table_lines(self._tabular)
        if self._log_tabular_only:
            for line in lines:
                print(line)
            sys.stdout.flush()
        else:
            for line in lines:
                self.log(line, with_prefix=with_prefix, with_timestamp=with_timestamp)
        row = csv_cells(self._tabular)
        for out in self._tabular_outputs.values():
            out.write_row(row)
        self._last_tabular = {k: to_python_scalar(v) for k, v in self._tabular.items()}
        for out in self._tensorboard_outputs.values():
            out.write_row(self._last_tabular)
        self._tabular = {}

    def last_tabular(self):
        """The values of the last dumped row (key -> Python scalar), in record order.

        For code that reports an epoch's statistics elsewhere (a Ray Tune trial) without
        reading the CSV back; empty before the first dump.
        """
        return dict(self._last_tabular)

    # -- outputs --------------------------------------------------------------

    def add_text_output(self, path):
        """Also append every log line to ``path`` (parent folders created).

        Adding the same file twice is a no-op, so lines are never doubled.
        """
        _add_output(self._text_outputs, path, TextOutput)

    def remove_text_output(self, path):
        """Stop logging to ``path`` and close it; unknown paths are ignored."""
        _remove_output(self._text_outputs, path)

    def add_tabular_output(self, path):
        """Write a CSV row to ``path`` at every :meth:`dump_tabular`.

        Parent folders are created.  An existing non-empty file is continued:
        its header is adopted and widened when new keys appear.  Adding the
        same file twice is a no-op.
        """
        _add_output(self._tabular_outputs, path, CsvOutput)

    def remove_tabular_output(self, path):
        """Stop writing rows to ``path`` and close it; unknown paths are ignored."""
        _remove_output(self._tabular_outputs, path)

    def add_tensorboard_output(self, log_dir, step_key="TotalEnvSteps", purge_step=None):
        """Also write every dumped tabular row to TensorBoard event files in ``log_dir``.

        Each numeric key of a row becomes a scalar of that name at the step the
        row's ``step_key`` holds (the row's position when it has none);
        :meth:`record_scalar` and :meth:`record_text` write to these outputs
        only.  ``purge_step`` is for a resumed run: the first step it logs;
        TensorBoard then hides events an earlier process logged at that step
        or later.  Needs tensorboardX (an ``ImportError`` naming the install
        command otherwise).  Adding the same folder twice is a no-op.
        """
        _add_output(self._tensorboard_outputs, log_dir,
                    lambda key: TensorBoardOutput(key, step_key, purge_step))

    def remove_tensorboard_output(self, log_dir):
        """Stop writing events to ``log_dir`` and close its file; unknown folders are
        ignored."""
        _remove_output(self._tensorboard_outputs, log_dir)

    def has_scalar_outputs(self):
        """Whether :meth:`record_scalar` goes anywhere (a TensorBoard output is added), so
        that a caller can skip computing values nobody records."""
        return bool(self._tensorboard_outputs)

    def record_scalar(self, tag, value, step):
        """Write one scalar at ``step`` to the TensorBoard outputs now, outside the tabular
        rows (values "as they happen": an episode's return, an update's loss)."""
        value = to_python_scalar(value)
        for out in self._tensorboard_outputs.values():
            out.write_scalar(tag, value, step)

    def record_text(self, tag, text, step=0):
        """Write ``text`` (TensorBoard renders it as Markdown) to the TensorBoard outputs."""
        for out in self._tensorboard_outputs.values():
            out.write_text(tag, str(text), step)

    def record_animation(self, tag, frames, fps, step):
        """Write ``frames`` (H x W x 3 uint8 arrays) to the TensorBoard outputs as an animated
        GIF, which TensorBoard's images tab plays (its video summaries need moviepy)."""
        for out in self._tensorboard_outputs.values():
            out.write_animation(tag, frames, fps, step)

    def set_log_tabular_only(self, log_tabular_only):
        """When true, :meth:`log` is silent and tables print without prefixes."""
        self._log_tabular_only = bool(log_tabular_only)

    def get_log_tabular_only(self):
        return self._log_tabular_only

    # -- snapshots ------------------------------------------------------------

    def set_snapshot_dir(self, dir_name):
        """Folder for :meth:`save_itr_params`; ``None`` disables snapshots.

        The folder is created on the first save, not here: configuring has no effect on disk.
        """
        self._snapshot_dir = None if dir_name is None else str(dir_name)

    def get_snapshot_dir(self):
        return self._snapshot_dir

    def set_snapshot_mode(self, mode):
        """One of ``'all'``, ``'last'``, ``'gap'``, ``'none'``.

        Anything else raises ``ValueError`` at once; rllab only failed (``NotImplementedError``)
        at the first save, possibly hours later.
        """
        self._snapshot_mode = check_snapshot_mode(mode)

    def get_snapshot_mode(self):
        return self._snapshot_mode

    def set_snapshot_gap(self, gap):
        """Save every ``gap``-th iteration in ``'gap'`` mode (positive int)."""
        self._snapshot_gap = check_snapshot_gap(gap)

    def get_snapshot_gap(self):
        return self._snapshot_gap

    def save_itr_params(self, itr, params):
        """Save a snapshot for iteration ``itr`` according to the snapshot mode.

        Target names follow rllab: ``'all'`` writes ``itr_<itr>.pkl`` every time, ``'last'``
        overwrites ``params.pkl``, ``'gap'`` writes ``itr_<itr>.pkl`` when ``itr % gap == 0``,
        ``'none'`` writes nothing; nothing is written either while no snapshot folder is set.

        ``params`` is normally any picklable object (typically a dict), written as a pickle:
        rllab's snapshot format, kept for compatibility with rllab's tools. Unpickling runs
        code, so load such snapshots only if you trust them (DDPG's own checkpoints, written
        through the callable form, hold no pickle: see docs/checkpoints.md). ``params`` may
        instead be a callable ``params(path)``: then the target has no ``.pkl`` suffix
        (``itr_<itr>`` or ``params``) and the callable must create a file *or a folder* at
        ``path``, a not-yet-existing path in a hidden temporary folder inside the snapshot
        folder, so an algorithm saves a checkpoint folder (network parameters, optimiser
        state, replay buffer) under the same rules. Either way the result is moved into place
        only once fully written, so a crash leaves the previous snapshot intact; an exception
        from pickling or from the callable propagates and leaves no temporary behind.

        Returns the path written, or ``None`` when nothing was saved.
        """
        if not self._snapshot_dir:
            return None
        name = snapshot_name(self._snapshot_mode, self._snapshot_gap, itr)
        if name is None:
            return None
        return save_snapshot(self._snapshot_dir, name, params)


# ---------------------------------------------------------------------------
# Module-level API (rllab style), bound to one default instance
# ---------------------------------------------------------------------------

_default_logger = Logger()


def get_default_logger():
    """The :class:`Logger` behind this module's functions.

    Lets an algorithm take an optional ``logger`` argument and fall back to
    the shared one that ``from ddpg import logger`` users configure.
    """
    return _default_logger


# Bound methods of the default instance: same signatures and docstrings as the
# methods, and ``reset`` mutates the instance rather than replacing it, so
# these names stay valid for the life of the process.
log = _default_logger.log
push_prefix = _default_logger.push_prefix
pop_prefix = _default_logger.pop_prefix
prefix = _default_logger.prefix
push_tabular_prefix = _default_logger.push_tabular_prefix
pop_tabular_prefix = _default_logger.pop_tabular_prefix
tabular_prefix = _default_logger.tabular_prefix
record_tabular = _default_logger.record_tabular
record_tabular_misc_stat = _default_logger.record_tabular_misc_stat
dump_tabular = _default_logger.dump_tabular
get_tabular_keys = _default_logger.get_tabular_keys
last_tabular = _default_logger.last_tabular
add_text_output = _default_logger.add_text_output
remove_text_output = _default_logger.remove_text_output
add_tabular_output = _default_logger.add_tabular_output
remove_tabular_output = _default_logger.remove_tabular_output
add_tensorboard_output = _default_logger.add_tensorboard_output
remove_tensorboard_output = _default_logger.remove_tensorboard_output
has_scalar_outputs = _default_logger.has_scalar_outputs
record_scalar = _default_logger.record_scalar
record_text = _default_logger.record_text
record_animation = _default_logger.record_animation
set_snapshot_dir = _default_logger.set_snapshot_dir
get_snapshot_dir = _default_logger.get_snapshot_dir
set_snapshot_mode = _default_logger.set_snapshot_mode
get_snapshot_mode = _default_logger.get_snapshot_mode
set_snapshot_gap = _default_logger.set_snapshot_gap
get_snapshot_gap = _default_logger.get_snapshot_gap
save_itr_params = _default_logger.save_itr_params
set_log_tabular_only = _default_logger.set_log_tabular_only
get_log_tabular_only = _default_logger.get_log_tabular_only
reset = _default_logger.reset
