"""Who may write a run folder: a fresh run, a resume, a lock against a second writer.

A run folder (``--log-dir``) holds what a user cannot get back without training again:
the checkpoints, ``progress.csv`` and ``params.json``. So ``ddpg-train`` never writes over
another run's folder, never lets two processes write one folder at once, and never lets a
resume move a run back in time:

- a fresh run into a folder that holds a run refuses, naming the ways out (``--resume`` its
  newest checkpoint, another ``--log-dir``, or ``--overwrite``, which moves the old run aside
  to ``FOLDER.replaced-TIMESTAMP`` and deletes nothing);
- a resume into the checkpoint's own folder refuses when the folder holds a newer checkpoint
  than the one resumed (an older ``interrupted/`` beside a newer ``params/``, an ``itr_3/``
  beside ``itr_5/``); continuing an old checkpoint in a new ``--log-dir`` is a branch, and
  allowed. Once the resumed run has saved a newer checkpoint, an ``interrupted/`` it was
  resumed from or that it left behind is retired (deleted: the newer checkpoint holds the
  same run further on), so it cannot be resumed by mistake later;
- the folder is locked while the run writes it (``.lock``: the owner's pid and host); a lock
  whose process has ended on this host is stale and taken over.

Checkpoints are ordered by the environment steps (then updates) they hold, which only grow
as a run trains; an ``interrupted/`` checkpoint taken mid-epoch is newer than the epoch's
start.
"""
import datetime
import errno
import json
import os
import re
import shutil
import socket

from ddpg import logger
from ddpg.checkpoint.format import MANIFEST
from ddpg.experiment.script import UsageError

__all__ = ["RUN_FILES", "LOCK_FILE", "INTERRUPTED", "default_run_folder", "holds_run",
           "checkpoints_in", "newest_checkpoint", "checkpoint_clock", "checkpoint_epoch",
           "RunFolderLock", "claim_run_folder", "RunFolder"]

#: Files whose presence makes a folder a run's folder (besides a checkpoint folder in it).
RUN_FILES = ("progress.csv", "params.json", "debug.log")
#: The lock file of a folder being written.
LOCK_FILE = ".lock"
#: The checkpoint folder that Ctrl-C writes.
INTERRUPTED = "interrupted"


def default_run_folder(env_id, algo_name, now=None, root="runs"):
    """A new folder for a run given no ``--log-dir``: ``runs/ENV-ALGO-YYYYmmdd-HHMMSS``,
    with ``-2``, ``-3`` ... appended when that name is taken."""
    now = now or datetime.datetime.now()
    name = "%s-%s-%s" % (re.sub(r"[^\w.-]+", "_", env_id), algo_name,
                         now.strftime("%Y%m%d-%H%M%S"))
    folder, number = os.path.join(root, name), 1
    while os.path.lexists(folder):
        number += 1
        folder = os.path.join(root, "%s-%d" % (name, number))
    return folder


def holds_run(folder):
    """Whether ``folder`` holds a run's files: progress.csv, params.json, debug.log or a
    checkpoint."""
    if not os.path.isdir(folder):
        return False
    return (any(os.path.isfile(os.path.join(folder, name)) for name in RUN_FILES)
            or bool(checkpoints_in(folder)))


def _progress(checkpoint):
    """The ``progress`` record of a checkpoint's manifest (None if it cannot be read)."""
    try:
        with open(os.path.join(checkpoint, MANIFEST), encoding="utf-8") as handle:
            progress = json.load(handle)["progress"]
        return {key: int(progress[key]) for key in ("epoch", "itr", "total_env_steps")}
    except (OSError, ValueError, KeyError, TypeError):
        return None


def checkpoint_clock(checkpoint):
    """``(environment steps, updates)`` a checkpoint folder holds, from its manifest; None
    when the manifest cannot be read."""
    progress = _progress(checkpoint)
    return None if progress is None else (progress["total_env_steps"], progress["itr"])


