"""TensorBoard output of the logger: one folder of event files, written with tensorboardX.

An addition rllab did not have (:meth:`ddpg.logger.Logger.add_tensorboard_output`).
tensorboardX is optional: it is imported only when such an output is made, and its absence
then raises an ``ImportError`` that names the install command (:data:`TENSORBOARD_INSTALL`),
so ``import ddpg`` never needs it.
"""

import numbers
import os

import numpy as np

__all__ = ["TENSORBOARD_INSTALL", "TensorBoardOutput"]

#: How to get tensorboardX, named in the error raised when it is missing.
TENSORBOARD_INSTALL = 'pip install "mxnet-ddpg[tensorboard]"'


def _import_tensorboardx():
    """tensorboardX's ``SummaryWriter``, or an ImportError saying how to install it."""
    try:
        from tensorboardX import SummaryWriter
    except ImportError as error:
        raise ImportError("TensorBoard logging needs tensorboardX, which is not installed "
                          "(%s): %s" % (error, TENSORBOARD_INSTALL)) from None
    return SummaryWriter


def _unused_event_file_suffix(log_dir):
    """A suffix (``.0``, ``.1``, ...) no event file in ``log_dir`` ends with yet.

    tensorboardX names a file by the second it was opened and opens it with
    ``"wb"``: without a suffix, a resumed run starting in the same second as the
    process it continues would truncate that process's events.  The count of
    files already there keeps the names in the order TensorBoard reads them.
    """
    try:
        names = [name for name in os.listdir(log_dir) if ".out.tfevents." in name]
    except FileNotFoundError:
        names = []
    index = len(names)
    while any(name.endswith(".%d" % index) for name in names):
        index += 1
    return ".%d" % index


class TensorBoardOutput(object):
    """One folder of TensorBoard event files.

    A tabular row becomes one scalar per numeric key at the step the row's
    ``step_key`` holds (DDPG: ``TotalEnvSteps``, the run's environment steps);
    a row without that key goes at the number of rows this output has written.
    Text (strings) and missing values in a row are left out: TensorBoard
    scalars are numbers.  ``purge_step`` (a resumed run: the first step it will
    log) makes TensorBoard drop whatever an earlier process logged at that step
    or later, past the checkpoint the run continues from, so each curve has
    every step once.  The folder is created (before tensorboardX is imported).
    """

    def __init__(self, log_dir, step_key, purge_step):
        os.makedirs(log_dir, exist_ok=True)
        writer_class = _import_tensorboardx()
        self.log_dir = log_dir
        self.step_key = step_key
        self.n_rows = 0
        self.writer = writer_class(logdir=log_dir, purge_step=purge_step,
                                   filename_suffix=_unused_event_file_suffix(log_dir))

    def _row_step(self, row):
        step = row.get(self.step_key) if self.step_key else None
        if isinstance(step, numbers.Real) and not isinstance(step, bool):
            return int(step)
        return self.n_rows

    def write_row(self, row):
        """``row`` maps key to Python scalar (see :func:`ddpg.logging.tabular.to_python_scalar`)."""
        step = self._row_step(row)
        for key, value in row.items():
            if isinstance(value, numbers.Real):
                self.writer.add_scalar(key, float(value), step)
        self.n_rows += 1
        self.writer.flush()

    def write_scalar(self, tag, value, step):
        self.writer.add_scalar(tag, float(value), int(step))

    def write_text(self, tag, text, step):
        self.writer.add_text(tag, text, int(step))
        self.writer.flush()

    def write_animation(self, tag, frames, fps, step):
        """``frames`` as one animated GIF image (tensorboardX's own video summary needs
        moviepy; a GIF in an image summary is what it writes with it)."""
        from tensorboardX.summary import Summary
        from ddpg.rendering.video import gif_bytes
        data = gif_bytes(frames, fps)  # checks the frames: all H x W x 3 (or 4), one size
        height, width = np.shape(frames[0])[:2]
        image = Summary.Image(height=height, width=width, colorspace=3,
                              encoded_image_string=data)
        self.writer.file_writer.add_summary(
            Summary(value=[Summary.Value(tag=tag, image=image)]), int(step))
        self.writer.flush()

    def close(self):
        self.writer.close()
