"""Older checkpoint layouts read into the current one.

Format version 2 kept the n-step sums still open (``n_step > 1``) in the training state, as
each environment's episode's ``nstep_chain``; from version 3 the replay memory holds them and
saves them with its arrays (:class:`ddpg.replay.NStepReplayMem`). :func:`move_open_sums`
moves a version-2 checkpoint's sums into its memory's arrays, so that it restores, and
resumes, exactly as it would have.
"""
from ddpg.collection import actor_env_index
from ddpg.errors import CheckpointError
from ddpg.replay import NStepReplayMem

__all__ = ["move_open_sums"]


def move_open_sums(arrays, state, memory, path):
    """The memory ``arrays`` with the open n-step sums of the training ``state`` of a
    version-2 checkpoint (taken out of ``state``), for ``memory``, an empty memory of the
    run's kind; ``arrays`` unchanged for a checkpoint without them. Each environment's sums
    bootstrap from its saved current observation, the last next observation it stored. The
    sums that deterministic Ray actors kept (in their saved states, under ``collector``) join
    the learner's memory under their environments' indices there
    (:func:`ddpg.collection.actor_env_index`), where the actors' steps are summed now."""
    counters = state["counters"]
    owners = [(counters, lambda index: index)]  # whose sums, and their environment indices
    collected = state.get("collector")
    actors = collected.get("actors") if isinstance(collected, dict) else None
    for actor, saved in enumerate(actors or []):
        episodes = _episodes(saved["loop"]["counters"])
        owners.append((saved["loop"]["counters"],
                       lambda index, actor=actor, n_envs=len(episodes):
                       actor_env_index(n_envs, actor, index)))
    chains, bootstraps, found = {}, {}, False
    for owner, env_index in owners:
        for index, episode in enumerate(_episodes(owner)):
            found = found or "nstep_chain" in episode
            chain = list(episode.pop("nstep_chain", []))
            if chain:
                chains[env_index(index)] = chain
                bootstraps[env_index(index)] = episode.get("obs")
    if not found or not chains:
        return arrays
    if not isinstance(memory, NStepReplayMem) or memory.n_step == 1:
        raise CheckpointError("the checkpoint %s has open n-step sums; this run's replay "
                              "memory (%s) keeps none" % (path, type(memory).__name__))
    try:
        sums = NStepReplayMem.open_sums_state(chains, bootstraps, memory.obs_dim,
                                              memory.act_dim)
    except (ValueError, TypeError, IndexError) as error:
        raise CheckpointError("the checkpoint %s has malformed n-step sums (%s)"
                              % (path, error))
    upgraded = dict(memory.state_dict() if arrays is None else arrays)
    upgraded.update(sums)
    return upgraded


def _episodes(counters):
    """The episodes of a saved loop's counters: environment 0's (the counters themselves),
    then the others'."""
    return [counters] + [episode for episode in counters.get("vector_episodes", [])
                         if isinstance(episode, dict)]
