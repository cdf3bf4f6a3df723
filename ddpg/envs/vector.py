"""Several copies of the training environment, stepped together: in this process
(:class:`SyncVectorEnv`) or each in a worker process of its own (:class:`AsyncVectorEnv`).

Both hold rllab-style environments (the training environment and clones of it, environment
``i`` seeded with ``seed + i``) and speak one interface, which is all the training loop uses:

``reset(indices)``
    reset the environments ``indices`` and return their first observations;
``step(actions)``
    one step of every environment (``actions[i]`` for environment ``i``); a list of
    ``(observation, reward, done, info)``;
``apply(function, arguments)``
    ``function(env_i, *arguments[i])`` for every environment, where the environment lives
    (``function`` a module-level function): how a checkpoint captures and restores each
    environment through its own hook, and how the evaluation reads environment 0's
    normalisation statistics.

Neither resets an environment on its own. gymnasium's vector environments reset an ended
environment automatically and hand back the next episode's first observation in place of the
last one (``autoreset``); here the loop resets an environment when, and only when, its episode
has ended, so no transition can pair one episode's last observation with the next one's
first, a time-limit cut keeps its true last observation for bootstrapping, and the two kinds
produce the same transitions from the same seeds (the tests compare them bit for bit). The
workers run the very environments the synchronous kind would (forked from this process), not
a re-made gymnasium vector environment, for the same reason: normalisation, time limits and
the cart-pole port behave identically.

An environment's exception reaches the caller as :class:`VectorEnvCallError`, naming the
environment's index, so the loop can say where in the run it happened.
"""
import contextlib
import multiprocessing
import signal
import traceback

from ddpg.envs.base import clone_env, seed_env

__all__ = ["SyncVectorEnv", "AsyncVectorEnv", "VectorEnvCallError", "make_vector_env",
           "VECTOR_ENV_MODES"]

#: The ``vec_env`` values: in this process, or one worker process per environment.
VECTOR_ENV_MODES = ("sync", "async")


class VectorEnvCallError(RuntimeError):
    """Environment ``index`` raised ``error_type``: ``message`` in ``method()``.

    ``worker_traceback`` is the worker process's traceback text (async), else None; the
    original exception is chained as ``__cause__`` when it was raised in this process.
    """

    def __init__(self, index, method, error_type, message, worker_traceback=None):
        super(VectorEnvCallError, self).__init__(
            "environment %d raised %s in %s(): %s" % (index, error_type, method, message))
        self.index = index
        self.method = method
        self.error_type = error_type
        self.message = message
        self.worker_traceback = worker_traceback


def _reset(env):
    return env.reset()


def _step(env, action):
    return tuple(env.step(action))


class _VectorEnv(object):
    """The interface of both kinds (see the module docstring), written once over
    ``_run(indices, name, function, arguments)``: ``function(env_i, *arguments[k])`` for the
    ``k``-th index ``i``, where environment ``i`` lives; an exception becomes a
    :class:`VectorEnvCallError` naming ``name``."""

    n_envs = 0

    def reset(self, indices):
        indices = list(indices)
        return self._run(indices, "reset", _reset, [()] * len(indices))

    def step(self, actions):
        return self._run(range(self.n_envs), "step", _step, [(action,) for action in actions])

    def apply(self, function, arguments=None):
        return self._run(range(self.n_envs), function.__name__, function,
                         arguments or [()] * self.n_envs)

    def _run(self, indices, name, function, arguments):
        raise NotImplementedError


class SyncVectorEnv(_VectorEnv):
    """The environments ``envs``, stepped one after the other in this process."""

    def __init__(self, envs):
        self.envs = list(envs)
        self.n_envs = len(self.envs)

    def _run(self, indices, name, function, arguments):
        return [self._call(index, name, function, args)
                for index, args in zip(indices, arguments)]

    def _call(self, index, name, function, args):
        try:
            return function(self.envs[index], *args)
        except Exception as error:  # pylint: disable=broad-except
            raise VectorEnvCallError(index, name, type(error).__name__, str(error)) from error

    def close(self):
        """Nothing to release: the environments belong to the caller."""


