"""An rllab-compatible experiment logger.

Code written against rllab does ``from rllab.misc import logger`` and then calls
module-level functions (``logger.log``, ``logger.record_tabular``,
``logger.dump_tabular``, ...).  To keep such code working unchanged with
``from ddpg import logger``, this module exposes the same functions; each one
delegates to a process-wide default :class:`Logger`.  The class itself is
public too, so tests and algorithms can use an isolated instance instead of
sharing global state.

Differences from rllab, all deliberate:

* **Consistent CSV columns.**  rllab writes the CSV header once, from the
  first row, and then writes every later row by position, so a key that is
  missing from (or added in) a later row silently shifts the columns.  Here
  every row of a tabular output has the same columns, in the order the keys
  were first seen; a missing value is an empty cell.  A row that brings a new
  key rewrites the file with the widened header (earlier rows get an empty
  cell), atomically, so the file stays readable while training runs.  Adding
  a tabular output that already has content (a resumed run) continues it with
  the same columns.
* **Full-precision CSV values.**  Floats are written with ``repr``, which
  round-trips float64 exactly; the printed table still uses rllab's compact
  ``%g`` look.
* **Atomic snapshots.**  ``save_itr_params`` writes to a temporary name in the
  snapshot directory and renames it into place, so a crash never leaves a
  half-written ``params.pkl`` behind.  It also accepts a callable, so an
  algorithm can write a checkpoint *folder* with the same naming scheme.
* **No third-party dependencies** beyond numpy (no ``dateutil``, ``tabulate``
  or ``joblib``); snapshots of objects are plain pickles, as rllab's are
  (DDPG's checkpoint folders, saved through a callable, are not).  TensorBoard
  output (:meth:`Logger.add_tensorboard_output`) is an addition rllab did not
  have; it needs tensorboardX, imported only when such an output is added.
"""

import contextlib
import csv
import datetime
import io
import numbers
import os
import pickle
import shutil
import sys
import tempfile

import numpy as np

__all__ = [
    "Logger",
    "SNAPSHOT_MODES",
    "get_default_logger",
    "log",
    "push_prefix",
    "pop_prefix",
    "prefix",
    "push_tabular_prefix",
    "pop_tabular_prefix",
    "tabular_prefix",
    "record_tabular",
    "record_tabular_misc_stat",
    "dump_tabular",
    "get_tabular_keys",
    "add_text_output",
    "remove_text_output",
    "add_tabular_output",
    "remove_tabular_output",
    "add_tensorboard_output",
    "remove_tensorboard_output",
    "has_scalar_outputs",
    "record_scalar",
    "record_text",
    "TENSORBOARD_INSTALL",
    "set_snapshot_dir",
    "get_snapshot_dir",
    "set_snapshot_mode",
    "get_snapshot_mode",
    "set_snapshot_gap",
    "get_snapshot_gap",
    "save_itr_params",
    "set_log_tabular_only",
    "get_log_tabular_only",
    "reset",
]

#: The snapshot modes rllab understands, see :meth:`Logger.save_itr_params`.
SNAPSHOT_MODES = ("all", "last", "gap", "none")

# rllab's ``colorize`` palette, so ``log(s, color="red")`` calls keep working.
_ANSI_COLORS = {
    "gray": 30, "red": 31, "green": 32, "yellow": 33, "blue": 34,
    "magenta": 35, "cyan": 36, "white": 37, "crimson": 38,
}


# ---------------------------------------------------------------------------
# Value conversion
# ---------------------------------------------------------------------------

def _to_python_scalar(val):
    """Unwrap numpy / MXNet scalars so they format like plain Python numbers.

    Losses often arrive as ``np.float32`` or as a one-element MXNet NDArray;
    without unwrapping, ``str`` would print ``[0.5]`` or ``<NDArray 1 @cpu>``.
    """
    if isinstance(val, np.generic):
        return val.item()
    if isinstance(val, np.ndarray) and val.size == 1:
        return val.item()
    # MXNet NDArray, duck-typed so this module does not import mxnet.
    if hasattr(val, "asscalar") and getattr(val, "size", None) == 1:
        return _to_python_scalar(val.asscalar())
    return val


def _format_csv_value(val):
    """Text for a CSV cell, losing no precision.

    ``repr(float)`` is the shortest string that reads back to the same
    float64, so a value read from ``progress.csv`` equals the value recorded.
    """
    val = _to_python_scalar(val)
    if val is None:
        return ""
    if isinstance(val, bool):
        return str(val)
    if isinstance(val, numbers.Integral):
        return str(int(val))
    if isinstance(val, numbers.Real):
        return repr(float(val))
    return str(val)


