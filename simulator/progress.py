"""Progress bars (stderr) that start no thread.

tqdm starts a monitor thread with its first bar, even a disabled one, and keeps it
while bars live. Sweeps fork their local workers while a bar is open, and a fork
should copy no other thread's locks (see :class:`simulator.executors.ProcessPoolExecutor`).
The monitor only forces out bars whose ``miniters`` grew large; these bars update
after every run or check and print at most every ``mininterval`` (0.1 s).
"""

from __future__ import annotations

from tqdm import tqdm


class ProgressBar(tqdm):
    """:class:`tqdm.tqdm` without the monitor thread."""

    monitor_interval = 0
