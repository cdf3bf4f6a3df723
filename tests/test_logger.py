"""Tests for ddpg.logger: rllab-compatible behaviour plus the aligned-CSV fix."""

import csv
import os
import pickle
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ddpg import logger as logger_module
from ddpg.logger import Logger

# "2024-05-01 12:34:56.123456 UTC | " (the zone name may be absent on odd systems)
STAMP = r"\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\.\d{6}(?: \S+)? \| "


@pytest.fixture
def lg():
    inst = Logger()
    yield inst
    inst.reset()  # close files even when a test fails


@pytest.fixture
def default_logger():
    logger_module.reset()
    yield logger_module
    logger_module.reset()


def read_rows(path):
    with open(path, newline="") as f:
        reader = csv.DictReader(f)
        return reader.fieldnames, list(reader)


def visible_files(directory):
    return sorted(os.listdir(directory))


# ---------------------------------------------------------------------------
# Text logging
# ---------------------------------------------------------------------------

def test_log_line_has_timestamp_and_stacked_prefixes(lg, capsys):
    lg.push_prefix("epoch #3 | ")
    lg.push_prefix("eval | ")
    lg.log("hello")
    lg.pop_prefix()
    lg.log("after pop")
    lines = capsys.readouterr().out.splitlines()
    assert re.fullmatch(STAMP + r"epoch #3 \| eval \| hello", lines[0])
    assert re.fullmatch(STAMP + r"epoch #3 \| after pop", lines[1])


def test_log_without_prefix_or_timestamp(lg, capsys):
    lg.push_prefix("P | ")
    lg.log("a", with_prefix=False)
    lg.log("b", with_timestamp=False)
    lg.log("c", with_prefix=False, with_timestamp=False)
    lines = capsys.readouterr().out.splitlines()
    assert re.fullmatch(STAMP + "a", lines[0])
    assert lines[1:] == ["P | b", "c"]


def test_prefix_context_manager_pops_even_on_error(lg, capsys):
    with pytest.raises(RuntimeError):
        with lg.prefix("outer | "):
            with lg.prefix("inner | "):
                lg.log("x", with_timestamp=False)
                raise RuntimeError
    lg.log("y", with_timestamp=False)
    assert capsys.readouterr().out.splitlines() == ["outer | inner | x", "y"]


def test_pop_prefix_on_empty_stack_raises(lg):
    with pytest.raises(IndexError):
        lg.pop_prefix()
    with pytest.raises(IndexError):
        lg.pop_tabular_prefix()


def test_text_output_receives_lines_and_dedups(lg, tmp_path, capsys):
    path = tmp_path / "sub" / "dir" / "debug.log"  # parent folders created
    lg.add_text_output(str(path))
    lg.add_text_output(str(path))  # second add is a no-op: no doubled lines
    with lg.prefix("p | "):
        lg.log("one", with_timestamp=False)
        lg.log("two", color="red")
    lg.remove_text_output(str(path))
    lg.log("not in file")
    lg.remove_text_output(str(path))  # removing twice is harmless
    lines = path.read_text().splitlines()
    assert lines[0] == "p | one"
    assert re.fullmatch(STAMP + r"p \| two", lines[1])  # no colour codes in files
    assert len(lines) == 2
    out = capsys.readouterr().out
    assert "\x1b[31m" in out and "not in file" in out


def test_text_output_appends_to_existing_file(lg, tmp_path):
    path = tmp_path / "debug.log"
    path.write_text("old line\n")
    lg.add_text_output(str(path))
    lg.log("new line", with_timestamp=False)
    assert path.read_text() == "old line\nnew line\n"