def _format_display_value(val):
    """Text for the printed table: compact, like rllab's ``tabulate`` (``%g``)."""
    val = _to_python_scalar(val)
    if isinstance(val, bool):
        return str(val)
    if isinstance(val, numbers.Integral):
        return str(int(val))
    if isinstance(val, numbers.Real):
        return format(float(val), "g")
    return str(val)


def _format_table(rows):
    """Two-column table of ``(key, text)`` pairs framed by dashed rules.

    This mimics the headerless ``tabulate`` output rllab prints, without the
    dependency: keys left-aligned, values right-aligned so numbers line up.
    """
    key_width = max(len(k) for k, _ in rows)
    val_width = max(len(v) for _, v in rows)
    rule = "-" * key_width + "  " + "-" * val_width
    lines = [rule]
    lines.extend(k.ljust(key_width) + "  " + v.rjust(val_width) for k, v in rows)
    lines.append(rule)
    return lines


# ---------------------------------------------------------------------------
# Filesystem helpers
# ---------------------------------------------------------------------------

_umask = None


def _process_umask():
    """The process umask, read once (reading it means briefly setting it, so it is cached to
    keep that window away from other threads creating files)."""
    global _umask
    if _umask is None:
        _umask = os.umask(0o022)
        os.umask(_umask)
    return _umask


def default_file_mode():
    """Permissions a plain ``open()`` would give a new file (0o666 minus umask).

    ``tempfile.mkstemp`` creates files as 0o600; files renamed into place from
    a temporary must get the usual permissions, or other users (a plotting
    job, a shared results folder) could not read ``progress.csv``.
    """
    return 0o666 & ~_process_umask()


def default_dir_mode():
    """Permissions ``os.makedirs`` would give a new folder (0o777 minus umask); ``mkdtemp``
    makes 0o700 folders."""
    return 0o777 & ~_process_umask()


def _make_parent_dirs(path):
    parent = os.path.dirname(os.path.abspath(path))
    os.makedirs(parent, exist_ok=True)


def _remove_path(path):
    """Delete a file or a folder, ignoring one that is already gone."""
    if os.path.isdir(path) and not os.path.islink(path):
        shutil.rmtree(path, ignore_errors=True)
    elif os.path.lexists(path):
        try:
            os.remove(path)
        except FileNotFoundError:
            pass


def _replace_path(src, dst, trash_dir):
    """Move ``src`` onto ``dst``, replacing what is there.

    For files (and for a folder onto nothing) ``os.replace`` is atomic.  POSIX
    cannot rename onto a non-empty folder, so a folder ``dst`` (or a file
    ``dst`` replaced by a folder) is first moved into ``trash_dir``, which must
    be on the same filesystem; the caller deletes ``trash_dir`` afterwards.
    Between those two renames ``dst`` is briefly absent, but at no moment is a
    partially written ``dst`` visible.  If the second rename fails the old
    ``dst`` is put back.
    """
    needs_trash = os.path.lexists(dst) and (
        (os.path.isdir(dst) and not os.path.islink(dst)) or os.path.isdir(src))
    if not needs_trash:
        os.replace(src, dst)
        return
    old = os.path.join(trash_dir, "old")
    os.rename(dst, old)
    try:
        os.rename(src, dst)
    except BaseException:
        os.rename(old, dst)
        raise


def _atomic_write_bytes_via(target, write_fn):
    """Create ``target`` by calling ``write_fn(fileobj)`` on a temporary file.

    The temporary lives next to the target (same filesystem, so the final
    ``os.replace`` is atomic) and is hidden (leading dot) so globs like
    ``itr_*.pkl`` never see it.  It is fsynced before the rename so that after
    a power loss the target holds either the old or the new content.  On any
    error the temporary is deleted and the target is left untouched.
    """
    directory = os.path.dirname(os.path.abspath(target))
    fd, tmp = tempfile.mkstemp(
        dir=directory, prefix="." + os.path.basename(target) + ".", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            write_fn(f)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, default_file_mode())
        os.replace(tmp, target)
    except BaseException:
        _remove_path(tmp)
        raise


# ---------------------------------------------------------------------------
# CSV tabular output
# ---------------------------------------------------------------------------

