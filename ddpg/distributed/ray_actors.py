"""Experience collection by Ray actors, for one learner.

``RayActors(algo, n_actors=K)`` replaces the learner's own environment steps: ``K`` Ray actor
processes (:class:`ddpg.distributed.actor.ExperienceActor`, each with ``algo.n_envs``
environments and a CPU copy of the policy) collect chunks of ``chunk`` transitions, and the
learner's :class:`ddpg.training.TrainingLoop` stores each chunk it receives, then runs the
updates that chunk makes due: ``gradient_steps`` each time the transition count passes a
multiple of ``train_freq``, exactly as with its own environments. So the update-to-data ratio
is the one asked for, never more updates per received transition, whatever the actors'
speed. After each chunk the actor that sent it is given its next one at once (it collects
while the learner updates), with the policy's weights if newer ones were published: the
learner publishes them (one ``ray.put``) every ``weight_sync_every`` updates. A chunk's
*policy lag* is the learner's update count when the chunk is stored minus the count its
weights were taken at.

Modes:

- ``"deterministic"``: chunks are taken from the actors in a fixed order (0, 1, ..., K - 1, 0,
  ...) and an epoch ends with every actor idle, so a run is reproducible from its seed and a
  checkpoint holds every actor's state (environments, noise, generators, episodes): a resumed
  run continues exactly (:meth:`RayActors.get_checkpoint_state`);
- ``"async"``: chunks are taken as they arrive and actors never wait for an epoch's end (for
  throughput). A checkpoint holds no actor state; a resumed run starts new actors (new seeds,
  the learner's weights); chunks in flight when the checkpoint was written are not in it.

An actor whose process dies is replaced by a new one (the next seed of its index, the current
weights) and the run goes on; the chunk it was collecting is counted in ``LostTransitions``.
One that dies before its first chunk (it cannot start: an environment that cannot be
unpickled in its process, say) stops the run with a RuntimeError instead of being restarted
forever.
Nothing the learner holds is lost. Each epoch's row adds ``PolicyLagMean``, ``PolicyLagMax``,
``LostTransitions``, ``ActorRestarts`` and ``Actor<k>StepsPerSec`` (an actor's transitions
over the seconds it spent collecting them).

Ray is imported when the actors start, so ``ddpg`` itself imports without it.
"""
import os

import numpy as np

from ddpg.collection import actor_env_index
from ddpg.distributed.actor import ExperienceActor, actor_spec
from ddpg.errors import CheckpointError, EnvError

__all__ = ["RayActors", "MODES", "RAY_INSTALL"]

#: The collection modes (see the module docstring).
MODES = ("deterministic", "async")
#: What to install for Ray actors.
RAY_INSTALL = 'pip install "mxnet-ddpg[ray]"'


def import_ray():
    """Ray, or an ImportError saying what to install."""
    try:
        import ray  # pylint: disable=import-outside-toplevel
    except ImportError as error:
        raise ImportError("Ray actors need Ray: %s" % RAY_INSTALL) from error
    return ray


