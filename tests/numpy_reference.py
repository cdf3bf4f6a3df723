"""An independent NumPy implementation of one DDPG update, to check ours against.

Nothing here uses MXNet: forward and backward passes of the two MLPs are written out by hand,
and so are MXNet's SGD and Adam update rules (``mxnet/optimizer/optimizer.py``, ``sgd_update``
and ``adam_update``: Adam's learning rate is bias-corrected by sqrt(1 - beta2^t) / (1 - beta1^t),
epsilon 1e-8 outside the square root).
"""
import numpy as np


def relu(x):
    return np.maximum(x, 0.0)


class NumpyQ(object):
    """Q(s, a) with the action concatenated after ``merge`` hidden layers, ReLU, linear output.

    ``prefix`` names the parameters (``qfunc``; TD3's second critic is ``qfunc2``).
    """

    def __init__(self, params, n_hidden, merge, prefix="qfunc"):
        self.p = {k: np.array(v, dtype=np.float64) for k, v in params.items()}
        self.n_hidden = n_hidden
        self.merge = merge
        self.output = prefix + "_qval"
        self.prefix = prefix

    def _layer_names(self):
        return ["%s_fc%d" % (self.prefix, i) for i in range(1, self.n_hidden + 1)] + [
            self.output]

    def forward(self, obs, act):
        cache = []
        h = obs
        names = self._layer_names()
        for i, name in enumerate(names):
            if i == self.merge:
                h = np.concatenate([h, act], axis=1)
            z = h @ self.p[name + "_weight"].T + self.p[name + "_bias"]
            cache.append((name, h, z))
            h = z if name == self.output else relu(z)
        return h, cache

    def backward(self, dq, cache, act_dim):
        """Gradients of the parameters and of the action input, given dLoss/dq."""
        grads = {}
        dh = dq
        dact = None
        for i in reversed(range(len(cache))):
            name, h_in, z = cache[i]
            dz = dh if name == self.output else dh * (z > 0)
            grads[name + "_weight"] = dz.T @ h_in
            grads[name + "_bias"] = dz.sum(axis=0)
            dh = dz @ self.p[name + "_weight"]
            if i == self.merge:  # this layer's input was concat(state features, action)
                dact = dh[:, -act_dim:]
                dh = dh[:, :-act_dim]
        return grads, dact


class NumpyPolicy(object):
    """mu(s): ReLU hidden layers and a tanh output."""

    def __init__(self, params, n_hidden):
        self.p = {k: np.array(v, dtype=np.float64) for k, v in params.items()}
        self.names = ["policy_fc%d" % i for i in range(1, n_hidden + 2)]

    def forward(self, obs):
        cache = []
        h = obs
        for name in self.names:
            z = h @ self.p[name + "_weight"].T + self.p[name + "_bias"]
            cache.append((name, h, z))
            h = np.tanh(z) if name == self.names[-1] else relu(z)
        return h, cache

    def backward(self, dact, cache):
        grads = {}
        a = np.tanh(cache[-1][2])
        dh = dact
        for name, h_in, z in reversed(cache):
            dz = dh * (1.0 - a ** 2) if name == self.names[-1] else dh * (z > 0)
            grads[name + "_weight"] = dz.T @ h_in
            grads[name + "_bias"] = dz.sum(axis=0)
            dh = dz @ self.p[name + "_weight"]
        return grads


class NumpyOptimizer(object):
    """MXNet's ``sgd`` (no momentum, no weight decay) or ``adam`` with default betas.

    ``clip``: MXNet's ``clip_gradient``, each gradient element clipped to [-clip, clip]
    before the update rule.
    """

    def __init__(self, kind, lr, beta1=0.9, beta2=0.999, epsilon=1e-8, clip=None):
        self.kind = kind
        self.lr = lr
        self.beta1, self.beta2, self.epsilon = beta1, beta2, epsilon
        self.clip = clip
        self.state = {}

    def step(self, params, grads):
        for name, grad in grads.items():
            if self.clip is not None:
                grad = np.clip(grad, -self.clip, self.clip)
            if self.kind == "sgd":
                params[name] = params[name] - self.lr * grad
                continue
            m, v, t = self.state.get(name, (0.0, 0.0, 0))
            t += 1
            m = self.beta1 * m + (1 - self.beta1) * grad
            v = self.beta2 * v + (1 - self.beta2) * grad ** 2
            lr_t = self.lr * np.sqrt(1 - self.beta2 ** t) / (1 - self.beta1 ** t)
            params[name] = params[name] - lr_t * m / (np.sqrt(v) + self.epsilon)
            self.state[name] = (m, v, t)


