"""Write tests/data/v2_cartpole: a small checkpoint of format version 2, as the library saves it.

    python tests/data/make_v2_cartpole.py

tests/test_checkpoint_details.py checks that the current code opens and restores it exactly,
so that a change to how the manifest or any file is written or read (its canonical JSON, its
key names, the optimiser state's tag) cannot go unnoticed. Rerun this script only for a
deliberate change of the format (with a new ``FORMAT_VERSION``, keeping the old fixture).
The networks (4 units a layer), the memory (200 transitions) and the run (one epoch of 60
steps) are tiny, so the folder stays small.
"""
import os
import shutil
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))  # tests/, for ckpt_helpers

from ckpt_helpers import build  # noqa: E402

FIXTURE = os.path.join(HERE, "v2_cartpole")
#: The algorithm of the fixture (``ckpt_helpers.build`` arguments): restore into this.
SETTINGS = dict(kind="cartpole", hidden=4, n_epochs=1, epoch_length=60, memory_size=200,
                memory_start_size=30, eval_samples=20)
#: The run's ``checkpoint_metadata``, which the manifest records.
METADATA = {"fixture": "v2_cartpole", "sizes": [4, 4]}


def build_algo():
    return build(**SETTINGS)


def main():
    from ddpg import logger
    logger.set_log_tabular_only(True)
    algo = build_algo()
    algo.train()
    algo.checkpoint_metadata = METADATA
    shutil.rmtree(FIXTURE, ignore_errors=True)
    algo.save(FIXTURE)
    print("wrote %s: %d bytes" % (FIXTURE, sum(os.path.getsize(os.path.join(FIXTURE, name))
                                               for name in os.listdir(FIXTURE))))


if __name__ == "__main__":
    main()
