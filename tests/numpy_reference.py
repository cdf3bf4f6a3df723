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
    """Q(s, a) with the action concatenated after ``merge`` hidden layers, ReLU, linear output."""

    def __init__(self, params, n_hidden, merge):
        self.p = {k: np.array(v, dtype=np.float64) for k, v in params.items()}
        self.n_hidden = n_hidden
        self.merge = merge

    def _layer_names(self):
        return ["qfunc_fc%d" % i for i in range(1, self.n_hidden + 1)] + ["qfunc_qval"]

    def forward(self, obs, act):
        cache = []
        h = obs
        names = self._layer_names()
        for i, name in enumerate(names):
            if i == self.merge:
                h = np.concatenate([h, act], axis=1)
            z = h @ self.p[name + "_weight"].T + self.p[name + "_bias"]
            cache.append((name, h, z))
            h = z if name == "qfunc_qval" else relu(z)
        return h, cache

    def backward(self, dq, cache, act_dim):
        """Gradients of the parameters and of the action input, given dLoss/dq."""
        grads = {}
        dh = dq
        dact = None
        for i in reversed(range(len(cache))):
            name, h_in, z = cache[i]
            dz = dh if name == "qfunc_qval" else dh * (z > 0)
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
    """MXNet's ``sgd`` (no momentum, no weight decay) or ``adam`` with default betas."""

    def __init__(self, kind, lr, beta1=0.9, beta2=0.999, epsilon=1e-8):
        self.kind = kind
        self.lr = lr
        self.beta1, self.beta2, self.epsilon = beta1, beta2, epsilon
        self.state = {}

    def step(self, params, grads):
        for name, grad in grads.items():
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


class NumpyDDPG(object):
    """The six steps of one DDPG update, on float64 copies of the networks."""

    def __init__(self, q, q_target, pi, pi_target, q_opt, pi_opt, discount, tau, act_dim):
        self.q, self.q_target, self.pi, self.pi_target = q, q_target, pi, pi_target
        self.q_opt, self.pi_opt = q_opt, pi_opt
        self.discount, self.tau, self.act_dim = discount, tau, act_dim

    def update(self, obss, acts, rwds, ends, nxts):
        batch = obss.shape[0]
        # 1. target actions for s' and the current policy's actions for s
        next_acts, _ = self.pi_target.forward(nxts)
        policy_acts, pi_cache = self.pi.forward(obss)
        # 2. targets
        next_q, _ = self.q_target.forward(nxts, next_acts)
        ys = rwds.reshape(-1, 1) + (1.0 - ends.reshape(-1, 1)) * self.discount * next_q
        # 3. critic step on mean squared error
        q, cache = self.q.forward(obss, acts)
        q_loss = np.sum((q - ys) ** 2) / batch
        grads, _ = self.q.backward(2.0 * (q - ys) / batch, cache, self.act_dim)
        self.q_opt.step(self.q.p, grads)
        # 4. dLoss/dact of -mean(Q(s, mu(s))) through the updated critic
        q_new, cache = self.q.forward(obss, policy_acts)
        policy_loss = -np.sum(q_new) / batch
        _, dact = self.q.backward(-np.ones_like(q_new) / batch, cache, self.act_dim)
        # 5. actor step
        self.pi_opt.step(self.pi.p, self.pi.backward(dact, pi_cache))
        # 6. soft target updates
        for target, online in ((self.pi_target, self.pi), (self.q_target, self.q)):
            for name in target.p:
                target.p[name] = (1 - self.tau) * target.p[name] + self.tau * online.p[name]
        return dict(q_loss=q_loss, policy_loss=policy_loss, qvals=q, ys=ys)
