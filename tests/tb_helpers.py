"""Reading TensorBoard event files back (tensorboard's EventAccumulator), for the tests."""
import csv
import math
import os

import numpy as np


def accumulator(path):
    """A loaded EventAccumulator of a folder (or one event file), nothing sampled away."""
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
    loaded = EventAccumulator(path, size_guidance={"scalars": 0, "tensors": 0})
    loaded.Reload()
    return loaded


def scalars(path):
    """``{tag: [(step, value), ...]}`` as TensorBoard shows them (purged events left out)."""
    loaded = accumulator(path)
    return {tag: [(event.step, event.value) for event in loaded.Scalars(tag)]
            for tag in loaded.Tags()["scalars"]}


def event_files(folder):
    return sorted(os.path.join(folder, name) for name in os.listdir(folder)
                  if name.startswith("events.out.tfevents."))


def read_rows(path):
    with open(path, newline="") as csv_file:
        return list(csv.DictReader(csv_file))


def assert_events_match_progress(folder):
    """Every progress.csv column is a scalar of the same name in the folder's events, with
    one point per row that has a value, at the row's TotalEnvSteps, equal to the CSV value
    (as float32, the precision of TensorBoard's scalars). Returns the scalars."""
    curves = scalars(folder)
    rows = read_rows(os.path.join(folder, "progress.csv"))
    assert rows, folder
    for key in rows[0]:
        expected = [(int(row["TotalEnvSteps"]), float(np.float32(float(row[key]))))
                    for row in rows if row[key] != ""]
        got = curves.get(key)
        assert got is not None, "no scalar %r in the events of %s" % (key, folder)
        assert [step for step, _ in got] == [step for step, _ in expected], key
        for (_, value), (_, want) in zip(got, expected):
            assert value == want or (math.isnan(value) and math.isnan(want)), (key, value,
                                                                                want)
    return curves
