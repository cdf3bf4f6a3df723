"""The per-epoch statistics of DDPG's updates, summed on the device.

The original appended four numpy arrays per update (copying Q values and targets to the host
after every update) and averaged them at the end of the epoch. The sums below give the same
tabular values: the Q-side sums are an extra output of the Q executor's forward pass, so one
update costs two in-place additions and no host transfer; the host reads them once per epoch.
"""
import numpy as np

import mxnet as mx

#: What the Q executor's statistics output holds, in order: the loss, then sums over the batch.
Q_STAT_NAMES = ("QLoss", "Q", "AbsQ", "Y", "AbsY", "AbsQYDiff")


def q_statistics_symbol(loss, qval, yval):
    """A (6,) symbol: the loss and the batch sums of q, |q|, y, |y| and |q - y|.

    Every input is cut from the gradient (BlockGrad) *before* the statistics are computed,
    so no path leads from this output back to a parameter and MXNet builds no backward
    nodes for it. (A BlockGrad on the output instead makes MXNet propagate zeros back
    through every statistic and add them into the loss's gradients: about ten more small
    operations in each Q update.) ``qval - yval`` is the loss's own difference node, which
    MXNet's common-subexpression pass computes once.
    """
    block = mx.symbol.BlockGrad
    qval_c, yval_c = block(qval), block(yval)
    sums = [mx.symbol.sum(qval_c), mx.symbol.sum(mx.symbol.abs(qval_c)), mx.symbol.sum(yval_c),
            mx.symbol.sum(mx.symbol.abs(yval_c)),
            mx.symbol.sum(mx.symbol.abs(block(qval - yval)))]
    return mx.symbol.concat(mx.symbol.reshape(block(loss), shape=(1,)), *sums, dim=0,
                            name="qfunc_stats")


class UpdateStatistics(object):
    """Sums of the Q statistics and the policy loss since the last ``reset``.

    With a ``policy_delay`` not every update has a policy step: the policy loss is averaged
    over the updates that had one, and left out before the first.
    """

    def __init__(self, ctx, batch_size):
        self.batch_size = batch_size
        self.q_sums = mx.nd.zeros((len(Q_STAT_NAMES),), ctx=ctx)
        self.policy_loss_sum = mx.nd.zeros((1,), ctx=ctx)
        self.n_updates = 0
        self.n_policy_updates = 0
        # the last update's outputs (the executors' own arrays, not copies), for latest()
        self._last_q_stats = None
        self._last_policy_loss = None

    def add(self, q_stats, policy_loss=None):
        """One update's Q statistics and, when it had a policy step, its policy loss."""
        self.q_sums += q_stats
        self.n_updates += 1
        if policy_loss is not None:
            self.policy_loss_sum += policy_loss.reshape((1,))
            self.n_policy_updates += 1
        self.keep_latest(q_stats, policy_loss)

    def keep_latest(self, q_stats, policy_loss=None):
        """Remember the arrays of the update just made (``policy_loss`` None: no policy
        update, the last one's loss stays)."""
        self._last_q_stats = q_stats
        if policy_loss is not None:
            self._last_policy_loss = policy_loss

    def latest(self):
        """``{"QLoss": ..., "PolicyLoss": ...}`` of the most recent update (the most recent
        policy update for the policy loss), read from the device; empty before any.

        Valid right after an update, before the executors run again (they own the arrays).
        """
        values = {}
        if self._last_q_stats is not None:
            values["QLoss"] = float(self._last_q_stats[0].asscalar())
        if self._last_policy_loss is not None:
            values["PolicyLoss"] = float(self._last_policy_loss.asnumpy().ravel()[0])
        return values

    def averages(self):
        """Tabular key -> value, the original's keys; empty before the first update."""
        if self.n_updates == 0:
            return {}
        sums = self.q_sums.asnumpy().astype(np.float64)
        n, n_values = self.n_updates, self.n_updates * self.batch_size
        averages = {"AverageQLoss": sums[0] / n}
        if self.n_policy_updates:
            averages["AveragePolicyLoss"] = (float(self.policy_loss_sum.asnumpy()[0])
                                             / self.n_policy_updates)
        averages.update({"AverageQ": sums[1] / n_values,
                         "AverageAbsQ": sums[2] / n_values,
                         "AverageY": sums[3] / n_values,
                         "AverageAbsY": sums[4] / n_values,
                         "AverageAbsQYDiff": sums[5] / n_values})
        return averages

    def reset(self):
        self.q_sums[:] = 0
        self.policy_loss_sum[:] = 0
        self.n_updates = 0
        self.n_policy_updates = 0

    def state_dict(self):
        """The running sums and counts, as arrays and ints (a checkpoint saved in the middle
        of an epoch continues the epoch's averages exactly)."""
        return {"q_sums": self.q_sums.asnumpy(), "policy_loss_sum": self.policy_loss_sum.asnumpy(),
                "n_updates": int(self.n_updates), "n_policy_updates": int(self.n_policy_updates)}

    def _counts(self, state):
        """``state``'s update counts; ``n_policy_updates`` defaults to ``n_updates``
        (statistics saved before ``policy_delay`` existed had a policy step in every update)."""
        return int(state["n_updates"]), int(state.get("n_policy_updates", state["n_updates"]))

    def check_state_dict(self, state):
        """``ValueError``/``TypeError`` unless ``state`` holds statistics :meth:`load_state_dict`
        can take. Returns whether its sums have this layout: sums of another (another
        version's statistics) cannot continue, and load_state_dict then starts the epoch's
        averages afresh."""
        if not isinstance(state, dict) or not {"q_sums", "policy_loss_sum", "n_updates"} \
                <= set(state):
            raise ValueError("update statistics need q_sums, policy_loss_sum and n_updates; "
                             "got %r" % (sorted(state) if isinstance(state, dict) else state,))
        n_updates, n_policy_updates = self._counts(state)
        if n_updates < 0 or n_policy_updates < 0:
            raise ValueError("update statistics of %d updates and %d policy updates"
                             % (n_updates, n_policy_updates))
        for name in ("q_sums", "policy_loss_sum"):
            if np.asarray(state[name]).dtype.kind not in "iuf":
                raise TypeError("update statistics whose %s are %s values, not numbers"
                                % (name, np.asarray(state[name]).dtype))
        return (np.shape(state["q_sums"]) == self.q_sums.shape
                and np.shape(state["policy_loss_sum"]) == self.policy_loss_sum.shape)

    def load_state_dict(self, state):
        """Put back the sums and counts from :meth:`state_dict` (checked first: malformed
        statistics raise and change nothing; those of another layout reset)."""
        if not self.check_state_dict(state):
            self.reset()
            return
        n_updates, n_policy_updates = self._counts(state)
        self.q_sums[:] = state["q_sums"]
        self.policy_loss_sum[:] = state["policy_loss_sum"]
        self.n_updates, self.n_policy_updates = n_updates, n_policy_updates
