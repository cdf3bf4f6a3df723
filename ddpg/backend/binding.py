"""Binding MXNet executors without subgraph fusion, leaving the user's setting alone.

MXNet 1.9 reads ``MXNET_SUBGRAPH_BACKEND`` when an executor is bound (in the graph executor's
constructor), and when it is unset a CPU build with oneDNN uses its ``MKLDNN`` backend. That
backend fuses the layers of executors bound for inference and caches their weights on the
first forward pass. DDPG changes weights in place (the targets' soft updates, the acting
policy's optimiser steps through shared buffers, a restore), so such an executor would keep
returning the outputs of the weights it first saw (the NumPy update test caught it).

:func:`bind` therefore binds every executor of the library with the variable set to ``NONE``
and puts back what the process had right after (the user's value, or no variable), so the
setting covers DDPG's executors and nothing else: a user's own executors get the backend
they chose, or MXNet's default.
"""
import os
from contextlib import contextmanager

from ddpg.backend.mxnet_log import filtering_mxnet_info

#: The variable MXNet reads at every bind.
SUBGRAPH_VARIABLE = "MXNET_SUBGRAPH_BACKEND"


@contextmanager
def unfused_binds():
    """Executors bound in the block have no subgraph backend; the variable's previous value
    (or its absence) is restored when the block ends, also when it raises."""
    previous = os.environ.get(SUBGRAPH_VARIABLE)
    os.environ[SUBGRAPH_VARIABLE] = "NONE"
    try:
        yield
    finally:
        if previous is None:
            os.environ.pop(SUBGRAPH_VARIABLE, None)
        else:
            os.environ[SUBGRAPH_VARIABLE] = previous


def bind(symbol, ctx, **kwargs):
    """``symbol.bind(ctx=ctx, **kwargs)`` without subgraph fusion (MXNet's line saying so is
    kept off the console, see :mod:`ddpg.backend.mxnet_log`)."""
    with filtering_mxnet_info(), unfused_binds():
        return symbol.bind(ctx=ctx, **kwargs)
