"""``GymEnv``: a gymnasium (or gym 0.26) environment behind the rllab interface.

The adapter does three things DDPG depends on:

* It folds gymnasium's ``terminated``/``truncated`` pair into rllab's single ``done`` while keeping
  the distinction in ``info["TimeLimit.truncated"]``: a time-limit cut must still bootstrap from
  s' (bug 5 of the original example).
* It refuses, with a message naming the space, anything DDPG cannot handle: a discrete or
  otherwise non-Box action space, a non-Box observation space, or actions with infinite bounds
  (the tanh policy is rescaled into the bounds, so they must be finite).
* It makes seeding and cloning explicit so training and evaluation can use separate, reproducible
  environments.

``gym`` (0.26) is optional: it is never imported here; a gym environment is recognised through the
already-imported ``gym`` module of the caller.
"""

import contextlib
import copy
import importlib.util
import io
import sys

import gymnasium
import numpy as np

from . import gym_state
from .base import Env, Step
from .goals import GoalLayout, is_goal_space
from .spaces import Box


def _gym_module():
    """The legacy ``gym`` package if the caller has imported it, else None."""
    return sys.modules.get("gym")


def library_of(env):
    """The module (``gymnasium`` or ``gym``) an environment instance belongs to, or None."""
    if isinstance(env, gymnasium.Env):
        return gymnasium
    gym = _gym_module()
    if gym is not None and isinstance(env, gym.Env):
        return gym
    return None


def is_gym_env(env):
    """Whether ``env`` is a gymnasium or gym 0.26 environment (which needs ``GymEnv``)."""
    return library_of(env) is not None


def _is_library_box(space):
    if isinstance(space, gymnasium.spaces.Box):
        return True
    gym = _gym_module()
    return gym is not None and isinstance(space, gym.spaces.Box)


def _wrapper_chain(env):
    """Types of the wrappers around an env, outermost first: tells whether a remake matches."""
    wrapper_type = library_of(env).Wrapper
    chain = []
    while isinstance(env, wrapper_type):
        chain.append(type(env))
        env = env.env
    chain.append(type(env))
    return chain


def _is_mujoco_id(env_id):
    """Whether gymnasium's registry says ``env_id`` is a MuJoCo environment (an unknown id
    is not: gymnasium.make then gives its own error)."""
    try:
        entry_point = gymnasium.spec(env_id).entry_point
    except Exception:  # pylint: disable=broad-except
        return False
    module = entry_point if isinstance(entry_point, str) else getattr(entry_point,
                                                                      "__module__", "")
    return "mujoco" in str(module)


#: How the ids of gymnasium-robotics' tasks begin (they exist only with that package).
ROBOTICS_ID_PREFIXES = ("Fetch", "HandManipulate", "HandReach", "AdroitHand", "AntMaze",
                        "PointMaze", "FrankaKitchen")
#: What to install for them, and for gymnasium's MuJoCo environments: the package's extras.
ROBOTICS_INSTALL = 'pip install "mxnet-ddpg[robotics]"'
MUJOCO_INSTALL = 'pip install "mxnet-ddpg[mujoco]"'


def _import_robotics():
    """gymnasium-robotics, or None when it cannot be imported."""
    try:
        # its import prints a notice about its Adroit tasks' rewards to stderr: not ours to show
        with contextlib.redirect_stderr(io.StringIO()):
            import gymnasium_robotics
    except Exception:  # pylint: disable=broad-except
        # not installed, no MuJoCo, or a MuJoCo whose OpenGL backend cannot load: the id is
        # then not one of its tasks, and gymnasium.make says what is wrong with it
        return None
    return gymnasium_robotics


def register_robotics_ids(env_id):
    """Register gymnasium-robotics' environments (the Fetch tasks, ...) when ``env_id`` is
    not a registered id and that package is installed: it registers its ids only when
    asked (``gymnasium.register_envs``)."""
    try:
        gymnasium.spec(env_id)
        return
    except Exception:  # pylint: disable=broad-except
        pass
    robotics = _import_robotics()
    if robotics is not None:
        gymnasium.register_envs(robotics)


def _installed(module):
    """Whether ``module`` can be found (a None in ``sys.modules`` blocks it, as in tests)."""
    if module in sys.modules:
        return sys.modules[module] is not None
    return importlib.util.find_spec(module) is not None


def make_by_id(env_id, **make_kwargs):
    """``gymnasium.make(env_id)``; an id whose package is missing is an ``ImportError``
    naming the extra that installs it (gymnasium's own hint would install a MuJoCo that may
    not run with the numpy MXNet needs)."""
    try:
        return gymnasium.make(env_id, **make_kwargs)
    except (ImportError, gymnasium.error.DependencyNotInstalled):
        if _is_mujoco_id(env_id) and not _installed("mujoco"):
            raise ImportError("%s is a MuJoCo environment, and MuJoCo is not installed: %s"
                              % (env_id, MUJOCO_INSTALL)) from None
        raise
    except gymnasium.error.Error as error:
        if env_id.startswith(ROBOTICS_ID_PREFIXES) and _import_robotics() is None:
            raise ImportError("%s; %s is one of gymnasium-robotics' tasks, which is not "
                              "installed: %s" % (str(error).rstrip("."), env_id,
                                                 ROBOTICS_INSTALL)) from None
        raise


