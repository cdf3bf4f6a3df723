#!/usr/bin/env python
"""D4PG's categorical projection two ways: NumPy on the host (the library's) against MXNet
symbols on the device, on the same batches.

The library's ``ddpg.d4pg.CategoricalProjection`` moves each atom to ``r + discount * z``,
clips it to the support and splits its probability between the two atoms around it with two
``np.bincount`` calls. MXNet 1.9 has no scatter-add operator, so as symbols the projection is
written with a table of shares ``max(0, 1 - |Tz_j - z_i| / dz)`` of shape (batch, atoms,
atoms) and a batched product (``symbolic_projection`` below). Both are timed interleaved in
one invocation (``--rounds`` rounds of ``--calls`` calls each, the median per call); the
symbolic one includes what the library's path adds around NumPy (the device-to-host copy of
the distribution and the copy of the result back), so both columns are the time a D4PG update
spends on its targets beyond the target networks' forward pass. It also checks that the two
agree.

    python benchmarks/projection.py
    python benchmarks/projection.py --batch 256 --atoms 51 --rounds 5 --calls 200
"""
import argparse
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir))

import numpy as np  # noqa: E402

import ddpg  # noqa: E402,F401  (MXNet's environment before mxnet loads)
import mxnet as mx  # noqa: E402
from ddpg.backend.binding import bind  # noqa: E402
from ddpg.d4pg import CategoricalProjection  # noqa: E402
from ddpg.qfuncs import support_symbol  # noqa: E402


def symbolic_projection(atoms, v_min, v_max):
    """The projection as one MXNet graph of ``rwd``, ``discount`` and ``p`` (a table of shares
    per transition, then a batched product)."""
    support = support_symbol(atoms, v_min, v_max)
    spacing = (v_max - v_min) / (atoms - 1)
    moved = mx.symbol.clip(mx.symbol.broadcast_add(
        mx.symbol.Variable("rwd"), mx.symbol.broadcast_mul(mx.symbol.Variable("discount"),
                                                           support)), a_min=v_min, a_max=v_max)
    distance = mx.symbol.abs(mx.symbol.broadcast_sub(
        mx.symbol.reshape(moved, shape=(0, 0, 1)),
        mx.symbol.reshape(support, shape=(1, 1, atoms))))
    shares = mx.symbol.relu(1.0 - distance / spacing)
    probabilities = mx.symbol.reshape(mx.symbol.Variable("p"), shape=(0, 1, -1))
    projected = mx.symbol.batch_dot(probabilities, shares)
    return mx.symbol.reshape(projected, shape=(0, -1))


def inputs(batch, atoms, v_min, v_max, seed=0):
    rng = np.random.RandomState(seed)
    rewards = rng.uniform(-0.2, 0.2, size=(batch, 1)) * (v_max - v_min)
    discounts = np.where(rng.uniform(size=(batch, 1)) < 0.05, 0.0, 0.99 ** 5)
    logits = rng.normal(size=(batch, atoms))
    probabilities = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    return [value.astype(np.float32) for value in (rewards, discounts, probabilities)]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--batch", type=int, default=256)
    parser.add_argument("--atoms", type=int, default=51)
    parser.add_argument("--v-min", type=float, default=-1000.0)
    parser.add_argument("--v-max", type=float, default=1000.0)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--calls", type=int, default=200)
    args = parser.parse_args(argv)
    rwd, discount, probabilities = inputs(args.batch, args.atoms, args.v_min, args.v_max)
    ctx = mx.cpu()
    # the library's path: the distribution on the device, read, projected, written back
    device_p = mx.nd.array(probabilities, ctx=ctx)
    projection = CategoricalProjection(args.atoms, args.v_min, args.v_max, args.batch)

    def on_the_host():
        device_p[:] = projection(rwd, discount, device_p.asnumpy())
        device_p.wait_to_read()

    executor = bind(symbolic_projection(args.atoms, args.v_min, args.v_max), ctx, args={
        "rwd": mx.nd.array(rwd, ctx=ctx), "discount": mx.nd.array(discount, ctx=ctx),
        "p": mx.nd.array(probabilities, ctx=ctx)}, grad_req="null")

    def as_symbols():
        executor.forward()
        executor.outputs[0].wait_to_read()

    expected = projection(rwd, discount, probabilities)
    executor.forward()
    difference = np.abs(executor.outputs[0].asnumpy() - expected).max()
    timings = {"NumPy on the host (the library's)": [], "MXNet symbols": []}
    for index in range(args.rounds):
        order = list(timings) if index % 2 == 0 else list(reversed(list(timings)))
        for name in order:
            function = on_the_host if name.startswith("NumPy") else as_symbols
            device_p[:] = probabilities
            function()
            start = time.perf_counter()
            for _ in range(args.calls):
                function()
            timings[name].append(1e3 * (time.perf_counter() - start) / args.calls)
    print("batch %d, %d atoms on [%g, %g]; %d rounds of %d calls; the two agree to %.1e"
          % (args.batch, args.atoms, args.v_min, args.v_max, args.rounds, args.calls,
             difference))
    for name, values in timings.items():
        print("%-36s %.3f ms per projection (median)" % (name, statistics.median(values)))
    if difference > 1e-4:
        raise SystemExit("the two projections differ by %g" % difference)


if __name__ == "__main__":
    main()
