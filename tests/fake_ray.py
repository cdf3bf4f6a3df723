"""An in-process stand-in for the part of Ray that :mod:`ddpg.distributed.ray_actors` uses.

``RayActors`` imports Ray through ``ray_actors.import_ray``; tests put a :class:`FakeRay`
there, so the collection logic (order, update-to-data ratio, weight publication, lag, lost
chunks, restarts, checkpoints, errors) runs without a cluster, fast and inside pytest's own
process (mutation testing forks that process, which a Ray cluster does not survive).
``tests/test_ray_cluster.py`` checks the same behaviour on a real local cluster.

What it keeps of Ray's semantics:

- an actor is its class built from a pickled copy of its arguments (an argument that cannot be
  unpickled kills the actor at its start, as in a Ray worker process); its methods run in
  submission order, each on pickled copies of its arguments, an object reference among them
  replaced by its value, and return pickled copies;
- a method's exception is raised by ``get`` as a ``RayTaskError`` carrying it as ``cause``;
  a method of a dead actor raises ``RayActorError``;
- ``wait`` returns the first reference to be ready: a reference made at submission ``n`` by an
  actor with ``delay`` d is ready at ``n + d`` (ties: the earlier submission).
"""
import itertools
import pickle


def _copy(value):
    return pickle.loads(pickle.dumps(value))


class RayActorError(Exception):
    """The actor's process died."""


class RayTaskError(Exception):
    """A method raised; ``cause`` is its exception."""

    def __init__(self, cause):
        super(RayTaskError, self).__init__("task failed: %r" % (cause,))
        self.cause = cause

    def as_instanceof_cause(self):
        return self.cause


class _Exceptions(object):
    RayActorError = RayActorError
    RayTaskError = RayTaskError


class ObjectRef(object):
    """A result (or the error getting it raises) and the tick it is ready at."""

    def __init__(self, submitted, ready_at, value=None, error=None):
        self.submitted, self.ready_at = submitted, ready_at
        self._value, self._error = value, error

    def result(self):
        if self._error is not None:
            raise self._error
        return _copy(self._value)


class _Method(object):
    def __init__(self, handle, name):
        self._handle, self._name = handle, name

    def remote(self, *args):
        return self._handle._call(self._name, args)


class ActorHandle(object):
    """A fake actor: ``handle.method.remote(*args)`` runs the method now, returns an ObjectRef."""

    def __init__(self, ray, cls, args, delay):
        self._ray, self.delay, self.dead = ray, delay, None
        #: (method name, arguments) of every call, and what each call that returned gave
        self.calls, self.returned = [], []
        try:
            self._instance = cls(*_copy(args))
        except Exception as error:  # the actor's process dies at its start
            self._instance = None
            self.dead = RayActorError("the actor died at its start: %r" % (error,))

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        return _Method(self, name)

    def _call(self, name, args):
        ray = self._ray
        submitted = next(ray.ticks)
        ready_at = submitted + self.delay
        self.calls.append((name, args))
        if self.dead is not None:
            return ObjectRef(submitted, ready_at, error=self.dead)
        values = [arg.result() if isinstance(arg, ObjectRef) else _copy(arg) for arg in args]
        try:
            value = getattr(self._instance, name)(*values)
        except Exception as error:
            return ObjectRef(submitted, ready_at, error=RayTaskError(error))
        self.returned.append((name, value))
        return ObjectRef(submitted, ready_at, value=value)


class _RemoteClass(object):
    def __init__(self, ray, cls, options):
        self._ray, self._cls, self.options_given = ray, cls, options

    def options(self, **options):
        self.options_given = dict(self.options_given, **options)
        return self

    def remote(self, *args):
        handle = ActorHandle(self._ray, self._cls, args, self._ray.delays.pop(0)
                             if self._ray.delays else 0)
        self._ray.actors.append(handle)
        return handle


class FakeRay(object):
    """The ``ray`` module as RayActors sees it. ``delays``: the delays of the actors made
    next, in order (then 0). ``actors`` lists every actor made; ``init_options`` the options
    of each ``init``."""

    exceptions = _Exceptions

    def __init__(self, initialized=False, delays=()):
        self.initialized = initialized
        self.delays = list(delays)
        self.actors, self.init_options, self.remote_options = [], [], []
        self.killed, self.shutdowns = [], 0
        self.ticks = itertools.count()

    def is_initialized(self):
        return self.initialized

    def init(self, **options):
        self.init_options.append(options)
        self.initialized = True

    def shutdown(self):
        self.shutdowns += 1
        self.initialized = False

    def remote(self, **options):
        self.remote_options.append(options)
        return lambda cls: _RemoteClass(self, cls, {})

    def put(self, value):
        tick = next(self.ticks)
        return ObjectRef(tick, tick, value=_copy(value))

    def get(self, refs):
        if isinstance(refs, list):
            return [ref.result() for ref in refs]
        return refs.result()

    def wait(self, refs, num_returns=1):
        order = sorted(range(len(refs)), key=lambda i: (refs[i].ready_at, refs[i].submitted))
        chosen = set(order[:num_returns])
        return ([refs[i] for i in order[:num_returns]],
                [ref for i, ref in enumerate(refs) if i not in chosen])

    def kill(self, handle):
        self.killed.append(handle)
        self.die(handle)

    @staticmethod
    def die(handle):
        """The actor's process dies (what a killed process does to later calls)."""
        handle.dead = RayActorError("the actor's process died")
