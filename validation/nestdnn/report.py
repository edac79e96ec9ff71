"""NestDNN's headline comparisons from an alpha sweep: gains at equal accuracy or frame rate.

Each scheme (MinTotalCost, MinMaxCost) traces a curve of (frame rate, accuracy
gain) points over alpha, the baseline is one point at zero gain. Reading the
curve piecewise linearly between consecutive alphas gives

* the frame-rate gain at equal accuracy gain: the scheme's frame rate where its
  accuracy gain crosses 0, over the baseline's frame rate;
* the accuracy gain at equal frame rate: the scheme's accuracy gain where its
  frame rate crosses the baseline's;
* the energy ratio: the scheme's energy per inference at equal accuracy gain
  over the baseline's (the phone's energy over all frames, and the per-app
  attribution ``app_energy_per_inference_j``: each app's share of the energy
  over its own frames, averaged over apps);
* the knee of the scheme's alpha sweep: the point of its (frame rate,
  accuracy gain) curve farthest above the chord joining its two ends, both
  axes scaled to [0, 1] (the "Kneedle" rule, as the baseline models' knee),
  i.e. where trading more accuracy for frame rate stops paying off.

``python -m validation.nestdnn.report RESULTS_FOLDER`` prints them for an
``experiments/nestdnn/alpha-sweep.yaml`` output folder (means over the
lifecycle seeds), for the three frame-rate averages over apps: the neutral one
(``relative_frame_rate``: each app's rate in units of its own goal rate), the
mean of the apps' rates and the inverse of their mean latency.

``--drop-ratios 1 1.25 1.5 2`` repeats the comparisons with the accuracy gains
re-measured against baseline models of other ``baseline_drop_ratio`` values
(:func:`regain`): the schedulers never see the baseline models, so only the
reference accuracies change, and the runs' per-app serving time and accuracy
give the gains exactly without re-running.
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path

import numpy as np
import pandas as pd

SCHEMES = {"nestdnn-mintotal": "MinTotalCost", "nestdnn-minmax": "MinMaxCost"}
BASELINE = "nestdnn-baseline"
RATES = ("relative_frame_rate", "frame_rate_fps", "inverse_latency_fps")


def baseline_accuracies(ratio: float, profile: str = "nestdnn") -> dict[str, float]:
    """Each app's baseline-model accuracy (%) with ``baseline_drop_ratio = ratio``."""
    from workloads.multicapacity.profile import build_profile, read_profile_file

    spec = read_profile_file(profile)
    spec = spec.model_copy(update={"baseline_drop_ratio": ratio})
    return {name: 100 * build_profile(name, app, spec).baseline_accuracy()
            for name, app in spec.apps.items()}


def regain(results: pd.DataFrame, reference: dict[str, float]) -> pd.DataFrame:
    """The results with ``accuracy_gain_pct`` re-measured against ``reference``.

    Args:
        results: a sweep's results with ``<app>.serving_s`` and ``<app>.accuracy_pct``.
        reference: app -> baseline-model accuracy (%).

    The baseline policy serves the baseline models, so its gain stays 0; every other
    run's gain is its serving-time-weighted accuracy minus the apps' references.
    """
    out = results.copy()
    serving = sum(out[f"{app}.serving_s"].fillna(0.0) for app in reference)
    gain = sum(out[f"{app}.serving_s"].fillna(0.0)
               * (out[f"{app}.accuracy_pct"].fillna(0.0) - ref)
               for app, ref in reference.items())
    out["accuracy_gain_pct"] = np.where(out["policy.name"] == BASELINE, 0.0, gain / serving)
    return out


def crossing(xs: np.ndarray, ys: np.ndarray, level: float) -> float:
    """``x`` where the piecewise-linear curve through (xs, ys) first meets ``y = level``.

    Returns NaN when it never does.
    """
    for i in range(len(xs) - 1):
        y0, y1 = ys[i] - level, ys[i + 1] - level
        if y0 == 0:
            return float(xs[i])
        if y0 * y1 < 0:
            return float(xs[i] + (xs[i + 1] - xs[i]) * y0 / (y0 - y1))
    return float(xs[-1]) if len(xs) and ys[-1] == level else math.nan


def knee(rates: np.ndarray, gains: np.ndarray) -> int:
    """Index of the knee of a (frame rate, accuracy gain) curve ordered by alpha.

    Both axes are scaled to [0, 1] over the curve; the knee is the point
    farthest above the chord from the most accurate end to the fastest end.
    """
    if len(rates) < 3:
        return 0
    x = (rates - rates.min()) / (np.ptp(rates) or 1.0)
    y = (gains - gains.min()) / (np.ptp(gains) or 1.0)
    a, b = int(np.argmax(y - 1e-9 * x)), int(np.argmax(x - 1e-9 * y))
    (x0, y0), (x1, y1) = (x[a], y[a]), (x[b], y[b])
    length = np.hypot(x1 - x0, y1 - y0) or 1.0
    # signed distance above the chord (positive on the side away from the origin)
    above = ((x1 - x0) * (y - y0) - (y1 - y0) * (x - x0)) / length
    return int(np.argmax(-above if (x1 - x0) * (0 - y0) - (y1 - y0) * (0 - x0) > 0
                         else above))


