"""D4PG (Barth-Maron et al., 2018) on DDPG's executors: a distributional critic.

D4PG is DDPG whose critic learns the distribution of the return instead of its mean. The
distribution is categorical, C51's (Bellemare et al., 2017): probabilities over ``atoms`` fixed
values ``z = linspace(v_min, v_max, atoms)``, the support. The paper's other parts are DDPG's
options here, on any algorithm: N-step returns (``n_step``), prioritised replay
(``prioritized_replay``) and parallel actors (``--ray-actors``, ``n_envs``); the ``d4pg-*``
presets set them as the paper and Acme do.

``D4PG`` keeps DDPG's design whole: flat parameter buffers, one ``target_executor`` writing into
the critic's ``yval`` input, and the policy executor bound on the critic's own argument *and
gradient* arrays. What changes:

- **The critic** (:class:`ddpg.qfuncs.CategoricalMLPQ`): its last layer ``qfunc_qval`` gives
  one logit per atom, ``p = softmax(logits)``; its value ``Q = sum(p * z)`` is the expected
  return.
- **The target** is a distribution: the target critic's ``p'`` at ``(s', mu'(s'))``, which
  ``target_executor`` writes into ``yval``, moved to ``r + (1 - end) * discount^N * z`` and
  projected back onto the support there (:class:`CategoricalProjection`, on the host). A
  moved atom outside ``[v_min, v_max]`` counts at the nearest bound; one between two atoms is
  split between them in proportion to its distance.
- **The critic's loss** is the cross-entropy ``-sum(y * log_softmax(logits))`` per transition
  (times its importance weight under prioritised replay), averaged over the batch
  (:func:`cross_entropy`). The per-transition cross-entropy is the Q executor's fourth output
  and prioritised replay's new priority (:meth:`D4PG.td_errors`).
- **The policy's loss** is ``-mean(Q(s, mu(s)))`` with Q the expected value: DDPG's policy
  executor, unchanged, whose backward pass now runs through the softmax and the support
  before it leaves dLoss/da in the critic's ``act`` gradient.

The update statistics describe expected values: ``AverageQ`` is the mean of ``sum(p * z)``,
``AverageY`` of ``sum(y * z)``; ``AverageQLoss`` is the cross-entropy.
"""
import dataclasses

import mxnet as mx
import numpy as np

from ddpg import hyperparams
from ddpg.config import DDPGConfig, check_range, documented, register_config, setting
from ddpg.ddpg import DDPG
from ddpg.executors import CriticLoss
from ddpg.kinds import FINITE, Kind
from ddpg.qfuncs import CategoricalMLPQ, ContinuousMLPQ

__all__ = ["D4PG", "D4PGConfig", "ATOMS", "CategoricalProjection", "cross_entropy",
           "categorical_critic"]

#: The kind of ``atoms``: a categorical distribution needs two values at least.
ATOMS = Kind("an integer of at least 2",
             lambda v: not isinstance(v, bool) and int(v) == v and v >= 2, int)


@register_config
@documented
@dataclasses.dataclass(frozen=True)
class D4PGConfig(DDPGConfig):
    """D4PG's settings: DDPG's, and the support of the critic's distribution (the defaults
    are Acme's ``d4pg.make_networks``: 51 atoms on [-150, 150]). Fields:
    """
    atoms: int = setting(51, ATOMS, "the critic's distribution's atoms (values of the support)",
        help="d4pg: atoms of the critic's categorical distribution", structural=True)
    v_min: float = setting(-150.0, FINITE, "the support's lowest value",
        help="d4pg: the lowest return the critic's distribution holds", structural=True)
    v_max: float = setting(150.0, FINITE, "the support's highest value",
        help="d4pg: the highest return the critic's distribution holds", structural=True)

    ALGORITHM = "d4pg"

    def validate(self):
        """The support's settings by their kinds, then DDPG's checks (whose relations include
        ``v_min < v_max``)."""
        for name in ("atoms", "v_min", "v_max"):
            check_range(D4PGConfig, name, getattr(self, name))
        super().validate()