def test_log_tabular_only_silences_log_but_prints_bare_table(lg, tmp_path, capsys):
    lg.add_text_output(str(tmp_path / "debug.log"))
    lg.add_tabular_output(str(tmp_path / "progress.csv"))
    lg.set_log_tabular_only(True)
    assert lg.get_log_tabular_only() is True
    with lg.prefix("epoch #0 | "):
        lg.log("silenced")
        lg.record_tabular("Loss", 0.5)
        lg.dump_tabular()
    out = capsys.readouterr().out
    assert "silenced" not in out and "epoch #0" not in out
    assert re.search(r"^Loss\s+0\.5$", out, re.M)
    assert (tmp_path / "debug.log").read_text() == ""
    assert read_rows(str(tmp_path / "progress.csv"))[1] == [{"Loss": "0.5"}]


# ---------------------------------------------------------------------------
# Printed table
# ---------------------------------------------------------------------------

def test_dump_tabular_prints_two_aligned_columns(lg, capsys):
    lg.record_tabular("Epoch", 3)
    lg.record_tabular("AverageReturn", 123.456789)
    lg.record_tabular("Name", "cartpole")
    lg.dump_tabular(with_timestamp=False)
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 5
    assert lines[0] == lines[-1] and set(lines[0]) == {"-", " "}
    body = lines[1:-1]
    assert [line.split() for line in body] == [
        ["Epoch", "3"], ["AverageReturn", "123.457"], ["Name", "cartpole"]]
    # Keys start in column 0; every value ends in the same column; the value
    # column starts after the longest key plus the two-space gutter.
    key_width = len("AverageReturn")
    assert len({len(line) for line in lines}) == 1
    for line in body:
        assert line[key_width:key_width + 2] == "  "
        assert line[:key_width].rstrip() == line.split()[0]


def test_table_lines_carry_prefix_and_timestamp(lg, capsys):
    lg.push_prefix("epoch #1 | ")
    lg.record_tabular("A", 1)
    lg.dump_tabular()
    lg.record_tabular("A", 2)
    lg.dump_tabular(with_prefix=False, with_timestamp=False)
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 6
    for line in lines[:3]:
        assert re.match(STAMP + r"epoch #1 \| ", line)
    assert lines[4].split() == ["A", "2"] and not lines[4].startswith("epoch")


def test_dump_with_nothing_recorded_writes_nothing(lg, tmp_path, capsys):
    csv_path = tmp_path / "progress.csv"
    lg.add_tabular_output(str(csv_path))
    lg.dump_tabular()
    assert capsys.readouterr().out == ""
    assert not csv_path.exists() or csv_path.read_text() == ""


def test_dump_clears_recorded_values(lg, capsys):
    lg.record_tabular("A", 1)
    assert lg.get_tabular_keys() == ["A"]
    lg.dump_tabular()
    assert lg.get_tabular_keys() == []
    capsys.readouterr()
    lg.dump_tabular()
    assert capsys.readouterr().out == ""


def test_tabular_prefix_and_rerecording(lg):
    with lg.tabular_prefix("Eval"):
        with lg.tabular_prefix("Deterministic"):
            lg.record_tabular("Return", 1.0)
    lg.record_tabular("Epoch", 0)
    lg.record_tabular("Eval" + "Deterministic" + "Return", 2.0)  # overwrite keeps position
    assert lg.get_tabular_keys() == ["EvalDeterministicReturn", "Epoch"]
    assert lg._tabular["EvalDeterministicReturn"] == 2.0


# ---------------------------------------------------------------------------
# CSV output
# ---------------------------------------------------------------------------

def dump_row(lg, row):
    for key, val in row.items():
        lg.record_tabular(key, val)
    lg.dump_tabular()


def test_csv_rows_with_varying_keys_stay_aligned(lg, tmp_path, capsys):
    path = str(tmp_path / "out" / "progress.csv")
    lg.add_tabular_output(path)
    dump_row(lg, {"A": 1, "B": 2})
    dump_row(lg, {"A": 3, "C": 4})
    dump_row(lg, {"B": 5})
    header, rows = read_rows(path)
    assert header == ["A", "B", "C"]
    assert rows == [
        {"A": "1", "B": "2", "C": ""},
        {"A": "3", "B": "", "C": "4"},
        {"A": "", "B": "5", "C": ""},
    ]
    # Every physical line has the same number of cells.
    with open(path, newline="") as f:
        assert {len(r) for r in csv.reader(f)} == {3}


