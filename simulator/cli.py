"""The ``socsim`` command line (also ``python -m simulator``).

Commands::

    socsim run EXPERIMENT.yaml|BUNDLED-NAME [--out DIR] [--set key.path=value ...] [--workers N]
               [--scheduler-address tcp://host:port [--run-timeout TIME]] [--resume]
               [--retry-failed] [--quiet]
    socsim plot RESULTS_DIR [--workers N]
    socsim validate [--out DIR] [--group G] [--check PATTERN] [--workers N] [--no-cache]
    socsim list socs|policies|models|importers|governors|checks
    socsim import FORMAT INPUT -o OUT [--option key=value ...]
    socsim calibrate BASE_SOC MEASUREMENTS... -o NEW_SOC.yaml [--params ...]  (plugin command)

Bad input (a :class:`~simulator.errors.ConfigError`) prints one line
``socsim: error: <file>: <yaml path>: <message>`` and exits with status 2;
Ctrl-C exits with 130 after the completed runs' tables are written.
"""

from __future__ import annotations

import argparse
import math
import sys
import warnings
from collections.abc import Sequence
from datetime import datetime, timezone
from pathlib import Path

from . import __version__
from .errors import ConfigError

EXIT_OK, EXIT_FAILED, EXIT_BAD_INPUT, EXIT_INTERRUPTED = 0, 1, 2, 130
KEY_METRICS = (("latency_s", "latency"), ("energy_j", "energy"), ("avg_power_w", "avg power"),
               ("peak_temp_c", "peak temperature"), ("throughput_per_s", "throughput"))
TABLE_ROWS = 30
CELL_WIDTH = 40  # characters of a text cell in the printed summary table


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors (exit 2) instead of usage + error."""

    def error(self, message: str):  # noqa: D401 - argparse API
        self.exit(EXIT_BAD_INPUT, f"{self.prog}: error: {message}\n")


def _stderr(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _stamp() -> str:
    return datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")


def _fresh_folder(parent: Path) -> Path:
    stamp = _stamp()
    folder, n = parent / stamp, 1
    while folder.exists():
        folder, n = parent / f"{stamp}-{n}", n + 1
    return folder


# --- run ------------------------------------------------------------------------------

def _out_folder(args, name: str) -> Path:
    """``--out``, else ``results/<name>/<UTC time>/``, never outside ``results/``."""
    if args.out:
        return Path(args.out)
    root = Path("results")
    parent = root / name
    # The schema allows one plain folder name; this guards the rule where it matters.
    if not parent.resolve().is_relative_to(root.resolve()) or parent.resolve() == root.resolve():
        raise ConfigError(f"the name {name!r} would write outside {root}/; use a plain "
                          f"folder name", path="name")
    if args.resume:
        previous = sorted(p for p in parent.glob("*") if (p / "config.yaml").is_file())
        if not previous:
            raise ConfigError(f"nothing to resume under {parent}; pass --out DIR",
                              path="--resume")
        return previous[-1]
    return _fresh_folder(parent)


def _experiment_file(given: str) -> str:
    """The file of ``socsim run GIVEN``: a path, else a bundled experiment's name."""
    from .bundled import bundled_experiment

    if Path(given).exists() or Path(given).suffix in (".yaml", ".yml"):
        return given  # a path (a missing one is reported by the loader)
    return str(bundled_experiment(given))


def _show(value: float, column: str) -> str:
    from .plots.data import scaled

    if value is None or math.isnan(value):
        return "-"
    label, factor = scaled(column, [value])
    unit = label[label.rfind("(") + 1:-1] if label.endswith(")") else ""
    return f"{value * factor:.4g} {unit}".strip()


def _clip(value, width: int):
    """``value`` as shown in a table cell: text longer than ``width`` is cut with '…'."""
    if not isinstance(value, str) or len(value) <= width:
        return value
    return value[:width - 1] + "…"