def checkpoint_epoch(checkpoint):
    """The epochs a checkpoint has trained (None if its manifest cannot be read)."""
    progress = _progress(checkpoint)
    return None if progress is None else progress["epoch"]


def checkpoints_in(folder):
    """``{path: clock}`` of the checkpoint folders directly in ``folder`` (``params/``,
    ``itr_N/``, ``interrupted/``; hidden folders of a save in progress left out)."""
    found = {}
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return found
    for name in names:
        path = os.path.join(folder, name)
        if name.startswith(".") or not os.path.isfile(os.path.join(path, MANIFEST)):
            continue
        clock = checkpoint_clock(path)
        if clock is not None:
            found[path] = clock
    return found


def newest_checkpoint(folder):
    """The checkpoint in ``folder`` holding the most training, or None."""
    found = checkpoints_in(folder)
    return max(found, key=found.get) if found else None


def _same_folder(first, second):
    return os.path.realpath(first) == os.path.realpath(second)


def _pid_running(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # another user's process
    return True


class RunFolderLock:
    """``FOLDER/.lock``, created exclusively, holding the owner's pid, host and start time.

    :meth:`acquire` raises :class:`UsageError` while another live process holds it; a lock
    left by a process that no longer runs on this host is removed and taken. A lock of
    another host cannot be checked: the message says to delete it if that run has ended.
    """

    def __init__(self, folder):
        self.path = os.path.join(folder, LOCK_FILE)
        self.held = False

    def acquire(self):
        record = json.dumps({"pid": os.getpid(), "host": socket.gethostname(),
                             "started": datetime.datetime.now().isoformat(
                                 timespec="seconds")})
        for _ in range(2):
            try:
                descriptor = os.open(self.path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
            except FileExistsError:
                self._remove_if_stale()
                continue
            with os.fdopen(descriptor, "w") as handle:
                handle.write(record)
            self.held = True
            return self
        self._remove_if_stale()  # raises: another process took it in between
        raise UsageError("%s is locked by another process" % os.path.dirname(self.path))

    def check_free(self):
        """Raise :class:`UsageError` if another live process holds the lock (a stale lock is
        removed)."""
        if os.path.lexists(self.path):
            self._remove_if_stale()

    def _remove_if_stale(self):
        folder = os.path.dirname(self.path)
        try:
            with open(self.path, encoding="utf-8") as handle:
                owner = json.load(handle)
            pid, host = int(owner["pid"]), str(owner["host"])
        except FileNotFoundError:
            return  # released in between
        except (OSError, ValueError, KeyError, TypeError):
            pid, host = None, None  # written by a process killed while writing it
        if pid is not None and host != socket.gethostname():
            raise UsageError("--log-dir %s is in use by process %d on %s; if that run has "
                             "ended, delete %s, or choose another --log-dir"
                             % (folder, pid, host, self.path))
        if pid is not None and _pid_running(pid):
            raise UsageError("--log-dir %s is in use by a run of process %d; wait for it "
                             "to end, or choose another --log-dir" % (folder, pid))
        logger.log("Removed the stale lock of %s (process %s is no longer running)"
                   % (folder, "unknown" if pid is None else pid))
        try:
            os.remove(self.path)
        except FileNotFoundError:
            pass

    def release(self):
        if self.held:
            self.held = False
            try:
                os.remove(self.path)
            except FileNotFoundError:
                pass


class RunFolder:
    """A run folder claimed by :func:`claim_run_folder`; a context manager that releases
    its lock. :meth:`after_epoch` is the training loop's epoch callback that retires a
    superseded ``interrupted/`` checkpoint."""

    def __init__(self, path, lock, retire_interrupted):
        self.path = path
        self.lock = lock
        self._retire = retire_interrupted

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        self.lock.release()

    def after_epoch(self, algo, epoch):  # pylint: disable=unused-argument
        """Delete ``interrupted/`` once a newer checkpoint of this run is in the folder."""
        if not self._retire:
            return
        interrupted = os.path.join(self.path, INTERRUPTED)
        if not os.path.isdir(interrupted):
            self._retire = False
            return
        clock = checkpoint_clock(interrupted)
        newer = [path for path, other in checkpoints_in(self.path).items()
                 if clock is None or other > clock]
        if newer:
            shutil.rmtree(interrupted)
            logger.log("Removed %s: %s holds this run further on"
                       % (interrupted, newer[0]))
            self._retire = False


def _refuse_existing_run(folder):
    newest = newest_checkpoint(folder)
    continue_it = ("continue it with --resume %s, " % newest) if newest else ""
    raise UsageError("--log-dir %s already holds a run: %schoose another --log-dir, or pass "
                     "--overwrite to move it aside to %s.replaced-TIMESTAMP"
                     % (folder, continue_it, folder.rstrip(os.sep)))


def _refuse_going_back(checkpoint, folder):
    clock = checkpoint_clock(checkpoint)
    newer = {path: other for path, other in checkpoints_in(folder).items()
             if clock is not None and other > clock and not _same_folder(path, checkpoint)}
    if newer:
        newest = max(newer, key=newer.get)
        raise UsageError("--resume %s is older than %s (%d environment steps against %d) "
                         "in the same run folder: resuming it would take the run back; "
                         "resume %s, or pass --log-dir NEW_FOLDER to continue the older "
                         "checkpoint as a new run"
                         % (checkpoint, newest, clock[0], newer[newest][0], newest))


def _move_aside(folder):
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    aside, number = "%s.replaced-%s" % (folder.rstrip(os.sep), stamp), 1
    while os.path.lexists(aside):
        number += 1
        aside = "%s.replaced-%s-%d" % (folder.rstrip(os.sep), stamp, number)
    os.rename(folder, aside)
    return aside


def _check_writable(folder):
    """Create ``folder`` if needed; a :class:`UsageError` naming --log-dir if that or
    writing in it fails. Returns whether it was created."""
    created = not os.path.isdir(folder)
    try:
        os.makedirs(folder, exist_ok=True)
        probe = os.path.join(folder, ".write-test-%d" % os.getpid())
        with open(probe, "w") as handle:
            handle.write("")
        os.remove(probe)
    except OSError as error:
        reason = error.strerror or str(error)
        if error.errno == errno.ENOSPC:
            reason = "the disk is full"
        raise UsageError("--log-dir %s cannot be written (%s): choose another --log-dir"
                         % (folder, reason)) from error
    return created


def claim_run_folder(args, resumed_from=None):
    """Check and lock the run folder ``args.log_dir`` for this run; a :class:`RunFolder`.

    ``resumed_from`` is the checkpoint a resumed run was restored from. The checks run under
    the lock, so no other process can write the folder in between; a refusal is a
    :class:`UsageError` naming the flag that fixes it, and removes the lock (and the folder,
    if this call created it): nothing is left behind. With ``args.overwrite`` an existing run
    is renamed aside (and said so).
    """
    folder = args.log_dir
    own_folder = bool(resumed_from) and _same_folder(
        os.path.dirname(os.path.abspath(os.path.normpath(resumed_from))), folder)
    created = _check_writable(folder)
    lock = RunFolderLock(folder)
    try:
        lock.acquire()  # a folder in use: that is the reason to give, whatever it holds
        if own_folder:
            _refuse_going_back(resumed_from, folder)
        elif holds_run(folder):
            if not args.overwrite:
                _refuse_existing_run(folder)
            lock.release()
            aside = _move_aside(folder)
            os.makedirs(folder)
            lock.acquire()
            logger.log("--overwrite: the run that was in %s is now in %s" % (folder, aside))
    except BaseException:
        lock.release()
        if created:
            shutil.rmtree(folder, ignore_errors=True)
        raise
    return RunFolder(folder, lock, retire_interrupted=own_folder)
