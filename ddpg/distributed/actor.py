"""An experience actor: environments, exploration and a copy of the policy, collecting chunks
of transitions for a learner elsewhere.

An :class:`ExperienceActor` knows nothing of Ray (:mod:`ddpg.distributed.ray_actors` runs it
as a Ray actor; tests run it in-process too). It explores exactly as the learner's own
training loop does, because it *is* that loop: a :class:`ddpg.training.TrainingLoop` over an
:class:`ActorRun` (the settings the loop reads, taken from the learner's algorithm), with
``n_envs`` environments in its process, one exploration strategy and generator each, the
same episode bookkeeping, time-limit rules and checks. Its replay memory is a
:class:`ddpg.collection.StepRecorder`: :meth:`ExperienceActor.collect` takes ``chunk``
transitions and hands over, as numpy arrays, what its loop stored, in order, for the
learner's memory to store as if its own environments had taken the steps.

The policy is a CPU copy (:class:`PolicyCopy`): the learner's policy symbol, sent as JSON and
bound here for ``n_envs`` observations, its parameters one flat float32 vector that the
learner sends every ``weight_sync_every`` updates with the update count it was taken at (the
*version*, from which the learner computes the policy lag), and with ``obs_norm`` the
learner's observation statistics of that moment, which the copy normalises its inputs with.

Seeds: actor ``k`` of start ``g`` (``g`` counts its restarts, and the restarts of all actors
when an asynchronous run resumes) seeds its environments, strategies and generators as a
one-learner run with ``n_envs`` environments and seed :func:`actor_seed` would.
"""
import copy
import os
import random
import time

import numpy as np

from ddpg.checkpoint.state import capture_training_state, prepare_training_state
from ddpg.errors import CheckpointError
from ddpg.collection import StepRecorder
from ddpg.logger import Logger
from ddpg.obs_normalizer import ObservationNormalizer
from ddpg.training import TrainingLoop, with_state_views

__all__ = ["actor_seed", "actor_spec", "warmup_share", "PolicyCopy", "ActorRun",
           "ExperienceActor"]

#: Settings of the learner's algorithm that an actor's exploration reads.
EXPLORATION_SETTINGS = ("n_envs", "start_steps", "max_path_length", "scale_reward",
                        "include_horizon_terminal", "bootstrap_truncated", "skip_nonfinite")


def actor_seed(seed, n_envs, index, start):
    """The seed of actor ``index``'s ``start``-th start (0: the first): past the learner's
    evaluation seed (``seed + n_envs``) and every other actor's environments
    (``n_envs`` seeds each, 1,000 actors a start)."""
    return seed + n_envs + 1 + n_envs * (index + 1000 * start)


def warmup_share(start_steps, n_actors, index):
    """Actor ``index``'s part of the run's ``start_steps`` uniform warm-up transitions: the
    actors' parts add up to ``start_steps``."""
    return start_steps // n_actors + (1 if index < start_steps % n_actors else 0)


def actor_spec(algo, index, n_actors, chunk, start=0):
    """What actor ``index`` of ``n_actors`` needs, as picklable data: copies of the learner's
    environment and strategy, the policy symbol (JSON) and its parameter shapes, the
    exploration settings, its seed and warm-up share, and ``chunk``, the transitions of one
    collection."""
    settings = {name: getattr(algo, name) for name in EXPLORATION_SETTINGS}
    settings["start_steps"] = warmup_share(algo.start_steps, n_actors, index)
    return {
        "index": index,
        "start": start,
        "env": copy.deepcopy(algo.env),
        "strategy": copy.deepcopy(algo.strategy),
        "policy_symbol": algo.policy.get_output_symbol().tojson(),
        "param_shapes": [(name, tuple(shape))
                         for name, shape in algo.policy.params.shapes.items()],
        "settings": settings,
        "seed": actor_seed(algo.seed, algo.n_envs, index, start),
        "chunk": int(chunk),
        "obs_norm": algo.obs_normalizer is not None,
    }