def test_header_widening_keeps_earlier_rows_and_leaves_no_temp(lg, tmp_path, capsys):
    path = str(tmp_path / "progress.csv")
    lg.add_tabular_output(path)
    for i in range(5):
        dump_row(lg, {"Epoch": i, "Loss": i / 10.0})
    dump_row(lg, {"Epoch": 5, "Loss": 0.5, "AverageReturn": 9.5})
    dump_row(lg, {"Loss": 0.6, "Epoch": 6})  # different order, same columns
    header, rows = read_rows(path)
    assert header == ["Epoch", "Loss", "AverageReturn"]
    assert [r["Epoch"] for r in rows] == [str(i) for i in range(7)]
    assert [float(r["Loss"]) for r in rows] == [i / 10.0 for i in range(7)]
    assert [r["AverageReturn"] for r in rows] == [""] * 5 + ["9.5", ""]
    assert visible_files(str(tmp_path)) == ["progress.csv"]


def test_csv_is_readable_between_dumps(lg, tmp_path, capsys):
    """Each dump flushes, so a reader sees complete rows while training runs."""
    path = str(tmp_path / "progress.csv")
    lg.add_tabular_output(path)
    dump_row(lg, {"A": 1})
    assert read_rows(path)[1] == [{"A": "1"}]
    dump_row(lg, {"A": 2})
    assert read_rows(path)[1] == [{"A": "1"}, {"A": "2"}]
    dump_row(lg, {"B": 3})  # widening rewrite, then appends continue
    dump_row(lg, {"A": 4, "B": 5})
    assert read_rows(path)[1] == [
        {"A": "1", "B": ""}, {"A": "2", "B": ""}, {"A": "", "B": "3"},
        {"A": "4", "B": "5"}]


def test_readding_existing_csv_continues_it(lg, tmp_path, capsys):
    path = str(tmp_path / "progress.csv")
    lg.add_tabular_output(path)
    dump_row(lg, {"Epoch": 0, "Loss": 1.5})
    lg.reset()

    resumed = Logger()
    try:
        resumed.add_tabular_output(path)
        dump_row(resumed, {"Loss": 0.5, "Epoch": 1})  # other order
        dump_row(resumed, {"Epoch": 2, "Return": 7})  # new key widens
    finally:
        resumed.reset()
    header, rows = read_rows(path)
    assert header == ["Epoch", "Loss", "Return"]
    assert rows == [
        {"Epoch": "0", "Loss": "1.5", "Return": ""},
        {"Epoch": "1", "Loss": "0.5", "Return": ""},
        {"Epoch": "2", "Loss": "", "Return": "7"},
    ]


def test_existing_csv_without_trailing_newline(lg, tmp_path, capsys):
    path = tmp_path / "progress.csv"
    path.write_text("A,B\n1,2")  # e.g. a run killed mid-write
    lg.add_tabular_output(str(path))
    dump_row(lg, {"B": 3})
    assert read_rows(str(path))[1] == [{"A": "1", "B": "2"}, {"A": "", "B": "3"}]


def test_add_tabular_output_twice_writes_one_row(lg, tmp_path, capsys):
    path = str(tmp_path / "progress.csv")
    lg.add_tabular_output(path)
    lg.add_tabular_output(os.path.join(str(tmp_path), ".", "progress.csv"))
    dump_row(lg, {"A": 1})
    assert read_rows(path)[1] == [{"A": "1"}]
    lg.remove_tabular_output(path)
    dump_row(lg, {"A": 2})
    assert read_rows(path)[1] == [{"A": "1"}]


def test_csv_writes_every_tabular_output(lg, tmp_path, capsys):
    a, b = str(tmp_path / "a.csv"), str(tmp_path / "b.csv")
    lg.add_tabular_output(a)
    dump_row(lg, {"X": 1})
    lg.add_tabular_output(b)
    dump_row(lg, {"X": 2})
    assert [r["X"] for r in read_rows(a)[1]] == ["1", "2"]
    assert [r["X"] for r in read_rows(b)[1]] == ["2"]


