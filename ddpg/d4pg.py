"""D4PG (Barth-Maron et al., 2018) on DDPG's executors: a distributional critic.

D4PG is DDPG whose critic learns the distribution of the return instead of its mean. The
distribution is categorical, C51's (Bellemare et al., 2017): probabilities over ``atoms`` fixed
values ``z = linspace(v_min, v_max, atoms)``, the support. The paper's other parts are DDPG's
options here, on any algorithm: N-step returns (``n_step``), prioritised replay
(``prioritized_replay``) and parallel actors (``--ray-actors``, ``n_envs``); the ``d4pg-*``
presets set them as the paper and Acme do.

``D4PG`` keeps DDPG's design whole: flat parameter buffers, one ``target_executor`` writing the
targets straight into the critic's ``yval`` input, and the policy executor bound on the critic's
own argument *and gradient* arrays. What changes:

- **The critic** (:class:`ddpg.qfuncs.CategoricalMLPQ`): its last layer ``qfunc_qval`` gives
  one logit per atom, ``p = softmax(logits)``; its value ``Q = sum(p * z)`` is the expected
  return.
- **The target** is a distribution: the target critic's ``p'`` at ``(s', mu'(s'))``, moved to
  ``r + (1 - end) * discount^N * z`` and projected back onto the support (:func:`project`),
  inside ``target_executor``. A moved atom outside ``[v_min, v_max]`` counts at the nearest
  bound; one between two atoms is split between them in proportion to its distance.
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

from ddpg import hyperparams
from ddpg.config import DDPGConfig, check_range, documented, register_config, setting
from ddpg.ddpg import DDPG
from ddpg.executors import CriticLoss
from ddpg.kinds import FINITE, Kind
from ddpg.qfuncs import CategoricalMLPQ, ContinuousMLPQ, check_support, support_symbol

__all__ = ["D4PG", "D4PGConfig", "ATOMS", "project", "cross_entropy", "categorical_critic"]

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
        """The support's settings, then DDPG's checks."""
        for name in ("atoms", "v_min", "v_max"):
            check_range(D4PGConfig, name, getattr(self, name))
        check_support(self.atoms, self.v_min, self.v_max)
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


def project(rwd, discount_mask, probabilities, atoms, v_min, v_max):
    """The categorical projection of ``r + discount_mask * Z`` onto the support, as a symbol.

    ``probabilities`` (batch, atoms) are Z's over the support z, ``rwd`` and ``discount_mask``
    (batch, 1). Each moved atom ``Tz_j = clip(r + discount_mask * z_j, v_min, v_max)`` gives
    atom i the share ``max(0, 1 - |Tz_j - z_i| / dz)`` of its probability, dz the spacing of
    the support: all of it when it lands on z_i, and between two atoms the linear split of
    C51's projection. Written this way (a (batch, atoms, atoms) table of shares and one batched
    product) the projection needs no scatter, so it runs inside ``target_executor``.
    """
    support = support_symbol(atoms, v_min, v_max)
    spacing = (float(v_max) - float(v_min)) / (atoms - 1)
    moved = mx.symbol.clip(
        mx.symbol.broadcast_add(rwd, mx.symbol.broadcast_mul(discount_mask, support)),
        a_min=v_min, a_max=v_max)
    distance = mx.symbol.abs(mx.symbol.broadcast_sub(
        mx.symbol.reshape(moved, shape=(0, 0, 1)),
        mx.symbol.reshape(support, shape=(1, 1, atoms))))
    shares = mx.symbol.relu(1.0 - distance / spacing)
    projected = mx.symbol.batch_dot(mx.symbol.reshape(probabilities, shape=(0, 1, -1)), shares)
    return mx.symbol.reshape(projected, shape=(0, -1))


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
        super(D4PG, self)._build(env, policy, categorical_critic(qfunc, config), strategy,
                                 config, eval_env, logger)

    def _target_size(self):
        """A target is a distribution: one probability per atom."""
        return self.atoms

    def _target_q_symbol(self, qval_sym, act_sym, args):
        """The target critic's logits at ``(s', mu'(s'))`` (not its expected value)."""
        return self.qfunc.get_loss_symbols()["logits"](act=act_sym)

    def _target_y_symbol(self, rwd, discount_mask, q_target):
        """The target distribution: the target critic's, projected (:func:`project`)."""
        return project(rwd, discount_mask, mx.symbol.softmax(q_target, axis=1), self.atoms,
                       self.v_min, self.v_max)

    _critic_loss = staticmethod(cross_entropy)

    def td_errors(self):
        """The last update's cross-entropy per transition (numpy): prioritised replay's new
        priorities, computed by the Q executor's forward pass."""
        return self.qfunc.exe.outputs[3].asnumpy()[:, 0]
