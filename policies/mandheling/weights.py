"""Where a layer's weights live between batches, and the copies that keeps them there.

A layer's weights are read by its forward operator and its error-gradient
operator (and a weight rotation or transposition), and written by its weight
update. CPU and DSP have separate address spaces (the paper): when the update
runs on one processor and a reader of the weights on the other, the updated
weights must be copied to the reader before the next batch reads them. The
copy is a kernel on the reader's side that waits for the update; the engine
charges the tensor crossing (the update's output, the updated weights) on the
offload channel, as for any other CPU<->DSP edge. Weights updated where they
are read stay there (the step's closing barrier).
"""

from __future__ import annotations

from .rows import Rewrite


def weight_readers(rewrite: Rewrite, target: dict[int, str]) -> dict[str, set[str]]:
    """Layer -> targets of the kernels that read its weights (the update excluded)."""
    readers: dict[str, set[str]] = {}
    for record in rewrite.records:
        layer = record.get("layer")
        if layer and record["pass"] != "update" and record["weight_bytes"] > 0:
            readers.setdefault(str(layer), set()).add(target[record["id"]])
    return readers


def weight_copies(rewrite: Rewrite, target: dict[int, str]) -> list[int]:
    """Add, after every weight update, a copy of the updated weights to each other
    target that reads them; returns the copy kernels' ids."""
    readers = weight_readers(rewrite, target)
    added = []
    for record in list(rewrite.records):
        layer = record.get("layer")
        if record["pass"] != "update" or not layer:
            continue
        for where in sorted(readers.get(str(layer), set()) - {target[record["id"]]}):
            kid = rewrite.new_id()
            rewrite.records.append({
                "id": kid, "name": f"{layer}.weights_to_{where}", "op": "copy",
                "pass": "other", "precision": "int8", "flops": 0.0,
                "bytes_in": 0.0, "bytes_out": 0.0, "weight_bytes": 0.0,
                "deps": (record["id"],), "layer": layer})
            target[kid] = where
            added.append(kid)
    return added
