"""The example's replay memory: a numpy ring buffer of 1-step transitions, sampled uniformly.

:class:`ReplayMem` keeps the example's constructor, ``add_sample``, ``get_batch`` and
``len``, and is the base of every memory kind: the interface the training loop uses
(``add``, ``end_episode``, ``sample``, ``after_update``, ``state_dict``/``load_state_dict``;
docs/design.md states it as a contract) is defined here, each kind overriding what it does
differently.
"""
import numpy as np

from ddpg.replay.batch import TransitionBatch, bootstrap_discounts

__all__ = ["ReplayMem", "check_arrays"]


def check_arrays(arrays, expected):
    """``ValueError`` unless ``arrays`` (a saved memory state) has every key of ``expected``
    (``{key: shape}``) with that shape."""
    missing = [key for key in expected if key not in arrays]
    if missing:
        raise ValueError("has no %s" % ", ".join(missing))
    for key, shape in expected.items():
        if np.shape(arrays[key]) != tuple(shape):
            raise ValueError("has %s of shape %s, expected %s"
                             % (key, np.shape(arrays[key]), tuple(shape)))


class ReplayMem(object):
    """Fixed-size replay memory of (s, a, r, terminal, s') transitions, stored as float32.

    The original took s' from the next slot of the ring, so when a horizon transition was
    dropped the transition before it got the *next episode's* first observation as s'. Here
    each transition stores its own next observation, so a sample never crosses an episode
    boundary, at the cost of a second observation array.

    ``ends`` holds whether s' is a true terminal state (no bootstrap). A transition cut off by
    a time limit is stored with ``end=False`` so the target bootstraps from s'.

    The constructor is the example's. Two attributes serve the training loop's interface
    (:meth:`build` sets them from the run's settings):

    discount: the discount factor ``sample`` computes the batch's bootstrap discounts with
        (0.99, DDPG's default, until set).
    observe: called with the observations of what is stored, before it is (the observation
        normaliser's ``update`` with ``obs_norm``), or None.
    """

    #: Whether a batch carries importance weights for the Q loss (``weights``).
    weighted = False
    #: Whether :meth:`after_update` needs the batch's TD errors (else it gets None).
    uses_td_errors = False

    def __init__(self, obs_dim, act_dim, memory_size):
        for name, value in (("obs_dim", obs_dim), ("act_dim", act_dim),
                            ("memory_size", memory_size)):
            if int(value) != value or value <= 0:
                raise ValueError("ReplayMem %s must be a positive integer, got %r"
                                 % (name, value))
        self.obs_dim = int(obs_dim)
        self.act_dim = int(act_dim)
        self.memory_size = int(memory_size)
        self.discount = 0.99
        self.observe = None
        self.obss = np.zeros((self.memory_size, self.obs_dim), dtype=np.float32)
        self.acts = np.zeros((self.memory_size, self.act_dim), dtype=np.float32)
        self.rwds = np.zeros((self.memory_size,), dtype=np.float32)
        self.ends = np.zeros((self.memory_size,), dtype=np.float32)
        self.nxts = np.zeros((self.memory_size, self.obs_dim), dtype=np.float32)
        self.top = 0  # the slot the next sample is written to
        self.size = 0

    @classmethod
    def build(cls, settings, env, observe=None, transitions_done=None):
        """The memory for a run of ``settings`` (a :class:`ddpg.DDPGConfig`) on ``env``: how
        the registry (:mod:`ddpg.replay.registry`) makes each kind. ``transitions_done``
        gives the run's environment steps so far (for schedules such as prioritised
        replay's beta)."""
        if settings.n_step != 1:
            raise ValueError("replay_memory %r stores 1-step transitions; n_step=%d needs a "
                             "memory that sums rewards ('nstep' or 'prioritized')"
                             % (settings.replay_memory, settings.n_step))
        memory = cls(env.observation_space.flat_dim, env.action_space.flat_dim,
                     settings.memory_size)
        memory.discount, memory.observe = settings.discount, observe
        return memory

    # -- the example's methods ---------------------------------------------------------------

    def add_sample(self, obs, act, rwd, end, nxt):
        """Store one transition, overwriting the oldest once the memory is full."""
        self.obss[self.top] = np.reshape(obs, self.obs_dim)
        self.acts[self.top] = np.reshape(act, self.act_dim)
        self.rwds[self.top] = rwd
        self.ends[self.top] = float(end)
        self.nxts[self.top] = np.reshape(nxt, self.obs_dim)
        # both counters in one statement without a call between them: a Ctrl-C (handled
        # between calls) never leaves one advanced without the other for a checkpoint to save
        size = min(self.size + 1, self.memory_size)
        self.top, self.size = (self.top + 1) % self.memory_size, size

    def get_batch(self, batch_size):
        """A uniform random batch (with replacement) ``(obss, acts, rwds, ends, nxts)``.

        Indices come from numpy's global generator (seeded by DDPG), drawn in one call.
        """
        if self.size == 0:
            raise ValueError("cannot sample from an empty ReplayMem")
        indices = np.random.randint(0, self.size, size=batch_size)
        return (self.obss[indices], self.acts[indices], self.rwds[indices],
                self.ends[indices], self.nxts[indices])

    def __len__(self):
        return self.size

    # -- the training loop's interface -------------------------------------------------------

    def add(self, transition, env_index=0):
        """Store ``transition`` (a :class:`ddpg.replay.batch.Transition`) of environment
        ``env_index``."""
        self._store(transition.obs, transition.act, transition.rwd, transition.end,
                    transition.nxt)

    def end_episode(self, env_index=0):
        """Environment ``env_index``'s episode is over (whether or not its last step was
        stored): a memory that holds episode state stores or closes it. Nothing here."""

    def sample(self, batch_size):
        """A batch for an update: :meth:`get_batch`'s, with its bootstrap discounts."""
        obss, acts, rwds, ends, nxts = self.get_batch(batch_size)
        return TransitionBatch(obss, acts, rwds, ends, nxts,
                               discounts=bootstrap_discounts(ends, self.discount))

    def after_update(self, batch, td_errors):
        """Called after each update on ``batch`` with its TD errors (None unless
        :attr:`uses_td_errors`). Nothing here."""

    def _store(self, obs, act, rwd, end, nxt):
        """One transition into the ring, shown to ``observe`` first."""
        if self.observe is not None:
            self.observe(obs)
        self.add_sample(obs, act, rwd, end, nxt)

    # -- state -------------------------------------------------------------------------------

    def state_dict(self):
        """The memory's content as numpy arrays: the stored transitions (``obss``, ``acts``,
        ``rwds``, ``ends``, ``nxts``, up to ``size``) and the counters ``top``, ``size``,
        ``memory_size``; what a checkpoint's ``replay_memory.npz`` holds."""
        size = self.size
        return dict(obss=self.obss[:size], acts=self.acts[:size], rwds=self.rwds[:size],
                    ends=self.ends[:size], nxts=self.nxts[:size], top=np.int64(self.top),
                    size=np.int64(size), memory_size=np.int64(self.memory_size))

    def load_state_dict(self, arrays):
        """Take the content of :meth:`state_dict`'s ``arrays``, checked first: ValueError
        (saying what is wrong) before anything changes."""
        self._check_state(arrays)
        self._load_state(arrays)

    def _expected_arrays(self, size):
        """``{key: shape}`` of a saved state holding ``size`` transitions."""
        return {"obss": (size, self.obs_dim), "acts": (size, self.act_dim),
                "rwds": (size,), "ends": (size,), "nxts": (size, self.obs_dim)}

    def _check_state(self, arrays):
        check_arrays(arrays, {"size": (), "top": (), "memory_size": ()})
        size, top = int(arrays["size"]), int(arrays["top"])
        memory_size = int(arrays["memory_size"])
        if memory_size != self.memory_size or not 0 <= size <= memory_size \
                or not 0 <= top < memory_size or (size < memory_size and top != size):
            raise ValueError("is inconsistent: size %d, top %d, memory_size %d (this "
                             "algorithm's memory_size is %d)"
                             % (size, top, memory_size, self.memory_size))
        check_arrays(arrays, self._expected_arrays(size))

    def _load_state(self, arrays):
        size = int(arrays["size"])
        for key in ("obss", "acts", "rwds", "ends", "nxts"):
            getattr(self, key)[:size] = arrays[key]
        self.size, self.top = size, int(arrays["top"])
