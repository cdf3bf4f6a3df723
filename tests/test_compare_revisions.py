"""benchmarks/compare_revisions.py without a benchmark: the ABBA order, the ratios, medians and
verdict on given numbers, the reading of throughput.py's output, the check of which tree's
ddpg a measurement imported, the base worktree's removal and the one-line flag errors."""
import importlib.util
import os
import subprocess
import sys

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BENCHMARKS = os.path.join(REPO, "benchmarks")


@pytest.fixture(scope="module")
def compare():
    if BENCHMARKS not in sys.path:  # the script imports benchmarks/contender_protocol.py
        sys.path.insert(0, BENCHMARKS)
    spec = importlib.util.spec_from_file_location(
        "compare_revisions", os.path.join(BENCHMARKS, "compare_revisions.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_rounds_alternate_which_tree_runs_first(compare):
    orders = [compare.round_order(index) for index in range(4)]
    assert orders == [("base", "current"), ("current", "base"),
                      ("base", "current"), ("current", "base")]


def test_ratios_medians_and_verdict(compare):
    summary = compare.summarise([1000.0, 900.0, 1100.0], [1010.0, 870.0, 1210.0], 3.0)
    assert summary["median_base"] == 1000.0 and summary["median_current"] == 1010.0
    assert summary["ratios"] == pytest.approx([1.01, 870.0 / 900.0, 1.1])
    # the median of the ratios, not the ratio of the medians (1.01)
    assert summary["median_ratio"] == pytest.approx(1.01)
    assert summary["within_tolerance"]
    assert summary["verdict"] == "within 3% of base: current/base 1.010 (1.0% faster)"


def test_a_ratio_outside_the_tolerance_is_not_within(compare):
    summary = compare.summarise([1000.0, 1000.0], [950.0, 940.0], 3.0)
    assert summary["median_ratio"] == pytest.approx(0.945)
    assert not summary["within_tolerance"]
    assert summary["verdict"] == "NOT within 3% of base: current/base 0.945 (5.5% slower)"
    assert compare.summarise([100.0], [104.0], 5)["verdict"].startswith("within 5% of base")
    with pytest.raises(ValueError):
        compare.summarise([1.0, 2.0], [1.0], 3.0)


WORKER_OUTPUT = """\
some MXNet warning: config 4 (not ours): ours 1.0 steps/s
config 1 (original sizes: 32-unit layers, batch 32): ours 1466.7 steps/s (oneDNN off, 1 OpenMP \
thread)
ddpg imported from /somewhere/tree/ddpg/__init__.py
"""


def test_parses_our_steps_per_s_from_throughput_output(compare):
    assert compare.parse_steps_per_s(WORKER_OUTPUT, "1") == 1466.7
    assert compare.parse_steps_per_s("config 2 (paper sizes: 400-300, batch 64): ours 3.1e2 "
                                     "steps/s (oneDNN on, 1 OpenMP thread)\n", "2") == 310.0
    for output, config in ((WORKER_OUTPUT, "2"), ("", "1"), (WORKER_OUTPUT * 2, "1")):
        with pytest.raises(ValueError):
            compare.parse_steps_per_s(output, config)


def test_a_measurement_of_another_tree_s_ddpg_is_an_error(compare):
    compare.check_imported_from(WORKER_OUTPUT, "/somewhere/tree")
    with pytest.raises(RuntimeError, match="imported ddpg from /somewhere/tree"):
        compare.check_imported_from(WORKER_OUTPUT, "/somewhere/other")
    with pytest.raises(RuntimeError, match="nowhere"):
        compare.check_imported_from("config 1 (x): ours 1.0 steps/s\n", "/somewhere/tree")


def test_each_tree_runs_its_own_script_with_itself_first_on_the_path(compare):
    args = compare.parse_args(["--steps", "300", "--warmup", "200", "--threads", "2",
                               "--base", "HEAD"])
    command, env = compare.measure_command("python", "/t/base", "4", args)
    assert command[3] == os.path.join("/t/base", "benchmarks", "throughput.py")
    assert command[4:] == ["--worker", "4", "--steps", "300", "--warmup", "200",
                           "--threads", "2", "--skip-sb3", "--skip-jax", "--skip-gluon",
                           "--no-breakdown"]
    assert env["PYTHONPATH"].split(os.pathsep)[0] == "/t/base"


def test_the_wrapper_names_the_imported_package(compare, tmp_path):
    """WRAPPER runs a script as __main__ with its flags, then prints ddpg.__file__."""
    script = tmp_path / "script.py"
    script.write_text("import sys\nprint('args', sys.argv[1:], __name__)\n")
    fake = tmp_path / "ddpg"
    fake.mkdir()
    (fake / "__init__.py").write_text("")
    result = subprocess.run([sys.executable, "-c", compare.WRAPPER, str(script), "--x", "1"],
                            cwd=str(tmp_path), env=dict(os.environ, PYTHONPATH=str(tmp_path)),
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert "args ['--x', '1'] __main__" in result.stdout
    compare.check_imported_from(result.stdout, str(tmp_path))


def test_the_base_worktree_is_removed_also_on_an_error(compare):
    commit = compare.resolve_revision("HEAD")
    with pytest.raises(KeyboardInterrupt):
        with compare.base_worktree(commit) as tree:
            assert os.path.isfile(os.path.join(tree, "benchmarks", "throughput.py"))
            raise KeyboardInterrupt
    assert not os.path.exists(tree)
    assert tree not in subprocess.run(["git", "-C", REPO, "worktree", "list"],
                                      capture_output=True, text=True).stdout


@pytest.mark.parametrize("argv, message", [
    (["--base", "no-such-revision-xyz"], "--base: no git revision 'no-such-revision-xyz'"),
    (["--rounds", "0"], "argument --rounds: must be at least 1, not 0"),
    (["--json", "/no/such/folder/out.json"], "--json: no folder '/no/such/folder'"),
])
def test_bad_flags_are_one_line_and_exit_2(compare, capsys, argv, message):
    with pytest.raises(SystemExit) as exit_info:
        compare.main(argv)
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert err == "compare_revisions.py: error: %s\n" % message
