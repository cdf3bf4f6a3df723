"""The training environments of a run, with what each one explores with.

With ``n_envs`` environments (:mod:`ddpg.envs.vector`: ``algo.env`` and ``n_envs - 1`` clones,
clone ``i`` seeded with ``seed + i``) each has its own exploration strategy (``algo.strategy``
for environment 0, a deep copy for each other one, so one OU process each) and its own random
generator for the warm-up's uniform actions and the strategy's noise: numpy's global generator
for environment 0, exactly as a one-environment run draws, and ``RandomState(seed + i)`` for
environment ``i``. So environment ``i`` of a run explores as a one-environment run seeded
with ``seed + i`` would, as long as the policies agree.

:class:`TrainingEnvironments` makes the environments at first use (so the worker processes of
``vec_env="async"`` start only when something needs them), acts for all of them with one
batched policy forward pass, and turns an environment's exception into an
:class:`ddpg.errors.EnvError` that says where in the run it happened.
"""
import copy

import numpy as np

from ddpg import faults
from ddpg.checkpoint import env_state
from ddpg.envs.vector import SyncVectorEnv, VectorEnvCallError, make_vector_env
from ddpg.random_state import GeneratorState
from ddpg.strategies import state_methods

__all__ = ["TrainingEnvironments"]


class _GivenAction(object):
    """A stand-in policy whose action is already computed (by the batched forward pass), so
    that any strategy's ``get_action(obs, policy)`` adds its noise to it unchanged."""

    def __init__(self, action):
        self.action = action

    def get_action(self, obs):  # pylint: disable=unused-argument
        return self.action


def _strategy_copies(strategy, generators):
    """Copies of ``strategy`` for environments 1 .. n - 1, each drawing from its generator
    (``generators[1:]``) when it has an ``rng`` (the library's strategies do)."""
    copies = []
    for generator in generators[1:]:
        try:
            copied = copy.deepcopy(strategy)
        except Exception as error:  # pylint: disable=broad-except
            raise ValueError("n_envs=%d needs one exploration strategy per environment, but "
                             "%s cannot be copied (%s)" % (len(generators),
                                                           type(strategy).__name__, error))
        if hasattr(copied, "rng"):
            copied.rng = generator
        copies.append(copied)
    return copies


def _check_env_snapshot(env, snapshot, what):
    env_state.prepare_env_restore(env, snapshot, what)  # raises ValueError on a mismatch


def _restore_env_snapshot(env, snapshot, what):
    env_state.prepare_env_restore(env, snapshot, what)()


def _running_statistics(env):
    """``env``'s normalisation statistics (``get_param_values``), or None."""
    get_values = getattr(env, "get_param_values", None)
    return get_values() if callable(get_values) else None


