"""The parts of :mod:`ddpg.logger`, one job a module.

:mod:`ddpg.logger` keeps the :class:`~ddpg.logger.Logger` class and the rllab-style
module-level functions users call; the outputs and helpers it drives live here:

* :mod:`ddpg.logging.fileio`: atomic file writes and replacements, default permissions;
* :mod:`ddpg.logging.text_output`: the text log lines (timestamp, prefixes, colour) and the
  files they are appended to;
* :mod:`ddpg.logging.tabular`: a tabular row's values, its printed table and its CSV file;
* :mod:`ddpg.logging.tensorboard_output`: TensorBoard event files (tensorboardX, optional);
* :mod:`ddpg.logging.snapshots`: rllab's snapshot modes and ``save_itr_params``'s writes.

The package is only ever imported by its absolute name (``ddpg.logging``), so the standard
library's :mod:`logging` stays what ``import logging`` gives everywhere, this package included.
One thing to keep so: importing this package sets the attribute ``logging`` of the ``ddpg``
package, so ``ddpg/__init__.py`` must not bind the standard library's module to that name.
"""

__all__ = []
