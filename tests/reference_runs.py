"""Seeded ``ddpg-train`` runs whose numbers must be the same on every supported Python and
numpy, and their fingerprints.

A run's fingerprint is every ``progress.csv`` value except the timings, the bytes of every
array of its final checkpoint (network parameters, optimiser states, replay memory, training
state: SHA-256 of dtype, shape and data) and its training state's plain data (the random
generators' states, counters) except the training time. tests/data/reference_runs.json holds
the fingerprints the reference environment (Python 3.11, numpy 1.23.5) gives;
tests/test_same_numbers.py compares the current environment's with them. To write the file
again, in the reference environment:

    python tests/reference_runs.py --write

The same numbers are promised across Pythons and numpy releases, not across instruction sets:
on a CPU with AVX-512, numpy's AVX-512 loops (float64 sin, cos and reductions, among
others), oneDNN's AVX-512 kernels inside MXNet and OpenBLAS's kernels for the newest CPUs
round differently from their AVX2 versions, so a run's last bits depend on the CPU. The runs
are therefore made with the three libraries held to AVX2
(:func:`instruction_set_environment`), the instruction set the reference was written with.
"""
import csv
import hashlib
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
RUN_SCRIPT = os.path.join(os.path.dirname(HERE), "examples", "run_ddpg.py")
REFERENCE_FILE = os.path.join(HERE, "data", "reference_runs.json")

#: The runs: name -> ddpg-train's arguments. Each exercises numpy arithmetic that a change of
#: type promotion (numpy 2's NEP 50) or of a random generator would alter.
RUNS = {
    # the MXNet example's cart-pole: OU noise, the global numpy generator, normalize()
    "cartpole": ["--env", "cartpole", "--n-epochs", "2", "--epoch-length", "300",
                 "--memory-start-size", "200", "--max-path-length", "100",
                 "--eval-samples", "200", "--seed", "3"],
    # gymnasium's generators; TD3, Gaussian noise with warm-up, n-step returns, prioritised
    # replay's sum tree and weights, two environments stepped together, observation
    # normalisation
    "pendulum-td3": ["--env", "Pendulum-v1", "--algo", "td3", "--strategy", "gaussian",
                     "--start-steps", "100", "--n-step", "3", "--prioritized-replay",
                     "--n-envs", "2", "--normalize-obs", "--batch-size", "32",
                     "--n-epochs", "2", "--epoch-length", "300", "--memory-start-size", "200",
                     "--max-path-length", "100", "--eval-samples", "200", "--seed", "4"],
    # DDPG's own update with OU noise, n-step returns and prioritised replay, four
    # environments stepped together in this process
    "pendulum-ddpg-4envs": ["--env", "Pendulum-v1", "--n-envs", "4", "--n-step", "3",
                            "--prioritized-replay", "--batch-size", "32", "--n-epochs", "2",
                            "--epoch-length", "400", "--memory-start-size", "200",
                            "--max-path-length", "100", "--eval-samples", "200", "--seed", "6"],
    # collection by two Ray actor processes in deterministic order (skipped without Ray)
    "cartpole-ray": ["--env", "cartpole", "--ray-actors", "2", "--ray-chunk", "50",
                     "--n-epochs", "2",
                     "--epoch-length", "300", "--memory-start-size", "200",
                     "--max-path-length", "100", "--eval-samples", "200", "--seed", "7"],
    # D4PG: the categorical projection on the host (numpy's bincount and float64 positions),
    # cross-entropy priorities, n-step returns
    "pendulum-d4pg": ["--env", "Pendulum-v1", "--algo", "d4pg", "--atoms", "21", "--v-min",
                      "-300", "--v-max", "0", "--n-step", "3", "--prioritized-replay",
                      "--strategy", "gaussian", "--start-steps", "100", "--batch-size", "32",
                      "--n-epochs", "2", "--epoch-length", "300", "--memory-start-size", "200",
                      "--max-path-length", "100", "--eval-samples", "200", "--seed", "8"],
    # MuJoCo through gymnasium-robotics: hindsight relabelling, the float64 observation
    # statistics of --obs-norm, the action penalty, random actions
    "fetchreach-her": ["--preset", "fetchreach", "--n-epochs", "2", "--epoch-length", "200",
                       "--eval-samples", "100", "--seed", "5"],
}

#: progress.csv columns that measure time, not the computation.
TIME_COLUMNS = ("Time", "ItrTime", "StepsPerSecond", "EnvStepsPerSecond", "UpdatesPerSecond",
                "SampleTime", "TrainTime")


def _is_time_column(name):
    return name in TIME_COLUMNS or "Time" in name or "PerSec" in name or name.endswith("/s")


def array_digest(array):
    """SHA-256 of an array's dtype, shape and bytes."""
    array = np.ascontiguousarray(array)
    digest = hashlib.sha256()
    digest.update(("%s %s|" % (array.dtype.str, array.shape)).encode())
    digest.update(array.tobytes())
    return digest.hexdigest()


