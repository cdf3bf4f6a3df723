"""Which CPU kernels MXNet uses for DDPG's layers.

MXNet's oneDNN (MKLDNN) kernels are several times faster than its plain ones on large layers,
but each call costs tens of microseconds of set-up. With the original's 32-unit networks that
overhead is most of an update: we measured 1417 environment steps/s with oneDNN off against
821 with it on (Pendulum-v1, one thread), while the 400-300 networks of the DDPG paper run
3.4 times faster with it on. MXnet reads ``MXNET_MKLDNN_ENABLED`` once, at its first operator,
so the choice holds for the whole process and must be made before any MXNet operator runs.
"""
import os

#: Networks whose layers are all at most this wide run faster without oneDNN.
SMALL_LAYER_UNITS = 64
#: Holds the value this module gave MXNET_MKLDNN_ENABLED (a user's own setting differs or
#: comes without it).
_SET_BY_DDPG = "DDPG_MKLDNN_AUTO_VALUE"


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
