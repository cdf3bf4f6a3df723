"""An experience actor: environments, exploration and a copy of the policy, collecting chunks
of transitions for a learner elsewhere.

An :class:`ExperienceActor` knows nothing of Ray (:mod:`ddpg.distributed.ray_actors` runs it
as a Ray actor; tests run it in-process too). It explores exactly as the learner's own
training loop does, because it *is* that loop: a :class:`ddpg.training.TrainingLoop` over an
:class:`ActorRun` (the settings the loop reads, taken from the learner's algorithm), with
``n_envs`` environments in its process, one exploration strategy and generator each, the
same episode bookkeeping, time-limit rules and checks. Its replay memory holds one chunk:
:meth:`ExperienceActor.collect` takes ``chunk`` transitions and hands them over as numpy
arrays.

The policy is a CPU copy (:class:`PolicyCopy`): the learner's policy symbol, sent as JSON and
bound here for ``n_envs`` observations, its parameters one flat float32 vector that the
learner sends every ``weight_sync_every`` updates with the update count it was taken at (the
*version*, from which the learner computes the policy lag).

Seeds: actor ``k`` of start ``g`` (``g`` counts its restarts, and the restarts of all actors
when an asynchronous run resumes) seeds its environments, strategies and generators as a
one-learner run with ``n_envs`` environments and seed :func:`actor_seed` would.
"""
import copy
import os
import random
import time
import types

import numpy as np

from ddpg.checkpoint.state import capture_training_state, prepare_training_state
from ddpg.checkpoint.upgrade import move_open_sums
from ddpg.errors import CheckpointError
from ddpg.logger import Logger
from ddpg.training import TrainingLoop, with_state_views

__all__ = ["actor_seed", "actor_spec", "warmup_share", "PolicyCopy", "ActorRun",
           "ExperienceActor"]

#: Settings of the learner's algorithm that an actor's exploration reads.
EXPLORATION_SETTINGS = ("n_envs", "start_steps", "max_path_length", "scale_reward",
                        "include_horizon_terminal", "bootstrap_truncated", "skip_nonfinite",
                        "n_step", "discount")


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
    }


class PolicyCopy(object):
    """The learner's policy network bound on the CPU for acting: ``get_action`` (one
    observation) and ``get_action_batch`` (one per environment), on parameters set by
    :meth:`set_weights` (one flat float32 vector, in the learner's parameter order)."""

    def __init__(self, symbol_json, param_shapes):
        import mxnet as mx  # the actor's process binds it when the actor is made
        from ddpg.backend.binding import bind
        from ddpg.backend.flat import FlatArrays
        self._mx, self._bind = mx, bind
        self.symbol = mx.sym.load_json(symbol_json)
        self.params = FlatArrays(mx.cpu(), dict(param_shapes))
        self._executors = {}  # n -> the executor for n observations

    def set_weights(self, flat):
        flat = np.asarray(flat, dtype=np.float32)
        if flat.shape != (self.params.size,):
            raise ValueError("the policy has %d parameters; %d were sent"
                             % (self.params.size, flat.size))
        self.params.data[:] = flat

    def get_action_batch(self, observations):
        observations = np.asarray(observations, dtype=np.float32)
        exe = self._executors.get(len(observations))
        if exe is None:
            args = dict(self.params.views)
            args["obs"] = self._mx.nd.zeros(observations.shape, ctx=self._mx.cpu())
            exe = self._bind(self.symbol, self._mx.cpu(), args=args, grad_req="null")
            self._executors[len(observations)] = exe
        exe.arg_dict["obs"][:] = observations
        exe.forward(is_train=False)
        return exe.outputs[0].asnumpy()

    def get_action(self, obs):
        return self.get_action_batch(np.reshape(obs, (1, -1)))[0]


