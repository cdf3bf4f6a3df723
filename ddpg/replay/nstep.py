"""n-step returns: each stored transition sums up to ``n`` rewards before it bootstraps.

With ``n_step = n`` the transition stored for step ``t`` of an episode is

    (s_t, a_t, R, end, s_t+k, k),  R = r_t + g r_t+1 + ... + g^(k-1) r_t+k-1

and its target is ``R + (1 - end) g^k Q'(s_t+k, mu'(s_t+k))``. ``k = n`` inside an episode;
near its end the horizon is shorter, because a return never crosses an episode's end: a
terminal state stops the bootstrap (``end = 1``), a time-limit cut bootstraps from the last
next observation (with ``bootstrap_truncated``; the example's other choices for cut
transitions apply to all of the episode's last transitions alike), and a transition the loop
does not store (a skipped non-finite one, or one the example drops at ``max_path_length``)
ends the sums before it, which bootstrap from the observation it started from.

The sums are built as transitions arrive, per environment, inside :class:`NStepReplayMem`:
each environment's episode keeps its *chain*, the tuples ``(s_t, a_t, R so far, k so far)`` of
its last ``n - 1`` steps, in the memory's state (so a checkpoint saves it with the memory and a
resumed run continues exactly).
Environments never mix, with several environments or actors, because each has its own chain.
Rewards are summed in float64 and stored as float32, as 1-step rewards are.
"""
import collections

import numpy as np

from ddpg.replay.batch import TransitionBatch, bootstrap_discounts
from ddpg.replay.uniform import ReplayMem, check_arrays

__all__ = ["TransitionBatch", "NStepReplayMem", "extend_chain", "take_complete",
           "close_chain"]


