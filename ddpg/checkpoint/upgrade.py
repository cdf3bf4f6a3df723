"""Older checkpoint layouts read into the current one.

Format version 2 kept the n-step sums still open (``n_step > 1``) in the training state, as
each environment's episode's ``nstep_chain``; from version 3 the replay memory holds them and
saves them with its arrays (:class:`ddpg.replay.NStepReplayMem`). :func:`move_open_sums`
moves a version-2 checkpoint's sums into its memory's arrays, so that it restores, and
resumes, exactly as it would have.
"""
from ddpg.errors import CheckpointError
from ddpg.replay import NStepReplayMem

__all__ = ["move_open_sums"]


def move_open_sums(arrays, state, memory, path):
    """The memory ``arrays`` with the open n-step sums of the training ``state`` of a
    version-2 checkpoint (taken out of ``state``), for ``memory``, an empty memory of the
    run's kind; ``arrays`` unchanged for a checkpoint without them. Each environment's sums
    bootstrap from its saved current observation, the last next observation it stored."""
    counters = state["counters"]
    episodes = [counters] + list(counters.get("vector_episodes", []))
    if not any(isinstance(episode, dict) and "nstep_chain" in episode
               for episode in episodes):
        return arrays
    chains = [list(episode.pop("nstep_chain", [])) for episode in episodes]
    if not any(chains):
        return arrays
    if not isinstance(memory, NStepReplayMem) or memory.n_step == 1:
        raise CheckpointError("the checkpoint %s has open n-step sums; this run's replay "
                              "memory (%s) keeps none" % (path, type(memory).__name__))
    if len(chains) != len(memory.chains):
        raise CheckpointError("the checkpoint %s has the n-step sums of %d environments; "
                              "this run has %d" % (path, len(chains), len(memory.chains)))
    bootstraps = [episode.get("obs") if chain else None
                  for episode, chain in zip(episodes, chains)]
    try:
        sums = NStepReplayMem.open_sums_state(chains, bootstraps, memory.obs_dim,
                                              memory.act_dim)
    except (ValueError, TypeError, IndexError) as error:
        raise CheckpointError("the checkpoint %s has malformed n-step sums (%s)"
                              % (path, error))
    upgraded = dict(memory.state_dict() if arrays is None else arrays)
    upgraded.update(sums)
    return upgraded
