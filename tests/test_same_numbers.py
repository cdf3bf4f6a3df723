"""A seeded run gives the same numbers on every supported Python and numpy.

The runs of tests/reference_runs.py, repeated here with this interpreter, must give exactly
the fingerprints of tests/data/reference_runs.json, written with Python 3.11 and numpy 1.23.5:
every progress.csv value but the timings, every array of the final checkpoint and the
training state's random generators, with numpy and MXNet held to AVX2 (see
tests/reference_runs.py). CI runs the suite on the oldest and the newest
supported Python (numpy 1.x and 2.x), so a computation whose result depends on numpy's type
promotion or on the Python release fails here on one of them.
"""
import json

import pytest

import reference_runs


@pytest.fixture(scope="module")
def reference():
    with open(reference_runs.REFERENCE_FILE) as reference_file:
        return json.load(reference_file)


def _differences(expected, actual):
    """Human-readable differences between two fingerprints (at most a few)."""
    found = []
    for row, (want, got) in enumerate(zip(expected["progress"], actual["progress"])):
        found += ["progress.csv row %d %s: %s, expected %s" % (row, key, got.get(key), value)
                  for key, value in want.items() if got.get(key) != value]
    if len(expected["progress"]) != len(actual["progress"]):
        found.append("progress.csv has %d rows, expected %d"
                     % (len(actual["progress"]), len(expected["progress"])))
    for name in sorted(set(expected["checkpoint"]) | set(actual["checkpoint"])):
        if expected["checkpoint"].get(name) != actual["checkpoint"].get(name):
            found.append("checkpoint %s differs" % name)
    return found


#: run -> the optional package it needs (the suite skips what cannot be installed).
NEEDS = {"cartpole-ray": "ray", "fetchreach-her": "gymnasium_robotics"}


@pytest.mark.parametrize("name", sorted(reference_runs.RUNS))
def test_new_process_run_matches_the_reference_environment(name, reference, tmp_path):
    if name in NEEDS:
        pytest.importorskip(NEEDS[name])
    actual = reference_runs.run_fingerprint(name, str(tmp_path))
    differences = _differences(reference["runs"][name], actual)
    assert not differences, "%s on %s differs from %s:\n%s" % (
        name, reference_runs.environment(), reference["written_with"],
        "\n".join(differences[:20]))


def test_fingerprint_sees_one_changed_number(reference):
    """The comparison catches a single value: a progress number or one array's bytes."""
    expected = reference["runs"]["cartpole"]
    changed = json.loads(json.dumps(expected))
    changed["progress"][1]["AverageQ"] = changed["progress"][1]["AverageQ"] + "1"
    assert _differences(expected, changed) == [
        "progress.csv row 1 AverageQ: %s, expected %s"
        % (changed["progress"][1]["AverageQ"], expected["progress"][1]["AverageQ"])]
    changed = json.loads(json.dumps(expected))
    changed["checkpoint"]["qfunc.params/qfunc_qval_weight"] = "0" * 64
    assert _differences(expected, changed) == [
        "checkpoint qfunc.params/qfunc_qval_weight differs"]


def test_array_digest_covers_dtype_shape_and_bytes():
    import numpy as np
    base = reference_runs.array_digest(np.zeros((2, 3), dtype=np.float32))
    assert reference_runs.array_digest(np.zeros((3, 2), dtype=np.float32)) != base
    assert reference_runs.array_digest(np.zeros((2, 3), dtype=np.float64)) != base
    assert reference_runs.array_digest(np.full((2, 3), -0.0, dtype=np.float32)) != base
    assert reference_runs.array_digest(np.zeros((2, 3), dtype=np.float32)) == base


def test_timing_columns_are_left_out(tmp_path):
    path = tmp_path / "progress.csv"
    path.write_text("Epoch,Time,ItrTime,EnvStepsPerSecond,AverageQ\n0,1.5,0.2,900,3.25\n")
    assert reference_runs.progress_values(str(path)) == [{"Epoch": "0", "AverageQ": "3.25"}]


def _environment_for(monkeypatch, features, dispatched):
    """instruction_set_environment() on a CPU with ``features`` and a numpy dispatching to
    ``dispatched``."""
    monkeypatch.setattr(reference_runs, "_numpy_cpu_tables", lambda: (features, dispatched))
    return reference_runs.instruction_set_environment()


def test_runs_hold_numpy_and_onednn_to_avx2(monkeypatch):
    """Only AVX-512 targets that numpy dispatches to and the CPU has are disabled (naming one
    the CPU lacks stops numpy's import); oneDNN always gets the AVX2 ceiling; OpenBLAS gets
    its Haswell kernels where the CPU has AVX2, and its own choice where it has not."""
    numpy_1 = ["AVX2", "AVX512F", "AVX512_KNL", "AVX512_SKX"]
    assert _environment_for(monkeypatch, {"AVX2": True, "AVX512F": True, "AVX512_SKX": True,
                                          "AVX512_KNL": False, "AVX512VL": True}, numpy_1) == {
        "DNNL_MAX_CPU_ISA": "AVX2", "NPY_DISABLE_CPU_FEATURES": "AVX512F AVX512_SKX",
        "OPENBLAS_CORETYPE": "Haswell"}
    # numpy 2.4's names: the x86-64 levels, and AVX-512 extensions above X86_V4
    numpy_2 = ["X86_V3", "X86_V4", "AVX512_ICL", "AVX512_SPR"]
    assert _environment_for(monkeypatch, {"X86_V2": True, "X86_V3": True, "X86_V4": True,
                                          "AVX512_ICL": True, "AVX512_SPR": False}, numpy_2) == {
        "DNNL_MAX_CPU_ISA": "AVX2", "NPY_DISABLE_CPU_FEATURES": "X86_V4 AVX512_ICL",
        "OPENBLAS_CORETYPE": "Haswell"}
    assert _environment_for(monkeypatch, {"AVX2": True, "AVX512F": False}, numpy_1) == {
        "DNNL_MAX_CPU_ISA": "AVX2", "OPENBLAS_CORETYPE": "Haswell"}
    assert _environment_for(monkeypatch, {"AVX2": False, "AVX512F": False}, numpy_1) == {
        "DNNL_MAX_CPU_ISA": "AVX2"}
