"""Replacing a checkpoint folder atomically, and undoing a replacement a crash cut short.

:func:`write_atomically` has a function fill a hidden temporary folder next to the target
(``.<name>.<random>.saving``), then renames the old checkpoint aside (``.<name>.old``), the
new one in, and deletes the old one. Each file is fsynced as it is described for the
manifest (:func:`sync_and_describe`), and the folders after the renames. A crash at any point
leaves either the old or the new checkpoint complete; if it came between the two renames,
:func:`recover` (called by the next save and by every reader) renames the aside copy back.
"""
import glob
import hashlib
import os
import shutil
import tempfile

from ddpg.logging.fileio import default_dir_mode
from ddpg.checkpoint.format import MANIFEST

_STAGING_SUFFIX = ".saving"
_ASIDE_SUFFIX = ".old"


def write_atomically(path, fill):
    """Replace the folder ``path`` by one that ``fill(folder)`` writes; return ``path``.

    ``fill`` writes into a temporary folder; if it raises, the previous checkpoint at
    ``path`` (if any) stays as it was and the temporary folder is deleted.
    """
    path = os.path.abspath(path)
    parent, name = os.path.split(path)
    os.makedirs(parent, exist_ok=True)
    recover(path)
    for stale in glob.glob(os.path.join(parent, "." + glob.escape(name) + ".*"
                                        + _STAGING_SUFFIX)):
        shutil.rmtree(stale, ignore_errors=True)  # left by a save that was killed
    staging = tempfile.mkdtemp(dir=parent, prefix="." + name + ".", suffix=_STAGING_SUFFIX)
    try:
        os.chmod(staging, default_dir_mode())  # mkdtemp's 0o700 would hide it from others
        fill(staging)
        _swap_in(staging, path)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return path


def sync_and_describe(filename):
    """fsync a written file and return its size and SHA-256 (read back in 1 MiB blocks)."""
    digest = hashlib.sha256()
    with open(filename, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
        os.fsync(handle.fileno())
    return {"bytes": os.path.getsize(filename), "sha256": digest.hexdigest()}


def fsync_dir(folder):
    """Make renames in ``folder`` durable (a no-op where directories cannot be opened)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _aside_path(path):
    parent, name = os.path.split(path)
    return os.path.join(parent, "." + name + _ASIDE_SUFFIX)


def _swap_in(staging, path):
    """Replace ``path`` by the complete folder ``staging``: old aside, new in, old deleted."""
    aside = _aside_path(path)
    if os.path.lexists(aside):
        _remove(aside)
    had_old = os.path.lexists(path)
    if had_old:
        os.rename(path, aside)
    try:
        os.rename(staging, path)
    except BaseException:
        if had_old and not os.path.lexists(path):
            os.rename(aside, path)
        raise
    fsync_dir(os.path.dirname(path))
    if had_old:
        _remove(aside)


def _remove(path):
    if os.path.isdir(path) and not os.path.islink(path):
        shutil.rmtree(path, ignore_errors=True)
    elif os.path.lexists(path):
        os.remove(path)


def recover(path):
    """Undo a replacement that a crash cut between its two renames; True if it did.

    Two writers replace checkpoint folders: :func:`write_atomically` (the old copy is renamed
    to ``.<name>.old`` next to it) and ``logger.save_itr_params`` with a callable (the old copy
    goes to ``.<name>.<random>.tmp/old``). When ``path`` is missing, the most recent complete
    aside copy (one with a manifest) is renamed back. When ``path`` exists, a leftover
    ``.<name>.old`` is an old version whose deletion was cut short: it is deleted.
    """
    path = os.path.abspath(path)
    aside = _aside_path(path)
    if os.path.lexists(path):
        if os.path.lexists(aside):
            _remove(aside)
        return False
    parent, name = os.path.split(path)
    candidates = [aside] + glob.glob(os.path.join(parent, "." + glob.escape(name) + ".*.tmp",
                                                  "old"))
    complete = [c for c in candidates if os.path.isfile(os.path.join(c, MANIFEST))]
    if not complete:
        return False
    newest = max(complete, key=lambda c: os.path.getmtime(os.path.join(c, MANIFEST)))
    os.rename(newest, path)
    fsync_dir(parent)
    return True