class RayActors(object):
    """``n_actors`` Ray actors collecting for ``algo`` (a :class:`ddpg.DDPG`); see the module
    docstring. Attach with :meth:`attach` before training.

    n_actors: actor processes, each stepping ``algo.n_envs`` environments.
    address: an existing Ray cluster's address (``ray.init(address=...)``); None starts a
        local one (with at least one CPU per actor) unless Ray is already initialised.
    weight_sync_every: the learner publishes the policy's weights every this many updates.
    mode: ``"deterministic"`` or ``"async"``.
    chunk: transitions an actor collects per request (a multiple of ``n_envs``; in
        deterministic mode ``epoch_length`` must be a multiple of ``n_actors * chunk``, else
        of ``chunk``). Smaller chunks mean less policy lag and more messages.
    """

    def __init__(self, algo, n_actors, address=None, weight_sync_every=1,
                 mode="deterministic", chunk=100):
        if int(n_actors) != n_actors or n_actors < 1:
            raise ValueError("n_actors must be a positive integer, got %r" % (n_actors,))
        if int(weight_sync_every) != weight_sync_every or weight_sync_every < 1:
            raise ValueError("weight_sync_every must be a positive integer, got %r"
                             % (weight_sync_every,))
        if mode not in MODES:
            raise ValueError("mode must be one of %s, got %r" % (", ".join(MODES), mode))
        if int(chunk) != chunk or chunk < 1 or chunk % algo.n_envs:
            raise ValueError("chunk must be a positive multiple of n_envs (%d), got %r"
                             % (algo.n_envs, chunk))
        round_size = chunk * (n_actors if mode == "deterministic" else 1)
        if algo.epoch_length % round_size:
            raise ValueError("epoch_length (%d) must be a multiple of %s (%d)"
                             % (algo.epoch_length, "n_actors * chunk" if mode ==
                                "deterministic" else "chunk", round_size))
        self.algo = algo
        self.n_actors = int(n_actors)
        self.address = address
        self.weight_sync_every = int(weight_sync_every)
        self.mode = mode
        self.chunk = int(chunk)
        #: each actor's start number (0, then one more per restart): it picks the seed
        self.starts = [0] * self.n_actors
        self._ray = None
        self._started_ray = False
        self._actors = []
        self._pending = {}  # actor index -> the ObjectRef of its chunk in flight
        self._weights = None  # (version, ObjectRef) of the latest published weights
        self._sent_version = {}  # actor index -> the version it was last sent
        self._delivered = {}  # actor index -> whether it has sent a chunk since it started
        self._saved_actors = None  # actor states of a checkpoint, given when they start
        self._collected_from = None  # the actor whose chunk the loop took last
        self._new_epoch()  # the epoch's statistics and order

    def attach(self):
        """Make ``algo``'s training loop collect through these actors; returns self."""
        self.algo.loop.collector = self
        return self

    # -- starting and stopping ---------------------------------------------------------------

    def start(self):
        """Start Ray (unless it runs) and the actors, once."""
        if self._actors:
            return
        ray = self._ray = import_ray()
        if not ray.is_initialized():
            options = dict(include_dashboard=False, logging_level="WARNING")
            if self.address is None:
                options["num_cpus"] = max(os.cpu_count() or 1, self.n_actors)
            ray.init(address=self.address, **options)
            self._started_ray = True
        self._actors = [self._make_actor(index) for index in range(self.n_actors)]
        if self._saved_actors is not None:
            ray.get([actor.set_state.remote(state)
                     for actor, state in zip(self._actors, self._saved_actors)])
            self._sent_version = {index: state["version"]
                                  for index, state in enumerate(self._saved_actors)}
            self._saved_actors = None
        self._publish_weights()

    def _end_episodes_of(self, index):
        """Actor ``index`` starts anew (a replacement, or new actors at a resume): the
        learner's memory closes what it holds of its environments' episodes (n-step sums
        bootstrap from their last stored observation; hindsight episodes are stored), so
        that the new actor's first episodes join none of them."""
        n_envs, memory = self.algo.n_envs, self.algo.loop.memory
        if memory is None:  # nothing stored yet
            return
        for env in range(n_envs):
            memory.end_episode(actor_env_index(n_envs, index, env))

    def _make_actor(self, index):
        remote_class = self._ray.remote(num_cpus=1, max_restarts=0,
                                        runtime_env={"env_vars": {"OMP_NUM_THREADS": "1"}})(
                                            ExperienceActor)
        spec = actor_spec(self.algo, index, self.n_actors, self.chunk, self.starts[index])
        self._sent_version.pop(index, None)
        self._delivered[index] = False
        return remote_class.options(name=None).remote(spec)

    def close(self):
        """End the actors (and Ray, if this object started it)."""
        for actor in self._actors:
            self._ray.kill(actor)
        self._actors, self._pending = [], {}
        if self._started_ray:
            self._ray.shutdown()
            self._started_ray = False

    # -- collection ----------------------------------------------------------------------------

    def steps_per_epoch(self):
        """Chunks an epoch takes (each a :meth:`collect`)."""
        return self.algo.epoch_length // self.chunk

    def collect(self, loop, log_scalars):
        """Take the next chunk and have ``loop`` store and count it (each actor's
        environments under indices of their own: :func:`ddpg.collection.actor_env_index`);
        returns the environment steps it took. The loop then runs the updates due."""
        chunk = self._next_chunk()
        index = self._collected_from = chunk["index"]
        self._stats["lags"].append(loop.state.itr - chunk["version"])
        self._stats["steps"][index] += chunk["steps"]
        self._stats["seconds"][index] += chunk["seconds"]
        loop.store_recorded(chunk["recorded"], actor_env_index(self.algo.n_envs, index, 0),
                            chunk["steps"], chunk["returns"], chunk["successes"], log_scalars)
        return chunk["steps"]

    def after_updates(self, loop, itr_before):
        """Publish the weights when the updates just run passed a multiple of
        ``weight_sync_every``, then give the actor whose chunk was taken its next one."""
        if loop.state.itr // self.weight_sync_every > itr_before // self.weight_sync_every:
            self._publish_weights()
        self._request(self._collected_from)

    def _publish_weights(self):
        """The policy's weights (and with ``obs_norm`` the observation statistics the policy
        normalises its inputs with), put in Ray's object store once for every actor."""
        version = self.algo.loop.state.itr
        normalizer = self.algo.obs_normalizer
        self._weights = (version, self._ray.put(self.algo.policy.params.data.asnumpy()),
                         None if normalizer is None else self._ray.put(normalizer.state_dict()))

    def _request(self, index):
        """Give actor ``index`` its next chunk, with the weights if it has older ones
        (deterministic mode: only while the epoch needs more)."""
        if self.mode == "deterministic":
            if self._requested + self.chunk > self.algo.epoch_length:
                return
            self._requested += self.chunk
        version, weights, normalizer_state = self._weights
        if self._sent_version.get(index) == version:
            self._pending[index] = self._actors[index].collect.remote()
        else:
            self._pending[index] = self._actors[index].collect.remote(version, weights,
                                                                      normalizer_state)
            self._sent_version[index] = version

    def _next_chunk(self):
        """The next chunk (see the modes), replacing an actor that died meanwhile."""
        ray = self._ray
        if not self._pending:  # an epoch's start
            for index in range(self.n_actors):
                self._request(index)
        while True:
            if self.mode == "deterministic":
                index = self._next_actor
                self._next_actor = (index + 1) % self.n_actors
                ready = self._pending[index]
            else:
                ready = ray.wait(list(self._pending.values()), num_returns=1)[0][0]
                index = next(i for i, ref in self._pending.items() if ref == ready)
            del self._pending[index]
            try:
                chunk = ray.get(ready)
            except ray.exceptions.RayActorError as error:
                if not self._delivered[index]:
                    # it died before its first chunk: a replacement would too
                    raise RuntimeError("actor %d died before delivering a chunk since it "
                                       "started, so it is not restarted: %s"
                                       % (index, error)) from error
                self._replace(index)
                continue
            except ray.exceptions.RayTaskError as error:
                if isinstance(error.cause, EnvError):  # its position is the actor's own
                    raise EnvError("in Ray actor %d, counting its own steps and episodes: %s"
                                   % (index, error.cause)) from error
                raise error.as_instanceof_cause()
            self._delivered[index] = True
            return chunk

    def _replace(self, index):
        """Actor ``index`` died: a new one, from the current weights; its chunk is lost."""
        self._stats["lost"] += self.chunk
        self._stats["restarts"] += 1
        self.algo.logger.log("Actor %d died; starting a new one (its chunk of %d transitions "
                             "is lost)" % (index, self.chunk))
        self.starts[index] += 1
        self._end_episodes_of(index)
        self._actors[index] = self._make_actor(index)
        if self.mode == "deterministic":
            self._requested -= self.chunk
            self._next_actor = index  # its chunk again, in the same place of the order
        self._request(index)

    # -- the epoch's row -----------------------------------------------------------------------

    def _new_epoch(self):
        self._stats = {"lags": [], "lost": 0, "restarts": 0,
                       "steps": [0] * self.n_actors, "seconds": [0.0] * self.n_actors}
        self._requested = 0  # transitions requested this epoch (deterministic)
        self._next_actor = 0  # whose chunk is taken next (deterministic)

    def end_epoch(self):
        """Give ``algo.env`` actor 0's normalisation statistics (evaluation normalises as
        the training environments do)."""
        if self.mode == "deterministic":
            # every epoch starts from weights of its first update count, resumed or not
            self._publish_weights()
        statistics = self._ray.get(self._actors[0].running_statistics.remote())
        if statistics is not None:
            self.algo.env.set_param_values(statistics)

    def record_tabular(self, logger):
        """The epoch's collection statistics in its row (see the module docstring)."""
        stats = self._stats
        lags = stats["lags"] or [0]
        logger.record_tabular("PolicyLagMean", float(np.mean(lags)))
        logger.record_tabular("PolicyLagMax", int(np.max(lags)))
        logger.record_tabular("LostTransitions", stats["lost"])
        logger.record_tabular("ActorRestarts", stats["restarts"])
        for index, (steps, seconds) in enumerate(zip(stats["steps"], stats["seconds"])):
            logger.record_tabular("Actor%dStepsPerSec" % index,
                                  steps / seconds if seconds > 0 else 0.0)
        self._new_epoch()

    # -- checkpoints -----------------------------------------------------------------------------

    def get_checkpoint_state(self):
        """The collection's part of a checkpoint: the mode, actor count and start numbers;
        in deterministic mode with every actor idle (an epoch's end), each actor's state."""
        saved = {"mode": self.mode, "n_actors": self.n_actors, "starts": list(self.starts)}
        if self.mode == "deterministic" and not self._pending and self._actors:
            saved["actors"] = self._ray.get([actor.get_state.remote()
                                             for actor in self._actors])
        return saved

    def prepare_checkpoint_state(self, saved, path, log):
        """Check a checkpoint's collection state; return the function assigning it. Actors
        restored from their states continue exactly; without states (async mode, a
        checkpoint written mid-epoch, or one collected by the run's own environments) new
        actors start with the next seeds, and the learner's memory closes what it held of
        the old actors' episodes."""
        if saved is None:
            return lambda: None
        try:
            n_actors, starts = int(saved["n_actors"]), [int(s) for s in saved["starts"]]
        except (KeyError, TypeError, ValueError) as error:
            raise CheckpointError("the checkpoint %s has malformed Ray actor state (%r)"
                                  % (path, error))
        actors = saved.get("actors")
        exact = actors is not None and self.mode == "deterministic"
        if exact and n_actors != self.n_actors:
            raise CheckpointError("the checkpoint %s was saved by a deterministic run with %d "
                                  "Ray actors; this one has %d (n_actors)"
                                  % (path, n_actors, self.n_actors))

        def apply():
            if exact:
                self.starts = starts
                self._saved_actors = list(actors)
            else:
                top = max(starts + [0]) + 1
                self.starts = [top] * self.n_actors
                for index in range(max(n_actors, self.n_actors)):
                    self._end_episodes_of(index)
        return apply