class _CsvOutput(object):
    """One ``progress.csv``: keeps every row aligned with a single header.

    The header (``fieldnames``) only grows.  Rows whose keys are all known are
    appended (one ``write`` plus ``flush``, so readers see whole rows while
    training runs).  A row with a new key triggers a rewrite of the whole file
    with the widened header, done atomically so a reader or a crash never sees
    a half-rewritten file.  The file on disk is the store of earlier rows:
    nothing but the header is kept in memory, however long the run.
    """

    def __init__(self, path):
        self.path = path
        self.fieldnames = []
        self._fh = None
        self._needs_newline = False
        self._load_existing()

    def _load_existing(self):
        """Adopt the header of a non-empty existing file (resumed run)."""
        if not os.path.isfile(self.path) or os.path.getsize(self.path) == 0:
            return
        with open(self.path, "r", newline="", encoding="utf-8") as f:
            header = next(csv.reader(f), [])
        self.fieldnames = list(header)
        # A run killed mid-append can leave a last line without its newline;
        # terminate it so our next row does not get glued onto it.
        with open(self.path, "rb") as f:
            f.seek(-1, os.SEEK_END)
            self._needs_newline = f.read(1) not in (b"\n", b"\r")

    @staticmethod
    def _encode(cells):
        buf = io.StringIO()
        csv.writer(buf, lineterminator="\n").writerow(cells)
        return buf.getvalue()

    def _append(self, text):
        if self._fh is None:
            self._fh = open(self.path, "a", newline="", encoding="utf-8")
        if self._needs_newline:
            text = "\n" + text
            self._needs_newline = False
        self._fh.write(text)
        self._fh.flush()

    def write_row(self, row):
        """Write one row; ``row`` maps key to already formatted cell text."""
        known = set(self.fieldnames)
        new_keys = [k for k in row if k not in known]
        if not self.fieldnames:
            # Empty or new file: header and first row in one append.
            self.fieldnames = list(row)
            self._append(self._encode(self.fieldnames) + self._encode(
                [row[k] for k in self.fieldnames]))
        elif new_keys:
            self._rewrite_widened(self.fieldnames + new_keys, row)
        else:
            self._append(self._encode([row.get(k, "") for k in self.fieldnames]))

    def _rewrite_widened(self, fieldnames, row):
        """Rewrite the file with a wider header, then append ``row``.

        Earlier rows are padded with empty cells for the new columns, which
        are always appended at the end, so their existing cells keep their
        positions under the same column names.
        """
        self.close()
        old_rows = []
        if os.path.isfile(self.path):  # deleted behind our back: start afresh
            with open(self.path, "r", newline="", encoding="utf-8") as f:
                old_rows = list(csv.reader(f))[1:]

        def write(fbin):
            text = io.TextIOWrapper(fbin, encoding="utf-8", newline="")
            writer = csv.writer(text, lineterminator="\n")
            writer.writerow(fieldnames)
            for old in old_rows:
                writer.writerow(old + [""] * (len(fieldnames) - len(old)))
            writer.writerow([row.get(k, "") for k in fieldnames])
            text.flush()
            text.detach()  # leave closing the binary file to the caller

        _atomic_write_bytes_via(self.path, write)
        self.fieldnames = list(fieldnames)
        self._needs_newline = False

    def close(self):
        if self._fh is not None:
            self._fh.close()
            self._fh = None


# ---------------------------------------------------------------------------
# TensorBoard output
# ---------------------------------------------------------------------------

#: How to get tensorboardX, named in the error raised when it is missing.
TENSORBOARD_INSTALL = 'pip install tensorboardX==2.6.5 (or pip install -e ".[tensorboard]")'


def _import_tensorboardx():
    """tensorboardX's ``SummaryWriter``, or an ImportError saying how to install it."""
    try:
        from tensorboardX import SummaryWriter
    except ImportError as error:
        raise ImportError("TensorBoard logging needs tensorboardX, which is not installed "
                          "(%s): %s" % (error, TENSORBOARD_INSTALL)) from None
    return SummaryWriter


def _unused_event_file_suffix(log_dir):
    """A suffix (``.0``, ``.1``, ...) no event file in ``log_dir`` ends with yet.

    tensorboardX names a file by the second it was opened and opens it with
    ``"wb"``: without a suffix, a resumed run starting in the same second as the
    process it continues would truncate that process's events.  The count of
    files already there keeps the names in the order TensorBoard reads them.
    """
    try:
        names = [name for name in os.listdir(log_dir) if ".out.tfevents." in name]
    except FileNotFoundError:
        names = []
    index = len(names)
    while any(name.endswith(".%d" % index) for name in names):
        index += 1
    return ".%d" % index