def tradeoffs(results: pd.DataFrame, rate: str = "frame_rate_fps") -> dict[str, dict]:
    """Per scheme: frame-rate gain, accuracy gain and energy ratio against the baseline.

    Args:
        results: an alpha sweep's results (columns ``policy.name``, ``policy.alpha``,
            ``accuracy_gain_pct``, ``energy_per_inference_j`` and ``rate``).
        rate: the frame-rate measure.
    """
    ok = results[results["status"] == "ok"] if "status" in results else results
    means = ok.groupby(["policy.name", "policy.alpha"], as_index=False).mean(numeric_only=True)
    base = means[means["policy.name"] == BASELINE]
    base_rate = float(base[rate].mean())
    base_energy = float(base["energy_per_inference_j"].mean())
    out = {}
    for name, label in SCHEMES.items():
        curve = means[means["policy.name"] == name].sort_values("policy.alpha")
        if curve.empty:
            continue
        alpha = curve["policy.alpha"].to_numpy(float)
        gain = curve["accuracy_gain_pct"].to_numpy(float)
        rates = curve[rate].to_numpy(float)
        energy = curve["energy_per_inference_j"].to_numpy(float)
        at_zero = crossing(alpha, gain, 0.0)  # alpha of equal accuracy
        at_rate = crossing(alpha, rates, base_rate)  # alpha of equal frame rate
        k = knee(rates, gain)
        extra = {"knee_alpha": float(alpha[k]), "knee_rate": float(rates[k]),
                 "knee_rate_gain": float(rates[k]) / base_rate,
                 "knee_accuracy_gain": float(gain[k])}
        if "app_energy_per_inference_j" in curve:
            app_energy = curve["app_energy_per_inference_j"].to_numpy(float)
            base_app = float(base["app_energy_per_inference_j"].mean())
            extra["app_energy_ratio_at_equal_accuracy"] = (
                float(np.interp(at_zero, alpha, app_energy)) / base_app
                if not math.isnan(at_zero) else math.nan)
            extra["app_energy_ratio_at_equal_rate"] = (
                float(np.interp(at_rate, alpha, app_energy)) / base_app
                if not math.isnan(at_rate) else math.nan)
        extra["energy_ratio_at_equal_rate"] = (
            float(np.interp(at_rate, alpha, energy)) / base_energy
            if not math.isnan(at_rate) else math.nan)
        out[label] = {**extra,
            "baseline_rate": base_rate,
            "rate_gain_at_equal_accuracy": float(np.interp(at_zero, alpha, rates)) / base_rate
            if not math.isnan(at_zero) else math.nan,
            "accuracy_gain_at_equal_rate": float(np.interp(at_rate, alpha, gain))
            if not math.isnan(at_rate) else math.nan,
            "energy_ratio_at_equal_accuracy": float(np.interp(at_zero, alpha, energy))
            / base_energy if not math.isnan(at_zero) else math.nan,
            "max_accuracy_gain": float(gain.max()),
            "max_rate_gain": float(rates.max()) / base_rate,
        }
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", help="output folder of experiments/nestdnn/alpha-sweep.yaml")
    parser.add_argument("--drop-ratios", type=float, nargs="*", default=[],
                        help="also re-measure the gains against baseline models with "
                             "these baseline_drop_ratio values")
    args = parser.parse_args(argv)
    results = pd.read_csv(Path(args.folder) / "results.csv")
    _print(results)
    for ratio in args.drop_ratios:
        print(f"\n== baseline_drop_ratio {ratio:g} (gains re-measured) ==")
        _print(regain(results, baseline_accuracies(ratio)))


def _print(results: pd.DataFrame) -> None:
    for rate in RATES:
        if rate not in results:
            continue
        print(f"frame rate measured as {rate}:")
        for label, row in tradeoffs(results, rate).items():
            print(f"  {label}: frame-rate gain at equal accuracy "
                  f"{row['rate_gain_at_equal_accuracy']:.2f}x (baseline "
                  f"{row['baseline_rate']:.3g}); accuracy gain at equal frame rate "
                  f"{row['accuracy_gain_at_equal_rate']:+.2f} points; energy per inference at "
                  f"equal accuracy {row['energy_ratio_at_equal_accuracy']:.2f}x the baseline's; "
                  f"max accuracy gain {row['max_accuracy_gain']:+.2f} points, max frame-rate "
                  f"gain {row['max_rate_gain']:.2f}x")
            print(f"    knee of the alpha sweep: alpha {row['knee_alpha']:g}, "
                  f"{row['knee_rate']:.3g} ({row['knee_rate_gain']:.2f}x the baseline), "
                  f"{row['knee_accuracy_gain']:+.2f} points; energy per inference at equal "
                  f"frame rate {row['energy_ratio_at_equal_rate']:.2f}x; per-app attributed "
                  f"energy per inference {row.get('app_energy_ratio_at_equal_accuracy', math.nan):.2f}x"
                  f" (equal accuracy) / {row.get('app_energy_ratio_at_equal_rate', math.nan):.2f}x"
                  " (equal frame rate)")


if __name__ == "__main__":
    main()
