"""Small rllab-style environments for tests (plain classes, no gym, no ddpg.envs.Env base),
and the suite's one builder of algorithms, :func:`build_algorithm`."""
import mxnet as mx
import numpy as np

from ddpg.checkpoint import INPUT_NAMES, networks_of
from ddpg.envs import Box, EnvSpec, Step
from ddpg.policies import DeterministicMLPPolicy
from ddpg.qfuncs import ContinuousMLPQ
from ddpg.strategies import BaseStrategy, OUStrategy
from ddpg.experiment.build import ALGORITHMS  # the classes of build_algorithm's kind


class PointEnv(object):
    """A point moved by bounded actions toward the origin; the rllab interface, by duck typing.

    Reward is minus the squared distance; an episode ends (terminal) when the point comes
    within 0.1 of the origin. It keeps its own random stream so ``seed`` makes it repeatable.
    """

    def __init__(self, obs_dim=2, act_dim=2, action_bound=1.0):
        self.obs_dim, self.act_dim = obs_dim, act_dim
        self.observation_space = Box(-np.inf, np.inf, shape=(obs_dim,))
        self.action_space = Box(-action_bound, action_bound, shape=(act_dim,))
        self.spec = EnvSpec(self.observation_space, self.action_space)
        self.rng = np.random.RandomState(0)
        self.state = None
        self.actions_seen = []

    def seed(self, seed):
        self.rng = np.random.RandomState(seed)

    def reset(self):
        self.state = self.rng.uniform(-1, 1, size=self.obs_dim)
        return self.state.copy()

    def step(self, action):
        self.actions_seen.append(np.array(action))
        action = np.asarray(action, dtype=np.float64)
        assert action.shape == (self.act_dim,), action.shape
        move = np.zeros(self.obs_dim)
        k = min(self.obs_dim, self.act_dim)
        move[:k] = 0.1 * np.clip(action[:k], -1, 1)
        self.state = self.state + move
        reward = -float(np.sum(self.state ** 2))
        done = bool(np.sum(self.state ** 2) < 0.01)
        return Step(self.state.copy(), reward, done, {})


def build_algorithm(kind="ddpg", env=None, spec_env=None, pi_hidden=(8, 8),
                    q_hidden=(8, 8, 8), merge=None, strategy=OUStrategy, policy_kwargs=None,
                    qfunc_kwargs=None, randomize=False, **overrides):
    """A small DDPG (``kind="td3"``: TD3) for a test, on the CPU without a progress bar.

    ``env``: default a ``PointEnv(obs_dim=3, act_dim=2)``; the networks and the strategy are
    sized from ``spec_env`` (default ``env``). ``pi_hidden``, ``q_hidden`` and ``merge``: the
    policy's and Q's hidden sizes and Q's action merge layer (None: the class's default);
    ``policy_kwargs``/``qfunc_kwargs``: the networks' other arguments. ``strategy``: a
    strategy, or a callable (a class) that makes one from the spec. ``overrides``: the
    algorithm's keyword arguments. ``randomize``: then every parameter of every network is
    drawn from N(0, 0.5^2) with ``RandomState(0)``, so that each step of an update shows in
    the parameters (Normal(0.01) weights make every gradient tiny).

    The objects are made in the order env, policy, Q, strategy, algorithm.
    """
    env = PointEnv(obs_dim=3, act_dim=2) if env is None else env
    spec = (spec_env or env).spec
    policy_options = dict(policy_kwargs or {})
    if pi_hidden is not None:
        policy_options["hidden_sizes"] = pi_hidden
    qfunc_options = dict(qfunc_kwargs or {})
    if q_hidden is not None:
        qfunc_options["hidden_sizes"] = q_hidden
    if merge is not None:
        qfunc_options["action_merge_layer"] = merge
    policy = DeterministicMLPPolicy(spec, **policy_options)
    qfunc = ContinuousMLPQ(spec, **qfunc_options)
    if not isinstance(strategy, BaseStrategy):
        strategy = strategy(spec)
    options = dict(ctx=mx.cpu(), progress_bar=False)
    options.update(overrides)
    algo = ALGORITHMS[kind](env=env, policy=policy, qfunc=qfunc, strategy=strategy, **options)
    if randomize:
        rng = np.random.RandomState(0)
        for network in networks_of(algo):
            for name, arr in getattr(algo, network).arg_dict.items():
                if name not in INPUT_NAMES:
                    arr[:] = rng.normal(0, 0.5, size=arr.shape)
    return algo
