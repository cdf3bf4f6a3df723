"""Small file helpers of the logger: atomic writes and replacements, default permissions.

The logger's files (``progress.csv`` rewritten with a wider header, ``params.pkl``, a
checkpoint folder) must never be seen half-written, by a reader while training runs or after
a crash: each is written under a hidden temporary name next to its target and renamed into
place. Temporaries are created with private permissions (``mkstemp``: 0o600, ``mkdtemp``:
0o700), so what is renamed into place is first given the permissions a plain ``open()`` or
``os.makedirs`` would have given it.
"""

import os
import shutil
import tempfile

__all__ = [
    "default_file_mode",
    "default_dir_mode",
    "make_parent_dirs",
    "remove_path",
    "replace_path",
    "atomic_write_bytes_via",
]

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


def make_parent_dirs(path):
    """Create the folders above ``path`` that do not exist yet."""
    parent = os.path.dirname(os.path.abspath(path))
    os.makedirs(parent, exist_ok=True)


def remove_path(path):
    """Delete a file or a folder, ignoring one that is already gone."""
    if os.path.isdir(path) and not os.path.islink(path):
        shutil.rmtree(path, ignore_errors=True)
    elif os.path.lexists(path):
        try:
            os.remove(path)
        except FileNotFoundError:
            pass


def replace_path(src, dst, trash_dir):
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


def atomic_write_bytes_via(target, write_fn):
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
        remove_path(tmp)
        raise
