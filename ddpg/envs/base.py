"""The rllab environment interface: ``Env``, ``EnvSpec``, ``Step`` and ``seed_env``.

The original example ran on rllab, and users still have rllab-style environments, so this is the
interface the library speaks natively: ``reset()`` returns only the observation and ``step()``
returns a 4-tuple.  gymnasium environments are adapted to it by ``GymEnv``.

One addition to rllab: an episode cut by a time limit (not a true terminal state) is reported as
``done=True`` with ``info["TimeLimit.truncated"] = True``, so DDPG can still bootstrap from s'.
"""

import collections
import copy


class EnvSpec(object):
    """What an agent needs to size itself: the observation and action spaces."""

    def __init__(self, observation_space, action_space):
        self.observation_space = observation_space
        self.action_space = action_space

    def __repr__(self):
        return "EnvSpec(observation_space=%r, action_space=%r)" % (
            self.observation_space, self.action_space)


_StepTuple = collections.namedtuple("Step", ["observation", "reward", "done", "info"])


class Step(_StepTuple):
    """rllab's step result: a namedtuple, so ``obs, reward, done, info = env.step(a)`` works.

    rllab wrote ``Step(obs, reward, done, **info)``; both that and an explicit ``info`` dict are
    accepted.  A given ``info`` dict is kept as the same object when there are no extra keywords,
    so wrappers pass flags through untouched.
    """

    __slots__ = ()

    def __new__(cls, observation, reward, done, info=None, **extra_info):
        if info is None:
            info = {}
        if extra_info:
            info = dict(info)
            info.update(extra_info)
        return super(Step, cls).__new__(cls, observation, reward, done, info)


class Env(object):
    """Base class of rllab-style environments.

    Subclasses provide ``observation_space``, ``action_space``, ``reset`` and ``step``; the
    spaces are either properties of their own or, most simply, the attributes
    ``_observation_space`` and ``_action_space`` that these properties return. The other
    methods have harmless defaults: an environment without randomness has nothing to seed, one
    without a display nothing to render, one without resources nothing to release.
    """

    @property
    def observation_space(self):
        return self._space("_observation_space")

    @property
    def action_space(self):
        return self._space("_action_space")

    def _space(self, attribute):
        try:
            return getattr(self, attribute)
        except AttributeError:
            raise NotImplementedError("%s sets no %s" % (type(self).__name__, attribute)) \
                from None

    @property
    def spec(self):
        return EnvSpec(self.observation_space, self.action_space)

    @property
    def horizon(self):
        """Maximum episode length imposed by the environment itself, or None if it has none."""
        return None

    def reset(self):
        """Start an episode; return its first observation (only the observation)."""
        raise NotImplementedError

    def step(self, action):
        """Apply ``action``; return a ``Step(observation, reward, done, info)``."""
        raise NotImplementedError

    def seed(self, seed):
        """Seed the environment's randomness; the base environment has none."""
        return None

    def render(self):
        return None

    def terminate(self):
        """Release resources (windows, simulators) at the end of an experiment."""
        return None

    def log_diagnostics(self, paths):
        """Log environment-specific statistics of sampled paths; none by default."""
        return None


def clone_env(env, purpose, remedy):
    """A fresh, independent copy of ``env``: ``env.clone()`` when it has one (the library's
    environments do: nothing shared), else a deep copy; a copy that fails is a ``ValueError``
    saying what the copy was ``purpose`` for and the ``remedy``."""
    if callable(getattr(env, "clone", None)):
        return env.clone()
    try:
        return copy.deepcopy(env)
    except Exception as error:  # pylint: disable=broad-except
        raise ValueError("could not copy the environment %s (%s); %s"
                         % (purpose, error, remedy))


def seed_env(env, seed):
    """Seed ``env`` if it can be seeded; return whether it was.

    rllab environments often have no ``seed`` method at all, and ones inheriting ``Env.seed``
    unchanged have nothing to seed; in both cases we report ``False`` instead of pretending, so
    callers can warn that the run is only reproducible through the global numpy seed.  A ``seed``
    that returns a bool (wrappers such as ``NormalizedEnv`` do) reports the answer itself.
    """
    seed_fn = getattr(env, "seed", None)
    if not callable(seed_fn):
        return False
    if getattr(type(env), "seed", None) is Env.seed:
        return False
    result = seed_fn(seed)
    return result if isinstance(result, bool) else True
