"""``socsim calibrate BASE_SOC MEASUREMENTS... -o NEW_SOC.yaml``: fit a SoC description to
a researcher's own measurements.

Reads the base description (a shipped SoC name or a YAML file) and the
measurement files (:mod:`validation.calibrate.measurements`), chooses the
parameters (``--params``, else :mod:`validation.calibrate.candidates` minus what
the data cannot identify), fits them (:class:`validation.fitting.engine.Problem`:
bounded least squares on log(simulated / measured), the vectorised cost model
that matches the engine's ``single`` policy), cross-validates over the models
(``--cv K`` folds, seeded) and writes the new description, every fitted value
commented "fitted to <file>, <n> rows, <date>", plus a per-row report
(``NEW_SOC.rows.csv``). A parameter the data cannot identify, asked for by
``--params``, is a one-line error (exit 2) before anything is written.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import numpy as np
import pandas as pd

from simulator.errors import ConfigError
from simulator.library import soc_path
from simulator.spec.soc import SocSpec
from simulator.spec.yamlio import read_yaml, validate
from validation.calibrate import measurements as meas
from validation.calibrate.candidates import candidates
from validation.calibrate.yamlout import write
from validation.fitting.engine import Problem, summarize
from validation.fitting.params import Parameter, apply, parse, plain

DIGITS = 4


def load_base(name: str) -> tuple[dict, SocSpec, Path]:
    """(plain mapping, spec, file) of a SoC name or YAML file."""
    path = soc_path(name)
    raw = plain(read_yaml(path))
    raw.pop("variants", None)  # variants edit the base's numbers; a fit replaces them
    return raw, validate(SocSpec, raw, file=str(path)), path


def problem(base: str, files: list[str]) -> tuple[Problem, list[meas.Measurements], Path]:
    raw, soc, path = load_base(base)
    tables = [meas.read(f) for f in files]
    found = [meas.all_rows(t, soc) for t in tables]
    return (Problem(raw, soc, [r for rows, _ in found for r in rows],
                    [r for _, energy in found for r in energy]), tables, path)


def choose(prob: Problem, requested: list[str] | None) -> tuple[list[Parameter], list]:
    """(parameters to fit, dropped candidates with reasons). Requested parameters the
    data cannot identify raise a one-line ConfigError."""
    if requested:
        params = [parse(n, prob.soc) for n in dict.fromkeys(requested)]
        prob.check(params)
        return params, []
    return prob.identifiable(candidates(prob.soc, prob.rows, prob.energy_rows))


def chosen_by_data(prob: Problem) -> list[Parameter]:
    """The parameters :func:`choose` takes from ``prob``'s rows without ``--params``."""
    return choose(prob, None)[0]


def _split(values: list[str] | None) -> list[str] | None:
    if not values:
        return None
    return [v.strip() for item in values for v in item.split(",") if v.strip()]


def provenance(files: list[str], n: int, date: str) -> str:
    return f"fitted to {', '.join(Path(f).name for f in files)}, {n} rows, {date}"


