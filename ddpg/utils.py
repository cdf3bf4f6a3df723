"""Network definitions and rollout helpers of the original example's ``utils.py``.

The symbol and parameter names built here (``qfunc_fc1_weight``, ``policy_fc3_bias``,
``qunfc_concat``, ...) are part of the public surface: checkpoints, users' code and the tests
refer to them, so the default layouts reproduce the original exactly.
"""
import numpy as np

import mxnet as mx

from ddpg import hyperparams

#: The original's seed: DDPG's default ``seed``.
SEED = hyperparams.get("seed").default

# The networks' defaults, the original's: the home of every default of ContinuousMLPQ and
# DeterministicMLPPolicy, and of the command line's network flags.
#: The original's layouts: Q is 32-32 on the observation, then the action joins, then 32.
DEFAULT_QFUNC_HIDDEN_SIZES = (32, 32, 32)
DEFAULT_QFUNC_ACTION_MERGE_LAYER = 2
#: The original policy is 32-32 with a tanh output.
DEFAULT_POLICY_HIDDEN_SIZES = (32, 32)
#: The act_type values of MXNet 1.9's ``Activation`` operator (the hidden layers' choices).
ACTIVATIONS = ("relu", "sigmoid", "softrelu", "softsign", "tanh")
#: The original's hidden-layer activation.
DEFAULT_ACTIVATION = "relu"


def _check_hidden_sizes(hidden_sizes, what):
    sizes = tuple(int(h) for h in hidden_sizes)
    if not sizes or any(h <= 0 for h in sizes):
        raise ValueError("%s must be a non-empty sequence of positive layer sizes, got %r"
                         % (what, hidden_sizes))
    return sizes


def _hidden_layer(net, prefix, i, size, activation, layer_norm):
    """FullyConnected, then (optionally) LayerNorm, then the activation.

    The activation keeps the original's node name ``<prefix>_relu<i>`` for ReLU; another
    ``act_type`` is named after itself. Neither has parameters, so parameter names never
    change; LayerNorm adds ``<prefix>_ln<i>_gamma`` and ``_beta``.
    """
    if activation not in ACTIVATIONS:
        # MXNet would accept the symbol and fail only when it is bound, in C++ words
        raise ValueError("activation must be one of %s, got %r"
                         % (", ".join(ACTIVATIONS), activation))
    net = mx.symbol.FullyConnected(data=net, name="%s_fc%d" % (prefix, i), num_hidden=size)
    if layer_norm:
        net = mx.symbol.LayerNorm(data=net, name="%s_ln%d" % (prefix, i))
    return mx.symbol.Activation(data=net, name="%s_%s%d" % (prefix, activation, i),
                                act_type=activation)


def define_qfunc(obs, act, hidden_sizes=DEFAULT_QFUNC_HIDDEN_SIZES,
                 action_merge_layer=DEFAULT_QFUNC_ACTION_MERGE_LAYER,
                 activation=DEFAULT_ACTIVATION, layer_norm=False, prefix="qfunc", n_outputs=1):
    """Q(s, a) as an MXNet symbol.

    The observation goes through the first ``action_merge_layer`` hidden layers alone; the
    action is then concatenated (``qunfc_concat``, the original's spelling) and the remaining
    hidden layers follow, ending in the linear ``qfunc_qval`` unit. With the defaults this is
    the original's ``fc1(32) relu fc2(32) relu concat(act) fc3(32) relu qval``.
    ``activation`` is any MXNet ``Activation`` act_type for the hidden layers; ``layer_norm``
    puts a LayerNorm between each hidden FullyConnected layer and its activation. ``prefix``
    replaces ``qfunc`` in every name (TD3's second critic is ``qfunc2``: two critics in one
    graph need distinct parameter names); its concat is then ``<prefix>_concat``.
    ``n_outputs``: the units of ``qfunc_qval`` (D4PG's critic: one logit per atom).
    """
    sizes = _check_hidden_sizes(hidden_sizes, "qfunc hidden_sizes")
    if not 0 <= int(action_merge_layer) <= len(sizes):
        raise ValueError("action_merge_layer must be between 0 and %d (the number of hidden "
                         "layers), got %r" % (len(sizes), action_merge_layer))
    concat_name = "qunfc_concat" if prefix == "qfunc" else "%s_concat" % prefix
    net = obs
    for i, size in enumerate(sizes, start=1):
        if i == action_merge_layer + 1:
            net = mx.symbol.Concat(net, act, name=concat_name)
        net = _hidden_layer(net, prefix, i, size, activation, layer_norm)
    if action_merge_layer == len(sizes):
        net = mx.symbol.Concat(net, act, name=concat_name)
    qval = mx.symbol.FullyConnected(data=net, name="%s_qval" % prefix,
                                    num_hidden=int(n_outputs))
    return qval


