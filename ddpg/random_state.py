"""The random generators' state as plain data: numpy's and Python's global generators
(:class:`GlobalGenerators`) and a ``np.random.RandomState`` of one's own, such as an
environment's (:class:`GeneratorState`).

Each has ``state_dict()``, ``check_state_dict(state)`` (``ValueError`` for a state the
generator cannot take, before anything changes) and ``load_state_dict(state)``. The states are
numpy's ``get_state()`` tuples and Python's ``random.getstate()`` tuples.
"""
import random

import numpy as np

__all__ = ["GlobalGenerators", "GeneratorState"]


def _check_numpy_state(state):
    try:
        np.random.RandomState().set_state(state)
    except (TypeError, ValueError, IndexError, KeyError) as error:
        raise ValueError("an unusable numpy random state (%s)" % (error,))


class GlobalGenerators(object):
    """numpy's and Python's global generators (batches, OU noise, ...):
    ``{"np_random": np.random.get_state(), "python_random": random.getstate()}``. A state
    whose ``python_random`` is None or missing leaves Python's generator as it is."""

    def state_dict(self):
        return {"np_random": np.random.get_state(), "python_random": random.getstate()}

    def check_state_dict(self, state):
        """``ValueError`` unless both generators can take ``state``."""
        if not isinstance(state, dict) or "np_random" not in state:
            raise ValueError("random generator states need np_random; got %r" % (state,))
        _check_numpy_state(state["np_random"])
        python_random = state.get("python_random")
        if python_random is not None:
            try:
                random.Random().setstate(python_random)
            except (TypeError, ValueError, IndexError) as error:
                raise ValueError("an unusable Python random state (%s)" % (error,))

    def load_state_dict(self, state):
        """Put back both generators' states (checked first)."""
        self.check_state_dict(state)
        np.random.set_state(state["np_random"])
        if state.get("python_random") is not None:
            random.setstate(state["python_random"])


class GeneratorState(object):
    """The state of ``generator``, a ``np.random.RandomState``: its ``get_state()``."""

    def __init__(self, generator):
        self.generator = generator

    def state_dict(self):
        return self.generator.get_state()

    def check_state_dict(self, state):
        """``ValueError`` unless the generator can take ``state``."""
        _check_numpy_state(state)

    def load_state_dict(self, state):
        """Put back the generator's state (checked first)."""
        self.check_state_dict(state)
        self.generator.set_state(state)
