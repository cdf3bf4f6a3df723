"""The replay memory in a checkpoint: its filled part as arrays, and a new memory from them.

``replay_memory.npz`` (uncompressed, read with ``allow_pickle=False``) holds the transitions
``obss``, ``acts``, ``rwds``, ``ends``, ``nxts`` up to ``size``, and the counters ``top``,
``size`` and ``memory_size``; a memory of n-step transitions (``n_step > 1``) adds each
one's ``horizons``. :func:`build_memory` checks shapes and counters against the algorithm
before it builds anything.
"""
import numpy as np

from ddpg.errors import CheckpointError
from ddpg.replay.nstep import make_memory
from ddpg.checkpoint.npz_file import write_npz

#: The keys of the file: the transitions, then the counters.
KEYS = ("obss", "acts", "rwds", "ends", "nxts", "top", "size", "memory_size")


def write_memory(memory, filename):
    """Write the filled part of ``memory`` and its counters to the ``.npz`` ``filename``."""
    size = memory.size
    arrays = dict(obss=memory.obss[:size], acts=memory.acts[:size], rwds=memory.rwds[:size],
                  ends=memory.ends[:size], nxts=memory.nxts[:size], top=np.int64(memory.top),
                  size=np.int64(size), memory_size=np.int64(memory.memory_size))
    horizons = getattr(memory, "horizons", None)
    if horizons is not None:
        arrays["horizons"] = horizons[:size]
    write_npz(filename, arrays)


def build_memory(algo, arrays, path):
    """A new ReplayMem holding the saved transitions (None if the checkpoint has none)."""
    if arrays is None:
        return None
    obs_dim = algo.env.observation_space.flat_dim
    act_dim = algo.env.action_space.flat_dim
    size, top = int(arrays["size"]), int(arrays["top"])
    memory_size = int(arrays["memory_size"])
    expected = {"obss": (size, obs_dim), "acts": (size, act_dim), "rwds": (size,),
                "ends": (size,), "nxts": (size, obs_dim)}
    if algo.n_step > 1:
        expected["horizons"] = (size,)
        if "horizons" not in arrays:
            raise CheckpointError("the replay memory of %s has no horizons (it holds 1-step "
                                  "transitions); this algorithm has n_step %d"
                                  % (path, algo.n_step))
    for key, shape in expected.items():
        if arrays[key].shape != shape:
            raise CheckpointError("the replay memory of %s has %s of shape %s, expected %s"
                                  % (path, key, arrays[key].shape, shape))
    if memory_size != algo.memory_size or not 0 <= size <= memory_size \
            or not 0 <= top < memory_size or (size < memory_size and top != size):
        raise CheckpointError("the replay memory of %s is inconsistent: size %d, top %d, "
                              "memory_size %d (this algorithm's memory_size is %d)"
                              % (path, size, top, memory_size, algo.memory_size))
    memory = make_memory(algo.n_step, obs_dim, act_dim, memory_size)
    for key in expected:
        getattr(memory, key)[:size] = arrays[key]
    memory.size, memory.top = size, top
    return memory