class TrainingEnvironments(object):
    """The environments, strategies and generators of ``algo``'s run (see the module
    docstring)."""

    def __init__(self, algo):
        self.algo = algo
        #: each environment's random generator (numpy's global one for environment 0, unless
        #: ``algo`` has an ``env_generator``, as an experience actor does)
        self.generators = [getattr(algo, "env_generator", np.random)] + [
            np.random.RandomState((algo.seed + index) % (1 << 32))
            for index in range(1, algo.n_envs)]
        self._strategy_copies = None
        self._vector_env = None

    @property
    def strategies(self):
        """Each environment's exploration strategy: ``algo.strategy`` (whatever it is now)
        for environment 0, copies of it made at first use for the others."""
        if self._strategy_copies is None:
            self._strategy_copies = _strategy_copies(self.algo.strategy, self.generators)
        return [self.algo.strategy] + self._strategy_copies

    @property
    def vector(self):
        """The environments (:mod:`ddpg.envs.vector`), made at first use."""
        if self._vector_env is None:
            algo = self.algo
            self._vector_env = make_vector_env(algo.env, algo.n_envs, algo.vec_env, algo.seed)
        return self._vector_env

    def call(self, method, *args, first_transition=None):
        """``vector.method(*args)``; an environment's exception becomes an
        :class:`ddpg.errors.EnvError` saying where in the run it happened: which environment
        and, for a ``step``, which of the run's transitions (``first_transition`` + the
        environment's index; ``first_transition`` is environment 0's)."""
        try:
            return getattr(self.vector, method)(*args)
        except VectorEnvCallError as error:
            transition = None if first_transition is None else first_transition + error.index
            fault = faults.env_error(self.algo, method, error.index, transition,
                                     error.error_type, error.message, error.worker_traceback)
            raise fault from (error.__cause__ or error)

    def acting_policies(self, observations):
        """What each environment's strategy perturbs: the policy itself with one environment
        (its batch-1 executor, as the original); else the actions of one batched forward
        pass over ``observations`` (a policy without ``get_action_batch`` acts per
        environment)."""
        policy = self.algo.policy
        if self.algo.n_envs > 1 and callable(getattr(policy, "get_action_batch", None)):
            return [_GivenAction(action)
                    for action in policy.get_action_batch(np.stack(observations))]
        return [policy] * self.algo.n_envs

    def sync_training_env(self):
        """Give ``algo.env`` environment 0's normalisation statistics when it runs in a worker
        process (evaluation normalises as the training environment does)."""
        if self._vector_env is None or isinstance(self._vector_env, SyncVectorEnv):
            return
        statistics = self._vector_env.apply(_running_statistics)[0]
        if statistics is not None:
            self.algo.env.set_param_values(statistics)

    # -- state ---------------------------------------------------------------------------

    def state_dict(self):
        """What the environments hold that decides what they do next, as plain data:
        ``envs``, each environment's snapshot (:mod:`ddpg.checkpoint.env_state`, captured
        where it lives, in its worker process with ``vec_env="async"``), ``strategies``, each
        one's strategy's ``state_dict()`` (None: a strategy without state), and
        ``generators``, the states of environments 1 .. n - 1's generators (environment 0's
        is numpy's global one, which a checkpoint saves with Python's)."""
        return {"envs": self.vector.apply(env_state.capture_env_state),
                "strategies": [state_methods(strategy).state_dict()
                               for strategy in self.strategies],
                "generators": [GeneratorState(generator).state_dict()
                               for generator in self.generators[1:]]}

    def load_state_dict(self, saved):
        """Take :meth:`state_dict`'s ``saved`` back, everything checked before anything
        changes (ValueError, TypeError or VectorEnvCallError)."""
        applies = [self.prepare_env_states(saved["envs"]),
                   self.prepare_strategy_states(saved["strategies"]),
                   self.prepare_generator_states(saved["generators"])]
        for apply in applies:
            apply()

    def prepare_env_states(self, snapshots):
        """Check each environment's saved snapshot (``state_dict()["envs"]``, fewer than the
        environments: the first ones) where it lives (ValueError, or VectorEnvCallError from
        a worker, naming the environment); returns the function that restores them."""
        named = [(snapshot, "environment" if index == 0 else "environment %d" % index)
                 for index, snapshot in enumerate(snapshots)]
        self.vector.apply(_check_env_snapshot, named)
        return lambda: self.vector.apply(_restore_env_snapshot, named)

    def prepare_strategy_states(self, states):
        """Check each environment's saved strategy state (``state_dict()["strategies"]``;
        None leaves a strategy as it is): ValueError or TypeError; returns the function that
        loads them."""
        loads = []
        for strategy, state in zip(self.strategies, states):
            if state is None:
                continue
            methods = state_methods(strategy)
            methods.check_state_dict(state)
            loads.append((methods, state))

        def apply():
            for methods, state in loads:
                methods.load_state_dict(state)
        return apply

    def prepare_generator_states(self, states):
        """Check environments 1 .. n - 1's saved generator states
        (``state_dict()["generators"]``): ValueError; returns the function that loads
        them."""
        generators = [GeneratorState(generator) for generator in self.generators[1:]]
        for generator, state in zip(generators, states):
            generator.check_state_dict(state)

        def apply():
            for generator, state in zip(generators, states):
                generator.load_state_dict(state)
        return apply

    def close(self):
        """Stop the environments' worker processes, if any (``vec_env="async"``)."""
        if self._vector_env is not None:
            self._vector_env.close()
            self._vector_env = None