class PolicyCopy(object):
    """The learner's policy network bound on the CPU for acting: ``get_action`` (one
    observation) and ``get_action_batch`` (one per environment), on parameters set by
    :meth:`set_weights` (one flat float32 vector, in the learner's parameter order)."""

    def __init__(self, symbol_json, param_shapes, obs_dim=None):
        import mxnet as mx  # the actor's process binds it when the actor is made
        from ddpg.backend.binding import bind
        from ddpg.backend.flat import FlatArrays
        self._mx, self._bind = mx, bind
        self.symbol = mx.sym.load_json(symbol_json)
        self.params = FlatArrays(mx.cpu(), dict(param_shapes))
        self._executors = {}  # n -> the executor for n observations
        #: with ``obs_dim`` (the learner's ``obs_norm``): the learner's observation statistics
        #: as of the weights, which the network's inputs are normalised with
        self.input_normalizer = None if obs_dim is None else ObservationNormalizer(obs_dim)

    def set_weights(self, flat, normalizer_state=None):
        """Take the learner's parameters ``flat`` and, with ``obs_norm``, its observation
        normaliser's statistics ``normalizer_state`` (both checked before either changes)."""
        flat = np.asarray(flat, dtype=np.float32)
        if flat.shape != (self.params.size,):
            raise ValueError("the policy has %d parameters; %d were sent"
                             % (self.params.size, flat.size))
        if self.input_normalizer is not None:
            self.input_normalizer.check_state_dict(normalizer_state)
            self.input_normalizer.load_state_dict(normalizer_state)
        self.params.data[:] = flat

    def get_action_batch(self, observations):
        observations = np.asarray(observations, dtype=np.float32)
        exe = self._executors.get(len(observations))
        if exe is None:
            args = dict(self.params.views)
            args["obs"] = self._mx.nd.zeros(observations.shape, ctx=self._mx.cpu())
            exe = self._bind(self.symbol, self._mx.cpu(), args=args, grad_req="null")
            self._executors[len(observations)] = exe
        if self.input_normalizer is not None:
            observations = self.input_normalizer(observations)
        exe.arg_dict["obs"][:] = observations
        exe.forward(is_train=False)
        return exe.outputs[0].asnumpy()

    def get_action(self, obs):
        return self.get_action_batch(np.reshape(obs, (1, -1)))[0]


@with_state_views
class ActorRun(object):
    """What a :class:`ddpg.training.TrainingLoop` reads of an algorithm, for exploring only:
    the spec's environment, strategy and settings, a :class:`PolicyCopy`, a
    :class:`ddpg.collection.StepRecorder` for replay memory (the learner's memory takes what
    it records: n-step sums, hindsight episodes and the observation statistics are made
    there) and a logger of its own (messages such as skipped transitions go to the actor's
    process output). Environments run in the actor's process (``vec_env="sync"``)."""

    def __init__(self, spec):
        for name, value in spec["settings"].items():
            setattr(self, name, value)
        self.env = spec["env"]
        self.eval_env = self.env  # checkpoints capture it; there is no evaluation here
        self.strategy = spec["strategy"]
        self.seed = spec["seed"]
        self.vec_env = "sync"
        self.obs_normalizer = None  # the learner's normaliser learns; the policy copy acts
        self.update_stats = None  # an actor does not learn: no update statistics
        #: transitions a collection takes
        self.chunk = spec["chunk"]
        obs_dim = self.env.observation_space.flat_dim
        self.policy = PolicyCopy(spec["policy_symbol"], spec["param_shapes"],
                                 obs_dim if spec.get("obs_norm") else None)
        self.logger = Logger()
        #: environment 0's generator (a learner's is numpy's global one; an actor's is its own,
        #: so that an actor run in-process leaves the global one alone)
        self.env_generator = np.random.RandomState(self.seed % (1 << 32))
        if hasattr(self.strategy, "rng"):
            self.strategy.rng = self.env_generator
        from ddpg.envs import seed_env
        seed_env(self.env, self.seed)
        act_dim = self.env.action_space.flat_dim
        self.loop = TrainingLoop(self, memory_factory=lambda observe, transitions_done:
                                 StepRecorder(obs_dim, act_dim))