class _TensorBoardOutput(object):
    """One folder of TensorBoard event files.

    A tabular row becomes one scalar per numeric key at the step the row's
    ``step_key`` holds (DDPG: ``TotalEnvSteps``, the run's environment steps);
    a row without that key goes at the number of rows this output has written.
    Text (strings) and missing values in a row are left out: TensorBoard
    scalars are numbers.  ``purge_step`` (a resumed run: the first step it will
    log) makes TensorBoard drop whatever an earlier process logged at that step
    or later, past the checkpoint the run continues from, so each curve has
    every step once.
    """

    def __init__(self, log_dir, step_key, purge_step):
        writer_class = _import_tensorboardx()
        self.log_dir = log_dir
        self.step_key = step_key
        self.n_rows = 0
        self.writer = writer_class(logdir=log_dir, purge_step=purge_step,
                                   filename_suffix=_unused_event_file_suffix(log_dir))

    def _row_step(self, row):
        step = row.get(self.step_key) if self.step_key else None
        if isinstance(step, numbers.Real) and not isinstance(step, bool):
            return int(step)
        return self.n_rows

    def write_row(self, row):
        """``row`` maps key to Python scalar (see :func:`_to_python_scalar`)."""
        step = self._row_step(row)
        for key, value in row.items():
            if isinstance(value, numbers.Real):
                self.writer.add_scalar(key, float(value), step)
        self.n_rows += 1
        self.writer.flush()

    def write_scalar(self, tag, value, step):
        self.writer.add_scalar(tag, float(value), int(step))

    def write_text(self, tag, text, step):
        self.writer.add_text(tag, text, int(step))
        self.writer.flush()

    def close(self):
        self.writer.close()


# ---------------------------------------------------------------------------
# The logger
# ---------------------------------------------------------------------------