def l2_penalty(params, decay):
    """rllab's weight decay term: 0.5 * decay * sum of squared weights (biases excluded)."""
    return 0.5 * decay * sum(np.sum(w ** 2) for name, w in params.items()
                             if name.endswith("_weight"))


def add_l2_gradient(grads, params, decay):
    """The penalty's gradient, decay * w, added to every weight's gradient."""
    for name in grads:
        if name.endswith("_weight"):
            grads[name] = grads[name] + decay * params[name]
    return grads


class NumpyDDPG(object):
    """The six steps of one DDPG update, on float64 copies of the networks.

    ``q_decay``/``pi_decay``: L2 weight decay added to the critic's and the actor's losses.
    ``policy_delay``: steps 4-6 run on every ``policy_delay``-th update only (CleanRL's
    ``global_step % policy_frequency == 0``, counting updates from 1).
    """

    def __init__(self, q, q_target, pi, pi_target, q_opt, pi_opt, discount, tau, act_dim,
                 q_decay=0.0, pi_decay=0.0, policy_delay=1, action_l2=0.0,
                 target_update_interval=1):
        self.q, self.q_target, self.pi, self.pi_target = q, q_target, pi, pi_target
        self.q_opt, self.pi_opt = q_opt, pi_opt
        self.discount, self.tau, self.act_dim = discount, tau, act_dim
        self.q_decay, self.pi_decay = q_decay, pi_decay
        self.policy_delay = policy_delay
        # the HER authors' policy loss: -mean(Q) + action_l2 * mean(mu(s) ** 2); their
        # targets move once per target_update_interval updates
        self.action_l2, self.target_update_interval = action_l2, target_update_interval
        self.n_updates = 0

    def update(self, obss, acts, rwds, ends, nxts, horizons=None, weights=None):
        """One update; ``horizons``: n-step transitions' k, whose targets bootstrap with
        discount ** k (default 1 each); ``weights``: importance weights of the squared errors
        in the Q loss (default 1 each)."""
        weights = np.ones((obss.shape[0], 1)) if weights is None else weights.reshape(-1, 1)
        self.n_updates += 1
        discount = self.discount if horizons is None \
            else self.discount ** horizons.reshape(-1, 1)
        batch = obss.shape[0]
        # 1. target actions for s' and the current policy's actions for s
        next_acts, _ = self.pi_target.forward(nxts)
        policy_acts, pi_cache = self.pi.forward(obss)
        # 2. targets
        next_q, _ = self.q_target.forward(nxts, next_acts)
        ys = rwds.reshape(-1, 1) + (1.0 - ends.reshape(-1, 1)) * discount * next_q
        # 3. critic step on mean squared error
        q, cache = self.q.forward(obss, acts)
        q_loss = np.sum(weights * (q - ys) ** 2) / batch
        q_reg_loss = q_loss + l2_penalty(self.q.p, self.q_decay)
        grads, _ = self.q.backward(2.0 * weights * (q - ys) / batch, cache, self.act_dim)
        self.q_opt.step(self.q.p, add_l2_gradient(grads, self.q.p, self.q_decay))
        result = dict(q_loss=q_loss, q_reg_loss=q_reg_loss, qvals=q, ys=ys)
        if self.n_updates % self.policy_delay != 0:
            return result
        # 4. dLoss/dact of -mean(Q(s, mu(s))) through the updated critic
        q_new, cache = self.q.forward(obss, policy_acts)
        policy_loss = -np.sum(q_new) / batch + self.action_l2 * np.mean(policy_acts ** 2)
        _, dact = self.q.backward(-np.ones_like(q_new) / batch, cache, self.act_dim)
        dact = dact + self.action_l2 * 2.0 * policy_acts / policy_acts.size
        # 5. actor step
        pi_grads = add_l2_gradient(self.pi.backward(dact, pi_cache), self.pi.p, self.pi_decay)
        self.pi_opt.step(self.pi.p, pi_grads)
        # 6. soft target updates
        result["policy_loss"] = policy_loss
        if self.n_updates % self.target_update_interval != 0:
            return result
        for target, online in ((self.pi_target, self.pi), (self.q_target, self.q)):
            for name in target.p:
                target.p[name] = (1 - self.tau) * target.p[name] + self.tau * online.p[name]
        return result