def _print_summary(sweep, name: str) -> None:
    import pandas as pd

    from .results import param_columns, quantity_columns
    from .runner import RESULT_STATUSES

    table = sweep.results
    if table.empty:
        print(f"{name}: no run completed")
        return
    ok = int(table["status"].isin(RESULT_STATUSES).sum())
    if len(table) == 1:
        row = table.iloc[0]
        print(f"{name}: 1 run, {row['status']}")
        for column, label in KEY_METRICS:
            if column in table.columns:
                print(f"  {label:<18}{_show(row[column], column)}")
        return
    twins = set(quantity_columns(table).values())  # the text says it: "1.2 GHz"
    columns = ["run", "repeat", *[c for c in param_columns(table) if c not in twins], "status",
               *[c for c, _ in KEY_METRICS[:4] if c in table.columns]]
    # a terminal table, not a dump: long cells (JSON options, policy mappings) are clipped;
    # results.csv has them whole
    shown = table[columns].head(TABLE_ROWS).copy()
    for column in shown.columns:
        if not pd.api.types.is_numeric_dtype(shown[column]):
            shown[column] = shown[column].map(lambda v: _clip(v, CELL_WIDTH))
    print(f"{name}: {len(table)} runs, {ok} ok, {len(table) - ok} failed")
    text = shown.to_string(index=False, float_format=lambda v: f"{v:.4g}")
    print(text)
    if len(table) > TABLE_ROWS:
        print(f"... {len(table) - TABLE_ROWS} more rows in results.csv")


def cmd_run(args) -> int:
    """``socsim run``: run an experiment (a sweep) and write its output folder."""
    from .experiment import load_experiment, parse_set
    from .runner import run_experiment

    overrides = parse_set(args.set)
    args.experiment = _experiment_file(args.experiment)
    raw, _ = load_experiment(args.experiment, overrides)
    out = _out_folder(args, raw["name"])
    progress = not args.quiet and sys.stderr.isatty()
    try:
        sweep = run_experiment(args.experiment, overrides=overrides, out=out,
                               workers=args.workers, scheduler_address=args.scheduler_address,
                               resume=args.resume, retry_failed=args.retry_failed,
                               run_timeout=args.run_timeout,
                               progress=progress, log=None if args.quiet else _stderr,
                               command=["socsim", *sys.argv[1:]])
    except KeyboardInterrupt:
        _stderr(f"socsim: interrupted; completed runs are in {out}; continue with: "
                f"{_resume_command(args, out)}")
        return EXIT_INTERRUPTED
    except OSError as exc:  # a lost cluster or worker pool: what finished is kept
        _stderr(f"socsim: error: the sweep stopped: {type(exc).__name__}: {exc}; completed "
                f"runs are in {out}; continue with: {_resume_command(args, out)}")
        return EXIT_FAILED
    if not args.quiet:
        _print_summary(sweep, raw["name"])
        for message in sweep.manifest.get("plot_errors", []):
            _stderr(f"socsim: warning: plot skipped: {message}")
        print(f"results: {out}")
    return _run_status(sweep, out)


def _resume_command(args, out: Path) -> str:
    """The command that continues this sweep: the same experiment, ``--set`` values and
    executor options as given, into the same folder, with ``--resume``."""
    import shlex

    words = ["socsim", "run", str(args.experiment)]
    for item in args.set or []:
        words += ["--set", item]
    if args.scheduler_address:
        words += ["--scheduler-address", args.scheduler_address]
        if args.run_timeout is not None:
            words += ["--run-timeout", args.run_timeout.text]
    elif args.workers is not None:
        words += ["--workers", str(args.workers)]
    if args.retry_failed:
        words.append("--retry-failed")
    if args.quiet:
        words.append("--quiet")
    return shlex.join([*words, "--out", str(out), "--resume"])


def _run_status(sweep, out: Path) -> int:
    from .runner import RESULT_STATUSES

    table = sweep.results
    failed = table[~table["status"].isin(RESULT_STATUSES)]
    if failed.empty:
        return EXIT_OK
    if len(failed) < len(table):
        # every result is kept; the status tells a batch job that some runs failed
        _stderr(f"socsim: {len(failed)} of {len(table)} runs failed "
                f"(errors in {out / 'results.csv'})")
        return EXIT_FAILED
    first = failed.iloc[0]["error"]
    if len(table) == 1 and sweep.manifest.get("failures") and _is_input_error(out, sweep):
        _stderr(f"socsim: error: {first}")
        return EXIT_BAD_INPUT
    _stderr(f"socsim: error: all {len(table)} runs failed; first: {first}")
    return EXIT_FAILED


def _is_input_error(out: Path, sweep) -> bool:
    from .results import read_record

    run_id = sweep.manifest["failures"][0]["run_id"]
    record = read_record(out / "runs" / run_id) or {}
    return record.get("error_type") == "ConfigError"


# --- plot, validate, list, import -------------------------------------------------------

