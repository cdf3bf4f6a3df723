"""A tabular row of the logger: its values, its statistics, its printed table, its CSV file.

:meth:`ddpg.logger.Logger.dump_tabular` turns the values recorded since the last dump into
one row. Here that row's values are unwrapped to Python scalars (numpy and MXNet scalars
included), printed as rllab's compact two-column table, and written to ``progress.csv`` by
:class:`CsvOutput`, which keeps every row of a file under one header (new keys widen it) and
writes floats at full precision.
"""

import csv
import io
import numbers
import os

import numpy as np

from ddpg.logging.fileio import atomic_write_bytes_via, make_parent_dirs

__all__ = [
    "MISC_STAT_PLACEMENTS",
    "to_python_scalar",
    "misc_stat_items",
    "table_lines",
    "csv_cells",
    "CsvOutput",
]

#: Where :func:`misc_stat_items` puts a statistic's name: ``AverageReturn`` or ``ReturnAverage``.
MISC_STAT_PLACEMENTS = ("front", "back")


# ---------------------------------------------------------------------------
# Values
# ---------------------------------------------------------------------------

def to_python_scalar(val):
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
        return to_python_scalar(val.asscalar())
    return val


def misc_stat_items(key, values, placement="back"):
    """``[(name, value), ...]``: Average, Std, Median, Min and Max of ``values``.

    Names follow rllab (see :meth:`ddpg.logger.Logger.record_tabular_misc_stat`); with no
    values every statistic is NaN.
    """
    if placement not in MISC_STAT_PLACEMENTS:
        raise ValueError("placement must be 'front' or 'back', got %r"
                         % (placement,))
    if not isinstance(values, np.ndarray):
        values = list(values)  # also accepts generators, like np.average
    arr = np.asarray(values, dtype=np.float64).ravel()
    stats = (("Average", np.mean), ("Std", np.std), ("Median", np.median),
             ("Min", np.min), ("Max", np.max))
    items = []
    for name, fn in stats:
        full = name + str(key) if placement == "front" else str(key) + name
        items.append((full, float(fn(arr)) if arr.size else float("nan")))
    return items


# ---------------------------------------------------------------------------
# The printed table
# ---------------------------------------------------------------------------

def _format_display_value(val):
    """Text for the printed table: compact, like rllab's ``tabulate`` (``%g``)."""
    val = to_python_scalar(val)
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


def table_lines(row):
    """The lines of the printed table of ``row`` (a non-empty ``{key: value}``)."""
    return _format_table([(k, _format_display_value(v)) for k, v in row.items()])


# ---------------------------------------------------------------------------
# The CSV file
# ---------------------------------------------------------------------------

def _format_csv_value(val):
    """Text for a CSV cell, losing no precision.

    ``repr(float)`` is the shortest string that reads back to the same
    float64, so a value read from ``progress.csv`` equals the value recorded.
    """
    val = to_python_scalar(val)
    if val is None:
        return ""
    if isinstance(val, bool):
        return str(val)
    if isinstance(val, numbers.Integral):
        return str(int(val))
    if isinstance(val, numbers.Real):
        return repr(float(val))
    return str(val)


def csv_cells(row):
    """``row`` (``{key: value}``) as ``{key: cell text}`` for :meth:`CsvOutput.write_row`."""
    return {k: _format_csv_value(v) for k, v in row.items()}


class CsvOutput(object):
    """One ``progress.csv``: keeps every row aligned with a single header.

    The header (``fieldnames``) only grows.  Rows whose keys are all known are
    appended (one ``write`` plus ``flush``, so readers see whole rows while
    training runs).  A row with a new key triggers a rewrite of the whole file
    with the widened header, done atomically so a reader or a crash never sees
    a half-rewritten file.  The file on disk is the store of earlier rows:
    nothing but the header is kept in memory, however long the run.  Parent
    folders are created.
    """

    def __init__(self, path):
        self.path = path
        make_parent_dirs(path)
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

        atomic_write_bytes_via(self.path, write)
        self.fieldnames = list(fieldnames)
        self._needs_newline = False

    def close(self):
        if self._fh is not None:
            self._fh.close()
            self._fh = None
