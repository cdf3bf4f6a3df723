"""A numpy ring buffer of transitions for off-policy training."""
import numpy as np


class ReplayMem(object):
    """Fixed-size replay memory of (s, a, r, terminal, s') transitions, stored as float32.

    The original took s' from the next slot of the ring, so when a horizon transition was
    dropped the transition before it got the *next episode's* first observation as s'. Here
    each transition stores its own next observation, so a sample never crosses an episode
    boundary, at the cost of a second observation array.

    ``ends`` holds whether s' is a true terminal state (no bootstrap). A transition cut off by
    a time limit is stored with ``end=False`` so the target bootstraps from s'.
    """

    def __init__(self, obs_dim, act_dim, memory_size):
        for name, value in (("obs_dim", obs_dim), ("act_dim", act_dim),
                            ("memory_size", memory_size)):
            if int(value) != value or value <= 0:
                raise ValueError("ReplayMem %s must be a positive integer, got %r"
                                 % (name, value))
        self.obs_dim = int(obs_dim)
        self.act_dim = int(act_dim)
        self.memory_size = int(memory_size)
        self.obss = np.zeros((self.memory_size, self.obs_dim), dtype=np.float32)
        self.acts = np.zeros((self.memory_size, self.act_dim), dtype=np.float32)
        self.rwds = np.zeros((self.memory_size,), dtype=np.float32)
        self.ends = np.zeros((self.memory_size,), dtype=np.float32)
        self.nxts = np.zeros((self.memory_size, self.obs_dim), dtype=np.float32)
        self.top = 0  # the slot the next sample is written to
        self.size = 0

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
