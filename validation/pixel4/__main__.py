"""Command line: ``python -m validation.pixel4 [--fit] [--cv N]``."""

from __future__ import annotations

import argparse

import pandas as pd

from validation.pixel4.data import EXTRAS, SOC, TARGET_PCT, TARGETS, DataMissing, load
from validation.pixel4.fit import (
    Fitter,
    check_fast_model,
    cross_validate,
    engine_table,
    error_table,
    summarize,
)
from validation.pixel4.params import (
    GPU_PARAMS,
    PARAM_NAMES,
    PARAMS,
    apply_params,
    load_base,
    read_params,
)


def _format_params(values: dict[str, float], current: dict[str, float] | None = None) -> str:
    lines = []
    described = [(p.name, p.unit, p.description) for p in PARAMS] + [
        (p.name, p.unit, p.description + " (per-op GPU latencies)") for p in GPU_PARAMS]
    for name, unit, description in described:
        now = f"(now {current[name]:.4g})" if current else ""
        lines.append(f"  {name:18s} {values[name]:10.4g} {unit:8s}{now:14s} {description}")
    return "\n".join(lines)


def _print_summary(title: str, summary: pd.DataFrame) -> None:
    print(title)
    print(f"  {'config':14s} {'median|err|':>11s} {'<=10%':>7s} {'<=20%':>7s} "
          f"{'median err':>10s}  target")
    for name, row in summary.iterrows():
        target = ""
        if name in {c.name for c in TARGETS}:
            target = "ok" if row["median_abs_pct"] <= TARGET_PCT else "MISSED"
        print(f"  {name:14s} {row['median_abs_pct']:10.1f}% {row['within10_pct']:6.0f}% "
              f"{row['within20_pct']:6.0f}% {row['median_pct']:+9.1f}%  {target}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m validation.pixel4",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", help="data folder (default $SOCSIM_DATA_DIR or "
                        "<repo>/../shared/data)")
    parser.add_argument("--fit", action="store_true", help="fit and print proposed parameters")
    parser.add_argument("--cv", type=int, default=5, metavar="K",
                        help="with --fit: K-fold cross-validation over the models (0: none)")
    parser.add_argument("--extras", action="store_true",
                        help="also report the measured configurations that are not targets")
    parser.add_argument("--per-model", action="store_true", help="print per-model errors")
    args = parser.parse_args(argv)
    try:
        cal = load(args.data)
    except DataMissing as err:
        print(f"skipped: {err}")
        return 0
    base = load_base(SOC)
    print(f"{len(cal.models)} models; with grouped convolutions (group_conv): "
          f"{', '.join(sorted(cal.grouped))}")
    if args.fit:
        fitter = Fitter(cal, base)
        values = fitter.fit()
        print("\nProposed parameters (fit on all calibration models):")
        print(_format_params(values, read_params(base.soc)))
        fitted = apply_params(base, values).soc
        print(f"\nfast model vs engine, largest difference: "
              f"{check_fast_model(cal, fitted) * 100:.2g} %")
        _print_summary("\nCalibration with the proposed parameters (fast model):",
                       summarize(fitter.errors(fitted)))
        if args.cv:
            cv_errors, fits = cross_validate(cal, k=args.cv, fitter=fitter)
            _print_summary(f"\nCross-validation ({args.cv} folds, seed 0: each model predicted "
                           f"by a fit on the other folds):", summarize(cv_errors))
            print("\nParameter spread over the splits (min / median / max):")
            for name in PARAM_NAMES + [p.name for p in GPU_PARAMS]:
                col = fits[name]
                print(f"  {name:18s} {col.min():9.4g} {col.median():9.4g} {col.max():9.4g}")
    configs = TARGETS + (EXTRAS if args.extras else [])
    configs = [c for c in configs if c.name in cal.measured.columns]
    errors = error_table(cal, engine_table(cal, base.soc, configs))
    _print_summary(f"\nCalibration table ({SOC}.yaml as committed, full engine):",
                   summarize(errors))
    if args.per_model:
        print(errors.round(1).to_string())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
