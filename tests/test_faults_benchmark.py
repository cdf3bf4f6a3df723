"""benchmarks/faults.py, short: SIGKILLs (one of them during a save), resumes, same end state.

Also the piece of run_ddpg.py --resume it depends on: progress.csv rows written after the
checkpoint (a kill between an epoch's row and its save) are dropped when resuming.
"""
import json
import os
import subprocess
import sys

from ddpg.experiment import continue_progress

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BENCH = os.path.join(REPO, "benchmarks", "faults.py")
TINY_RUN = ["--n-epochs", "8", "--epoch-length", "100", "--memory-start-size", "50",
            "--eval-samples", "50", "--memory-size", "5000", "--ctx", "cpu",
            "--policy-hidden-sizes", "8", "8", "--qfunc-hidden-sizes", "8", "8", "8",
            "--no-progress-bar", "--seed", "5"]


def test_killed_and_resumed_run_ends_bit_identical(tmp_path):
    out = str(tmp_path / "figures.json")
    result = subprocess.run([sys.executable, BENCH, "--kills", "2", "--seed", "3", "--json",
                             out, "--"] + TINY_RUN, capture_output=True, text=True,
                            timeout=600)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-3000:]
    assert "bit-identical: yes" in result.stdout
    with open(out) as handle:
        figures = json.load(handle)
    assert figures["kills_survived"] == 2 and figures["epochs"] == 8
    assert figures["parameters_identical"] and figures["progress_rows_identical"]


def test_a_killed_d4pg_run_with_n_step_returns_and_priorities_resumes_bit_identical(tmp_path):
    out = str(tmp_path / "figures.json")
    result = subprocess.run([sys.executable, BENCH, "--kills", "2", "--seed", "4", "--json",
                             out, "--"] + TINY_RUN + ["--algo", "d4pg", "--atoms", "11",
                                                      "--v-min", "-20", "--v-max", "20",
                                                      "--n-step", "3", "--prioritized-replay"],
                            capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-3000:]
    assert "bit-identical: yes" in result.stdout
    with open(out) as handle:
        figures = json.load(handle)
    assert figures["kills_survived"] == 2 and figures["parameters_identical"]


def test_resume_drops_progress_rows_after_the_checkpoint(tmp_path):
    path = tmp_path / "progress.csv"
    path.write_text("Epoch,AverageReturn\n0,1.5\n1,2.5\n2,3.5\n3,4")  # the last one cut short
    assert continue_progress(str(tmp_path), 2) == 2  # row 2 and the cut-short row 3
    assert path.read_text() == "Epoch,AverageReturn\n0,1.5\n1,2.5\n"
    assert continue_progress(str(tmp_path), 2) == 0
    assert continue_progress(str(tmp_path / "missing"), 2) == 0
