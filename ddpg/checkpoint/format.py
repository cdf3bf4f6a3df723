"""The names of a checkpoint folder: its format and versions, and the files it holds.

Everything that writes or reads a checkpoint takes the file names from here, so that the
writer (:mod:`ddpg.checkpoint.writer`), the reader (:mod:`ddpg.checkpoint.reader`) and the
crash recovery (:mod:`ddpg.checkpoint.atomic`) agree on them. The layout of the folder is
described in the package docstring (:mod:`ddpg.checkpoint`) and in docs/checkpoints.md.
"""

FORMAT = "ddpg-checkpoint"
#: 3: the replay memory holds the open n-step sums (version 2: the training state did;
#: :mod:`ddpg.checkpoint.upgrade` reads them)
FORMAT_VERSION = 3
#: The format whose training and optimiser states are pickles: read only when trusted.
PICKLED_FORMAT_VERSION = 1

MANIFEST = "manifest.json"
STATE_JSON = "training_state.json"
STATE_ARRAYS = "training_state.npz"
MEMORY = "replay_memory.npz"
#: The manifest's checksum of itself (of its canonical JSON without this key).
MANIFEST_DIGEST = "manifest_sha256"

#: How the error for an untrusted pickled checkpoint says what to do.
TRUST_HINT = ("loading a pickle can run any code it names, so only a checkpoint you trust "
              "should be opened this way: pass trust_pickle=True to DDPG.restore (or "
              "--trust-pickle to run_ddpg.py --resume and evaluate.py); saving the restored "
              "run writes the current format, which holds no pickle")


def params_file(network):
    """The file of one network's parameters (``mx.nd.save`` format)."""
    return network + ".params"


def optimizer_arrays_file(network):
    """The NDArray file of one optimiser's per-parameter state."""
    return network + ".optimizer.nd"


def optimizer_json_file(network):
    """The JSON file of one optimiser's counters and settings."""
    return network + ".optimizer.json"