def test_csv_value_conversion(lg, tmp_path, capsys):
    path = str(tmp_path / "progress.csv")
    lg.add_tabular_output(path)
    dump_row(lg, {
        "f32": np.float32(0.1),
        "i64": np.int64(7),
        "arr0d": np.array(2.5),
        "flag": True,
        "nan": float("nan"),
        "text": 'has, comma and "quote"',
    })
    row = read_rows(path)[1][0]
    assert float(row["f32"]) == float(np.float32(0.1))
    assert row["i64"] == "7"
    assert row["arr0d"] == "2.5"
    assert row["flag"] == "True"
    assert row["nan"] == "nan"
    assert row["text"] == 'has, comma and "quote"'


@settings(max_examples=50, deadline=None)
@given(st.floats(allow_nan=False, allow_infinity=True))
def test_csv_float_round_trip(tmp_path_factory, value):
    path = str(tmp_path_factory.mktemp("rt") / "progress.csv")
    lg = Logger()
    lg.set_log_tabular_only(True)
    try:
        lg.add_tabular_output(path)
        lg.record_tabular("V", value)
        lg.record_tabular("V64", np.float64(value))
        lg.dump_tabular()
    finally:
        lg.reset()
    row = read_rows(path)[1][0]
    assert float(row["V"]) == value
    assert float(row["V64"]) == value


# ---------------------------------------------------------------------------
# record_tabular_misc_stat
# ---------------------------------------------------------------------------

def test_misc_stat_names_and_values(lg):
    values = [1.0, 2.0, 4.0, 10.0]
    lg.record_tabular_misc_stat("Return", values)
    lg.record_tabular_misc_stat("Return", np.array(values) * 2, placement="front")
    tab = lg._tabular
    assert list(tab) == [
        "ReturnAverage", "ReturnStd", "ReturnMedian", "ReturnMin", "ReturnMax",
        "AverageReturn", "StdReturn", "MedianReturn", "MinReturn", "MaxReturn"]
    expected = [np.mean(values), np.std(values), np.median(values),
                np.min(values), np.max(values)]
    assert [tab[k] for k in list(tab)[:5]] == pytest.approx(expected)
    assert [tab[k] for k in list(tab)[5:]] == pytest.approx([2 * e for e in expected])


def test_misc_stat_empty_values_are_nan(lg):
    lg.record_tabular_misc_stat("Q", [], placement="front")
    assert lg.get_tabular_keys() == [
        "AverageQ", "StdQ", "MedianQ", "MinQ", "MaxQ"]
    assert all(np.isnan(v) for v in lg._tabular.values())


def test_misc_stat_rejects_bad_placement(lg):
    with pytest.raises(ValueError):
        lg.record_tabular_misc_stat("Q", [1.0], placement="middle")


# ---------------------------------------------------------------------------
# Snapshots
# ---------------------------------------------------------------------------

def save_iterations(lg, directory, mode, gap=1, n=5):
    lg.set_snapshot_dir(str(directory))
    lg.set_snapshot_mode(mode)
    lg.set_snapshot_gap(gap)
    return [lg.save_itr_params(itr, {"itr": itr}) for itr in range(n)]


def load(path):
    with open(path, "rb") as f:
        return pickle.load(f)


def test_snapshot_mode_all(lg, tmp_path):
    returned = save_iterations(lg, tmp_path / "snap", "all")
    names = ["itr_%d.pkl" % i for i in range(5)]
    assert visible_files(str(tmp_path / "snap")) == sorted(names)
    assert returned == [str(tmp_path / "snap" / n) for n in names]
    assert load(str(tmp_path / "snap" / "itr_3.pkl")) == {"itr": 3}