def define_policy(obs, action_dim, hidden_sizes=DEFAULT_POLICY_HIDDEN_SIZES,
                  activation=DEFAULT_ACTIVATION, layer_norm=False):
    """The deterministic policy mu(s) as an MXNet symbol, tanh-squashed to [-1, 1].

    Layers ``policy_fc1``, ``policy_relu1``, ..., a linear ``policy_fc{n+1}`` of
    ``action_dim`` units and the tanh output named ``act``. ``activation`` and ``layer_norm``
    change the hidden layers as in :func:`define_qfunc`; the output stays tanh.
    """
    sizes = _check_hidden_sizes(hidden_sizes, "policy hidden_sizes")
    net = obs
    for i, size in enumerate(sizes, start=1):
        net = _hidden_layer(net, "policy", i, size, activation, layer_norm)
    net = mx.symbol.FullyConnected(data=net, name="policy_fc%d" % (len(sizes) + 1),
                                   num_hidden=int(action_dim))
    action = mx.symbol.Activation(data=net, name="act", act_type="tanh")
    return action


def discount_return(x, discount):
    """sum_t discount^t * x[t]: the discounted return of one path's rewards."""
    rewards = np.asarray(x, dtype=np.float64)
    return float(np.sum(rewards * discount ** np.arange(len(rewards))))


def _env_action(env, action):
    """Reshape a flat action to the action space's shape (the original passed (1, act_dim))."""
    return np.reshape(action, env.action_space.shape)


def rollout_path(env, agent, max_path_length=np.inf, animated=False):
    """Run one episode with ``agent.get_action(obs)`` and return it as an rllab path dict.

    The path ends when the environment says done or after ``max_path_length`` steps. Returns
    ``dict(observations, actions, rewards, terminated, truncated)``, and ``success`` (the last
    step's ``info["is_success"]``) when the environment reports it; ``terminated`` is True
    only for a true terminal state (not for a time limit), so callers can bootstrap correctly.
    Spaces are only read through ``shape`` (observations are flattened with numpy), so any
    rllab-style environment works.
    """
    observations, actions, rewards = [], [], []
    info = None
    obs = env.reset()
    terminated = truncated = False
    if animated:
        env.render()
    while len(rewards) < max_path_length:
        action = np.asarray(agent.get_action(obs)).reshape(-1)
        next_obs, reward, done, info = env.step(_env_action(env, action))
        observations.append(np.reshape(obs, -1))
        actions.append(action)
        rewards.append(reward)
        obs = next_obs
        if animated:
            env.render()
        if done:
            truncated = bool(info.get("TimeLimit.truncated", False)) if info else False
            terminated = not truncated
            break
    else:
        truncated = True
    path = dict(observations=np.array(observations), actions=np.array(actions),
                rewards=np.array(rewards, dtype=np.float64), terminated=terminated,
                truncated=truncated)
    if info and "is_success" in info:
        path["success"] = float(info["is_success"])
    return path


def rollout(env, agent, max_path_length=np.inf):
    """The list of per-step rewards of one episode, as the original's ``rollout``.

    The episode ends when the environment says done or after ``max_path_length`` steps, so
    ``np.sum(rollout(env, agent))`` is its return. :func:`rollout_path` returns the whole
    path (observations, actions, terminal and truncation flags).
    """
    return [float(reward) for reward in rollout_path(env, agent, max_path_length)["rewards"]]


def sample_paths(env, policy, eval_samples, max_path_length=np.inf):
    """Whole deterministic :func:`rollout_path` paths totalling at least ``eval_samples``
    environment steps (at least one path)."""
    paths = []
    n_steps = 0
    while n_steps < eval_samples or not paths:
        path = rollout_path(env, policy, max_path_length=max_path_length)
        paths.append(path)
        n_steps += len(path["rewards"])
    return paths


def sample_rewards(env, policy, eval_samples, max_path_length=np.inf):
    """The reward lists of ``eval_samples`` deterministic rollouts, as the original's.

    ``eval_samples`` counts rollouts here, as in the example's ``sample_rewards`` (``for _ in
    range(eval_samples)``), so ``sample_rewards(env, policy, 0)`` is ``[]``. Each element is
    what :func:`rollout` returns: a list of per-step rewards. (DDPG's own evaluation counts
    ``eval_samples`` in environment steps instead: :func:`sample_paths`.)
    """
    if isinstance(eval_samples, (bool, np.bool_)) or not isinstance(
            eval_samples, (int, np.integer)) or eval_samples < 0:
        raise ValueError("sample_rewards: eval_samples is the number of rollouts to run, a "
                         "whole number >= 0, got %r" % (eval_samples,))
    return [rollout(env, policy, max_path_length) for _ in range(int(eval_samples))]
