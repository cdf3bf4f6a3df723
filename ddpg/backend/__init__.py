"""MXNet plumbing: the device, CPU kernels and threads, denormals, flat parameter
buffers, initialisers, regularisation, update statistics and MXNet's log lines.
The algorithm modules above use these; nothing here knows of DDPG's classes."""