class NumpyTD3(object):
    """One TD3 update (Fujimoto et al. 2018) on float64 copies of the networks.

    ``noise`` is the target-action noise of the update, already scaled and clipped (the test
    draws it as TD3 does, from a re-seeded numpy generator). Critic losses are mean squared
    errors with optional L2 decay, as :class:`NumpyDDPG`'s.
    """

    def __init__(self, q1, q1_target, q2, q2_target, pi, pi_target, q1_opt, q2_opt, pi_opt,
                 discount, tau, act_dim, low, high, policy_delay=2, q_decay=0.0,
                 pi_decay=0.0):
        self.q1, self.q1_target, self.q2, self.q2_target = q1, q1_target, q2, q2_target
        self.pi, self.pi_target = pi, pi_target
        self.q1_opt, self.q2_opt, self.pi_opt = q1_opt, q2_opt, pi_opt
        self.discount, self.tau, self.act_dim = discount, tau, act_dim
        self.low, self.high = low, high
        self.policy_delay, self.q_decay, self.pi_decay = policy_delay, q_decay, pi_decay
        self.total_it = 0

    def update(self, obss, acts, rwds, ends, nxts, noise):
        self.total_it += 1
        batch = obss.shape[0]
        # clipped double-Q target at the smoothed target action
        next_acts, _ = self.pi_target.forward(nxts)
        smoothed = np.clip(next_acts + noise, self.low, self.high)
        next_q = np.minimum(self.q1_target.forward(nxts, smoothed)[0],
                            self.q2_target.forward(nxts, smoothed)[0])
        ys = rwds.reshape(-1, 1) + (1.0 - ends.reshape(-1, 1)) * self.discount * next_q
        result = dict(ys=ys)
        for key, q, opt in (("q1", self.q1, self.q1_opt), ("q2", self.q2, self.q2_opt)):
            qvals, cache = q.forward(obss, acts)
            result[key + "_loss"] = np.sum((qvals - ys) ** 2) / batch
            result[key + "_vals"] = qvals
            grads, _ = q.backward(2.0 * (qvals - ys) / batch, cache, self.act_dim)
            opt.step(q.p, add_l2_gradient(grads, q.p, self.q_decay))
        if self.total_it % self.policy_delay != 0:
            return result
        # delayed actor step on -mean(Q1(s, mu(s))) through the updated first critic
        policy_acts, pi_cache = self.pi.forward(obss)
        q_new, cache = self.q1.forward(obss, policy_acts)
        result["policy_loss"] = -np.sum(q_new) / batch
        _, dact = self.q1.backward(-np.ones_like(q_new) / batch, cache, self.act_dim)
        pi_grads = add_l2_gradient(self.pi.backward(dact, pi_cache), self.pi.p, self.pi_decay)
        self.pi_opt.step(self.pi.p, pi_grads)
        for target, online in ((self.pi_target, self.pi), (self.q1_target, self.q1),
                               (self.q2_target, self.q2)):
            for name in target.p:
                target.p[name] = (1 - self.tau) * target.p[name] + self.tau * online.p[name]
        return result


def softmax(logits):
    shifted = np.exp(logits - logits.max(axis=1, keepdims=True))
    return shifted / shifted.sum(axis=1, keepdims=True)


