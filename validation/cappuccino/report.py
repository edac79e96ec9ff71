"""Print the Cappuccino predictions issue 19 asks for, in one table each.

* baseline (single-threaded Java) / parallel (exact RenderScript) / imprecise
  times in ms, and the speedups over the baseline, of AlexNet, SqueezeNet and
  GoogLeNet on the three phones (the Nexus 5 row is the calibration phone);
* CNNdroid against Cappuccino (imprecise, planar and map-major order) on the
  Nexus 6P (Snapdragon 810): time (ms) and energy per inference (J).

Every cell is one inference with the performance governor and the thermal
governor off (the paper's setting), the same runs as the ``cappuccino`` checks
and ``experiments/cappuccino/{phones,cnndroid}.yaml``. Nothing here is fitted.

Run: ``python -m validation.cappuccino.report``.
"""

from __future__ import annotations

from validation.cappuccino import fit, refs

PHONE_NAMES = {"snapdragon800": "Nexus 5", "snapdragon810": "Nexus 6P",
               "snapdragon820": "Galaxy S7"}
MODELS = tuple(refs.NEXUS5_MS)
CNNDROID_SOC = "snapdragon810"
# The three programs of experiments/cappuccino/cnndroid.yaml.
COMPARED = {"CNNdroid": {"name": "cnndroid"},
            "Cappuccino planar": {"name": "cappuccino", "mode": "imprecise",
                                  "map_major": False},
            "Cappuccino map-major": {"name": "cappuccino", "mode": "imprecise",
                                     "map_major": True}}


def time_table() -> list[tuple[str, str, float, float, float]]:
    """(phone, model, baseline ms, parallel ms, imprecise ms) for every phone and CNN."""
    return [(PHONE_NAMES[soc], model,
             *(fit.latency_ms(soc, model, mode) for mode in refs.MODES))
            for soc in fit.PHONES for model in MODELS]


def cnndroid_table() -> list[tuple[str, str, float, float]]:
    """(model, program, ms, J) on the Nexus 6P."""
    rows = []
    for model in MODELS:
        for name, policy in COMPARED.items():
            metrics = fit.run(CNNDROID_SOC, model, policy).metrics
            rows.append((model, name, metrics["latency_s"] * 1e3,
                         metrics["energy_per_iteration_j"]))
    return rows


def main() -> None:
    print("Cappuccino: baseline / parallel (exact) / imprecise, ms (speedup over baseline)")
    print(f"{'phone':10s} {'model':14s} {'baseline':>10s} {'parallel':>18s} "
          f"{'imprecise':>18s} {'impr/par':>9s}")
    for phone, model, base, par, imp in time_table():
        print(f"{phone:10s} {model:14s} {base:10.0f} {par:10.0f} ({base / par:5.1f}x) "
              f"{imp:10.0f} ({base / imp:5.0f}x) {par / imp:8.2f}x")
    print()
    print(f"CNNdroid vs Cappuccino (imprecise) on the {PHONE_NAMES[CNNDROID_SOC]} "
          f"({CNNDROID_SOC}): ms, J per inference")
    rows = cnndroid_table()
    for model, name, ms, joules in rows:
        cnndroid_ms = next(r[2] for r in rows if r[0] == model and r[1] == "CNNdroid")
        print(f"{model:14s} {name:22s} {ms:9.1f} ms {joules:7.2f} J "
              f"(CNNdroid / this {cnndroid_ms / ms:4.2f}x)")


if __name__ == "__main__":
    main()