def run(args) -> int:
    """The command: fit, cross-validate, write the description and the report."""
    prob, tables, base_path = problem(args.base, args.measurements)
    models = len({r.group for r in prob.rows})
    if args.cv and not 2 <= args.cv <= models:
        raise ConfigError(f"expected 0 (none) or 2..{models} folds (one model per fold at "
                          f"most); got {args.cv}", path="--cv")
    requested = _split(args.params)
    params, dropped = choose(prob, requested)
    if not params:
        raise ConfigError("the measurements identify no parameter of the base", path="--params")
    date = args.date or dt.datetime.now(dt.timezone.utc).date().isoformat()
    out = Path(args.output)
    name = args.name or out.stem
    n = len(prob.rows)
    note = provenance(args.measurements, n, date)

    gaps = prob.fast_model_gaps()
    values = prob.fit(params)
    # written (and reported) to 4 significant digits, far below what the data resolve
    raw, soc = apply(prob.raw, prob.soc, params, values, file=str(out), digits=DIGITS)
    values = np.array([p.value(soc) for p in params])
    errors = prob.errors(soc)
    labels = [r.label for r in prob.rows]
    fit_energy = any(p.energy for p in params)
    energy_errors = prob.energy_errors(soc) if fit_energy else None
    cv_errors = cv_fits = cv_energy = None
    cv_params = params
    if args.cv:
        # parameters chosen from the data are chosen again in each fold, from its training
        # rows: a choice made on every row would have seen the fold's models
        cv_errors, cv_params, cv_fits, cv_energy = prob.cross_validate(
            params, args.cv, args.seed, select=None if requested else chosen_by_data)

    raw["name"] = name
    raw["description"] = f"{raw.get('description', '')} - calibrated ({note})".strip(" -")
    header = (f"{name}: {base_path.name} calibrated by `socsim calibrate` ({note}).\n"
              f"Fitted ({len(params)}): " + ", ".join(p.name for p in params) + ".\n"
              "Everything else is the base's, with its own provenance.")
    notes = {path: note for p in params for path in p.yaml_paths()}
    write(out, raw, header, notes, base=base_path.read_text())

    report = pd.DataFrame({
        "model": [r.group for r in prob.rows], "setting": labels,
        "op": [("" if r.op is None else r.op) for r in prob.rows],
        "measured_s": prob.measured, "simulated_s": prob.measured * (1 + errors / 100),
        "error_pct": errors})
    if cv_errors is not None:
        report["cv_error_pct"] = cv_errors
    if energy_errors is not None:
        energy_report = pd.DataFrame({
            "model": [r.group for r in prob.energy_rows],
            "setting": [r.label for r in prob.energy_rows], "op": "",
            "measured_s": np.nan, "simulated_s": np.nan, "error_pct": energy_errors,
            "measured_j": [r.measured for r in prob.energy_rows]})
        energy_report["simulated_j"] = energy_report["measured_j"] * (1 + energy_errors / 100)
        if cv_energy is not None:
            energy_report["cv_error_pct"] = cv_energy
        report = pd.concat([report, energy_report], ignore_index=True)
    report_path = out.with_suffix(".rows.csv")
    report.to_csv(report_path, index=False, float_format="%.6g")

    energy = len(prob.energy_rows)
    print(f"{n} latency rows" + (f" and {energy} energy rows" if energy else "")
          + f" from {len(tables)} file(s); {len(params)} parameters fitted"
          + ("" if fit_energy or not energy else "; energy read, not fitted (no power.ceff)"))
    for p, why in dropped:
        print(f"  not fitted: {p.name}: {why}")
    for model, label, gap in gaps:
        print(f"  warning: the fast model differs from the engine by {gap * 100:+.2g} % on "
              f"{model} ({label}): the fitted values absorb what it leaves out")
    print("\nparameter                                     base        fitted    change")
    fitted_values = dict(zip([p.name for p in params], values))
    for p in cv_params:  # the fitted ones, then those only some folds chose
        old, new = p.value(prob.soc), fitted_values.get(p.name)
        spread = ""
        if cv_fits:
            col = np.array([f[cv_params.index(p)] for f in cv_fits])
            chosen = col[~np.isnan(col)]
            spread = (f"   CV {_show(chosen.min(), p.unit)}..{_show(chosen.max(), p.unit)}"
                      if len(chosen) else "   CV not chosen")
            if 0 < len(chosen) < len(col):
                spread += f" (chosen in {len(chosen)} of {len(col)} folds)"
        if new is None:  # chosen in folds only: over-selection the folds validate
            print(f"  {p.name:42s} {_show(old, p.unit):>10s} {'not fitted':>12s} "
                  f"{'':>9s}{spread}")
            continue
        print(f"  {p.name:42s} {_show(old, p.unit):>10s} {_show(new, p.unit):>12s} "
              f"{(new / old - 1) * 100 if old else float('inf'):+8.1f}%{spread}")
    energy_labels = [r.label for r in prob.energy_rows]
    fitted = summarize(errors, labels)
    if energy_errors is not None:
        fitted = pd.concat([fitted, summarize(energy_errors, energy_labels)])
    _print_summary("\nfitted (all rows)", fitted)
    if cv_errors is not None:
        crossed = summarize(cv_errors, labels)
        if fit_energy:
            crossed = pd.concat([crossed, summarize(cv_energy, energy_labels)])
        _print_summary(f"\n{args.cv}-fold cross-validation over the models (seed {args.seed}): "
                       "each row predicted by a fit that never saw its model"
                       + ("" if requested else " (nor chose its parameters with it)"), crossed)
    print(f"\nwrote {out} and {report_path}")
    return 0


def _show(value: float, unit: str) -> str:
    if unit == "s":
        return f"{value * 1e6:.4g} us"
    if unit == "F":
        return f"{value * 1e9:.4g} nF"
    return f"{value:.4g}"


def _print_summary(title: str, table: pd.DataFrame) -> None:
    print(title)
    print(f"  {'setting':34s} {'rows':>5s} {'median|err|':>11s} {'<=10%':>6s} {'<=20%':>6s} "
          f"{'median err':>10s}")
    for label, row in table.iterrows():
        print(f"  {label:34s} {int(row['n']):5d} {row['median_abs_pct']:10.1f}% "
              f"{row['within10_pct']:5.0f}% {row['within20_pct']:5.0f}% "
              f"{row['median_pct']:+9.1f}%")
