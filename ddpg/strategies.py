"""Exploration strategies: how the behaviour policy perturbs the deterministic policy.

``OUStrategy`` is the original's (and the DDPG paper's) temporally correlated noise;
``GaussianStrategy`` is the uncorrelated noise that the later re-tuned implementations (TD3's
"OurDDPG", Stable-Baselines3's zoo, CleanRL) found works as well or better on MuJoCo tasks.
Both draw from numpy's global generator, which :class:`ddpg.DDPG` seeds and checkpoints save,
unless their ``rng`` is set: with several environments each has a copy of the strategy drawing
from a generator of its own (:mod:`ddpg.training_envs`).
"""
import math

import numpy as np

from ddpg.envs.spaces import flat_bounds

# The strategies' defaults: the home of every default of OUStrategy and GaussianStrategy, and
# of the command line's exploration flags.
#: The original's OU noise (the DDPG paper's theta and sigma; dt=1, the original's recursion).
DEFAULT_OU_THETA = 0.15
DEFAULT_OU_SIGMA = 0.3
DEFAULT_OU_DT = 1.0
#: The TD3 authors' Gaussian noise std, relative to the action half-range.
DEFAULT_GAUSSIAN_SIGMA = 0.1
#: No uniformly random actions among the Gaussian strategy's (the HER authors used 0.3).
DEFAULT_RANDOM_ACTION_PROB = 0.0


def _hook(strategy, name):
    """``strategy``'s method ``name``, or None when it has none."""
    method = getattr(strategy, name, None)
    return method if callable(method) else None


def _hook_state_dict(strategy):
    """The state of a strategy without ``state_dict``: what its ``get_checkpoint_state()``
    gives, else a copy of its array ``state`` (as OU noise has), else None (no state)."""
    get_state = _hook(strategy, "get_checkpoint_state")
    if get_state is not None:
        return get_state()
    state = getattr(strategy, "state", None)
    return None if state is None else np.array(state, copy=True)


def _hook_check_state_dict(strategy, state):
    """``ValueError`` unless :func:`_hook_load_state_dict` can take ``state`` (a
    ``set_checkpoint_state`` hook checks its state itself)."""
    if _hook(strategy, "set_checkpoint_state") is not None:
        return
    current = getattr(strategy, "state", None)
    if current is None:
        raise ValueError("an exploration strategy state; %s has no state to put it in (no "
                         "load_state_dict())" % type(strategy).__name__)
    if np.shape(current) != np.shape(state):
        raise ValueError("an exploration state of shape %s; %s has %s"
                         % (np.shape(state), type(strategy).__name__, np.shape(current)))


def _hook_load_state_dict(strategy, state):
    _hook_check_state_dict(strategy, state)
    set_state = _hook(strategy, "set_checkpoint_state")
    if set_state is not None:
        set_state(state)
    else:
        strategy.state = np.array(state, copy=True)


class BaseStrategy(object):
    """Turns ``policy.get_action(obs)`` into an exploratory action.

    A strategy's state (what a checkpoint saves and a restore puts back) is what
    :meth:`state_dict` gives, plain data (numpy arrays, numbers, strings, lists and dicts of
    these; None: no state); :meth:`load_state_dict` puts it back and
    :meth:`check_state_dict` raises ``ValueError`` or ``TypeError`` for a state it cannot
    take, before anything changes. A subclass with state overrides the three. The defaults
    serve a subclass that defines ``get_checkpoint_state()`` and
    ``set_checkpoint_state(state)`` instead (the environment hook's names) or keeps an
    exploration array in ``state``; a strategy with none of these has no state.
    """

    #: The ``np.random.RandomState`` the noise is drawn from; None: numpy's global generator.
    rng = None

    def random(self):
        """The generator to draw from: ``rng``, or numpy's global one."""
        return np.random if self.rng is None else self.rng

    def get_action(self, obs, policy):
        raise NotImplementedError

    def reset(self):
        pass

    def state_dict(self):
        """The strategy's state as plain data; None: it has none."""
        return _hook_state_dict(self)

    def check_state_dict(self, state):
        """``ValueError``/``TypeError`` unless :meth:`load_state_dict` can take ``state``."""
        _hook_check_state_dict(self, state)

    def load_state_dict(self, state):
        """Put back a state from :meth:`state_dict` (checked first: a state that does not
        fit raises and changes nothing)."""
        _hook_load_state_dict(self, state)


