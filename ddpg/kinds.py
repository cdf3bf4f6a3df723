"""The kinds of value a setting takes (:class:`Kind`): how it is described in an error, the test
a value must pass, and the command line's type. Each field of :class:`ddpg.config.DDPGConfig`
has one (:func:`ddpg.config.setting`), which the config checks its value with and
:mod:`ddpg.hyperparams`'s table and the command line read.

The module imports nothing of ``ddpg`` (MXNet only when an optimizer name is checked).
"""
import numpy as np

__all__ = ["Kind", "POSITIVE_INT", "NON_NEGATIVE_INT", "POSITIVE", "POSITIVE_NUMBER",
           "NON_NEGATIVE", "CLOSED_UNIT", "HALF_OPEN_UNIT", "FINITE", "OPTIMIZER", "SWITCH",
           "INTEGER", "UPDATES", "CONTEXT", "VEC_ENV", "HER_STRATEGY", "MEMORY_KIND",
           "AUTO_SWITCH", "AUTO_THREADS", "updates_per_sample"]


def updates_per_sample(text):
    """``--n-updates-per-sample``'s type: a whole number stays an int (as the original's); a
    fraction 1/k means an update every k steps."""
    value = float(text)
    return int(value) if value == int(value) else value


class Kind(object):
    """What values a hyperparameter takes: ``description`` (as the error message says it),
    ``accepts`` (a test; ``None``: not checked here, by ``checked_by`` where it is checked at
    all) and ``cli_type`` (argparse's ``type``; ``bool`` makes a switch)."""

    def __init__(self, description, accepts=None, cli_type=None, checked_by=None):
        self.description = description
        self.accepts = accepts
        self.cli_type = cli_type
        self.checked_by = checked_by

    def check(self, name, value):
        """Raise ``ValueError`` naming ``name`` unless ``value`` is of this kind."""
        if self.accepts is not None and not self.accepts(value):
            raise ValueError("%s must be %s, got %r" % (name, self.description, value))

    def or_none(self, description):
        """This kind, or ``None``."""
        accepts = self.accepts
        return Kind(description, lambda value: value is None or accepts(value), self.cli_type)


class _Optimizer(Kind):
    """An MXNet optimizer name (any case)."""

    def __init__(self):
        super(_Optimizer, self).__init__("an MXNet optimizer name", cli_type=None)
        self.accepts = self._registered

    @staticmethod
    def _known():
        import mxnet as mx  # pylint: disable=import-outside-toplevel
        return mx.optimizer.Optimizer.opt_registry

    def _registered(self, value):
        return str(value).lower() in self._known()

    def check(self, name, value):
        if not self._registered(value):
            raise ValueError("%s=%r is not an MXNet optimizer; known: %s"
                             % (name, value, ", ".join(sorted(self._known()))))


def _whole(value):
    return not isinstance(value, bool) and int(value) == value


POSITIVE_INT = Kind("a positive integer", lambda v: _whole(v) and v > 0, int)
NON_NEGATIVE_INT = Kind("a non-negative integer", lambda v: _whole(v) and v >= 0, int)
POSITIVE = Kind("positive", lambda v: v > 0, float)
POSITIVE_NUMBER = Kind("a positive number", lambda v: not isinstance(v, bool) and v > 0, float)
NON_NEGATIVE = Kind("a non-negative number", lambda v: not isinstance(v, bool) and v >= 0,
                    float)
CLOSED_UNIT = Kind("in [0, 1]", lambda v: 0.0 <= v <= 1.0, float)
HALF_OPEN_UNIT = Kind("in (0, 1]", lambda v: 0.0 < v <= 1.0, float)
FINITE = Kind("a finite number", lambda v: not isinstance(v, bool) and np.isfinite(v), float)
OPTIMIZER = _Optimizer()
SWITCH = Kind("True or False", cli_type=bool)
INTEGER = Kind("an integer", cli_type=int)
UPDATES = Kind("a positive integer or 1/k for an integer k", cli_type=updates_per_sample,
               checked_by="ddpg.config.update_schedule, with train_freq and gradient_steps")
CONTEXT = Kind("None, 'cpu', 'gpu' or an mx.Context",
               checked_by="ddpg.backend.context.resolve_ctx")
AUTO_SWITCH = Kind("True, False or 'auto'", checked_by="ddpg.backend.kernels.choose_mkldnn")
VEC_ENV = Kind("'sync' or 'async'", lambda v: v in ("sync", "async"), str)
HER_STRATEGY = Kind("'future', 'final' or 'episode'",
                    lambda v: v in ("future", "final", "episode"), str)
#: A replay memory kind's name (whether it is registered is checked when the memory is made,
#: by ddpg.replay.registry.memory_class), or None.
MEMORY_KIND = Kind("a replay memory kind's name or None",
                   lambda v: v is None or isinstance(v, str), str,
                   checked_by="ddpg.replay.registry.memory_class")
AUTO_THREADS = Kind("a positive integer or 'auto'",
                    checked_by="ddpg.backend.kernels.choose_omp_threads")