class Logger(object):
    """Prefixed, timestamped text logging; tabular (CSV) logging; snapshots.

    All state that rllab kept in module globals lives on the instance, so
    independent instances do not interfere (the module-level functions use
    :func:`get_default_logger`).  Not thread-safe, like rllab's.
    """

    def __init__(self):
        self._prefixes = []
        self._tabular_prefixes = []
        self._tabular = {}  # insertion-ordered: table rows follow record order
        self._last_tabular = {}  # the row of the last dump_tabular
        self._text_outputs = {}  # absolute path -> open file
        self._tabular_outputs = {}  # absolute path -> _CsvOutput
        self._tensorboard_outputs = {}  # absolute folder -> _TensorBoardOutput
        self._snapshot_dir = None
        self._snapshot_mode = "all"
        self._snapshot_gap = 1
        self._log_tabular_only = False

    def reset(self):
        """Return to the freshly constructed state, closing every output.

        Needed when several experiments run in one process (or in tests):
        otherwise prefixes, half-recorded rows and open files would leak from
        one run into the next.
        """
        for fh in self._text_outputs.values():
            fh.close()
        for out in self._tabular_outputs.values():
            out.close()
        for out in self._tensorboard_outputs.values():
            out.close()
        self.__init__()

    # -- text logging -------------------------------------------------------

    def log(self, s, with_prefix=True, with_timestamp=True, color=None):
        """Print ``s`` and append it to every text output.

        The line reads ``"<date> <time>.<us> <TZ> | <prefixes><s>"`` as in
        rllab.  ``color`` (an rllab colour name) only colours the terminal;
        files get plain text.  Nothing is written while ``log_tabular_only``
        is set.
        """
        if self._log_tabular_only:
            return
        out = str(s)
        if with_prefix:
            out = "".join(self._prefixes) + out
        if with_timestamp:
            now = datetime.datetime.now().astimezone()
            stamp = now.strftime("%Y-%m-%d %H:%M:%S.%f")
            tz = now.strftime("%Z")
            if tz:
                stamp += " " + tz
            out = "%s | %s" % (stamp, out)
        shown = out
        if color is not None:
            if color not in _ANSI_COLORS:
                raise ValueError("unknown color %r; expected one of %s"
                                 % (color, sorted(_ANSI_COLORS)))
            shown = "\x1b[%dm%s\x1b[0m" % (_ANSI_COLORS[color], out)
        print(shown)
        for fh in self._text_outputs.values():
            fh.write(out + "\n")
            fh.flush()
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
        if placement not in ("front", "back"):
            raise ValueError("placement must be 'front' or 'back', got %r"
                             % (placement,))
        if not isinstance(values, np.ndarray):
            values = list(values)  # also accepts generators, like np.average
        arr = np.asarray(values, dtype=np.float64).ravel()
        stats = (("Average", np.mean), ("Std", np.std), ("Median", np.median),
                 ("Min", np.min), ("Max", np.max))
        for name, fn in stats:
            full = name + str(key) if placement == "front" else str(key) + name
            self.record_tabular(full, float(fn(arr)) if arr.size else float("nan"))

    def get_tabular_keys(self):
        """Keys recorded since the last dump, in record order."""
        return list(self._tabular)

    def dump_tabular(self, with_prefix=True, with_timestamp=True):
        """Print the recorded values as a table, write a CSV row, and clear them.

        Each table line goes through :meth:`log` (so it carries the prefix
        and timestamp unless disabled, and reaches the text outputs).  With
        ``log_tabular_only`` set, the bare table is printed to stdout only, as
        rllab does.  Nothing recorded means nothing printed and no CSV row.
        """
        if not self._tabular:
            return
        lines = _format_table(
            [(k, _format_display_value(v)) for k, v in self._tabular.items()])
        if self._log_tabular_only:
            for line in lines:
                print(line)
            sys.stdout.flush()
        else:
            for line in lines:
                self.log(line, with_prefix=with_prefix,
                         with_timestamp=with_timestamp)
        row = {k: _format_csv_value(v) for k, v in self._tabular.items()}
        for out in self._tabular_outputs.values():
            out.write_row(row)
        self._last_tabular = {k: _to_python_scalar(v) for k, v in self._tabular.items()}
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
        key = os.path.abspath(path)
        if key in self._text_outputs:
            return
        _make_parent_dirs(key)
        self._text_outputs[key] = open(key, "a", encoding="utf-8")

    def remove_text_output(self, path):
        """Stop logging to ``path`` and close it; unknown paths are ignored."""
        fh = self._text_outputs.pop(os.path.abspath(path), None)
        if fh is not None:
            fh.close()

    def add_tabular_output(self, path):
        """Write a CSV row to ``path`` at every :meth:`dump_tabular`.

        Parent folders are created.  An existing non-empty file is continued:
        its header is adopted and widened when new keys appear.  Adding the
        same file twice is a no-op.
        """
        key = os.path.abspath(path)
        if key in self._tabular_outputs:
            return
        _make_parent_dirs(key)
        self._tabular_outputs[key] = _CsvOutput(key)

    def remove_tabular_output(self, path):
        """Stop writing rows to ``path`` and close it; unknown paths are ignored."""
        out = self._tabular_outputs.pop(os.path.abspath(path), None)
        if out is not None:
            out.close()

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
        key = os.path.abspath(log_dir)
        if key in self._tensorboard_outputs:
            return
        os.makedirs(key, exist_ok=True)
        self._tensorboard_outputs[key] = _TensorBoardOutput(key, step_key, purge_step)

    def remove_tensorboard_output(self, log_dir):
        """Stop writing events to ``log_dir`` and close its file; unknown folders are
        ignored."""
        out = self._tensorboard_outputs.pop(os.path.abspath(log_dir), None)
        if out is not None:
            out.close()

    def has_scalar_outputs(self):
        """Whether :meth:`record_scalar` goes anywhere (a TensorBoard output is added), so
        that a caller can skip computing values nobody records."""
        return bool(self._tensorboard_outputs)

    def record_scalar(self, tag, value, step):
        """Write one scalar at ``step`` to the TensorBoard outputs now, outside the tabular
        rows (values "as they happen": an episode's return, an update's loss)."""
        value = _to_python_scalar(value)
        for out in self._tensorboard_outputs.values():
            out.write_scalar(tag, value, step)

    def record_text(self, tag, text, step=0):
        """Write ``text`` (TensorBoard renders it as Markdown) to the TensorBoard outputs."""
        for out in self._tensorboard_outputs.values():
            out.write_text(tag, str(text), step)

    def set_log_tabular_only(self, log_tabular_only):
        """When true, :meth:`log` is silent and tables print without prefixes."""
        self._log_tabular_only = bool(log_tabular_only)

    def get_log_tabular_only(self):
        return self._log_tabular_only

    # -- snapshots ------------------------------------------------------------

    def set_snapshot_dir(self, dir_name):
        """Folder for :meth:`save_itr_params`; ``None`` disables snapshots.

        The folder is created on the first save, not here, so configuring a
        logger has no side effects on disk.
        """
        self._snapshot_dir = None if dir_name is None else str(dir_name)

    def get_snapshot_dir(self):
        return self._snapshot_dir

    def set_snapshot_mode(self, mode):
        """One of ``'all'``, ``'last'``, ``'gap'``, ``'none'``.

        Anything else raises ``ValueError`` at once; rllab only failed (with
        ``NotImplementedError``) at the first save, possibly hours later.
        """
        if mode not in SNAPSHOT_MODES:
            raise ValueError("snapshot mode must be one of %s, got %r"
                             % (", ".join(SNAPSHOT_MODES), mode))
        self._snapshot_mode = mode

    def get_snapshot_mode(self):
        return self._snapshot_mode

    def set_snapshot_gap(self, gap):
        """Save every ``gap``-th iteration in ``'gap'`` mode (positive int)."""
        if isinstance(gap, bool) or not isinstance(gap, numbers.Integral) or gap < 1:
            raise ValueError("snapshot gap must be a positive integer, got %r"
                             % (gap,))
        self._snapshot_gap = int(gap)

    def get_snapshot_gap(self):
        return self._snapshot_gap

    def _snapshot_name(self, itr):
        """Base name (no suffix) for iteration ``itr``, or None to skip it."""
        mode = self._snapshot_mode
        if mode == "all":
            return "itr_%d" % itr
        if mode == "last":
            return "params"
        if mode == "gap":
            return "itr_%d" % itr if itr % self._snapshot_gap == 0 else None
        return None  # 'none'

    def save_itr_params(self, itr, params):
        """Save a snapshot for iteration ``itr`` according to the snapshot mode.

        Target names follow rllab: ``'all'`` writes ``itr_<itr>.pkl`` every
        time, ``'last'`` overwrites ``params.pkl``, ``'gap'`` writes
        ``itr_<itr>.pkl`` when ``itr % gap == 0``, ``'none'`` writes nothing;
        nothing is written either while no snapshot folder is set.

        ``params`` is normally any picklable object (typically a dict),
        written as a pickle: rllab's snapshot format, kept for compatibility
        with rllab's tools.  Unpickling runs code, so load such snapshots only
        if you trust them (DDPG's own checkpoints, written through the callable
        form, hold no pickle: see docs/checkpoints.md).  ``params`` may
        instead be a callable ``params(path)``: then the target has no
        ``.pkl`` suffix (``itr_<itr>`` or ``params``) and the callable must
        create a file *or a folder* at the ``path`` it is given, which is a
        not-yet-existing path in a hidden temporary folder inside the
        snapshot folder.  This lets an algorithm save a checkpoint folder
        (network parameters, optimiser state, replay buffer) under the same
        rules.  Either way the result is moved into place only once fully
        written, so a crash leaves the previous snapshot intact; an exception
        from pickling or from the callable propagates and leaves no temporary
        behind.

        Returns the path written, or ``None`` when nothing was saved.
        """
        if not self._snapshot_dir:
            return None
        name = self._snapshot_name(itr)
        if name is None:
            return None
        os.makedirs(self._snapshot_dir, exist_ok=True)
        if callable(params):
            target = os.path.join(self._snapshot_dir, name)
            self._save_with_callable(params, target)
        else:
            target = os.path.join(self._snapshot_dir, name + ".pkl")
            _atomic_write_bytes_via(
                target,
                lambda f: pickle.dump(params, f, protocol=pickle.HIGHEST_PROTOCOL))
        return target

    @staticmethod
    def _save_with_callable(save_fn, target):
        directory = os.path.dirname(os.path.abspath(target))
        name = os.path.basename(target)
        staging = tempfile.mkdtemp(dir=directory, prefix="." + name + ".",
                                   suffix=".tmp")
        try:
            staged = os.path.join(staging, name)
            save_fn(staged)
            if not os.path.lexists(staged):
                raise RuntimeError(
                    "snapshot callable %r wrote nothing at the path it was given "
                    "(%s)" % (save_fn, staged))
            if not os.path.isdir(staged):
                os.chmod(staged, default_file_mode())
            _replace_path(staged, target, staging)
        finally:
            shutil.rmtree(staging, ignore_errors=True)


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
