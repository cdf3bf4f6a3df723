#!/usr/bin/env python
"""A minimal DDPG in MXNet Gluon: the fourth contender of ``benchmarks/throughput.py``.

Written the way an MXNet user writes DDPG without the ``ddpg`` library, in the single-file
style of CleanRL: ``gluon.nn`` blocks for the actor and the critic, hybridized with
``static_alloc=True, static_shape=True``; ``autograd.record()`` around the critic loss and
around the actor loss ``-mean(Q(s, mu(s)))``; one ``gluon.Trainer`` (Adam) per network; soft
target updates parameter by parameter. It does the same work as ``throughput.py``'s run of our
DDPG: Pendulum-v1 with 200-step episodes, the same layer sizes with the action joining the
critic at the same layer, the same batch size, Adam with learning rate 1e-3 for both networks,
tau 0.005, discount 0.99, Ornstein-Uhlenbeck noise of sigma 0.1 (theta 0.15) on actions in
[-1, 1] scaled to the torque range, a 200,000-transition numpy replay memory sampled uniformly
with replacement, warm-up steps taken with the policy and noise but no update, then one
update per environment step: the work ``benchmarks/contender_protocol.py`` defines for every
contender. It imports nothing from ``ddpg``::

    python benchmarks/gluon_ddpg.py --config 1 --steps 3000
    python benchmarks/gluon_ddpg.py --config 4 --threads 1 --engine NaiveEngine --mkldnn on

Settings (each applies to the whole process, so they are read before mxnet loads):

``--threads N``
    MXNet's OpenMP threads (``OMP_NUM_THREADS``).
``--engine``
    MXNet's engine (``MXNET_ENGINE_TYPE``); by default MXNet's own, the threaded engine.
``--mkldnn on|off``
    MXNet's oneDNN kernels (``MXNET_MKLDNN_ENABLED``); by default MXNet's own, on.

``throughput.py`` passes the engine, oneDNN choice and OpenMP threads that our DDPG ran with,
so that the two differ by their code alone. Hybridization happens, and its first calls run,
before the timed steps. Prints one JSON line with ``steps_per_s``.
"""
import os

from contender_protocol import (CONFIGS, DISCOUNT, LEARNING_RATE, TAU, argument_parser, main,
                                make_env, measure)


def parse_args(argv=None):
    parser = argument_parser(__doc__.split("\n\n")[0], threads_help="MXNet's OpenMP threads")
    parser.add_argument("--engine", default=None, help="MXNET_ENGINE_TYPE (default: MXNet's)")
    parser.add_argument("--mkldnn", choices=["on", "off"], default=None,
                        help="MXNet's oneDNN kernels (default: MXNet's, on)")
    return parser.parse_args(argv)


# MXNet reads these when it loads: set them from the command line before importing it.
if __name__ == "__main__":
    _args = parse_args()
    os.environ["OMP_NUM_THREADS"] = str(_args.threads)
    os.environ.setdefault("MXNET_STORAGE_FALLBACK_LOG_VERBOSE", "0")  # oneDNN off: quiet
    if _args.engine:
        os.environ["MXNET_ENGINE_TYPE"] = _args.engine
    if _args.mkldnn:
        os.environ["MXNET_MKLDNN_ENABLED"] = "1" if _args.mkldnn == "on" else "0"

# MXNet 1.9.1 imports under numpy 1.24+ and 2.x only with the stand-ins of
# ddpg.backend.mxnet_compat, which the contender shares with ddpg for that alone
from ddpg.backend.mxnet_compat import import_mxnet  # noqa: E402

mx = import_mxnet()
from mxnet import autograd, gluon  # noqa: E402


class Actor(gluon.HybridBlock):
    """mu(s): ReLU hidden layers, then tanh actions in [-1, 1]."""

    def __init__(self, obs_dim, act_dim, hidden_sizes, **kwargs):
        super(Actor, self).__init__(**kwargs)
        with self.name_scope():
            self.net = gluon.nn.HybridSequential()
            for n_in, n_out in zip((obs_dim,) + tuple(hidden_sizes), hidden_sizes):
                self.net.add(gluon.nn.Dense(n_out, in_units=n_in, activation="relu"))
            self.net.add(gluon.nn.Dense(act_dim, in_units=hidden_sizes[-1]))

    def hybrid_forward(self, F, obs):
        return F.tanh(self.net(obs))