def _without_time(value):
    if isinstance(value, dict):
        return {key: _without_time(item) for key, item in value.items()
                if key not in ("train_time", "created")}
    if isinstance(value, list):
        return [_without_time(item) for item in value]
    return value


def checkpoint_fingerprint(folder):
    """{file/array name: digest} of every array in the checkpoint folder, and the plain
    training state's digest."""
    import mxnet as mx  # pylint: disable=import-outside-toplevel
    fingerprint = {}
    for name in sorted(os.listdir(folder)):
        path = os.path.join(folder, name)
        if name.endswith((".params", ".nd")):
            loaded = mx.nd.load(path)
            items = loaded.items() if isinstance(loaded, dict) else enumerate(loaded)
            for key, value in items:
                fingerprint["%s/%s" % (name, key)] = array_digest(value.asnumpy())
        elif name.endswith(".npz"):
            with np.load(path, allow_pickle=False) as arrays:
                for key in sorted(arrays.files):
                    fingerprint["%s/%s" % (name, key)] = array_digest(arrays[key])
        elif name == "training_state.json" or name.endswith(".optimizer.json"):
            with open(path) as state_file:
                plain = _without_time(json.load(state_file))
            fingerprint[name] = hashlib.sha256(
                json.dumps(plain, sort_keys=True).encode()).hexdigest()
    return fingerprint


def progress_values(path):
    """progress.csv's rows without the timing columns."""
    with open(path) as progress_file:
        return [{key: value for key, value in row.items() if not _is_time_column(key)}
                for row in csv.DictReader(progress_file)]


def _numpy_cpu_tables():
    """numpy's (features this CPU has, targets this numpy build dispatches to)."""
    try:
        from numpy._core import _multiarray_umath as umath  # numpy 2
    except ImportError:  # numpy 1
        from numpy.core import _multiarray_umath as umath
    return umath.__cpu_features__, umath.__cpu_dispatch__


def instruction_set_environment():
    """Environment variables that hold numpy and MXNet's oneDNN to AVX2 in a new process.

    numpy: ``NPY_DISABLE_CPU_FEATURES`` names the AVX-512 targets that this numpy build
    dispatches to and this CPU has (``AVX512_SKX``, ``AVX512_ICL``, ...; numpy 2.4 also
    groups AVX-512 as ``X86_V4``). Naming one the CPU lacks is an error, so nothing is named
    on a CPU without AVX-512. oneDNN: ``DNNL_MAX_CPU_ISA=AVX2`` is a ceiling, harmless below
    it. OpenBLAS (numpy's and MXNet's own copies) picks its kernels by CPU model: on a Sapphire
    Rapids CPU its Cooper Lake kernels sum a matrix product in another order than its Haswell
    (AVX2) ones, so ``OPENBLAS_CORETYPE=Haswell`` where the CPU has AVX2 (a CPU without AVX2
    could not run those kernels).
    """
    features, dispatched = _numpy_cpu_tables()
    avx512 = [name for name in dispatched
              if (name.startswith("AVX512") or name == "X86_V4") and features.get(name)]
    environment_variables = {"DNNL_MAX_CPU_ISA": "AVX2"}
    if features.get("AVX2") or features.get("X86_V3"):
        environment_variables["OPENBLAS_CORETYPE"] = "Haswell"
    if avx512:
        environment_variables["NPY_DISABLE_CPU_FEATURES"] = " ".join(avx512)
    return environment_variables


def run_fingerprint(name, workdir):
    """Run ``RUNS[name]`` with this interpreter in a folder under ``workdir``; its
    fingerprint: ``{"progress": [...], "checkpoint": {...}}``."""
    log_dir = os.path.join(workdir, name)
    command = [sys.executable, RUN_SCRIPT] + RUNS[name] + [
        "--log-dir", log_dir, "--no-progress-bar"]
    env = dict(os.environ, OMP_NUM_THREADS="1", **instruction_set_environment())
    finished = subprocess.run(command, capture_output=True, text=True, env=env, cwd=workdir,
                              timeout=600)
    if finished.returncode != 0:
        raise RuntimeError("%s failed:\n%s" % (" ".join(command), finished.stderr[-3000:]))
    return {"progress": progress_values(os.path.join(log_dir, "progress.csv")),
            "checkpoint": checkpoint_fingerprint(os.path.join(log_dir, "params"))}


def environment():
    return {"python": "%d.%d.%d" % sys.version_info[:3], "numpy": np.__version__}


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv != ["--write"]:
        sys.exit("usage: python tests/reference_runs.py --write")
    with tempfile.TemporaryDirectory() as workdir:
        runs = {name: run_fingerprint(name, workdir) for name in RUNS}
    with open(REFERENCE_FILE, "w") as out:
        json.dump({"written_with": environment(), "runs": runs}, out, indent=1,
                  sort_keys=True)
        out.write("\n")
    print("wrote %s" % REFERENCE_FILE)


if __name__ == "__main__":
    main()