def categorical_projection(rwds, discounts, probabilities, support):
    """C51's projection (Bellemare et al. 2017, Algorithm 1), transition by transition and atom
    by atom: ``Tz = clip(r + discount * z_j, v_min, v_max)`` at position ``b = (Tz - v_min) /
    dz`` gives ``p_j (u - b)`` to atom ``l = floor(b)`` and ``p_j (b - l)`` to ``u = ceil(b)``;
    all of ``p_j`` to ``l`` when ``b`` is whole (``l == u``)."""
    v_min, v_max = support[0], support[-1]
    spacing = (v_max - v_min) / (len(support) - 1)
    projected = np.zeros_like(probabilities)
    for row, (reward, discount) in enumerate(zip(rwds.ravel(), discounts.ravel())):
        for atom, value in enumerate(support):
            moved = min(max(reward + discount * value, v_min), v_max)
            position = (moved - v_min) / spacing
            lower, upper = int(np.floor(position)), int(np.ceil(position))
            mass = probabilities[row, atom]
            if lower == upper:
                projected[row, lower] += mass
            else:
                projected[row, lower] += mass * (upper - position)
                projected[row, upper] += mass * (position - lower)
    return projected


class NumpyD4PG(object):
    """One D4PG update (Barth-Maron et al. 2018) on float64 copies of the networks: the critic's
    ``*_qval`` layer gives logits over ``support``; the target is the projected distribution
    of the target networks; the critic minimises the (importance-weighted) cross-entropy; the
    policy maximises the expected value ``sum(softmax(logits) * z)`` through the updated
    critic; DDPG's soft target updates."""

    def __init__(self, q, q_target, pi, pi_target, q_opt, pi_opt, discount, tau, act_dim,
                 support):
        self.q, self.q_target, self.pi, self.pi_target = q, q_target, pi, pi_target
        self.q_opt, self.pi_opt = q_opt, pi_opt
        self.discount, self.tau, self.act_dim = discount, tau, act_dim
        self.support = np.asarray(support, dtype=np.float64)

    def update(self, obss, acts, rwds, ends, nxts, horizons=None, weights=None):
        batch = obss.shape[0]
        weights = np.ones((batch, 1)) if weights is None else weights.reshape(-1, 1)
        horizons = np.ones(batch) if horizons is None else horizons
        discounts = (1.0 - ends) * self.discount ** horizons
        next_acts, _ = self.pi_target.forward(nxts)
        policy_acts, pi_cache = self.pi.forward(obss)
        next_probabilities = softmax(self.q_target.forward(nxts, next_acts)[0])
        ys = categorical_projection(rwds, discounts, next_probabilities, self.support)
        # critic: d(-sum(y log softmax(l)))/dl = softmax(l) * sum(y) - y, weighted, averaged
        logits, cache = self.q.forward(obss, acts)
        probabilities = softmax(logits)
        log_probabilities = np.log(probabilities)
        cross_entropy = -np.sum(ys * log_probabilities, axis=1, keepdims=True)
        q_loss = np.sum(weights * cross_entropy) / batch
        dlogits = weights * (probabilities * ys.sum(axis=1, keepdims=True) - ys) / batch
        grads, _ = self.q.backward(dlogits, cache, self.act_dim)
        self.q_opt.step(self.q.p, grads)
        result = dict(q_loss=q_loss, ys=ys, cross_entropy=cross_entropy[:, 0],
                      qvals=probabilities @ self.support.reshape(-1, 1))
        # policy: -mean(sum(p z)) through the updated critic; dQ/dl = p * (z - Q)
        logits, cache = self.q.forward(obss, policy_acts)
        probabilities = softmax(logits)
        values = probabilities @ self.support.reshape(-1, 1)
        result["policy_loss"] = -np.sum(values) / batch
        dlogits = -probabilities * (self.support.reshape(1, -1) - values) / batch
        _, dact = self.q.backward(dlogits, cache, self.act_dim)
        self.pi_opt.step(self.pi.p, self.pi.backward(dact, pi_cache))
        for target, online in ((self.pi_target, self.pi), (self.q_target, self.q)):
            for name in target.p:
                target.p[name] = (1 - self.tau) * target.p[name] + self.tau * online.p[name]
        return result