class _DuckTypedState(object):
    """The state methods of a strategy that is not a :class:`BaseStrategy`: its own
    ``state_dict``, ``check_state_dict`` and ``load_state_dict`` where it has them,
    :class:`BaseStrategy`'s defaults otherwise."""

    def __init__(self, strategy):
        self.strategy = strategy

    def state_dict(self):
        own = _hook(self.strategy, "state_dict")
        return own() if own is not None else _hook_state_dict(self.strategy)

    def check_state_dict(self, state):
        own = _hook(self.strategy, "check_state_dict")
        if own is not None:
            own(state)
        elif _hook(self.strategy, "load_state_dict") is None:
            _hook_check_state_dict(self.strategy, state)

    def load_state_dict(self, state):
        own = _hook(self.strategy, "load_state_dict")
        if own is not None:
            own(state)
        else:
            _hook_load_state_dict(self.strategy, state)


def state_methods(strategy):
    """An object with ``strategy``'s ``state_dict()``, ``check_state_dict(state)`` and
    ``load_state_dict(state)``: the strategy itself when it is a :class:`BaseStrategy`; for
    one that is not, the methods it defines and :class:`BaseStrategy`'s defaults for the
    others (one with its own ``load_state_dict`` and no ``check_state_dict`` is not checked
    beforehand: its ``load_state_dict`` is the only check)."""
    return strategy if isinstance(strategy, BaseStrategy) else _DuckTypedState(strategy)


class OUStrategy(BaseStrategy):
    """Ornstein-Uhlenbeck noise added to the policy's action, as in the DDPG paper.

    The state starts at ``mu`` and evolves with
    ``x += theta * (mu - x) * dt + sigma * sqrt(dt) * N(0, I)`` at every action (the
    Euler-Maruyama step of the OU process); ``reset()`` at episode ends returns it to ``mu``.
    ``dt=1`` is the original's recursion, bit for bit. A smaller ``dt`` (OpenAI Baselines and
    Stable-Baselines3 use 1e-2) makes the noise smoother and slower to revert; its stationary
    standard deviation is ``sigma / sqrt(theta * (2 - theta * dt))``, which tends to the
    continuous process's ``sigma / sqrt(2 * theta)``. Noise is drawn from numpy's global
    generator, which :class:`ddpg.DDPG` seeds.
    """

    def __init__(self, env_spec, mu=0, theta=DEFAULT_OU_THETA, sigma=DEFAULT_OU_SIGMA,
                 dt=DEFAULT_OU_DT):
        self.action_space = env_spec.action_space
        self.action_dim = self.action_space.flat_dim
        self.mu = mu
        self.theta = theta
        self.sigma = sigma
        if not dt > 0:
            raise ValueError("OUStrategy's dt must be positive, got %r" % (dt,))
        self.dt = dt
        self.state = np.ones(self.action_dim) * self.mu

    def evolve_state(self):
        x = self.state
        dx = (self.theta * (self.mu - x) * self.dt
              + self.sigma * math.sqrt(self.dt) * self.random().randn(len(x)))
        self.state = x + dx
        return self.state

    def reset(self):
        self.state = np.ones(self.action_dim) * self.mu

    def state_dict(self):
        """A copy of the OU state (an array of ``action_dim`` values)."""
        return np.array(self.state, copy=True)

    def check_state_dict(self, state):
        """``ValueError`` unless ``state`` is a numeric array of this state's shape."""
        if np.shape(state) != np.shape(self.state):
            raise ValueError("an exploration state of shape %s; %s has %s"
                             % (np.shape(state), type(self).__name__, np.shape(self.state)))
        if not np.issubdtype(np.asarray(state).dtype, np.number):
            raise TypeError("an exploration state of %s values; %s's are numbers"
                            % (np.asarray(state).dtype, type(self).__name__))

    def load_state_dict(self, state):
        """Put back an OU state from :meth:`state_dict` (checked first)."""
        self.check_state_dict(state)
        self.state = np.array(state, copy=True)

    def get_action(self, obs, policy):
        """Policy action plus the next OU state, clipped to the action bounds; flat shape."""
        action = np.asarray(policy.get_action(obs)).reshape(-1)
        ou_state = self.evolve_state()
        return np.clip(action + ou_state, np.reshape(self.action_space.low, -1),
                       np.reshape(self.action_space.high, -1))


