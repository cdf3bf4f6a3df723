"""Which CPU kernels MXNet uses for DDPG's layers.

MXNet's oneDNN (MKLDNN) kernels are several times faster than its plain ones on large layers,
but each call costs tens of microseconds of set-up. With the original's 32-unit networks that
overhead is most of an update: we measured 1417 environment steps/s with oneDNN off against
821 with it on (Pendulum-v1, one thread), while the 400-300 networks of the DDPG paper run
3.4 times faster with it on. MXnet reads ``MXNET_MKLDNN_ENABLED`` once, at its first operator,
so the choice holds for the whole process and must be made before any MXNet operator runs.

The same networks also lose from OpenMP: splitting a 32-unit layer's work over two threads
costs more in synchronisation than it saves. With ``OMP_NUM_THREADS=2`` the original's sizes
trained at 1386-1446 steps/s against 1502-1662 with one OpenMP thread (Pendulum-v1, 2 cores),
so "auto" gives small networks one OpenMP thread (``MXSetNumOMPThreads``, which MXNet applies
to the operators that follow, so unlike oneDNN it can change at any time).
"""
import ctypes
import os

#: Networks whose layers are all at most this wide run faster without oneDNN.
SMALL_LAYER_UNITS = 64
#: Holds the value this module gave MXNET_MKLDNN_ENABLED (a user's own setting differs or
#: comes without it).
_SET_BY_DDPG = "DDPG_MKLDNN_AUTO_VALUE"


def hidden_layer_sizes(*networks):
    """The hidden layer widths of these networks (one without ``hidden_sizes`` counts as
    large)."""
    sizes = []
    for network in networks:
        sizes.extend(getattr(network, "hidden_sizes", None) or [float("inf")])
    return sizes


def choose_mkldnn(setting, layer_sizes, ctx):
    """Apply ``setting`` (True, False or "auto") for a process about to train these layers.

    "auto" turns oneDNN off on the CPU when every layer has at most ``SMALL_LAYER_UNITS``
    units, unless the user set ``MXNET_MKLDNN_ENABLED`` themselves. Returns whether oneDNN
    was asked to be on. Has no effect once MXNet has run an operator in this process.
    """
    if setting == "auto":
        user_chose = ("MXNET_MKLDNN_ENABLED" in os.environ
                      and os.environ.get(_SET_BY_DDPG) != os.environ["MXNET_MKLDNN_ENABLED"])
        if user_chose or ctx.device_type != "cpu":
            return os.environ.get("MXNET_MKLDNN_ENABLED", "1") != "0"
        setting = max(layer_sizes) > SMALL_LAYER_UNITS
    if setting not in (True, False):
        raise ValueError("mkldnn must be True, False or 'auto', got %r" % (setting,))
    os.environ["MXNET_MKLDNN_ENABLED"] = "1" if setting else "0"
    # child processes inherit the variable: mark it as ours so that their "auto" still
    # decides for their own networks instead of taking it for the user's choice
    os.environ[_SET_BY_DDPG] = os.environ["MXNET_MKLDNN_ENABLED"]
    if not setting:
        # without oneDNN MXNet warns once per operator that it falls back to plain kernels
        os.environ.setdefault("MXNET_STORAGE_FALLBACK_LOG_VERBOSE", "0")
    return setting


#: The OpenMP thread count this module last set (None: never set, MXNet's own default).
_omp_threads_set = None


def _default_omp_threads():
    """MXNet's own OpenMP thread count: ``OMP_NUM_THREADS``, else the CPUs it may use."""
    try:
        return max(1, int(os.environ["OMP_NUM_THREADS"]))
    except (KeyError, ValueError):
        try:
            return max(1, len(os.sched_getaffinity(0)))
        except AttributeError:  # not on Linux
            return os.cpu_count() or 1


def choose_omp_threads(setting, layer_sizes, ctx):
    """Apply ``setting`` ("auto" or a positive int) to MXNet's OpenMP thread count.

    "auto": one thread on the CPU when every layer has at most ``SMALL_LAYER_UNITS`` units,
    else MXNet's default (``OMP_NUM_THREADS``, else the CPU count; restored if an earlier
    algorithm in this process lowered it). On a GPU "auto" leaves the setting alone.
    Returns the thread count in effect for this algorithm, or None where it was left alone.
    """
    global _omp_threads_set
    if setting == "auto":
        if ctx.device_type != "cpu":
            return None
        threads = 1 if max(layer_sizes) <= SMALL_LAYER_UNITS else _default_omp_threads()
    elif isinstance(setting, bool) or not isinstance(setting, int) or setting < 1:
        raise ValueError("omp_threads must be 'auto' or a positive integer, got %r"
                         % (setting,))
    else:
        threads = setting
    if threads != _omp_threads_set and (_omp_threads_set is not None
                                        or threads != _default_omp_threads()):
        _set_mxnet_omp_threads(threads)
        _omp_threads_set = threads
    return threads


def _set_mxnet_omp_threads(threads):
    import mxnet as mx  # after the oneDNN choice above: importing MXNet runs no operator
    mx.base.check_call(mx.base._LIB.MXSetNumOMPThreads(ctypes.c_int(int(threads))))