def cmd_plot(args) -> int:
    """``socsim plot``: redraw the plots of a saved output folder."""
    from .executors import make_executor
    from .plots import replot

    files, errors = replot(args.results_dir, make_executor(args.workers))
    for message in errors:
        _stderr(f"socsim: warning: plot skipped: {message}")
    for path in files:
        print(path)
    if errors and not files:
        raise ConfigError(errors[0])
    return EXIT_OK


def cmd_validate(args) -> int:
    """``socsim validate``: the validation scoreboard."""
    from .check_cache import CheckCache, cache_dir, fingerprint
    from .executors import default_workers
    from .results import write_frame
    from .scoreboard import format_scoreboard, run_checks, scoreboard_table, select_checks, summary

    checks = select_checks(args.group, args.check or ())
    if args.workers is not None and args.workers < 1:
        raise ConfigError(f"--workers must be at least 1; got {args.workers}",
                          path="--workers")
    out = Path(args.out) if args.out else _fresh_folder(Path("results") / "validation")
    progress = not args.quiet and sys.stderr.isatty()
    cache = None
    if not args.no_cache:
        cache = CheckCache(cache_dir(), fingerprint(c.simulate.__module__ for c in checks))
    from .progress import ProgressBar

    with ProgressBar(total=len(checks), unit="check", disable=not progress,
                     leave=False) as bar:
        scores = run_checks(checks, on_score=lambda score: bar.update(1),
                            workers=args.workers or default_workers(), cache=cache)
    print(format_scoreboard(scores))
    write_frame(out / "validation.csv", scoreboard_table(scores))
    # Failures are findings, not errors of the command: the exit status stays 0.
    print(f"\n{summary(scores)}\n{len(scores)} checks; scoreboard: {out / 'validation.csv'}")
    return EXIT_OK


def _doc(obj) -> str:
    """An entry's one-line description: its ``description``, or its docstring's first
    paragraph joined into one line (a first line alone may stop mid-sentence)."""
    text = getattr(obj, "description", None) or (obj.__doc__ or "")
    paragraph = text.strip().split("\n\n")[0]
    return " ".join(paragraph.split())


def _listing(what: str) -> list[tuple[str, str]]:
    if what == "socs":
        from .library import load_soc, soc_names

        rows = []
        for name in soc_names():
            try:
                rows.append((name, load_soc(name).description))
            except ConfigError as err:
                rows.append((name, f"(invalid: {err})"))
        return rows
    if what == "checks":
        from .checks import CHECKS

        return [(n, f"[{c.group}, {c.status}] {c.reference:g} {c.unit} ±{c.tolerance_pct:g}% - "
                    f"{c.source}")
                for n, c in ((n, CHECKS.get(n)) for n in CHECKS.names())]
    registry = _registries()[what]
    return [(n, _doc(registry.get(n))) for n in registry.names()]


def _registries() -> dict:
    """The plugin registries ``socsim list`` shows by name (filled from entry points)."""
    from .engine.dvfs import GOVERNORS
    from .policy import POLICIES
    from .registry import IMPORTERS, MODELS

    return {"policies": POLICIES, "governors": GOVERNORS, "models": MODELS,
            "importers": IMPORTERS}


def cmd_list(args) -> int:
    """``socsim list``: registered names, one per line with a description."""
    rows = _listing(args.what)
    width = max((len(name) for name, _ in rows), default=0)
    for name, description in rows:
        print(f"{name:<{width}}  {description}".rstrip())
    if not rows:
        _stderr(f"socsim: no {args.what} registered")
    return EXIT_OK


def cmd_import(args) -> int:
    """``socsim import``: convert an outside model description into trace file(s)."""
    from .experiment import parse_value
    from .importers import run_importer

    options = {}
    for item in args.option or []:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise ConfigError(f"expected key=value; got {item!r}", path="--option")
        options[key.strip()] = parse_value(value, path=f"--option {key.strip()}")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        written = run_importer(args.format, args.input, args.output, **options)
    for warning in caught:
        _stderr(f"socsim: warning: {' '.join(str(warning.message).split())}")
    for path in written or []:
        print(path)
    return EXIT_OK


# --- parser -----------------------------------------------------------------------------

class _Duration(float):
    """A ``--run-timeout`` in seconds that remembers how it was written."""

    text: str