class NStepReplayMem(ReplayMem):
    """A :class:`ReplayMem` of n-step transitions: it builds the sums from the steps
    :meth:`add` gets (each environment's chain, see the module docstring), stores each
    transition's horizon ``k`` (float32, the power of the discount its target bootstraps
    with) and samples it with the batch.

    n_step: the rewards a sum holds before it bootstraps (1: the example's transitions).
    n_envs: the environments whose steps are expected (one chain each; a step of another
        environment index gets a chain of its own when it arrives).
    """

    def __init__(self, obs_dim, act_dim, memory_size, n_step=1, discount=0.99, n_envs=1,
                 observe=None):
        super(NStepReplayMem, self).__init__(obs_dim, act_dim, memory_size)
        self.discount, self.observe = discount, observe
        self.horizons = np.ones((self.memory_size,), dtype=np.float32)
        self.n_step = int(n_step)
        #: environment index -> its open sums, ``(s, a, R so far, k so far)``, oldest first
        self.chains = collections.defaultdict(list, {index: [] for index in range(n_envs)})
        #: environment index -> its last stored next observation: where its open sums
        #: bootstrap from if its episode stops before they complete
        self.bootstraps = {}

    @classmethod
    def build(cls, settings, env, observe=None, transitions_done=None):
        return cls(env.observation_space.flat_dim, env.action_space.flat_dim,
                   settings.memory_size, n_step=settings.n_step, discount=settings.discount,
                   n_envs=settings.n_envs, observe=observe)

    def add_sample(self, obs, act, rwd, end, nxt, horizon=1):
        self.horizons[self.top] = horizon
        super(NStepReplayMem, self).add_sample(obs, act, rwd, end, nxt)

    def get_batch(self, batch_size):
        """A uniform batch, as :meth:`ReplayMem.get_batch` draws it, with its horizons."""
        if self.size == 0:
            raise ValueError("cannot sample from an empty ReplayMem")
        indices = np.random.randint(0, self.size, size=batch_size)
        return TransitionBatch(self.obss[indices], self.acts[indices], self.rwds[indices],
                               self.ends[indices], self.nxts[indices], self.horizons[indices])

    def sample(self, batch_size):
        """:meth:`get_batch`'s batch with its bootstrap discounts ``(1 - end) g^k``."""
        return self._with_discounts(self.get_batch(batch_size))

    def _with_discounts(self, batch):
        batch.discounts = bootstrap_discounts(batch[3], self.discount, batch.horizons)
        return batch

    # -- the sums ----------------------------------------------------------------------------

    def add(self, transition, env_index=0):
        """The step joins environment ``env_index``'s sums; the sums it completes (all of
        them at a terminal state) are stored."""
        obs, act, rwd, end, nxt = transition[:5]
        if self.n_step == 1:
            self._store(obs, act, rwd, end, nxt, 1)
            return
        chain = extend_chain(self.chains[env_index], obs, act, rwd, self.discount)
        self.bootstraps[env_index] = nxt
        if end:
            transitions, chain = close_chain(chain, True, nxt), []
        else:
            transitions, chain = take_complete(chain, self.n_step, nxt)
        self.chains[env_index] = chain
        for item in transitions:
            self._store(*item)

    def end_episode(self, env_index=0):
        """Environment ``env_index``'s open sums end, bootstrapping from its last stored
        next observation."""
        chain, self.chains[env_index] = self.chains[env_index], []
        for item in close_chain(chain, False, self.bootstraps.get(env_index)):
            self._store(*item)

    def _store(self, obs, act, rwd, end, nxt, horizon=1):
        if self.observe is not None:
            self.observe(obs)
        self.add_sample(obs, act, rwd, end, nxt, horizon)

    # -- state -------------------------------------------------------------------------------

    def state_dict(self):
        """:meth:`ReplayMem.state_dict` with the ``horizons`` and, with ``n_step > 1``, the
        open sums (:meth:`open_sums_state`)."""
        arrays = super(NStepReplayMem, self).state_dict()
        arrays["horizons"] = self.horizons[:self.size]
        if self.n_step > 1:
            arrays.update(self.open_sums_state(self.chains, self.bootstraps, self.obs_dim,
                                               self.act_dim))
        return arrays

    @staticmethod
    def open_sums_state(chains, bootstraps, obs_dim, act_dim):
        """The open sums of ``chains`` (environment index -> its chain) as arrays, one row
        per sum (float64, so that a restored sum continues exactly): ``chain_envs`` (whose
        each is), ``chain_obss``, ``chain_acts``, ``chain_totals``, ``chain_horizons``, and
        ``chain_bootstraps``, its environment's last stored next observation (``bootstraps``:
        environment index -> observation)."""
        items = [(index, item) for index in sorted(chains) for item in chains[index]]
        count = len(items)
        return {
            "chain_envs": np.array([index for index, _ in items], dtype=np.int64),
            "chain_obss": np.array([np.reshape(item[0], obs_dim) for _, item in items],
                                   dtype=np.float64).reshape(count, obs_dim),
            "chain_acts": np.array([np.reshape(item[1], act_dim) for _, item in items],
                                   dtype=np.float64).reshape(count, act_dim),
            "chain_totals": np.array([item[2] for _, item in items], dtype=np.float64),
            "chain_horizons": np.array([item[3] for _, item in items], dtype=np.int64),
            "chain_bootstraps": np.array([np.reshape(bootstraps[index], obs_dim)
                                          for index, _ in items],
                                         dtype=np.float64).reshape(count, obs_dim)}

    def _expected_arrays(self, size):
        expected = super(NStepReplayMem, self)._expected_arrays(size)
        expected["horizons"] = (size,)
        return expected

    def _check_state(self, arrays):
        super(NStepReplayMem, self)._check_state(arrays)
        if self.n_step == 1:
            return
        check_arrays(arrays, {"chain_envs": (len(np.atleast_1d(arrays.get("chain_envs", 0))),)})
        items = (len(arrays["chain_envs"]),)
        check_arrays(arrays, {"chain_obss": items + (self.obs_dim,),
                              "chain_acts": items + (self.act_dim,), "chain_totals": items,
                              "chain_horizons": items,
                              "chain_bootstraps": items + (self.obs_dim,)})
        envs, horizons = np.asarray(arrays["chain_envs"]), np.asarray(arrays["chain_horizons"])
        if envs.size and envs.min() < 0:
            raise ValueError("has open n-step sums of environment %d" % envs.min())
        if horizons.size and (horizons.min() < 1 or horizons.max() >= self.n_step):
            raise ValueError("has open n-step sums of %d to %d rewards; n_step is %d"
                             % (horizons.min(), horizons.max(), self.n_step))

    def _load_state(self, arrays):
        super(NStepReplayMem, self)._load_state(arrays)
        self.horizons[:self.size] = arrays["horizons"]
        if self.n_step == 1:
            return
        chains = collections.defaultdict(list, {index: [] for index in self.chains})
        bootstraps = {}
        for row, index in enumerate(np.asarray(arrays["chain_envs"])):
            chains[int(index)].append((np.array(arrays["chain_obss"][row]),
                                       np.array(arrays["chain_acts"][row]),
                                       float(arrays["chain_totals"][row]),
                                       int(arrays["chain_horizons"][row])))
            bootstraps[int(index)] = np.array(arrays["chain_bootstraps"][row])
        self.chains, self.bootstraps = chains, bootstraps

def extend_chain(chain, obs, act, rwd, discount):
    """The chain after a stored step ``(obs, act, rwd)``: the step's reward added to every
    sum (discounted by each one's horizon so far), and the step itself appended."""
    rwd = float(rwd)
    return [(s, a, total + discount ** k * rwd, k + 1) for s, a, total, k in chain] \
        + [(obs, act, rwd, 1)]


def take_complete(chain, n_step, nxt):
    """``(transitions, chain)``: the sums of ``n_step`` rewards, as transitions
    ``(obs, act, R, end=False, nxt, n_step)``, and the chain without them."""
    complete = [(s, a, total, False, nxt, k) for s, a, total, k in chain if k >= n_step]
    return complete, [item for item in chain if item[3] < n_step]


def close_chain(chain, end, nxt):
    """Every sum of an ending chain as a transition ``(obs, act, R, end, nxt, k)``: ``end``
    True (a terminal state: no bootstrap) or False (bootstrap from ``nxt``)."""
    return [(s, a, total, end, nxt, k) for s, a, total, k in chain]
