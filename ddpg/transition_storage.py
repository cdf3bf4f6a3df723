"""What the training loop does with a step once it is taken: the transition(s) it stores.

:class:`TransitionStorage` decides whether a step's target may bootstrap (time-limit cuts,
the example's dropped horizon transition), then stores it the way the run's replay asks:

- 1-step transitions straight into the memory (the example's way);
- n-step returns (``n_step > 1``, :mod:`ddpg.replay.nstep`) through the episode's chain of
  open sums;
- whole episodes for hindsight replay (``her``, :mod:`ddpg.replay.her`), written when the
  episode ends.

It also feeds the observation normaliser (``obs_norm``, :mod:`ddpg.obs_normalizer`) with
what it stores, and records each ended training episode's success
(``info["is_success"]`` at its last step) for the epoch's ``EsSuccessRate``.
"""
from ddpg.replay import close_chain, extend_chain, take_complete

__all__ = ["TransitionStorage"]


class TransitionStorage(object):
    """The storing half of :class:`ddpg.training.TrainingLoop` (``loop``), which owns the
    memory and the state this writes to."""

    def __init__(self, loop):
        self.loop = loop

    def store(self, env_index, obs, act, rwd, end, info, nxt, path_length):
        """Add one step of environment ``env_index`` to the memory, deciding whether its
        target may bootstrap.

        A time-limit cut (``max_path_length`` here, or the environment's own time limit) is
        not a terminal state. The original dropped the cut transition (or stored it as
        terminal with ``include_horizon_terminal``) and stored the environment's time-limit
        ends as terminal; with ``bootstrap_truncated`` they bootstrap from s' instead.
        ``path_length``, the environment's episode's, already counts this step; ``rwd`` is
        scaled.
        """
        loop, algo = self.loop, self.loop.algo
        horizon_cut = not end and path_length >= algo.max_path_length
        env_truncated = bool(end and info and info.get("TimeLimit.truncated", False))
        if not (horizon_cut or env_truncated):
            stored_end = end
        elif algo.include_horizon_terminal:
            stored_end = True
        elif algo.bootstrap_truncated:
            stored_end = False
        elif env_truncated:
            stored_end = True
        else:  # the original drops a transition cut at max_path_length
            stored_end = None
        episode_over = bool(end) or horizon_cut
        if episode_over and info and "is_success" in info:
            loop.state.strategy_path_successes.append(float(info["is_success"]))
        if algo.her:
            self._store_her(env_index, obs, act, rwd, stored_end, nxt, info, episode_over)
        elif algo.n_step > 1:
            self._store_nstep(loop.episode_of(env_index), obs, act, rwd, stored_end, nxt,
                              episode_over)
        elif stored_end is not None:
            self._add(obs, act, rwd, stored_end, nxt)

    def end_episode(self, env_index):
        """Environment ``env_index``'s episode stops where it is, without a stored last step (a
        skipped non-finite step, an episode abandoned at a restore): its open n-step sums
        bootstrap from its observation, hindsight replay stores the steps it has."""
        loop, algo = self.loop, self.loop.algo
        episode = loop.episode_of(env_index)
        if algo.her:
            self._write_episode(env_index)
        elif episode.nstep_chain:
            self._store_nstep(episode, episode.obs, None, None, None, episode.obs, True)

    def _add(self, obs, act, rwd, stored_end, nxt, horizon=None):
        normalizer = self.loop.algo.obs_normalizer
        if normalizer is not None:
            normalizer.update(obs)
        if horizon is None:
            self.loop.memory.add_sample(obs, act, rwd, stored_end, nxt)
        else:
            self.loop.memory.add_sample(obs, act, rwd, stored_end, nxt, horizon)

    def _store_nstep(self, episode, obs, act, rwd, stored_end, nxt, episode_over):
        """n-step returns (:mod:`ddpg.replay.nstep`): store the sums the step completes (all,
        if the episode is over; a step not stored ends them, bootstrapping from ``obs``)."""
        if stored_end is None:
            transitions, chain = close_chain(episode.nstep_chain, False, obs), []
        else:
            chain = extend_chain(episode.nstep_chain, obs, act, rwd, self.loop.algo.discount)
            if episode_over:
                transitions, chain = close_chain(chain, stored_end, nxt), []
            else:
                transitions, chain = take_complete(chain, self.loop.algo.n_step, nxt)
        episode.nstep_chain = chain
        for transition in transitions:
            self._add(*transition)

    def _store_her(self, env_index, obs, act, rwd, stored_end, nxt, info, episode_over):
        """Hindsight replay: the step joins environment ``env_index``'s pending episode,
        which is written whole when it ends."""
        if stored_end is not None:
            self.loop.memory.add_step(env_index, obs, act, rwd, stored_end, nxt,
                                      info["achieved_goal"])
        if episode_over:
            self._write_episode(env_index)

    def _write_episode(self, env_index):
        """Store environment ``env_index``'s pending episode; the normaliser learns its
        observations under the goals its batches will carry (relabelled as when sampled)."""
        memory, normalizer = self.loop.memory, self.loop.algo.obs_normalizer
        slots = memory.end_episode(env_index)
        if normalizer is not None and len(slots):
            normalizer.update(memory.relabelled_observations(slots))