def test_snapshot_mode_last(lg, tmp_path):
    save_iterations(lg, tmp_path, "last")
    assert visible_files(str(tmp_path)) == ["params.pkl"]
    assert load(str(tmp_path / "params.pkl")) == {"itr": 4}


def test_snapshot_mode_gap(lg, tmp_path):
    save_iterations(lg, tmp_path, "gap", gap=3, n=8)
    assert visible_files(str(tmp_path)) == ["itr_0.pkl", "itr_3.pkl", "itr_6.pkl"]


def test_snapshot_mode_none_and_no_dir(lg, tmp_path):
    assert save_iterations(lg, tmp_path / "snap", "none") == [None] * 5
    assert not (tmp_path / "snap").exists()
    lg.set_snapshot_mode("all")
    lg.set_snapshot_dir(None)
    assert lg.save_itr_params(0, {"x": 1}) is None


def test_snapshot_settings_validation(lg):
    assert (lg.get_snapshot_dir(), lg.get_snapshot_mode(), lg.get_snapshot_gap()) \
        == (None, "all", 1)
    for bad in ("ALL", "every", None):
        with pytest.raises(ValueError):
            lg.set_snapshot_mode(bad)
    for bad in (0, -2, 1.5, True, "3"):
        with pytest.raises(ValueError):
            lg.set_snapshot_gap(bad)
    lg.set_snapshot_gap(np.int64(4))
    assert lg.get_snapshot_gap() == 4
    assert lg.get_snapshot_mode() == "all"


def test_snapshot_callable_writes_folder(lg, tmp_path):
    calls = []

    def save_folder(path):
        calls.append(path)
        os.makedirs(path)
        with open(os.path.join(path, "weights.txt"), "w") as f:
            f.write("itr %d" % len(calls))

    lg.set_snapshot_dir(str(tmp_path))
    lg.set_snapshot_mode("last")
    assert lg.save_itr_params(0, save_folder) == str(tmp_path / "params")
    lg.save_itr_params(1, save_folder)  # replaces an existing folder
    assert visible_files(str(tmp_path)) == ["params"]
    assert os.listdir(str(tmp_path / "params")) == ["weights.txt"]
    assert (tmp_path / "params" / "weights.txt").read_text() == "itr 2"
    # The callable got a fresh path, not the final one.
    assert all(not os.path.exists(p) and p != str(tmp_path / "params") for p in calls)

    lg.set_snapshot_mode("all")
    lg.save_itr_params(7, lambda p: open(p, "w").close())  # a plain file is fine too
    assert os.path.isfile(str(tmp_path / "itr_7"))
    assert visible_files(str(tmp_path)) == ["itr_7", "params"]


def test_snapshot_callable_must_write_something(lg, tmp_path):
    lg.set_snapshot_dir(str(tmp_path))
    with pytest.raises(RuntimeError):
        lg.save_itr_params(0, lambda path: None)
    assert visible_files(str(tmp_path)) == []


class Unpicklable(object):
    def __reduce__(self):
        raise RuntimeError("simulated crash while pickling")


def test_snapshot_failure_keeps_old_pickle_and_no_temp(lg, tmp_path):
    lg.set_snapshot_dir(str(tmp_path))
    lg.set_snapshot_mode("last")
    lg.save_itr_params(0, {"itr": 0})
    with pytest.raises(RuntimeError):
        # Big payload first, so part of the pickle is written before the crash.
        lg.save_itr_params(1, {"big": b"x" * 1000000, "bad": Unpicklable()})
    assert visible_files(str(tmp_path)) == ["params.pkl"]
    assert load(str(tmp_path / "params.pkl")) == {"itr": 0}


def test_snapshot_callable_failure_keeps_old_folder(lg, tmp_path):
    lg.set_snapshot_dir(str(tmp_path))
    lg.set_snapshot_mode("last")
    lg.save_itr_params(0, lambda p: os.makedirs(os.path.join(p, "good")))

    def crash(path):
        os.makedirs(os.path.join(path, "half"))
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        lg.save_itr_params(1, crash)
    assert visible_files(str(tmp_path)) == ["params"]
    assert os.listdir(str(tmp_path / "params")) == ["good"]


