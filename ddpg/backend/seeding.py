"""Seeding MXNet's, numpy's and Python's global generators from a run's seed.

A run is reproducible from its seed alone: the generators are seeded when the algorithm is
built (before the networks' initialisers draw), and MXNet's again at every epoch, because its
generator state cannot be saved in a checkpoint; a fixed per-epoch seed makes a run resumed
at an epoch boundary draw what the uninterrupted run draws.
"""
import random

import numpy as np

import mxnet as mx


def seed_global_generators(seed):
    """Seed MXNet's and numpy's global generators (the original's ``mx.random.seed`` and
    ``np.random.seed``), and Python's: the library draws nothing from it, but a checkpoint
    saves its state, which is then the same on every run of the seed, whatever the Python."""
    mx.random.seed(seed)
    np.random.seed(seed)
    random.seed(seed)


def epoch_seed(seed, epoch):
    """MXNet's seed for an epoch: a fixed function of the run's seed and the epoch."""
    return int(np.random.SeedSequence([int(seed) % (1 << 32), int(epoch)])
               .generate_state(1)[0]) % (1 << 31)


def seed_epoch(seed, epoch):
    """Reseed MXNet's generator for ``epoch`` of the run seeded with ``seed``."""
    mx.random.seed(epoch_seed(seed, epoch))
