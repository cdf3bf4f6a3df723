#!/usr/bin/env python
"""A minimal compiled DDPG in JAX: the third contender of ``benchmarks/throughput.py``.

Written in the style of the fastest DDPGs users pick (CleanRL's
``ddpg_continuous_action_jax.py``, SBX): the whole update (critic step, actor step through the
updated critic, both soft target updates) is one ``jax.jit`` call, action selection is jitted,
the replay memory is numpy. It does the same work as ``throughput.py``'s run of our DDPG, the
work ``benchmarks/contender_protocol.py`` defines: Pendulum-v1 with 200-step episodes, the same
layer sizes with the action joining the critic at the same layer, the same batch size, Adam
with learning rate 1e-3 for both networks, tau 0.005, discount 0.99, Ornstein-Uhlenbeck noise
of sigma 0.1 (theta 0.15) on actions in [-1, 1] scaled to the torque range, a
200,000-transition memory, warm-up steps taken with the policy and noise but no update, then
one update per environment step.

JAX 0.10 needs numpy 2 and MXNet 1.9 needs numpy < 1.24, so this script runs in a virtual
environment of its own and imports nothing from ``ddpg``::

    python3 -m venv .venv-jax && .venv-jax/bin/pip install -r requirements-jax.txt
    .venv-jax/bin/python benchmarks/jax_ddpg.py --config 3 --threads 1

``--threads N`` pins the process to N cores and, for one thread, turns off XLA's
multi-threaded Eigen kernels. The compilation (the first update and the first action) happens
before the timed steps. Prints one JSON line with ``steps_per_s``.
"""
import os

from contender_protocol import (CONFIGS, DISCOUNT, LEARNING_RATE, TAU, argument_parser, main,
                                make_env, measure)


def parse_args(argv=None):
    return argument_parser(__doc__.split("\n\n")[0],
                           threads_help="cores the process may use").parse_args(argv)


def limit_threads(threads):
    """Before jax loads: N cores for the process; one thread means XLA's single-threaded
    kernels as well (its Eigen pool would otherwise still start a thread per core)."""
    if hasattr(os, "sched_setaffinity"):
        cores = sorted(os.sched_getaffinity(0))[:max(1, threads)]
        os.sched_setaffinity(0, cores)
    if threads == 1:
        os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") +
                                   " --xla_cpu_multi_thread_eigen=false"
                                   " intra_op_parallelism_threads=1").strip()


def build(jax, jnp, optax, obs_dim, act_dim, config, key):
    """Parameters, optimiser states and the jitted act and update functions."""
    _, policy_sizes, q_sizes, merge, _ = CONFIGS[config]

    def init_mlp(key, in_sizes, out_sizes):
        layers = []
        for n_in, n_out in zip(in_sizes, out_sizes):
            key, w_key, b_key = jax.random.split(key, 3)
            bound = 1.0 / n_in ** 0.5  # PyTorch's nn.Linear default, as CleanRL's networks
            layers.append({"w": jax.random.uniform(w_key, (n_in, n_out), minval=-bound,
                                                   maxval=bound),
                           "b": jax.random.uniform(b_key, (n_out,), minval=-bound,
                                                   maxval=bound)})
        return layers

    q_in = [obs_dim] + list(q_sizes)
    q_in[merge] += act_dim
    policy_key, q_key = jax.random.split(key)
    policy = init_mlp(policy_key, [obs_dim] + list(policy_sizes),
                      list(policy_sizes) + [act_dim])
    qfunc = init_mlp(q_key, q_in, list(q_sizes) + [1])

    def policy_apply(params, obs):
        hidden = obs
        for layer in params[:-1]:
            hidden = jax.nn.relu(hidden @ layer["w"] + layer["b"])
        return jnp.tanh(hidden @ params[-1]["w"] + params[-1]["b"])

    def q_apply(params, obs, act):
        hidden = obs
        for index, layer in enumerate(params):
            if index == merge:
                hidden = jnp.concatenate([hidden, act], axis=-1)
            hidden = hidden @ layer["w"] + layer["b"]
            if index < len(params) - 1:
                hidden = jax.nn.relu(hidden)
        return hidden[:, 0]

    q_optimizer = optax.adam(LEARNING_RATE)
    policy_optimizer = optax.adam(LEARNING_RATE)

    def update(state, obs, act, rwd, end, nxt):
        qfunc, policy, qfunc_target, policy_target, q_opt, policy_opt = state
        target = rwd + (1.0 - end) * DISCOUNT * q_apply(qfunc_target, nxt,
                                                        policy_apply(policy_target, nxt))

        def q_loss(params):
            return jnp.mean((q_apply(params, obs, act) - target) ** 2)

        q_value, q_grads = jax.value_and_grad(q_loss)(qfunc)
        steps, q_opt = q_optimizer.update(q_grads, q_opt)
        qfunc = optax.apply_updates(qfunc, steps)

        def policy_loss(params):  # through the updated critic, as DDPG's
            return -jnp.mean(q_apply(qfunc, obs, policy_apply(params, obs)))

        policy_value, policy_grads = jax.value_and_grad(policy_loss)(policy)
        steps, policy_opt = policy_optimizer.update(policy_grads, policy_opt)
        policy = optax.apply_updates(policy, steps)
        qfunc_target = optax.incremental_update(qfunc, qfunc_target, TAU)
        policy_target = optax.incremental_update(policy, policy_target, TAU)
        return ((qfunc, policy, qfunc_target, policy_target, q_opt, policy_opt),
                q_value, policy_value)

    state = (qfunc, policy, qfunc, policy, q_optimizer.init(qfunc),
             policy_optimizer.init(policy))
    # the targets start as copies: separate buffers, since the update donates its state
    state = jax.tree_util.tree_map(jnp.array, state)
    return state, jax.jit(policy_apply), jax.jit(update, donate_argnums=(0,))


def run(args):
    limit_threads(args.threads)
    import jax
    import jax.numpy as jnp
    import numpy as np
    import optax

    env, obs_dim, act_dim = make_env()
    state, act_fn, update_fn = build(jax, jnp, optax, obs_dim, act_dim, args.config,
                                     jax.random.PRNGKey(args.seed))
    state = [state]  # the update donates its state: each call's result replaces it

    def act(obs):
        return np.asarray(act_fn(state[0][1], obs[None]))[0]

    def update(*batch):
        state[0], q_loss, _ = update_fn(state[0], *batch)
        return q_loss

    def wait(q_loss):
        jax.block_until_ready(state[0])
        return float(q_loss)

    result = measure(args, env, act, update, wait)
    result.update({"contender": "jax", "jax_version": jax.__version__,
                   "optax_version": optax.__version__,
                   "numpy_version": np.__version__})
    return result


if __name__ == "__main__":
    main(parse_args, run)