def categorical_critic(qfunc, config):
    """The critic D4PG trains: ``qfunc`` itself when it is a :class:`CategoricalMLPQ` on the
    config's support; a :class:`ContinuousMLPQ` is replaced by a categorical critic of its
    layout (as ``ddpg-train`` builds it)."""
    support = (config.atoms, float(config.v_min), float(config.v_max))
    if isinstance(qfunc, CategoricalMLPQ):
        if (qfunc.atoms, qfunc.v_min, qfunc.v_max) != support:
            raise ValueError("the critic's support (atoms=%d, v_min=%r, v_max=%r) is not "
                             "D4PG's (atoms=%d, v_min=%r, v_max=%r)"
                             % ((qfunc.atoms, qfunc.v_min, qfunc.v_max) + support))
        return qfunc
    if isinstance(qfunc, ContinuousMLPQ):
        return CategoricalMLPQ.like(qfunc, *support)
    raise ValueError("D4PG needs a CategoricalMLPQ, or a ContinuousMLPQ whose layout it takes, "
                     "as qfunc; got a %s" % type(qfunc).__name__)


class CategoricalProjection(object):
    """C51's projection of ``r + discount_mask * Z`` onto the support, for a batch, in NumPy.

    ``probabilities`` (batch, atoms) are Z's over the support z, ``rwd`` and ``discount_mask``
    (batch, 1). Each moved atom ``Tz_j = clip(r + discount_mask * z_j, v_min, v_max)`` sits
    at position ``b_j = (Tz_j - v_min) / dz`` on the support (dz its spacing) and gives its
    probability to the atoms below and above it, ``floor(b_j)`` and ``floor(b_j) + 1``, in
    the shares ``1 - frac(b_j)`` and ``frac(b_j)``: all of it to one atom when it lands on it
    (the bounds included), to the nearest bound when it falls outside.

    The projection runs on the host, two ``np.bincount`` calls over the batch's
    (batch * atoms) moved atoms. As MXNet symbols it needs a (batch, atoms, atoms) table of
    shares (MXNet 1.9 has no scatter-add operator), which at 51 atoms and batch 256 is about
    five times slower on the CPU, the copies to and from the host included
    (``benchmarks/projection.py``, docs/performance.md).
    """

    def __init__(self, atoms, v_min, v_max, batch_size):
        self.atoms = int(atoms)
        self.v_min, self.v_max = float(v_min), float(v_max)
        self.support = np.linspace(self.v_min, self.v_max, self.atoms)
        self.spacing = (self.v_max - self.v_min) / (self.atoms - 1)
        # each transition's first slot in the flat (batch * atoms) result
        self._row_starts = (np.arange(batch_size) * self.atoms).reshape(-1, 1)

    def __call__(self, rwd, discount_mask, probabilities):
        positions = (np.reshape(rwd, (-1, 1)) + np.reshape(discount_mask, (-1, 1))
                     * self.support - self.v_min) / self.spacing
        np.clip(positions, 0, self.atoms - 1, out=positions)
        lower = np.floor(positions)
        upper_share = positions - lower
        lower = lower.astype(np.int64)
        upper = np.minimum(lower + 1, self.atoms - 1)  # a share of 0 at the upper bound
        size = probabilities.size
        projected = np.bincount((self._row_starts + lower).ravel(),
                                (probabilities * (1.0 - upper_share)).ravel(), minlength=size)
        projected += np.bincount((self._row_starts + upper).ravel(),
                                 (probabilities * upper_share).ravel(), minlength=size)
        return projected.reshape(probabilities.shape).astype(np.float32)


