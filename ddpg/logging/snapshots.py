"""rllab's snapshots: the snapshot modes, the target names, and the atomic writes.

:meth:`ddpg.logger.Logger.save_itr_params` saves one snapshot per iteration under the names
rllab gives them (``itr_<itr>.pkl``, ``params.pkl``); a snapshot of an object is a pickle,
rllab's format, kept for compatibility with rllab's tools. A callable instead of an object
writes a file or a folder itself (DDPG's checkpoint folders, which hold no pickle). Either way
the snapshot is written under a hidden temporary name and moved into place only once complete.
"""

import numbers
import os
import pickle
import shutil
import tempfile

from ddpg.logging.fileio import atomic_write_bytes_via, default_file_mode, replace_path

__all__ = [
    "SNAPSHOT_MODES",
    "check_snapshot_mode",
    "check_snapshot_gap",
    "snapshot_name",
    "save_snapshot",
]

#: The snapshot modes rllab understands, see :meth:`ddpg.logger.Logger.save_itr_params`.
SNAPSHOT_MODES = ("all", "last", "gap", "none")


def check_snapshot_mode(mode):
    """``mode`` when it is one of :data:`SNAPSHOT_MODES`, else ``ValueError``."""
    if mode not in SNAPSHOT_MODES:
        raise ValueError("snapshot mode must be one of %s, got %r"
                         % (", ".join(SNAPSHOT_MODES), mode))
    return mode


def check_snapshot_gap(gap):
    """``gap`` as an ``int`` when it is a positive integer, else ``ValueError``."""
    if isinstance(gap, bool) or not isinstance(gap, numbers.Integral) or gap < 1:
        raise ValueError("snapshot gap must be a positive integer, got %r"
                         % (gap,))
    return int(gap)


def snapshot_name(mode, gap, itr):
    """Base name (no suffix) of iteration ``itr``'s snapshot, or None to skip it."""
    if mode == "all":
        return "itr_%d" % itr
    if mode == "last":
        return "params"
    if mode == "gap":
        return "itr_%d" % itr if itr % gap == 0 else None
    return None  # 'none'


def save_snapshot(snapshot_dir, name, params):
    """Write ``params`` as snapshot ``name`` in ``snapshot_dir`` (created); return its path.

    An object is pickled to ``<name>.pkl``; a callable ``params(path)`` creates a file or a
    folder at a path in a hidden temporary folder, moved to ``<name>`` once it returns.
    """
    os.makedirs(snapshot_dir, exist_ok=True)
    if callable(params):
        target = os.path.join(snapshot_dir, name)
        _save_with_callable(params, target)
    else:
        target = os.path.join(snapshot_dir, name + ".pkl")
        atomic_write_bytes_via(
            target,
            lambda f: pickle.dump(params, f, protocol=pickle.HIGHEST_PROTOCOL))
    return target


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
        replace_path(staged, target, staging)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