def test_snapshot_files_have_normal_permissions(lg, tmp_path):
    lg.set_snapshot_dir(str(tmp_path))
    target = lg.save_itr_params(0, {"a": 1})
    plain = tmp_path / "plain"
    plain.write_text("")
    assert os.stat(target).st_mode & 0o777 == os.stat(str(plain)).st_mode & 0o777


# ---------------------------------------------------------------------------
# Reset and the module-level API
# ---------------------------------------------------------------------------

def test_reset_clears_everything(lg, tmp_path, capsys):
    lg.push_prefix("p | ")
    lg.push_tabular_prefix("T")
    lg.record_tabular("A", 1)
    lg.add_text_output(str(tmp_path / "debug.log"))
    lg.add_tabular_output(str(tmp_path / "progress.csv"))
    lg.set_snapshot_dir(str(tmp_path))
    lg.set_snapshot_mode("gap")
    lg.set_snapshot_gap(5)
    lg.set_log_tabular_only(True)
    lg.reset()
    assert lg.get_tabular_keys() == []
    assert (lg.get_snapshot_dir(), lg.get_snapshot_mode(), lg.get_snapshot_gap(),
            lg.get_log_tabular_only()) == (None, "all", 1, False)
    lg.log("plain", with_timestamp=False)
    lg.record_tabular("B", 2)
    lg.dump_tabular(with_timestamp=False)
    assert capsys.readouterr().out.splitlines()[0] == "plain"
    assert lg.get_tabular_keys() == []
    assert (tmp_path / "debug.log").read_text() == ""
    assert not (tmp_path / "progress.csv").exists()


def test_module_level_api(default_logger, tmp_path, capsys):
    lg = default_logger
    assert lg.get_default_logger() is lg.log.__self__
    lg.add_text_output(str(tmp_path / "debug.log"))
    lg.add_tabular_output(str(tmp_path / "progress.csv"))
    lg.set_snapshot_dir(str(tmp_path / "snap"))
    lg.set_snapshot_mode("gap")
    lg.set_snapshot_gap(2)
    for epoch in range(3):
        with lg.prefix("epoch #%d | " % epoch):
            lg.log("Training started")
            lg.record_tabular("Epoch", epoch)
            with lg.tabular_prefix("Es"):
                lg.record_tabular_misc_stat("Return", [1.0, 3.0], placement="front")
            if epoch == 2:
                lg.record_tabular("AverageReturn", 5.0)
            lg.dump_tabular(with_prefix=False)
            lg.save_itr_params(epoch, {"epoch": epoch})
    header, rows = read_rows(str(tmp_path / "progress.csv"))
    assert header[0] == "Epoch" and header[1] == "EsAverageReturn"
    assert header[-1] == "AverageReturn"
    assert [r["AverageReturn"] for r in rows] == ["", "", "5.0"]
    assert [r["EsAverageReturn"] for r in rows] == ["2.0"] * 3
    assert visible_files(str(tmp_path / "snap")) == ["itr_0.pkl", "itr_2.pkl"]
    log_text = (tmp_path / "debug.log").read_text()
    assert "epoch #1 | Training started" in log_text
    assert "epoch #1 | Epoch" not in log_text  # table printed without prefix
    assert re.search(r"^" + STAMP + r"Epoch\s+2$", log_text, re.M)


def test_last_tabular_keeps_the_dumped_row():
    from ddpg.logger import Logger
    log = Logger()
    assert log.last_tabular() == {}
    log.set_log_tabular_only(True)
    log.record_tabular("Epoch", 3)
    log.record_tabular("AverageReturn", np.float32(-1.5))
    log.dump_tabular()
    row = log.last_tabular()
    assert row == {"Epoch": 3, "AverageReturn": -1.5}
    assert type(row["AverageReturn"]) is float
    log.record_tabular("Epoch", 4)
    assert log.last_tabular()["Epoch"] == 3  # until the next dump
