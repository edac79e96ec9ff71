"""Frame difficulty and FlexDNN's confidence rule: where each frame exits.

Whether a frame can leave at an exit depends on its content, which a
simulator does not have. We model it with one number per frame, its
*difficulty* ``d`` in [0, 1): the fraction of frames that are easier. An exit
at relative depth ``phi`` (the share of the backbone's work done before it)
has a *capability* ``q = accuracy * phi^kappa``: it recognises the frames
with ``d <= q``; the final classifier recognises ``d <= accuracy``, so with
uniformly distributed difficulties its accuracy is ``accuracy``. Deeper exits
recognise more (``kappa`` < 1: early layers already carry much of it).

**Confidence rule** (FlexDNN): an exit's softmax ``y`` over ``C`` classes
gives ``Conf(y) = 1 + (1 / log C) * sum_c y_c log y_c`` (1 for a one-hot,
0 for a uniform output); the frame exits when ``Conf`` reaches the exit's
threshold. We give an exit's softmax the top-class probability
``p = 1/C + (1 - 1/C) * sigmoid(slope * (q - d))`` (the rest spread evenly):
confident on frames it recognises, unsure on the others. The threshold of no
accuracy loss is ``Conf`` at ``d = q``: a frame exits iff the exit recognises
it. Relaxing a threshold to ``Conf`` at ``d = q + relax`` lets frames up to
``relax`` harder than that exit early too, trading accuracy for computation.

**Videos** have temporal dynamics: consecutive frames are alike. Difficulties
follow an AR(1) Gaussian process mapped through the normal CDF, so each frame
is uniform on [0, 1) and ``correlation`` sets how much a frame resembles the
previous one. A measured per-frame difficulty trace (a CSV column of values in
[0, 1]) can replace the process.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from simulator.errors import ConfigError


class DifficultyProcess:
    """Per-frame difficulties of a video, drawn frame by frame.

    Args:
        rng: the run's generator (or a child of it).
        correlation: frame-to-frame correlation of the underlying Gaussian in [0, 1).
        trace: difficulties to replay instead (cycled), each in [0, 1].
    """

    def __init__(self, rng: np.random.Generator, correlation: float = 0.9,
                 trace: np.ndarray | None = None):
        if not 0.0 <= correlation < 1.0:
            raise ConfigError(f"correlation must be in [0, 1); got {correlation!r}",
                              path="correlation")
        self.rng = rng
        self.correlation = correlation
        self.trace = trace
        self._z = float(rng.standard_normal())
        self._frames: list[float] = []

    def __getitem__(self, frame: int) -> float:
        """Difficulty of frame ``frame`` (frames are drawn in order, then remembered)."""
        while len(self._frames) <= frame:
            self._frames.append(self._next())
        return self._frames[frame]

    def _next(self) -> float:
        if self.trace is not None:
            return float(self.trace[len(self._frames) % len(self.trace)])
        rho = self.correlation
        if self._frames:
            self._z = rho * self._z + math.sqrt(1.0 - rho * rho) * float(
                self.rng.standard_normal())
        from scipy.special import ndtr  # lazy: scipy.special costs ~0.2 s to import

        return float(ndtr(self._z))

    def sample(self, frames: int) -> np.ndarray:
        """The first ``frames`` difficulties (for profiling exits)."""
        return np.array([self[i] for i in range(frames)])


def load_difficulty_trace(path: str | Path) -> np.ndarray:
    """Read a per-frame difficulty trace: a CSV with one value in [0, 1] per row."""
    import pandas as pd

    path = Path(path)
    if not path.is_file():
        raise ConfigError("difficulty trace not found", file=str(path))
    table = pd.read_csv(path)
    values = table.iloc[:, 0].to_numpy(dtype=float)
    if not len(values) or np.any((values < 0) | (values > 1)) or np.any(np.isnan(values)):
        raise ConfigError("difficulties must be numbers in [0, 1]", file=str(path),
                          path=f"column {table.columns[0]}")
    return values


def capability(depth: np.ndarray | float, accuracy: float, kappa: float) -> np.ndarray:
    """Share of frames an exit at relative depth ``depth`` recognises."""
    return accuracy * np.power(np.clip(depth, 0.0, 1.0), kappa)


def confidence(top: np.ndarray | float, classes: int) -> np.ndarray:
    """``Conf(y)`` of a softmax with top-class probability ``top`` and the rest even."""
    top = np.clip(np.asarray(top, dtype=float), 1e-12, 1.0)
    rest = np.clip((1.0 - top) / (classes - 1), 1e-300, None)
    entropy_term = top * np.log(top) + (1.0 - top) * np.log(rest)
    return 1.0 + entropy_term / math.log(classes)


def exit_confidence(difficulty, q, classes: int, slope: float) -> np.ndarray:
    """Confidence of an exit of capability ``q`` on frames of ``difficulty``."""
    from scipy.special import expit  # lazy, as in Difficulty._next

    top = 1.0 / classes + (1.0 - 1.0 / classes) * expit(slope * (np.asarray(q) -
                                                                 np.asarray(difficulty)))
    return confidence(top, classes)


def threshold(q, classes: int, slope: float, relax: float = 0.0) -> np.ndarray:
    """The exit threshold that lets frames up to ``q + relax`` exit (``relax=0``: no loss)."""
    return exit_confidence(np.asarray(q) + relax, q, classes, slope)
