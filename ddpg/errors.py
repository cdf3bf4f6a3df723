"""Exceptions for faults DDPG detects, each a subclass of a standard one.

They exist so that a caller can tell *which* fault stopped a run (a corrupted checkpoint, an
environment that produced NaN, training that diverged, an environment that crashed) without
parsing messages, while code that only catches the standard base classes keeps working.
"""


class CheckpointError(ValueError):
    """A checkpoint cannot be loaded into this algorithm: missing, corrupted, truncated, of a
    newer format, or built for other spaces or another network layout. Raised before anything
    in the running algorithm is changed."""


class NonFiniteError(ValueError):
    """The environment returned a NaN or infinite observation or reward (see
    ``DDPG(skip_nonfinite=True)`` to skip such transitions instead), or the exploration
    strategy a NaN or infinite action."""


class DivergenceError(FloatingPointError):
    """Training diverged: a loss or a network parameter became NaN or infinite."""


class EnvError(RuntimeError):
    """The environment raised inside ``reset()`` or ``step()``.

    The message says where in the run it happened (epoch, episode, step); the environment's
    own exception is chained as ``__cause__``, with its traceback.
    """