def cross_entropy(symbols):
    """D4PG's critic loss of the categorical critic's loss ``symbols``: the cross-entropy
    ``-sum(y * log_softmax(logits))`` per transition; the statistics describe the expected
    values ``sum(softmax(logits) * z)`` and ``sum(y * z)``; the cross-entropy, cut from the
    gradient, is an extra output (prioritised replay's priorities)."""
    log_probabilities = mx.symbol.log_softmax(symbols["logits"], axis=1)
    per_transition = -mx.symbol.sum(symbols["yval"] * log_probabilities, axis=1, keepdims=True)
    expected_target = mx.symbol.sum(mx.symbol.broadcast_mul(symbols["yval"], symbols["support"]),
                                    axis=1, keepdims=True)
    return CriticLoss(per_transition, symbols["qval"], expected_target,
                      (mx.symbol.BlockGrad(per_transition),))


class D4PG(DDPG):
    """D4PG with DDPG's arguments (its settings: :class:`D4PGConfig`) plus:

    atoms, v_min, v_max: the support of the critic's distribution, ``atoms`` values evenly
        from ``v_min`` to ``v_max``; it should cover the discounted returns the task gives
        (Acme's rule of thumb: the discounted sum of the largest reward over an episode).

    ``qfunc``: a :class:`ddpg.qfuncs.CategoricalMLPQ` on that support, or a
    :class:`ddpg.qfuncs.ContinuousMLPQ` whose layout the critic takes (``algo.qfunc`` is the
    categorical critic then). N-step returns, prioritised replay, hindsight replay and
    parallel collection are DDPG's arguments and flags, with DDPG's defaults.
    """

    #: The class of D4PG's settings (:mod:`ddpg.config`).
    CONFIG = D4PGConfig
    CHECKPOINT_EXTRA_HYPERPARAMETERS = tuple(
        name for name in hyperparams.checkpointed_names("d4pg")
        if name not in hyperparams.checkpointed_names("ddpg"))

    def __init__(self, env, policy, qfunc, strategy, atoms=51, v_min=-150.0, v_max=150.0,
                 **kwargs):
        eval_env, logger = kwargs.pop("eval_env", None), kwargs.pop("logger", None)
        config = D4PGConfig(atoms=atoms, v_min=v_min, v_max=v_max, **kwargs)
        self._build(env, policy, qfunc, strategy, config, eval_env, logger)

    def _build(self, env, policy, qfunc, strategy, config, eval_env, logger):
        """DDPG's building, around the categorical critic (:func:`categorical_critic`)."""
        self.projection = CategoricalProjection(config.atoms, config.v_min, config.v_max,
                                                config.batch_size)
        super(D4PG, self)._build(env, policy, categorical_critic(qfunc, config), strategy,
                                 config, eval_env, logger)

    def _target_size(self):
        """A target is a distribution: one probability per atom."""
        return self.atoms

    def _target_q_symbol(self, qval_sym, act_sym, args):
        """The target critic's logits at ``(s', mu'(s'))`` (not its expected value)."""
        return self.qfunc.get_loss_symbols()["logits"](act=act_sym)

    def _target_y_symbol(self, rwd, discount_mask, q_target):
        """The target critic's distribution at ``(s', mu'(s'))``, to be projected
        (:meth:`_compute_targets`)."""
        return mx.symbol.softmax(q_target, axis=1)

    def _compute_targets(self):
        """``target_executor`` writes the target critic's distribution into ``yval``; the
        projection of ``r + (1 - end) * discount^N * z`` replaces it there, from the batch's
        rewards and discounts on the host (:class:`CategoricalProjection`)."""
        super(D4PG, self)._compute_targets()
        targets = self.qfunc.arg_dict["yval"]
        host = self._batch.host_views
        targets[:] = self.projection(host["rwd"], host["discount_mask"], targets.asnumpy())

    _critic_loss = staticmethod(cross_entropy)

    def td_errors(self):
        """The last update's cross-entropy per transition (numpy): prioritised replay's new
        priorities, computed by the Q executor's forward pass."""
        return self.qfunc.exe.outputs[3].asnumpy()[:, 0]
