"""Arithmetic modes of RenderScript and the per-layer choice under an accuracy-loss limit.

RenderScript offers three floating-point modes: ``exact`` (IEEE-754,
``rs_fp_full``), ``relaxed`` (flush-to-zero, ``rs_fp_relaxed``) and
``imprecise`` (no guarantees on denormals, -0.0, INF/NaN; what Cappuccino's
vector code needs). Cappuccino measures, per layer and mode, the accuracy on a
validation set and runs as many layers as possible in inexact modes while the
total loss stays within a user's limit. The measurements are data
(``accuracy.yaml``); losses of several layers are taken to add up.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal, get_args

from simulator.errors import ConfigError
from simulator.spec.yamlio import read_yaml

Mode = Literal["exact", "relaxed", "imprecise"]
MODES: tuple[str, ...] = get_args(Mode)
ACCURACY_FILE = Path(__file__).with_name("accuracy.yaml")


@dataclass(frozen=True)
class AccuracyTable:
    """Accuracy lost per (model, layer, mode), as fractions.

    Attributes:
        models: model -> {"default": {mode: loss}, "layers": {layer: {mode: loss}}}.
        source: where the numbers come from.
    """

    models: dict
    source: str = ""

    def loss(self, model: str, layer: str, mode: str) -> float | None:
        """Loss of running ``layer`` of ``model`` in ``mode`` (None: not measured)."""
        if mode == "exact":
            return 0.0
        entry = self.models.get(model)
        if entry is None:
            return None
        per_layer = (entry.get("layers") or {}).get(layer)
        if per_layer is not None and mode in per_layer:
            return float(per_layer[mode])
        default = entry.get("default") or {}
        return float(default[mode]) if mode in default else None


def load_accuracy(path: str | Path | None = None) -> AccuracyTable:
    """Read an accuracy table (the bundled ``accuracy.yaml`` by default).

    ``models`` holds one entry per measured network; ``aliases`` (optional) maps other
    names of a network (the zoo's forms of it) to its entry, which they share.

    Raises:
        ConfigError: unreadable file, unknown mode, a loss outside [0, 1], or an alias
            naming no entry or naming a model that has its own.
    """
    path = Path(path) if path is not None else ACCURACY_FILE
    raw = read_yaml(path) or {}  # bounded: size, depth, aliases, numbers
    models = raw.get("models") or {}
    for model, entry in models.items():
        tables = [("default", entry.get("default") or {})]
        tables += [(f"layers.{k}", v) for k, v in (entry.get("layers") or {}).items()]
        for where, table in tables:
            for mode, loss in table.items():
                if mode not in MODES[1:]:
                    raise ConfigError(f"unknown mode {mode!r}; expected relaxed or imprecise",
                                      file=str(path), path=f"models.{model}.{where}.{mode}")
                if not isinstance(loss, (int, float)) or not 0 <= loss <= 1:
                    raise ConfigError(f"a loss is a fraction in [0, 1]; got {loss!r}",
                                      file=str(path), path=f"models.{model}.{where}.{mode}")
    models = dict(models)
    for alias, target in (raw.get("aliases") or {}).items():
        if alias in models:
            raise ConfigError(f"{alias!r} has its own entry in models; an alias shares "
                              "another's", file=str(path), path=f"aliases.{alias}")
        if target not in models:
            raise ConfigError(f"alias of {target!r}, which models does not list",
                              file=str(path), path=f"aliases.{alias}")
    for alias, target in (raw.get("aliases") or {}).items():
        models[alias] = models[target]
    return AccuracyTable(models=models, source=str(raw.get("source", "")))


def choose_modes(times: dict[str, dict[str, float]], losses: dict[str, dict[str, float]],
                 limit: float) -> dict[str, str]:
    """Pick a mode per layer: as fast as possible with the summed loss within ``limit``.

    Greedy on the best time saved per unit of accuracy lost: free upgrades
    first, then the cheapest per second saved, while the limit holds.

    Args:
        times: layer -> mode -> estimated seconds (``exact`` always present).
        losses: layer -> mode -> accuracy loss (modes without a measurement absent).
        limit: largest total loss allowed (fraction).

    Returns:
        layer -> chosen mode.
    """
    chosen = dict.fromkeys(times, "exact")
    spent = 0.0
    while True:
        best = None
        for layer, per_mode in times.items():
            current = chosen[layer]
            base_loss = losses[layer].get(current, 0.0)
            for mode, seconds in per_mode.items():
                saved = per_mode[current] - seconds
                loss = losses[layer].get(mode)
                if loss is None or saved <= 0:
                    continue
                extra = max(0.0, loss - base_loss)
                if spent + extra > limit + 1e-12:
                    continue
                score = saved / (extra + 1e-9)
                if best is None or score > best[0]:
                    best = (score, layer, mode, extra)
        if best is None:
            return chosen
        _, layer, mode, extra = best
        chosen[layer] = mode
        spent += extra