def _duration(text: str) -> _Duration:
    from .units import UnitError, parse_quantity

    try:
        seconds = float(text) if _is_number(text) else parse_quantity(text, "time")
    except UnitError:
        raise argparse.ArgumentTypeError(f"expected a time like '10 min' or seconds; "
                                         f"got {text!r}") from None
    if not 0 < seconds < 1e9:
        raise argparse.ArgumentTypeError(f"expected a positive time; got {text!r}")
    value = _Duration(seconds)
    value.text = text
    return value


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer; got {text!r}"
                                         ) from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer; got {text!r}")
    return value


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``socsim``."""
    parser = _Parser(prog="socsim", description="Discrete-event simulator of mobile SoCs "
                     "replaying DNN kernel traces.")
    parser.add_argument("--version", action="version", version=f"socsim {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    run = commands.add_parser("run", help="run an experiment (or sweep)")
    run.add_argument("experiment", help="experiment YAML file, or the name of a bundled "
                     "one (quickstart, dyno/01-breakdown-per-split, ...)")
    run.add_argument("--out", help="output folder (default results/<name>/<UTC time>/)")
    run.add_argument("--set", action="append", metavar="KEY.PATH=VALUE",
                     help="override any key by its dotted path (repeatable; YAML values)")
    run.add_argument("--workers", type=_positive, default=None,
                     help="local worker processes (default: one per CPU; 1: in-process)")
    run.add_argument("--scheduler-address", metavar="tcp://HOST:PORT",
                     help="run on a Dask cluster instead of local processes")
    run.add_argument("--run-timeout", type=_duration, default=None, metavar="TIME",
                     help="with --scheduler-address: give up a run after this wall time "
                          "(e.g. '10 min'; a bare number is seconds) and record it failed")
    run.add_argument("--resume", action="store_true",
                     help="continue an interrupted output folder: run only missing runs")
    run.add_argument("--retry-failed", action="store_true",
                     help="with --resume, also re-run runs that failed")
    run.add_argument("--quiet", action="store_true", help="no progress bar or summary")
    run.set_defaults(func=cmd_run)

    plot = commands.add_parser("plot", help="redraw the plots of a results folder")
    plot.add_argument("results_dir", help="an output folder of socsim run")
    plot.add_argument("--workers", type=_positive, default=None,
                      help="processes drawing the plots, one plot each (default: one per "
                           "CPU; 1: in-process)")
    plot.set_defaults(func=cmd_plot)

    validate = commands.add_parser("validate", help="compare with published measurements")
    validate.add_argument("--out", help="folder for validation.csv "
                          "(default results/validation/<UTC time>/)")
    validate.add_argument("--group", help="only checks of this group")
    validate.add_argument("--check", action="append", metavar="PATTERN",
                          help="only checks whose name matches this glob (repeatable)")
    validate.add_argument("--quiet", action="store_true", help="no progress bar")
    validate.add_argument("--workers", type=int, default=None,
                          help="processes to run checks in (default: one per CPU)")
    validate.add_argument("--no-cache", action="store_true",
                          help="simulate every check (ignore and do not update the cache "
                               "of check values; see docs/calibration.md)")
    validate.set_defaults(func=cmd_validate)

    listing = commands.add_parser("list", help="list registered names")
    listing.add_argument("what", choices=["socs", "policies", "models", "importers",
                                          "governors", "checks"])
    listing.set_defaults(func=cmd_list)

    imp = commands.add_parser("import", help="convert a model description to a trace")
    imp.add_argument("format", help="input format (socsim list importers)")
    imp.add_argument("input", help="input file")
    imp.add_argument("-o", "--output", required=True, help="output trace file or folder")
    imp.add_argument("--option", action="append", metavar="KEY=VALUE",
                     help="importer option (repeatable)")
    imp.set_defaults(func=cmd_import)

    # commands from plugins (socsim.commands entry points: socsim calibrate, ...)
    from .registry import COMMANDS

    for name in COMMANDS.names():
        command = COMMANDS.get(name)
        sub = commands.add_parser(name, help=command.help, description=command.description)
        command.add_arguments(sub)
        sub.set_defaults(func=command.run)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``socsim``; returns the exit status."""
    try:
        args = build_parser().parse_args(argv)
        return args.func(args)
    except ConfigError as err:
        _stderr(f"socsim: error: {err}")
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        _stderr("socsim: interrupted")
        return EXIT_INTERRUPTED
    except BrokenPipeError:  # e.g. `socsim list models | head`
        return EXIT_OK