class GaussianStrategy(BaseStrategy):
    """Independent Gaussian noise added to the policy's action, clipped to the bounds.

    The noise's standard deviation in each action dimension is ``sigma * (high - low) / 2``:
    ``sigma`` is relative to the action range, so ``sigma=0.1`` means 0.1 on the [-1, 1]
    actions of a normalised environment (the TD3 authors' and the SB3 zoo's setting) and 10%
    of the half-range otherwise (CleanRL's "0.1 x action scale").

    With ``sigma_min`` and ``decay_steps`` the deviation falls linearly from ``sigma`` to
    ``sigma_min`` over the first ``decay_steps`` actions of the run and then stays there
    (rllab's ``GaussianStrategy`` has the same schedule). The step count is the strategy's
    only state; it spans episodes (``reset()`` keeps it) and is saved in checkpoints through
    ``state_dict``/``load_state_dict``, so a resumed run continues the schedule.

    With ``random_prob`` an action is, with that probability, drawn uniformly from the action
    space instead (the noise is drawn either way): the
    HER authors' exploration (``random_eps`` 0.3 with noise 0.2). 0, the default, never.
    """

    def __init__(self, env_spec, sigma=DEFAULT_GAUSSIAN_SIGMA, sigma_min=None,
                 decay_steps=None, random_prob=DEFAULT_RANDOM_ACTION_PROB):
        self.action_space = env_spec.action_space
        self.action_dim = self.action_space.flat_dim
        if not sigma >= 0:
            raise ValueError("GaussianStrategy's sigma must be non-negative, got %r" % (sigma,))
        if (sigma_min is None) != (decay_steps is None):
            raise ValueError("GaussianStrategy needs both sigma_min and decay_steps for a "
                             "decaying sigma, or neither; got sigma_min=%r, decay_steps=%r"
                             % (sigma_min, decay_steps))
        if decay_steps is not None and (int(decay_steps) != decay_steps or decay_steps <= 0
                                        or not sigma_min >= 0):
            raise ValueError("decay_steps must be a positive integer and sigma_min "
                             "non-negative; got decay_steps=%r, sigma_min=%r"
                             % (decay_steps, sigma_min))
        if not 0.0 <= random_prob <= 1.0:
            raise ValueError("GaussianStrategy's random_prob must be in [0, 1], got %r"
                             % (random_prob,))
        self.sigma = sigma
        self.random_prob = random_prob
        self.sigma_min = sigma_min
        self.decay_steps = None if decay_steps is None else int(decay_steps)
        self._low, self._high = flat_bounds(self.action_space)
        self._scale = (self._high - self._low) / 2.0
        self.steps = 0  # actions taken so far: drives the decay

    def current_sigma(self):
        """The relative deviation for the next action (``sigma`` without a decay)."""
        if self.decay_steps is None:
            return self.sigma
        fraction = min(1.0, self.steps / float(self.decay_steps))
        return self.sigma + fraction * (self.sigma_min - self.sigma)

    def get_action(self, obs, policy):
        """Policy action plus N(0, (sigma * half-range)^2), clipped to the bounds; flat."""
        action = np.asarray(policy.get_action(obs)).reshape(-1)
        noise = self.current_sigma() * self._scale * self.random().randn(self.action_dim)
        self.steps += 1
        if self.random_prob and self.random().uniform() < self.random_prob:
            return self.random().uniform(self._low, self._high)
        return np.clip(action + noise, self._low, self._high)

    def state_dict(self):
        """``{"steps": actions taken so far}``, the decay schedule's position."""
        return {"steps": int(self.steps)}

    def check_state_dict(self, state):
        """``ValueError``/``TypeError`` unless ``state`` is ``{"steps": n}``, n a
        non-negative integer."""
        if not isinstance(state, dict) or set(state) != {"steps"}:
            raise ValueError("an exploration state %r; %s's is {'steps': n}"
                             % (state, type(self).__name__))
        steps = np.asarray(state["steps"])
        if steps.ndim != 0 or steps.dtype.kind not in "iu" or steps < 0:
            raise TypeError("an exploration state of %r steps; %s counts them with a "
                            "non-negative integer" % (state["steps"], type(self).__name__))

    def load_state_dict(self, state):
        """Put back the step count from :meth:`state_dict` (checked first)."""
        self.check_state_dict(state)
        self.steps = int(state["steps"])