def keep_mujoco_log_out_of_cwd():
    """Stop MuJoCo from appending its warnings to ``MUJOCO_LOG.TXT`` in the current folder.

    MuJoCo writes every warning (gymnasium's HalfCheetah model has a deprecated attribute,
    so every run warns) both to the console and to that file, in whatever folder the program
    runs from. The console copy is kept; the file is not written. MuJoCo 3.x, which has no
    log configuration, gets a warning callback that prints to stderr instead (its default
    handler is what writes the file). Returns whether MuJoCo could be configured.
    """
    try:
        import mujoco
    except ImportError:
        return False
    config_class = getattr(mujoco, "MjLogConfig", None)
    if config_class is not None:
        config = config_class.get()
        if config.logto_file:
            config.logto_file = False
            config.set()
        return True
    if getattr(mujoco, "get_mju_user_warning", lambda: None)() is None:
        mujoco.set_mju_user_warning(
            lambda message: print("MuJoCo warning: %s" % message, file=sys.stderr))
    return True


def _fresh_copy(env):
    """An independent copy of a live environment instance.

    Remaking from the registered spec gives a clean environment (deepcopy would also copy its
    pygame window, open files, ...), but only if the remake has the same wrapper stack: a user's own
    wrappers are not always recorded in the spec.  Otherwise fall back to ``copy.deepcopy``.
    """
    spec = getattr(env, "spec", None)
    library = library_of(env)
    wrappers = getattr(spec, "additional_wrappers", ())
    remakeable = (library is not None and getattr(spec, "id", None)
                  and all(w.kwargs is not None for w in wrappers))
    if remakeable:
        fresh = library.make(spec)
        if _wrapper_chain(fresh) == _wrapper_chain(env):
            return fresh
        fresh.close()
    return copy.deepcopy(env)


def _wrap_record_video(env, record_video):
    """Wrap ``env`` in its library's ``RecordVideo``; ``record_video`` is a folder or True."""
    folder = "videos" if record_video is True else str(record_video)
    library = library_of(env)
    return library.wrappers.RecordVideo(env, folder)


def environment_action(action, dtype):
    """``action`` as handed to the environment: its values rounded to the action space's
    ``dtype``, and a floating ``dtype`` narrower than float64 handed over in float64.

    An environment computes its reward and dynamics from the action with numpy (Pendulum's
    ``0.001 * u**2``, MuJoCo's control costs). numpy 1.x promotes a float32 scalar met with a
    Python float to float64, numpy 2 keeps float32 (NEP 50): a float32 action would give
    different rewards under each. float64 values that float32 can represent exactly make both
    compute in float64, the same numbers.
    """
    dtype = np.dtype(dtype)
    action = np.asarray(action).astype(dtype)
    if dtype.kind == "f" and dtype.itemsize < 8:
        return action.astype(np.float64)
    return action


