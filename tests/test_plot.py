"""python -m ddpg.plot's figure: the legend sits below the axes and their x label, inside the
saved image, and never over the curves, however many and however long the runs' names."""
import csv
import os
import struct

import numpy as np
import pytest

from ddpg.experiment import plot

matplotlib = pytest.importorskip("matplotlib", reason="pip install -r requirements-test.txt")

NAMES = ["a_very_long_run_name_with_layer_norm_and_gaussian_noise",
         "another_quite_long_configuration_name_tau_0.005",
         "third_run_with_an_even_longer_descriptive_name_for_the_legend"]


def write_runs(root):
    for index, name in enumerate(NAMES):
        for seed in (1, 2):
            folder = os.path.join(root, name, "seed_%d" % seed)
            os.makedirs(folder)
            with open(os.path.join(folder, "progress.csv"), "w", newline="") as handle:
                writer = csv.writer(handle)
                writer.writerow(["Epoch", "AverageReturn", "TotalEnvSteps"])
                for epoch in range(20):
                    writer.writerow([epoch, -1500 + 60 * (index + 1) * epoch + 30 * seed
                                     * np.sin(epoch), 1000 * (epoch + 1)])
    return [os.path.join(root, name) for name in NAMES]


def png_size(path):
    with open(path, "rb") as handle:
        header = handle.read(24)
    assert header[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", header[16:24])


def test_an_output_that_cannot_be_written_is_one_line_before_drawing(tmp_path, capsys,
                                                                       monkeypatch):
    blocker = tmp_path / "a_file"
    blocker.write_text("")
    monkeypatch.setattr(plot, "import_pyplot", lambda: pytest.fail("drew before checking -o"))
    output = str(blocker / "curves.png")
    assert plot.main(write_runs(str(tmp_path / "runs")) + ["-o", output],
                     prog="ddpg-plot") == 2
    assert capsys.readouterr().err == ("ddpg-plot: error: -o %s cannot be written: %s is a "
                                       "file, not a folder; choose another -o\n"
                                       % (output, blocker))


def test_the_legend_of_three_long_named_runs_lies_below_the_axes_inside_the_image(
        tmp_path, monkeypatch):
    pyplot = plot.import_pyplot()
    kept = []
    monkeypatch.setattr(pyplot, "close", kept.append)  # keep the figure to measure it
    output = str(tmp_path / "curves.png")
    drawn = plot.plot_curves(write_runs(str(tmp_path / "runs")), output,
                             hlines=[("SB3 zoo", -152.0)], log=lambda message: None)
    assert sorted(drawn) == NAMES
    figure, = kept
    try:
        figure.canvas.draw()
        renderer = figure.canvas.get_renderer()
        legend, = figure.legends
        axes, = figure.axes
        assert axes.get_legend() is None  # not inside the axes
        assert [text.get_text() for text in legend.get_texts()] == \
            ["%s (2 seeds)" % name for name in NAMES] + ["SB3 zoo (-152)"]
        box = legend.get_window_extent(renderer)
        data_area = axes.get_window_extent(renderer)
        labelled = axes.get_tightbbox(renderer)  # the axes with their ticks and labels
        # below the curves and below the x label: no overlap with either
        assert not box.overlaps(data_area) and box.y1 <= data_area.y0
        assert box.y1 <= labelled.y0
        # inside the figure, which grew by a row per entry
        width, height = figure.bbox.width, figure.bbox.height
        assert 0 <= box.x0 and box.x1 <= width and 0 <= box.y0 and box.y1 <= height
        assert figure.get_size_inches().tolist() == [7.0, 4.5 + 0.25 * 4]
        # and inside the saved image (bbox_inches="tight" crops to what was drawn)
        saved = figure.get_tightbbox(renderer)
        inches = box.transformed(figure.dpi_scale_trans.inverted())
        assert saved.x0 <= inches.x0 and inches.x1 <= saved.x1
        assert saved.y0 <= inches.y0 and inches.y1 <= saved.y1
        saved_width, saved_height = png_size(output)
        pad = 2 * matplotlib.rcParams["savefig.pad_inches"]
        assert saved_width == pytest.approx((saved.width + pad) * 120, abs=2)
        assert saved_height == pytest.approx((saved.height + pad) * 120, abs=2)
    finally:
        monkeypatch.undo()
        pyplot.close(figure)


def test_each_reference_line_has_a_style_of_its_own(tmp_path, monkeypatch):
    pyplot = plot.import_pyplot()
    kept = []
    monkeypatch.setattr(pyplot, "close", kept.append)
    hlines = [("line %d" % index, float(index)) for index in range(5)]
    plot.plot_curves(write_runs(str(tmp_path / "runs")), str(tmp_path / "curves.png"),
                     hlines=hlines, log=lambda message: None)
    figure, = kept
    try:
        axes, = figure.axes
        drawn = [line for line in axes.get_lines() if line.get_label().startswith("line ")]
        assert [line.get_ydata()[0] for line in drawn] == [0.0, 1.0, 2.0, 3.0, 4.0]
        styles = [(line.get_color(), line.get_linestyle()) for line in drawn]
        assert len(set(styles)) == 5
        curve_colors = {line.get_color() for line in axes.get_lines()
                        if not line.get_label().startswith("line ")}
        assert not curve_colors & {color for color, _ in styles}
    finally:
        monkeypatch.undo()
        pyplot.close(figure)
