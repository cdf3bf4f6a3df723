"""The replay memory in a checkpoint: its filled part as arrays, and a new memory from them.

``replay_memory.npz`` (uncompressed, read with ``allow_pickle=False``) holds the transitions
``obss``, ``acts``, ``rwds``, ``ends``, ``nxts`` up to ``size``, and the counters ``top``,
``size`` and ``memory_size``; a memory of n-step transitions (``n_step > 1``) adds each
one's ``horizons``, a prioritised one its ``priorities`` and ``max_priority``, a hindsight one
(``her``) each slot's ``achieved`` goal, step ``offsets`` and episode ``lengths``, and the
unfinished episodes' steps (``pending_*``). :func:`build_memory` checks shapes and counters
against the algorithm before it builds anything.
"""
import numpy as np

from ddpg.errors import CheckpointError
from ddpg.replay import make_memory
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
    if callable(getattr(memory, "priorities", None)):
        arrays.update(priorities=memory.priorities(),
                      max_priority=np.float64(memory.max_priority))
    if hasattr(memory, "pending"):  # hindsight replay
        arrays.update(achieved=memory.achieved[:size], offsets=memory.offsets[:size],
                      lengths=memory.lengths[:size], **_pending_arrays(memory))
    write_npz(filename, arrays)


#: A hindsight memory's pending steps, one array per part of a step (``HER_PENDING[i]`` is
#: part ``i`` of ``memory.pending[env][t]``), plus ``pending_envs``: whose step each is.
HER_PENDING = ("pending_obss", "pending_acts", "pending_rwds", "pending_ends", "pending_nxts",
               "pending_achieved")


def _pending_arrays(memory):
    """The steps of every environment's unfinished episode, in order, as arrays."""
    steps = [(index, step) for index, episode in enumerate(memory.pending) for step in episode]
    dims = (memory.obs_dim, memory.act_dim, None, None, memory.obs_dim, memory.goal_dim)
    arrays = {"pending_envs": np.array([index for index, _ in steps], dtype=np.int64)}
    for part, (key, dim) in enumerate(zip(HER_PENDING, dims)):
        values = np.array([step[part] for _, step in steps], dtype=np.float32)
        arrays[key] = values.reshape((len(steps),) if dim is None else (len(steps), dim))
    return arrays


def _restore_pending(memory, arrays, path):
    """Put a hindsight memory's pending steps back (checked against its environments)."""
    envs = np.asarray(arrays["pending_envs"])
    if envs.size and (envs.min() < 0 or envs.max() >= len(memory.pending)):
        raise CheckpointError("the replay memory of %s has unfinished episodes of %d "
                              "environments; this run has %d"
                              % (path, envs.max() + 1, len(memory.pending)))
    for row, index in enumerate(envs):
        memory.pending[int(index)].append(tuple(
            arrays[key][row] if np.ndim(arrays[key]) > 1 else float(arrays[key][row])
            for key in HER_PENDING))


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
    if algo.n_step > 1 or algo.prioritized_replay:
        expected["horizons"] = (size,)
    if algo.prioritized_replay:
        expected["priorities"] = (size,)
    if algo.her:
        goal_dim = algo.env.goal_layout.goal_dim
        n_pending = len(arrays["pending_envs"]) if "pending_envs" in arrays else -1
        expected.update(achieved=(size, goal_dim), offsets=(size,), lengths=(size,),
                        pending_envs=(n_pending,), pending_obss=(n_pending, obs_dim),
                        pending_acts=(n_pending, act_dim), pending_rwds=(n_pending,),
                        pending_ends=(n_pending,), pending_nxts=(n_pending, obs_dim),
                        pending_achieved=(n_pending, goal_dim))
    missing = [key for key in expected if key not in arrays]
    if missing:
        raise CheckpointError("the replay memory of %s has no %s (n_step %d, "
                              "prioritized_replay %s, her %s here)"
                              % (path, ", ".join(missing), algo.n_step,
                                 algo.prioritized_replay, algo.her))
    for key, shape in expected.items():
        if arrays[key].shape != shape:
            raise CheckpointError("the replay memory of %s has %s of shape %s, expected %s"
                                  % (path, key, arrays[key].shape, shape))
    if memory_size != algo.memory_size or not 0 <= size <= memory_size \
            or not 0 <= top < memory_size or (size < memory_size and top != size):
        raise CheckpointError("the replay memory of %s is inconsistent: size %d, top %d, "
                              "memory_size %d (this algorithm's memory_size is %d)"
                              % (path, size, top, memory_size, algo.memory_size))
    memory = make_memory(algo, obs_dim, act_dim, memory_size)
    for key in expected:
        if key != "priorities" and not key.startswith("pending_"):
            getattr(memory, key)[:size] = arrays[key]
    if algo.her:
        _restore_pending(memory, arrays, path)
    if algo.prioritized_replay:
        priorities = np.asarray(arrays["priorities"], dtype=np.float64)
        if not (np.isfinite(priorities).all() and (priorities > 0).all()):
            raise CheckpointError("the replay memory of %s has priorities that are not "
                                  "positive and finite" % path)
        memory.set_priorities(priorities, float(arrays["max_priority"]))
    memory.size, memory.top = size, top
    return memory