class Critic(gluon.HybridBlock):
    """Q(s, a): the observation through the first ``merge`` hidden layers alone, then the
    action joins (concatenated) and the remaining layers follow, ending in one linear unit."""

    def __init__(self, obs_dim, act_dim, hidden_sizes, merge, **kwargs):
        super(Critic, self).__init__(**kwargs)
        self.merge = merge
        in_sizes = [obs_dim] + list(hidden_sizes)
        in_sizes[merge] += act_dim
        with self.name_scope():
            self.layers = gluon.nn.HybridSequential()
            for n_in, n_out in zip(in_sizes, list(hidden_sizes) + [1]):
                activation = "relu" if len(self.layers) < len(hidden_sizes) else None
                self.layers.add(gluon.nn.Dense(n_out, in_units=n_in, activation=activation))

    def hybrid_forward(self, F, obs, act):
        hidden = obs
        for index, layer in enumerate(self.layers):
            if index == self.merge:
                hidden = F.concat(hidden, act, dim=1)
            hidden = layer(hidden)
        return hidden


def parameters(block):
    return list(block.collect_params().values())


def copy_parameters(source, destination):
    for src, dst in zip(parameters(source), parameters(destination)):
        dst.set_data(src.data())


def soft_update(pairs, tau):
    """target <- (1 - tau) * target + tau * online, in place, for each (target, online) pair
    of parameter arrays."""
    for target, online in pairs:
        target *= 1.0 - tau
        target += tau * online


class Agent(object):
    """The four networks, the two trainers and the update."""

    def __init__(self, obs_dim, act_dim, config, ctx=None):
        _, policy_sizes, q_sizes, merge, _ = CONFIGS[config]
        self.ctx = ctx or mx.cpu()
        self.actor = Actor(obs_dim, act_dim, policy_sizes, prefix="actor_")
        self.critic = Critic(obs_dim, act_dim, q_sizes, merge, prefix="critic_")
        self.actor_target = Actor(obs_dim, act_dim, policy_sizes, prefix="actor_target_")
        self.critic_target = Critic(obs_dim, act_dim, q_sizes, merge, prefix="critic_target_")
        # acting (batch 1) has a block of its own on the actor's parameters: a static-shape
        # block re-plans its memory when its input shape changes (acting through the training
        # block cost about 0.3 ms more per step at configuration 4)
        self.actor_one = Actor(obs_dim, act_dim, policy_sizes, prefix="actor_",
                               params=self.actor.collect_params())
        for block in (self.actor, self.critic, self.actor_target, self.critic_target):
            block.initialize(mx.init.Xavier(), ctx=self.ctx)
        copy_parameters(self.actor, self.actor_target)
        copy_parameters(self.critic, self.critic_target)
        for block in (self.actor, self.critic, self.actor_target, self.critic_target,
                      self.actor_one):
            block.hybridize(static_alloc=True, static_shape=True)
        self.actor_trainer = gluon.Trainer(self.actor.collect_params(), "adam",
                                           {"learning_rate": LEARNING_RATE})
        self.critic_trainer = gluon.Trainer(self.critic.collect_params(), "adam",
                                            {"learning_rate": LEARNING_RATE})
        # (target, online) parameter arrays of the soft updates, collected once
        self.soft_pairs = [(target.data(), online.data()) for target, online in zip(
            parameters(self.critic_target) + parameters(self.actor_target),
            parameters(self.critic) + parameters(self.actor))]

    def act(self, obs):
        """The deterministic action for one observation, as a numpy array."""
        obs = mx.nd.array(obs[None], ctx=self.ctx)
        return self.actor_one(obs).asnumpy()[0]

    def update(self, obs, act, rwd, end, nxt):
        """One DDPG update on a numpy batch (``rwd`` and ``end`` of shape (batch,)); returns
        the critic and actor losses (NDArrays, computed before each network's step)."""
        obs, act, rwd, end, nxt = (mx.nd.array(x, ctx=self.ctx)
                                   for x in (obs, act, rwd, end, nxt))
        rwd, end = rwd.reshape((-1, 1)), end.reshape((-1, 1))
        target = rwd + (1.0 - end) * DISCOUNT * self.critic_target(nxt, self.actor_target(nxt))
        with autograd.record():
            q_loss = ((self.critic(obs, act) - target) ** 2).mean()
        q_loss.backward()
        self.critic_trainer.step(1)  # the loss is a mean already
        with autograd.record():  # through the updated critic, as DDPG's
            policy_loss = -self.critic(obs, self.actor(obs)).mean()
        policy_loss.backward()
        self.actor_trainer.step(1)
        soft_update(self.soft_pairs, TAU)
        return q_loss, policy_loss


def run(args):
    mx.random.seed(args.seed)
    env, obs_dim, act_dim = make_env()
    agent = Agent(obs_dim, act_dim, args.config)

    def wait(q_loss):
        mx.nd.waitall()
        return float(q_loss.asscalar())

    result = measure(args, env, agent.act,
                     lambda *batch: agent.update(*batch)[0], wait)
    result.update({"contender": "gluon", "mxnet_version": mx.__version__,
                   "engine": os.environ.get("MXNET_ENGINE_TYPE", "MXNet's default"),
                   "mkldnn": os.environ.get("MXNET_MKLDNN_ENABLED", "MXNet's default")})
    return result


if __name__ == "__main__":
    main(parse_args, run)