@with_state_views
class ActorRun(object):
    """What a :class:`ddpg.training.TrainingLoop` reads of an algorithm, for exploring only:
    the spec's environment, strategy and settings, a :class:`PolicyCopy`, a replay memory of
    one chunk and a logger of its own (messages such as skipped transitions go to the
    actor's process output). Environments run in the actor's process (``vec_env="sync"``)."""

    def __init__(self, spec):
        for name, value in spec["settings"].items():
            setattr(self, name, value)
        self.env = spec["env"]
        self.eval_env = self.env  # checkpoints capture it; there is no evaluation here
        self.strategy = spec["strategy"]
        self.seed = spec["seed"]
        self.vec_env = "sync"
        self.prioritized_replay = False  # a chunk's buffer: the learner's memory prioritises
        self.her, self.obs_normalizer = False, None  # the learner refuses either with actors
        self.update_stats = None  # an actor does not learn: no update statistics
        #: transitions a collection takes; it may store more: the n-step sums that were
        #: open when it began and the ones it completes (at most n_step - 1 an environment)
        self.chunk = spec["chunk"]
        self.memory_size = self.chunk + (self.n_step - 1) * self.n_envs
        #: what the loop builds the chunk's memory from (:func:`ddpg.replay.make_memory`):
        #: n-step sums when the learner's run has them, never priorities or hindsight goals
        self.config = types.SimpleNamespace(
            replay_memory="nstep", n_step=self.n_step, discount=self.discount,
            n_envs=self.n_envs, memory_size=self.memory_size)
        self._action_low = np.reshape(self.env.action_space.low, -1).astype(np.float64)
        self._action_high = np.reshape(self.env.action_space.high, -1).astype(np.float64)
        self.policy = PolicyCopy(spec["policy_symbol"], spec["param_shapes"])
        self.logger = Logger()
        #: environment 0's generator (a learner's is numpy's global one; an actor's is its own,
        #: so that an actor run in-process leaves the global one alone)
        self.env_generator = np.random.RandomState(self.seed % (1 << 32))
        if hasattr(self.strategy, "rng"):
            self.strategy.rng = self.env_generator
        from ddpg.envs import seed_env
        seed_env(self.env, self.seed)
        self.loop = TrainingLoop(self)


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

    def set_weights(self, version, flat):
        self.run.policy.set_weights(flat)
        self.version = int(version)

    def collect(self, version=None, weights=None):
        """One chunk: the policy's ``weights`` (taken at update ``version``) are set first
        when given. Returns a dict:
        the stored transitions (``obs``, ``act``, ``rwd``, ``end``, ``nxt``, and ``hor``, the
        horizons, with ``n_step > 1``; a chunk may store fewer or, with n-step sums, more
        transitions than it took, as the learner's loop would), the
        transitions taken (``steps``), the returns of the episodes that ended, the weights'
        ``version``, the collection's ``seconds`` and the actor's ``index``."""
        if weights is not None:
            self.set_weights(version, weights)
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
        memory, size = loop.memory, loop.memory.size
        chunk = {"obs": memory.obss[:size].copy(), "act": memory.acts[:size].copy(),
                 "rwd": memory.rwds[:size].copy(), "end": memory.ends[:size].copy(),
                 "nxt": memory.nxts[:size].copy(), "steps": run.chunk,
                 "returns": loop.take_exploration_returns(), "version": self.version,
                 "seconds": seconds, "index": self.index}
        if run.n_step > 1:  # n-step sums: each transition's horizon
            chunk["hor"] = memory.horizons[:size].copy()
        memory.top = memory.size = 0
        return chunk

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
        return {"loop": loop_state, "memory": self.run.loop.memory.state_dict(),
                "generator": self.run.env_generator.get_state(),
                "weights": self.run.policy.params.data.asnumpy(), "version": self.version}

    def set_state(self, state):
        """Continue from :meth:`get_state`'s ``state`` (checked before anything changes)."""
        self.run.loop.start()
        where = "of actor %d" % self.index
        memory = self.run.loop.new_memory()  # its open n-step sums (older states: the loop's)
        arrays = move_open_sums(state.get("memory"), state["loop"], memory, where)
        if arrays is not None:
            try:
                memory.load_state_dict(arrays)
            except (ValueError, TypeError, KeyError, IndexError) as error:
                raise CheckpointError("the replay memory %s %s" % (where, error))
        apply = prepare_training_state(self.run, state["loop"], where, self.run.logger.log)
        self.run.env_generator.set_state(state["generator"])  # checked: may raise ValueError
        # the loop's state sets the process's global generators, which an actor does not use
        global_states = np.random.get_state(), random.getstate()
        try:
            apply(memory)
        finally:
            np.random.set_state(global_states[0])
            random.setstate(global_states[1])
        self.set_weights(state["version"], state["weights"])
