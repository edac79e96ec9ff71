"""Building a rewritten trace kernel by kernel (splits, fusions, inserted copies).

Policies that split operators into parts, fuse chains of operators or insert
communication kernels all do the same bookkeeping: new kernel ids, the
dependencies between the new kernels, and one placement per new kernel in the
order the rewritten trace ends up in. :class:`Rewriter` keeps it::

    rw = Rewriter(job.trace)
    for row in range(len(job.trace)):
        record = rw.record(row)
        deps = rw.inputs(row)                  # ids the row's producers ended with
        ids = [rw.emit(part, Placement("dsp", 1), deps) for part in parts_of(record)]
        rw.finish(row, ids)                    # what the row's consumers wait for
    trace, placements = rw.build("split")

A row may also be dropped into another (:meth:`Rewriter.alias`, for fusion):
its consumers then wait for what the other row finished with.
"""

from __future__ import annotations

import pandas as pd

from simulator.policy import Placement
from simulator.trace import Trace, trace_from_table


class Rewriter:
    """Accumulates the kernels of a rewritten trace.

    Args:
        trace: the original trace (rows are visited in its topological order).
    """

    def __init__(self, trace: Trace):
        self.trace = trace
        self._records = trace.table.to_dict("records")
        self._rows: list[dict] = []
        self._placements: list[Placement] = []
        self._tails: dict[int, tuple[int, ...]] = {}

    def record(self, row: int) -> dict:
        """A copy of original row ``row`` as a mapping (the trace columns)."""
        return dict(self._records[row])

    def inputs(self, row: int) -> tuple[int, ...]:
        """New ids that original row ``row`` must wait for (its producers' tails)."""
        out: list[int] = []
        for pred in self.trace.preds[row]:
            out.extend(self.tail(pred))
        return tuple(dict.fromkeys(out))

    def tail(self, row: int) -> tuple[int, ...]:
        """New ids whose completion means original row ``row`` is done."""
        try:
            return self._tails[row]
        except KeyError:
            raise ValueError(f"row {row} was not rewritten before a consumer") from None

    def emit(self, record: dict, placement: Placement, deps=(), name: str | None = None,
             **columns) -> int:
        """Append a kernel built from ``record`` (updated with ``columns``).

        Returns:
            the new kernel's id.
        """
        kid = len(self._rows)
        row = dict(record)
        row.update(columns)
        row["id"] = kid
        row["deps"] = tuple(dict.fromkeys(int(d) for d in deps))
        if name is not None:
            row["name"] = name
        self._rows.append(row)
        self._placements.append(placement)
        return kid

    def finish(self, row: int, ids) -> None:
        """Declare the new kernels whose completion completes original ``row``."""
        self._tails[row] = tuple(ids)

    def alias(self, row: int, other: int) -> None:
        """Original ``row`` was folded into original ``other`` (already finished)."""
        self._tails[row] = self.tail(other)

    def __len__(self) -> int:
        return len(self._rows)

    def build(self, label: str) -> tuple[Trace, list[Placement]]:
        """The rewritten trace and the placement of each of its rows."""
        table = pd.DataFrame(self._rows)
        trace = trace_from_table(table, source=f"{self.trace.source} ({label})")
        # trace_from_table orders rows topologically; placements follow the ids
        return trace, [self._placements[int(kid)] for kid in trace.table["id"]]
