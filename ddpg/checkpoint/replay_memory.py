"""The replay memory in a checkpoint: what the memory's ``state_dict()`` gives, as ``.npz``.

``replay_memory.npz`` (uncompressed, read with ``allow_pickle=False``) holds the arrays of
the memory's :meth:`~ddpg.replay.ReplayMem.state_dict`: for every kind the transitions
``obss``, ``acts``, ``rwds``, ``ends``, ``nxts`` up to ``size`` and the counters ``top``,
``size`` and ``memory_size``, and each kind's own arrays beside them (n-step horizons and open
sums, priorities, hindsight replay's goals and pending steps; see each kind's
``state_dict``). :func:`build_memory` makes a new memory of the run's kind and has it check
and take the arrays, before anything of the run changes.
"""
from ddpg.errors import CheckpointError
from ddpg.checkpoint.npz_file import write_npz

#: The keys every memory's file has: the transitions, then the counters.
KEYS = ("obss", "acts", "rwds", "ends", "nxts", "top", "size", "memory_size")


def write_memory(memory, filename):
    """Write ``memory``'s ``state_dict()`` to the ``.npz`` ``filename``."""
    write_npz(filename, memory.state_dict())


def build_memory(algo, arrays, path):
    """A new memory of ``algo``'s kind holding the saved ``arrays`` (None if the checkpoint
    has none); CheckpointError when they do not fit it."""
    if arrays is None:
        return None
    memory = algo.loop.new_memory()
    try:
        memory.load_state_dict(arrays)
    except (ValueError, TypeError, KeyError, IndexError) as error:
        raise CheckpointError("the replay memory of %s %s" % (path, error))
    return memory
