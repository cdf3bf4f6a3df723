"""A sum tree in numpy: priorities of a ring of slots, their total, and batch sampling in
proportion to them, each in O(log n) numpy operations for the whole batch.

The tree is one float64 array of ``2 * capacity`` nodes (``capacity``, the slots rounded up
to a power of two): node 1 is the root, node ``i``'s children are ``2i`` and ``2i + 1``, and
slot ``j``'s priority is leaf ``capacity + j``. Every inner node holds the sum of its
children. An update writes the leaves, then recomputes the parents of the changed ones level
by level; a batch is found by descending from the root once per level for all of its values
at once.
"""
import numpy as np

__all__ = ["SumTree"]


class SumTree(object):
    """Priorities of ``size`` slots (all 0 at first)."""

    def __init__(self, size):
        if int(size) != size or size < 1:
            raise ValueError("a SumTree needs a positive number of slots, got %r" % (size,))
        self.size = int(size)
        self.depth = int(np.ceil(np.log2(self.size))) if self.size > 1 else 0
        self.capacity = 2 ** self.depth
        self.nodes = np.zeros(2 * self.capacity, dtype=np.float64)

    @property
    def total(self):
        """The sum of every priority."""
        return self.nodes[1]

    def get(self, slots):
        """The priorities of ``slots`` (an array of slot indices)."""
        return self.nodes[self.capacity + np.asarray(slots)]

    def update(self, slots, priorities):
        """Set the priorities of ``slots``; a slot given twice keeps its last priority."""
        slots = np.asarray(slots, dtype=np.int64)
        priorities = np.asarray(priorities, dtype=np.float64)
        if slots.size and (slots.min() < 0 or slots.max() >= self.size):
            raise IndexError("slots must be in [0, %d)" % self.size)
        if priorities.size and not (np.isfinite(priorities).all() and priorities.min() >= 0):
            raise ValueError("priorities must be finite and non-negative")
        nodes = self.capacity + slots
        self.nodes[nodes] = priorities
        nodes = np.unique(nodes // 2)
        while nodes.size:  # up to the root, node 1
            self.nodes[nodes] = self.nodes[2 * nodes] + self.nodes[2 * nodes + 1]
            nodes = np.unique(nodes[nodes > 1] // 2)

    def find(self, values):
        """The slot of each value in ``[0, total)``: the slot ``j`` whose priority's interval
        ``[sum of the priorities before j, ... + priority j)`` holds it."""
        values = np.array(values, dtype=np.float64)
        nodes = np.ones(values.shape, dtype=np.int64)
        for _ in range(self.depth):
            left = 2 * nodes
            go_right = values >= self.nodes[left]
            values -= np.where(go_right, self.nodes[left], 0.0)
            nodes = left + go_right
        return nodes - self.capacity

    def sample(self, batch_size, rng):
        """``batch_size`` slots drawn in proportion to their priorities, stratified: the
        ``i``-th from the ``i``-th of ``batch_size`` equal parts of the total (Schaul et al.
        2016), each uniform within its part from ``rng`` (numpy's RandomState interface)."""
        if not self.total > 0:
            raise ValueError("cannot sample: every priority is 0")
        bounds = self.total / batch_size
        values = (np.arange(batch_size) + rng.uniform(size=batch_size)) * bounds
        slots = self.find(np.minimum(values, np.nextafter(self.total, 0)))
        # rounding can land on a zero-priority slot past the filled ones: take the last
        # slot with a priority instead
        empty = self.get(slots) <= 0
        if empty.any():
            slots[empty] = self._last_with_priority()
        return slots

    def _last_with_priority(self):
        return int(np.flatnonzero(self.nodes[self.capacity:self.capacity + self.size] > 0)[-1])