def _serve(connection, env):
    """A worker process's loop: run each ``(name, function, args)`` received as
    ``function(env, *args)`` and send back the result or the error, until ``"close"``."""
    # Ctrl-C reaches the whole process group: the learner handles it (and still needs this
    # environment to save its state in the interrupted checkpoint)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    while True:
        try:
            name, function, args = connection.recv()
        except EOFError:  # the learner has gone
            return
        if name == "close":
            connection.close()
            return
        try:
            connection.send(("ok", function(env, *args)))
        except Exception as error:  # pylint: disable=broad-except
            connection.send(("error", (type(error).__name__, str(error),
                                       traceback.format_exc())))


@contextlib.contextmanager
def _ignoring_ctrl_c():
    """SIGINT ignored inside the block (in the main thread; elsewhere nothing changes)."""
    try:
        previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    except ValueError:  # not the main thread: signals are the main thread's
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


class AsyncVectorEnv(_VectorEnv):
    """The environments ``envs``, each stepped in a worker process of its own.

    The workers are forked from this process, so they start from the very environment
    objects given (their seeds, settings and wrappers; nothing is pickled). A step sends every
    action first and then collects the results, so the environments run in parallel. The
    workers ignore Ctrl-C and end with this process (daemon processes, and a closed pipe).
    """

    def __init__(self, envs):
        context = multiprocessing.get_context("fork")
        self.n_envs = len(envs)
        self._connections = []
        self._processes = []
        # forked with Ctrl-C ignored (then set again in the worker), so that none can arrive
        # before the worker's handler is in place
        with _ignoring_ctrl_c():
            for index, env in enumerate(envs):
                mine, theirs = context.Pipe()
                process = context.Process(target=_serve, args=(theirs, env), daemon=True,
                                          name="ddpg-env-%d" % index)
                process.start()
                theirs.close()
                self._connections.append(mine)
                self._processes.append(process)

    def _send(self, index, message):
        try:
            self._connections[index].send(message)
        except OSError:  # a worker that has died: its receive says so
            pass

    def _receive(self, index, name):
        try:
            status, result = self._connections[index].recv()
        except (EOFError, OSError):
            self._processes[index].join(timeout=1)
            code = self._processes[index].exitcode
            raise VectorEnvCallError(index, name, "WorkerDied",
                                     "its worker process ended (exit code %s)" % code)
        if status == "error":
            error_type, message, worker_traceback = result
            raise VectorEnvCallError(index, name, error_type, message, worker_traceback)
        return result

    def _run(self, indices, name, function, arguments):
        indices = list(indices)
        for index, args in zip(indices, arguments):
            self._send(index, (name, function, tuple(args)))
        # every answer is read before an error is raised, so no reply is left in a pipe
        results, failure = [], None
        for index in indices:
            try:
                results.append(self._receive(index, name))
            except VectorEnvCallError as error:
                failure = failure or error
        if failure is not None:
            raise failure
        return results

    def close(self):
        """End the workers (also done when this process ends)."""
        for connection, process in zip(self._connections, self._processes):
            if process.is_alive():
                try:
                    connection.send(("close", None, None))
                except (BrokenPipeError, OSError):
                    pass
            process.join(timeout=5)
            if process.is_alive():
                process.terminate()
            connection.close()
        self._connections, self._processes = [], []


def make_vector_env(env, n_envs, mode, seed):
    """``env`` and ``n_envs - 1`` clones of it (clone ``i`` seeded with ``seed + i``; ``env``
    itself is the caller's, already seeded with ``seed``), stepped as ``mode`` says."""
    if mode not in VECTOR_ENV_MODES:
        raise ValueError("vec_env must be one of %s, got %r" % (VECTOR_ENV_MODES, mode))
    envs = [env]
    for index in range(1, n_envs):
        clone = clone_env(env, "for environment %d of n_envs=%d" % (index, n_envs),
                          "give it a clone() method")
        seed_env(clone, seed + index)
        envs.append(clone)
    return SyncVectorEnv(envs) if mode == "sync" else AsyncVectorEnv(envs)