class ExperienceActor(object):
    """Collects chunks of ``spec["chunk"]`` transitions (see the module docstring)."""

    def __init__(self, spec):
        if spec["chunk"] % spec["settings"]["n_envs"]:
            raise ValueError("a chunk (%d transitions) must be a multiple of n_envs (%d)"
                             % (spec["chunk"], spec["settings"]["n_envs"]))
        self.index = spec["index"]
        self.run = ActorRun(spec)
        self.version = None  # the learner's update count the weights were taken at

    def pid(self):
        """The actor's process id (tests kill it)."""
        return os.getpid()

    def set_weights(self, version, flat, normalizer_state=None):
        """The learner's policy parameters ``flat`` taken at update ``version`` (with
        ``obs_norm``, and its observation statistics)."""
        self.run.policy.set_weights(flat, normalizer_state)
        self.version = int(version)

    def collect(self, version=None, weights=None, normalizer_state=None):
        """One chunk: the policy's ``weights`` (taken at update ``version``, with the
        observation statistics ``normalizer_state`` under ``obs_norm``) are set first when
        given. Returns a dict: ``recorded``, the steps the loop handed to its memory, in order
        (:meth:`ddpg.collection.StepRecorder.state_dict`: each environment's transitions and
        episode ends), the transitions taken (``steps``), the returns and successes of the
        episodes that ended, the weights' ``version``, the collection's ``seconds`` and the
        actor's ``index``."""
        if weights is not None:
            self.set_weights(version, weights, normalizer_state)
        if self.version is None:
            raise RuntimeError("actor %d has no policy weights yet" % self.index)
        run, loop = self.run, self.run.loop
        loop.start()
        action_shape = tuple(run.env.action_space.shape)
        act_dim = run.env.action_space.flat_dim
        began = time.perf_counter()
        for _ in range(run.chunk // run.n_envs):
            loop.explore_step(action_shape, act_dim, False)
        seconds = time.perf_counter() - began
        successes = list(loop.state.strategy_path_successes)
        return {"recorded": loop.memory.take(), "steps": run.chunk,
                "returns": loop.take_exploration_returns(), "successes": successes,
                "version": self.version, "seconds": seconds, "index": self.index}

    def running_statistics(self):
        """Environment 0's normalisation statistics (``get_param_values``), or None."""
        get_values = getattr(self.run.env, "get_param_values", None)
        return get_values() if callable(get_values) else None

    def get_state(self):
        """Everything that decides what this actor collects next, as plain data (a
        checkpoint's training state of its loop, plus its weights and their version)."""
        self.run.loop.start()
        loop_state = capture_training_state(self.run)
        # the process's global generators, which an actor does not use and nobody seeded:
        # recorded as generators seeded with the actor's seed, so that the same run writes
        # the same checkpoint (set_state keeps the process's own)
        loop_state["np_random"] = np.random.RandomState(self.run.seed % (1 << 32)).get_state()
        loop_state["python_random"] = random.Random(self.run.seed).getstate()
        normalizer = self.run.policy.input_normalizer
        return {"loop": loop_state, "recorded": self.run.loop.memory.state_dict(),
                "generator": self.run.env_generator.get_state(),
                "weights": self.run.policy.params.data.asnumpy(), "version": self.version,
                "normalizer": None if normalizer is None else normalizer.state_dict()}

    def set_state(self, state):
        """Continue from :meth:`get_state`'s ``state`` (checked before anything changes)."""
        self.run.loop.start()
        where = "of actor %d" % self.index
        memory = self.run.loop.new_memory()  # steps recorded and not yet collected
        if state.get("recorded") is not None:
            try:
                memory.load_state_dict(state["recorded"])
            except ValueError as error:
                raise CheckpointError("the recorded steps %s are unusable: %s"
                                      % (where, error))
        apply = prepare_training_state(self.run, state["loop"], where, self.run.logger.log)
        self.run.env_generator.set_state(state["generator"])  # checked: may raise ValueError
        # the loop's state sets the process's global generators, which an actor does not use
        global_states = np.random.get_state(), random.getstate()
        try:
            apply(memory)
        finally:
            np.random.set_state(global_states[0])
            random.setstate(global_states[1])
        self.set_weights(state["version"], state["weights"], state.get("normalizer"))
