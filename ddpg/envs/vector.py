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

from ddpg.envs.base import seed_env

__all__ = ["SyncVectorEnv", "AsyncVectorEnv", "VectorEnvCallError", "clone_env",
           "make_vector_env", "VECTOR_ENV_MODES"]

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


def clone_env(env):
    """A fresh, independent copy of ``env``: ``env.clone()`` when it has one (the library's
    environments do: nothing shared), else a deep copy."""
    if callable(getattr(env, "clone", None)):
        return env.clone()
    import copy
    return copy.deepcopy(env)


class SyncVectorEnv(object):
    """The environments ``envs``, stepped one after the other in this process."""

    def __init__(self, envs):
        self.envs = list(envs)
        self.n_envs = len(self.envs)

    def _call(self, index, method, *args):
        try:
            return getattr(self.envs[index], method)(*args)
        except Exception as error:  # pylint: disable=broad-except
            raise VectorEnvCallError(index, method, type(error).__name__,
                                     str(error)) from error

    def reset(self, indices):
        return [self._call(index, "reset") for index in indices]

    def step(self, actions):
        return [tuple(self._call(index, "step", action))
                for index, action in enumerate(actions)]

    def apply(self, function, arguments=None):
        arguments = arguments or [()] * self.n_envs
        return [self._call_function(index, function, args)
                for index, args in enumerate(arguments)]

    def _call_function(self, index, function, args):
        try:
            return function(self.envs[index], *args)
        except Exception as error:  # pylint: disable=broad-except
            raise VectorEnvCallError(index, function.__name__, type(error).__name__,
                                     str(error)) from error

    def close(self):
        """Nothing to release: the environments belong to the caller."""


def _serve(connection, env):
    """A worker process's loop: run the commands of :class:`AsyncVectorEnv` on ``env``."""
    # Ctrl-C reaches the whole process group: the learner handles it (and still needs this
    # environment to save its state in the interrupted checkpoint)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    commands = {
        "reset": lambda _: env.reset(),
        "step": lambda action: tuple(env.step(action)),
        "apply": lambda call: call[0](env, *call[1]),
    }
    while True:
        try:
            command, data = connection.recv()
        except EOFError:  # the learner has gone
            return
        if command == "close":
            connection.close()
            return
        try:
            connection.send(("ok", commands[command](data)))
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


class AsyncVectorEnv(object):
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

    def _send(self, index, command, data=None):
        try:
            self._connections[index].send((command, data))
        except OSError:  # a worker that has died: its receive says so
            pass

    def _receive(self, index, command):
        try:
            status, result = self._connections[index].recv()
        except (EOFError, OSError):
            self._processes[index].join(timeout=1)
            code = self._processes[index].exitcode
            raise VectorEnvCallError(index, command, "WorkerDied",
                                     "its worker process ended (exit code %s)" % code)
        if status == "error":
            error_type, message, worker_traceback = result
            raise VectorEnvCallError(index, command, error_type, message, worker_traceback)
        return result

    def _all(self, indices, command, data):
        for index, item in zip(indices, data):
            self._send(index, command, item)
        # every answer is read before an error is raised, so no reply is left in a pipe
        results, failure = [], None
        for index in indices:
            try:
                results.append(self._receive(index, command))
            except VectorEnvCallError as error:
                failure = failure or error
        if failure is not None:
            raise failure
        return results

    def reset(self, indices):
        return self._all(list(indices), "reset", [None] * len(indices))

    def step(self, actions):
        return self._all(range(self.n_envs), "step", actions)

    def apply(self, function, arguments=None):
        arguments = arguments or [()] * self.n_envs
        return self._all(range(self.n_envs), "apply",
                         [(function, tuple(args)) for args in arguments])

    def close(self):
        """End the workers (also done when this process ends)."""
        for connection, process in zip(self._connections, self._processes):
            if process.is_alive():
                try:
                    connection.send(("close", None))
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
        clone = clone_env(env)
        seed_env(clone, seed + index)
        envs.append(clone)
    return SyncVectorEnv(envs) if mode == "sync" else AsyncVectorEnv(envs)