class GymEnv(Env):
    """rllab-interface adapter around a gymnasium or gym 0.26 environment.

    ``GymEnv("Pendulum-v1", **make_kwargs)`` makes the environment with ``gymnasium.make``;
    ``GymEnv(env)`` wraps an existing instance.  ``record_video`` (True or a folder) wraps it in the
    library's ``RecordVideo`` (an id is then made with ``render_mode="rgb_array"``; moviepy must be
    installed).  Observations are returned exactly as the wrapped environment gives them, except
    a goal-conditioned environment's dicts, which become ``[observation, desired_goal]`` with the
    achieved goal in ``info["achieved_goal"]`` (:mod:`ddpg.envs.goals`); ``goal_layout`` says
    where each part lies (None for other environments).
    """

    def __init__(self, env_or_id, record_video=False, **make_kwargs):
        self._make_kwargs = dict(make_kwargs)
        if isinstance(env_or_id, str):
            register_robotics_ids(env_or_id)
            if record_video:
                make_kwargs.setdefault("render_mode", "rgb_array")
            if _is_mujoco_id(env_or_id):
                keep_mujoco_log_out_of_cwd()
            base_env = make_by_id(env_or_id, **make_kwargs)
            self.env_id = env_or_id
            self._made_from_id = True
        else:
            if make_kwargs:
                raise TypeError("make keyword arguments %s only apply when GymEnv is given an id"
                                % sorted(make_kwargs))
            if library_of(env_or_id) is None:
                raise TypeError("GymEnv wraps gymnasium or gym>=0.26 environments, got %r; "
                                "rllab-style environments need no wrapper" % (env_or_id,))
            base_env = env_or_id
            self.env_id = getattr(getattr(base_env, "spec", None), "id", None)
            self._made_from_id = False
        self._base_env = base_env
        self.env = _wrap_record_video(base_env, record_video) if record_video else base_env
        self._action_space = self._checked_action_space()
        self._observation_space = self._checked_observation_space()
        self._pending_seed = None
        self.last_reset_info = {}

    def _name(self):
        return self.env_id or type(self.env.unwrapped).__name__

    def _checked_action_space(self):
        space = self.env.action_space
        if not _is_library_box(space):
            raise ValueError("DDPG needs a continuous (Box) action space; %s has %r"
                             % (self._name(), space))
        if not np.issubdtype(np.dtype(space.dtype), np.floating):
            raise ValueError("DDPG needs a continuous (Box) action space; %s has an integer %r"
                             % (self._name(), space))
        box = Box(space.low, space.high)
        if not (np.isfinite(box.low).all() and np.isfinite(box.high).all()):
            raise ValueError("DDPG needs finite action bounds (its tanh policy is rescaled into "
                             "them); %s has %r" % (self._name(), space))
        return box

    def _checked_observation_space(self):
        """The flat observation space; a goal-conditioned environment's dict observations
        become ``[observation, desired_goal]`` (:mod:`ddpg.envs.goals`)."""
        space = self.env.observation_space
        self.goal_layout = None
        if is_goal_space(space):
            self.goal_layout = GoalLayout(space)
            return Box(self.goal_layout.low, self.goal_layout.high)
        if not _is_library_box(space):
            raise ValueError("DDPG needs a Box observation space or a goal-conditioned dict "
                             "of observation, achieved_goal and desired_goal; %s has %r"
                             % (self._name(), space))
        return Box(space.low, space.high)

    def compute_reward(self, achieved_goals, desired_goals, info):
        """The goal-conditioned environment's rewards for goals ``(n, goal_dim)``, vectorised
        (hindsight replay's relabelled rewards)."""
        return self.env.unwrapped.compute_reward(achieved_goals, desired_goals, info)

    def _flat(self, observation):
        """A goal-conditioned observation flattened; any other as it is."""
        return observation if self.goal_layout is None else self.goal_layout.flatten(
            observation)

    @property
    def horizon(self):
        spec = getattr(self.env, "spec", None)
        return getattr(spec, "max_episode_steps", None)

    @property
    def unwrapped_env(self):
        """The gymnasium/gym environment this adapter drives (with its own wrappers)."""
        return self.env

    def seed(self, seed):
        """Seed the next ``reset()`` (once, as gymnasium intends) and the action space."""
        self._pending_seed = seed
        self.env.action_space.seed(seed)

    def reset(self):
        if self._pending_seed is None:
            observation, info = self.env.reset()
        else:
            observation, info = self.env.reset(seed=self._pending_seed)
            self._pending_seed = None
        self.last_reset_info = info
        return self._flat(observation)

    def step(self, action):
        space = self.env.action_space
        action = np.asarray(action)
        if action.size != self._action_space.flat_dim:
            raise ValueError("%s expects %d action values, got an array of shape %s"
                             % (self._name(), self._action_space.flat_dim, action.shape))
        observation, reward, terminated, truncated, info = self.env.step(
            environment_action(action.reshape(space.shape), space.dtype))
        terminated, truncated = bool(terminated), bool(truncated)
        info = dict(info)
        info["terminated"] = terminated
        info["truncated"] = truncated
        info["TimeLimit.truncated"] = truncated and not terminated
        if self.goal_layout is not None:  # for hindsight replay
            info["achieved_goal"] = self.goal_layout.achieved(observation)
        return Step(self._flat(observation), float(reward), terminated or truncated, info)

    # -- the checkpoint hook (ddpg.checkpoint.env_state): arrays and plain values, see
    #    ddpg.envs.gym_state

    def checkpoint_episode(self):
        """``"exact"`` if a checkpoint continues the current episode, else ``"reset"``."""
        return gym_state.episode_level(self.env.unwrapped)

    def get_checkpoint_state(self):
        return gym_state.capture(library_of(self.env), self.env, self.env_id, self._pending_seed)

    def check_checkpoint_state(self, saved):
        """``ValueError`` unless ``saved`` (from :meth:`get_checkpoint_state`) fits."""
        gym_state.check(library_of(self.env), self.env, self.env_id, saved)

    def set_checkpoint_state(self, saved):
        self.check_checkpoint_state(saved)
        gym_state.apply(library_of(self.env), self.env, saved)
        self._pending_seed = saved["pending_seed"]

    def render(self):
        return self.env.render()

    def terminate(self):
        self.env.close()

    def clone(self):
        """A fresh, independent environment of the same kind (e.g. for evaluation).

        Made again from the id and make-kwargs when possible, so nothing (RNG, episode, video
        recorder) is shared; a clone never records video.
        """
        if self._made_from_id:
            return GymEnv(self.env_id, **self._make_kwargs)
        return GymEnv(_fresh_copy(self._base_env))

    def __repr__(self):
        return "GymEnv(%s)" % (self._name(),)
