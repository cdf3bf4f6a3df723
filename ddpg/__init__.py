"""ddpg: Deep Deterministic Policy Gradient on MXNet symbolic executors.

A Python 3 library of the Apache MXNet DDPG example: ``from ddpg import DDPG``.
"""
import os

# MXNet's MKLDNN subgraph backend fuses layers of executors bound for inference and caches
# their weights on the first forward pass. DDPG updates the target networks and the acting
# policy in place, so cached weights silently give stale outputs (our NumPy update test
# caught it). The variable is read at bind time, so setting it here also covers users who
# imported mxnet first.
os.environ["MXNET_SUBGRAPH_BACKEND"] = "NONE"

try:
    import mxnet  # noqa: F401  (imported first to give a clear message when missing)
except ImportError as error:  # pragma: no cover - depends on the installation
    raise ImportError(
        "ddpg needs MXNet 1.9: install the CPU wheel with `pip install mxnet==1.9.1` (or "
        "`pip install \"mxnet-ddpg[cpu]\"`), or for CUDA 11.2 GPUs `pip install "
        "mxnet-cu112==1.9.1` (`pip install \"mxnet-ddpg[gpu]\"`). MXNet 1.9 needs "
        "numpy<1.24. (%s)" % (error,))

# On the CPU, MXNet's synchronous NaiveEngine runs DDPG's many small operations faster than
# the threaded engine (see docs/performance.md). MXNet starts its engine at the
# first operation, so this still applies after `import mxnet`; an engine the user chose with
# MXNET_ENGINE_TYPE is kept, and so is MXNet's default when a GPU is visible.
if "MXNET_ENGINE_TYPE" not in os.environ and mxnet.context.num_gpus() == 0:
    os.environ["MXNET_ENGINE_TYPE"] = "NaiveEngine"

# MXNet's information lines about these two settings are kept off the console
# (ddpg.backend.mxnet_log explains why and how): here for the one MXNet prints at exit.
from ddpg.backend.mxnet_log import filter_mxnet_shutdown  # noqa: E402
filter_mxnet_shutdown()

from ddpg.version import __version__  # noqa: E402
from ddpg.ddpg import DDPG  # noqa: E402
from ddpg.td3 import TD3  # noqa: E402

__all__ = ["DDPG", "TD3", "__version__"]
