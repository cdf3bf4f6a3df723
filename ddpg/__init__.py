"""ddpg: Deep Deterministic Policy Gradient on MXNet symbolic executors.

A Python 3 library of the Apache MXNet DDPG example: ``from ddpg import DDPG``.
"""
import os

# MXNet's MKLDNN subgraph backend would cache the weights that DDPG updates in place: every
# executor of the library is bound without it (ddpg.backend.binding), and a user's own
# MXNET_SUBGRAPH_BACKEND is left as it is.

# MXNet 1.9 reads numpy names that numpy 1.24 and 2.x removed: the import gets stand-ins for
# them and numpy is left as it was (ddpg.backend.mxnet_compat); a missing MXNet is an
# ImportError that names the install command
from ddpg.backend.mxnet_compat import import_mxnet  # noqa: E402
mxnet = import_mxnet()

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
from ddpg.config import DDPGConfig, TD3Config  # noqa: E402
from ddpg.ddpg import DDPG  # noqa: E402
from ddpg.td3 import TD3  # noqa: E402
from ddpg.d4pg import D4PG, D4PGConfig  # noqa: E402

__all__ = ["DDPG", "TD3", "D4PG", "DDPGConfig", "TD3Config", "D4PGConfig", "__version__"]
