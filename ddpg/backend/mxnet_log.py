"""Keep MXNet's own C++ information lines about our settings off the user's console.

Two settings this library makes print a line from MXNet's C++ core with no way to turn it
off: MXNet 1.9's logging (dmlc) has no verbosity level, and neither message checks a
variable (``MXNET_SUBGRAPH_VERBOSE`` only covers the subgraph backends that are in use):

- ``engine.cc: MXNet start using engine: NaiveEngine``, once per process, whenever
  ``MXNET_ENGINE_TYPE`` is set (we set it on the CPU, see ``ddpg/__init__.py``);
- ``graph_executor.cc: MXNET_SUBGRAPH_BACKEND=NONE is detected, subgraph backend is not in
  use``, at every executor bound (we bind without the backend for correctness, see
  :mod:`ddpg.backend.binding`).

:func:`filtering_mxnet_info` captures the process's stderr (file descriptor 2) while it
runs, and writes everything it caught back to stderr when it ends, except those two lines:
warnings and errors, MXNet's or the program's, are kept, only later. DDPG's constructor and
the networks' ``define_exe`` run under it, which is where the engine starts and executors are
bound. A program that imports ``ddpg`` but never runs MXNet (``python -m ddpg.plot``, a
command line that stops at a bad flag) would still start the engine at exit, in MXNet's own
shutdown hook: :func:`filter_mxnet_shutdown` runs that hook under the filter too.
``DDPG_MXNET_INFO=1`` keeps the lines.
"""
import atexit
import functools
import os
import re
import sys
import tempfile
import threading
from contextlib import contextmanager

__all__ = ["SHOW_VARIABLE", "MXNET_INFO_LINE", "filtering_mxnet_info", "filters_mxnet_info",
           "filter_mxnet_shutdown"]

#: Set to 1 to see MXNet's information lines about the engine and the subgraph backend.
SHOW_VARIABLE = "DDPG_MXNET_INFO"

#: The two lines (a dmlc log line: "[HH:MM:SS] path/file.cc:LINE: message").
MXNET_INFO_LINE = re.compile(
    rb"^\[\d\d:\d\d:\d\d\] \S*(?:src/engine/engine\.cc:\d+: MXNet start using engine: \w+"
    rb"|src/executor/graph_executor\.cc:\d+: MXNET_SUBGRAPH_BACKEND=NONE is detected, "
    rb"subgraph backend is not in use)\r?\n?$")

_state = threading.local()


def _enabled():
    return os.environ.get(SHOW_VARIABLE, "0") in ("", "0")


@contextmanager
def filtering_mxnet_info():
    """Run the block with MXNet's two information lines filtered out of stderr.

    Re-entrant (an inner block does nothing) and per thread; anything else written to
    file descriptor 2 meanwhile (Python's ``sys.stderr`` included) is written back in order
    when the block ends, also when it raises.
    """
    if getattr(_state, "active", False) or not _enabled():
        yield
        return
    try:
        saved = os.dup(2)
    except OSError:  # no stderr to capture
        yield
        return
    _state.active = True
    capture = tempfile.TemporaryFile()
    try:
        _flush_stderr()
        os.dup2(capture.fileno(), 2)
        try:
            yield
        finally:
            _flush_stderr()
            os.dup2(saved, 2)
            capture.seek(0)
            kept = [line for line in capture.read().splitlines(True)
                    if not MXNET_INFO_LINE.match(line)]
            _write_all(2, b"".join(kept))
    finally:
        _state.active = False
        os.close(saved)
        capture.close()


def filters_mxnet_info(function):
    """Decorator: run ``function`` under :func:`filtering_mxnet_info`."""
    @functools.wraps(function)
    def wrapper(*args, **kwargs):
        with filtering_mxnet_info():
            return function(*args, **kwargs)
    return wrapper


def filter_mxnet_shutdown():
    """Replace MXNet's exit hook (``mxnet.base._notify_shutdown``, which starts the engine
    if nothing did) by the same hook under :func:`filtering_mxnet_info`. Idempotent."""
    import mxnet.base
    hook = getattr(mxnet.base, "_notify_shutdown", None)
    if hook is None or getattr(hook, "_ddpg_filtered", False):
        return
    filtered = filters_mxnet_info(hook)
    filtered._ddpg_filtered = True
    atexit.unregister(hook)
    atexit.register(filtered)
    mxnet.base._notify_shutdown = filtered


def _write_all(fd, data):
    while data:
        data = data[os.write(fd, data):]


def _flush_stderr():
    for stream in (sys.stderr, sys.__stderr__):
        try:
            if stream is not None:
                stream.flush()
        except (OSError, ValueError):
            pass
