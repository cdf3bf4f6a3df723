"""What the training loop does with a step once it is taken: the transition it hands to the
replay memory.

:class:`TransitionStorage` decides whether a step's target may bootstrap (time-limit cuts,
the example's dropped horizon transition) and hands the step to the memory as a
:class:`ddpg.replay.Transition` of its environment (``memory.add(transition, env_index)``),
then tells the memory when the environment's episode is over (``memory.end_episode``). What
the memory makes of them (1-step transitions, n-step sums, whole episodes for hindsight
replay, the observation normaliser's statistics) is the memory's own business
(:mod:`ddpg.replay`). It also records each ended training episode's success
(``info["is_success"]`` at its last step) for the epoch's ``EsSuccessRate``.
"""
from ddpg.replay import Transition

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
        if stored_end is not None:
            achieved = info.get("achieved_goal") if info else None
            loop.memory.add(Transition(obs, act, rwd, stored_end, nxt, achieved), env_index)
        if episode_over:
            loop.memory.end_episode(env_index)

    def end_episode(self, env_index):
        """Environment ``env_index``'s episode stops where it is, without a stored last step (a
        skipped non-finite step, an episode abandoned at a restore): the memory closes what
        it holds of it (n-step sums bootstrap from its last stored next observation,
        hindsight replay stores the steps it has)."""
        self.loop.memory.end_episode(env_index)
