"""The replay memory kinds, in one table, and the memory a run's settings ask for.

:data:`MEMORY_KINDS` maps a kind's name to its class. A class provides the interface of
:class:`ddpg.replay.uniform.ReplayMem` (docs/design.md, "The replay memory") and a
``build(settings, env, observe, transitions_done)`` class method. A run picks its kind by
name with ``replay_memory``, or by the example's flags when that is None
(:func:`memory_kind`). Adding a kind is a class and one :func:`register_memory` call; the
training loop, the update and the checkpoints use only the interface.
"""
from ddpg.replay.her import HindsightReplayMem
from ddpg.replay.nstep import NStepReplayMem
from ddpg.replay.prioritized import PrioritizedReplayMem
from ddpg.replay.uniform import ReplayMem

__all__ = ["MEMORY_KINDS", "register_memory", "memory_kind", "memory_class", "make_memory"]

#: name -> memory class: the kinds a run can name with ``replay_memory``.
MEMORY_KINDS = {
    "uniform": ReplayMem,              # the example's 1-step transitions, sampled uniformly
    "nstep": NStepReplayMem,           # n-step sums (n_step), sampled uniformly
    "prioritized": PrioritizedReplayMem,   # proportional priorities, n-step sums too
    "hindsight": HindsightReplayMem,   # whole episodes, goals relabelled when sampled
}


def register_memory(name, memory_class):
    """Make ``memory_class`` the kind ``name`` (``replay_memory=name`` picks it); a name
    already taken is refused."""
    if name in MEMORY_KINDS and MEMORY_KINDS[name] is not memory_class:
        raise ValueError("a replay memory kind named %r is registered already (%s)"
                         % (name, MEMORY_KINDS[name].__name__))
    if not callable(getattr(memory_class, "build", None)):
        raise TypeError("a replay memory kind needs a build(settings, env, observe, "
                        "transitions_done) class method; %r has none" % (memory_class,))
    MEMORY_KINDS[name] = memory_class


def memory_kind(settings):
    """The name of the kind ``settings`` ask for: ``replay_memory`` when set, else
    hindsight (``her``), prioritised (``prioritized_replay``), n-step (``n_step > 1``) or
    the example's uniform memory."""
    if settings.replay_memory is not None:
        return settings.replay_memory
    if settings.her:
        return "hindsight"
    if settings.prioritized_replay:
        return "prioritized"
    return "nstep" if settings.n_step > 1 else "uniform"


def memory_class(settings):
    """The class of the kind ``settings`` ask for; ValueError naming ``replay_memory`` and
    the registered kinds for a name that is not one."""
    name = memory_kind(settings)
    if name not in MEMORY_KINDS:
        raise ValueError("replay_memory must be one of %s (registered with "
                         "ddpg.replay.register_memory), got %r"
                         % (", ".join(sorted(MEMORY_KINDS)), name))
    return MEMORY_KINDS[name]


def make_memory(settings, env, observe=None, transitions_done=None):
    """A new, empty memory of the kind ``settings`` ask for, for ``env``: ``observe`` sees
    the observations it stores, ``transitions_done()`` gives the run's environment steps."""
    return memory_class(settings).build(settings, env, observe=observe,
                                        transitions_done=transitions_done)
