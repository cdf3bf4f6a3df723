"""Capturing and restoring an environment's state, so a checkpoint can continue an episode.

A checkpoint taken mid-episode can only continue that episode if the simulator's state can be
read and written back, which no general environment API offers. Environments say their state
through a *checkpoint hook*:

``get_checkpoint_state()``
    the state as plain data: numpy arrays, None, booleans, numbers, strings, and lists,
    tuples and dicts of these (:mod:`ddpg.plain_data`), which a checkpoint stores as JSON and
    ``.npz`` without pickle;
``set_checkpoint_state(state)``
    writes such a state back;
``check_checkpoint_state(state)`` (optional)
    raises ``ValueError`` if the state does not fit this environment, without changing it;
    a restore calls it before it changes anything;
``checkpoint_episode()`` (optional)
    ``"exact"`` (the default) if the state continues the current episode exactly,
    ``"reset"`` if it only holds what later episodes need (generators).

The library's environments have the hook: ``CartpoleEnv`` (its physical state, the pending
reset quirk, its generator) and ``GymEnv`` (see :mod:`ddpg.envs.gym_state`: exact for
classic-control and MuJoCo environments, generators only for the others).

A wrapper saves its own state through the *wrapper hook* (``get_wrapper_checkpoint_state()``,
``check_wrapper_checkpoint_state(state)``, ``set_wrapper_checkpoint_state(state)``, as above)
beside the snapshot of the environment it wraps (``wrapped_env``), whose episode level it
takes: ``NormalizedEnv`` saves its running observation/reward statistics so (a snapshot of
kind ``"normalize"``). A wrapper that has the checkpoint hook is saved through that alone.

An environment without the hook, or whose hook returns something that is not plain data (an
object only a pickle could store), is saved as ``"opaque"``: restoring it starts a new
episode (a warning says so when saving, and the log when restoring). Nothing an environment
returns is ever pickled.

Each snapshot records its ``episode`` level. Restoring goes in two steps so that a mismatch
changes nothing: :func:`prepare_env_restore` checks a snapshot against an environment and
returns a function that applies it.
"""
import warnings

from ddpg.envs.gym_state import EXACT, RESET
from ddpg.plain_data import NotPlainData, check_plain, require_keys

__all__ = ["EXACT", "RESET", "capture_env_state", "prepare_env_restore", "capture_kind"]


def _type_name(obj):
    return "%s.%s" % (type(obj).__module__, type(obj).__qualname__)


def has_hook(env):
    return callable(getattr(env, "get_checkpoint_state", None)) and callable(
        getattr(env, "set_checkpoint_state", None))


def has_wrapper_hook(env):
    """Whether ``env`` wraps ``env.wrapped_env`` and saves its own state through the wrapper
    hook (and not through the checkpoint hook)."""
    return not has_hook(env) and hasattr(env, "wrapped_env") and all(
        callable(getattr(env, name, None)) for name in (
            "get_wrapper_checkpoint_state", "check_wrapper_checkpoint_state",
            "set_wrapper_checkpoint_state"))


def capture_env_state(env):
    """A plain-data snapshot of ``env``: a dict with ``kind``, ``type``, ``episode`` and the
    state (see the module docstring)."""
    if has_wrapper_hook(env):
        inner = capture_env_state(env.wrapped_env)
        return {"kind": "normalize", "type": _type_name(env), "episode": inner["episode"],
                "stats": env.get_wrapper_checkpoint_state(), "inner": inner}
    if has_hook(env):
        state = env.get_checkpoint_state()
        try:
            check_plain(state)
        except NotPlainData as error:
            reason = ("%s.get_checkpoint_state() returned data a checkpoint cannot store "
                      "without pickle (%s): a run restored from this checkpoint starts a new "
                      "episode" % (_type_name(env), error))
            warnings.warn(reason, RuntimeWarning, stacklevel=2)
            return {"kind": "opaque", "type": _type_name(env), "episode": RESET,
                    "reason": reason}
        episode = env.checkpoint_episode() if callable(
            getattr(env, "checkpoint_episode", None)) else EXACT
        return {"kind": "custom", "type": _type_name(env), "episode": episode, "state": state}
    return {"kind": "opaque", "type": _type_name(env), "episode": RESET}


def prepare_env_restore(env, saved, what="environment"):
    """Check ``saved`` (from :func:`capture_env_state`) against ``env``; return an applier.

    Raises ``ValueError`` naming the mismatch (another class of environment, another
    gymnasium id, other shapes) without touching ``env``. The returned function, called with
    no arguments, writes the state into ``env``.
    """
    if not isinstance(saved, dict):
        raise ValueError("the checkpoint's %s state is not a dict" % what)
    kind = saved.get("kind")
    current = capture_kind(env)
    if kind == "opaque" and saved.get("type") == _type_name(env):
        return lambda: None  # nothing was saved: a new episode starts
    if kind != current or saved.get("type") != _type_name(env):
        raise ValueError("the checkpoint's %s is %s (%s) but this one is %s (%s)"
                         % (what, kind, saved.get("type"), current, _type_name(env)))
    if kind == "custom":
        require_keys(saved, ("state",), "the checkpoint's %s" % what)
        state = saved["state"]
        check = getattr(env, "check_checkpoint_state", None)
        if callable(check):
            check(state)
        return lambda: env.set_checkpoint_state(state)
    if kind == "normalize":
        return _prepare_normalize(env, saved, what)
    return lambda: None  # opaque: nothing was saved


def capture_kind(env):
    """The ``kind`` :func:`capture_env_state` gives ``env``, without capturing anything
    (``"custom"`` for a hook whose state turns out not to be plain data)."""
    if has_wrapper_hook(env):
        return "normalize"
    return "custom" if has_hook(env) else "opaque"


def _prepare_normalize(env, saved, what):
    require_keys(saved, ("stats", "inner"), "the checkpoint's normalised %s" % what)
    stats = saved["stats"]
    try:
        env.check_wrapper_checkpoint_state(stats)
    except ValueError as error:
        raise ValueError("the checkpoint's %s: %s" % (what, error))
    apply_inner = prepare_env_restore(env.wrapped_env, saved["inner"], what)

    def apply():
        env.set_wrapper_checkpoint_state(stats)
        apply_inner()
    return apply
