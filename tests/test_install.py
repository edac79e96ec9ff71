"""A wheel install works on its own: bundled SoCs and experiments, from any folder;
so does an editable one (``pip install -e .``).

The test builds a wheel from a copy of the sources (so the checkout gets no
``build/`` or ``*.egg-info``), installs it into a fresh venv and runs the
installed ``socsim`` from an empty folder.

Isolation: the venv is created with ``--system-site-packages`` so the
dependencies (numpy, pandas, ...) come from the current interpreter and nothing
is downloaded; the wheel goes in with ``--no-deps``. The venv's own
site-packages comes before the system one on ``sys.path``, and an editable
socsim of the system (a meta-path finder appended after the path finder) is
only consulted when the path finder fails, so the venv's copy wins; the test
asserts it (``simulator.__file__`` inside the venv). ``PYTHONPATH`` and user
site-packages are removed from the environment so no checkout leaks in.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SOURCES = ("setup.py", "setup.cfg", "pyproject.toml", "README.md", "MANIFEST.in",
           "simulator", "workloads", "policies", "validation", "socs", "experiments")


def _can_build_offline() -> bool:
    try:
        import setuptools  # noqa: F401
        import wheel  # noqa: F401
    except ImportError:
        return False
    return True


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> Path:
    """A venv with the wheel of this checkout installed; returns its ``bin`` folder."""
    if not _can_build_offline():
        pytest.skip("building a wheel offline needs setuptools and wheel (the test extra)")
    work = tmp_path_factory.mktemp("install")
    source = _source_copy(work)
    env = _clean_env()
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
                    "-q", "-w", str(work / "dist"), str(source)],
                   check=True, env=env, cwd=work, capture_output=True)
    wheel_file = next((work / "dist").glob("socsim-*.whl"))
    venv.create(work / "venv", system_site_packages=True, with_pip=False)
    bin_dir = work / "venv" / ("Scripts" if os.name == "nt" else "bin")
    # The current pip installs into the venv (``--python`` needs pip >= 22.3).
    subprocess.run([sys.executable, "-m", "pip", "--python", str(bin_dir / "python"),
                    "install", "-q", "--no-deps", "--no-index", str(wheel_file)],
                   check=True, env=env, cwd=work, capture_output=True)
    return bin_dir


@pytest.fixture(scope="module")
def editable(tmp_path_factory) -> tuple[Path, Path]:
    """A venv with ``pip install -e`` of a copy of this checkout; returns its ``bin``
    folder and the copy."""
    if not _can_build_offline():
        pytest.skip("an offline editable install needs setuptools and wheel (the test extra)")
    work = tmp_path_factory.mktemp("editable")
    source = _source_copy(work)
    venv.create(work / "venv", system_site_packages=True, with_pip=False)
    bin_dir = work / "venv" / ("Scripts" if os.name == "nt" else "bin")
    subprocess.run([sys.executable, "-m", "pip", "--python", str(bin_dir / "python"),
                    "install", "-q", "--no-deps", "--no-index", "--no-build-isolation",
                    "-e", str(source)],
                   check=True, env=_clean_env(), cwd=work, capture_output=True)
    return bin_dir, source


def _source_copy(work: Path) -> Path:
    """The package's sources copied to ``work/src`` (no build products)."""
    source = work / "src"
    source.mkdir()
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info", "_data")
    for name in SOURCES:
        item = ROOT / name
        if item.is_dir():
            shutil.copytree(item, source / name, ignore=ignore)
        else:
            shutil.copy2(item, source / name)
    return source


def _clean_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "SOCSIM_SOC_PATH", "PYTHONHOME")}
    env["PYTHONNOUSERSITE"] = "1"
    return env


def _run(bin_dir: Path, cwd: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(bin_dir / "socsim"), *args], cwd=cwd, env=_clean_env(),
                          capture_output=True, text=True, timeout=120)


def test_the_wheel_is_what_runs(installed, tmp_path):
    code = "import simulator, workloads.mixed_precision as m; print(simulator.__file__); " \
           "print(len(list(m.ALGORITHM_DIR.glob('*.yaml'))))"
    out = subprocess.run([str(installed / "python"), "-c", code], cwd=tmp_path,
                         env=_clean_env(), capture_output=True, text=True, check=True)
    module_file, algorithms = out.stdout.split()
    assert Path(module_file).is_relative_to(installed.parent), module_file
    assert int(algorithms) >= 5


def test_installed_socsim_lists_socs_and_runs_the_quickstart(installed, tmp_path):
    listing = _run(installed, tmp_path, "list", "socs")
    assert listing.returncode == 0, listing.stderr
    assert "snapdragon865" in listing.stdout and "(invalid" not in listing.stdout
    run = _run(installed, tmp_path, "run", "quickstart", "--out", "q", "--quiet")
    assert run.returncode == 0, run.stderr
    assert (tmp_path / "q" / "results.csv").is_file()
    found = _run(installed, tmp_path, "run", "no-such-experiment")
    assert found.returncode == 2 and "bundled: " in found.stderr and "quickstart" in found.stderr


def test_an_editable_install_runs_from_its_checkout(editable, tmp_path):
    bin_dir, source = editable
    code = "import simulator; print(simulator.__file__)"
    out = subprocess.run([str(bin_dir / "python"), "-c", code], cwd=tmp_path,
                         env=_clean_env(), capture_output=True, text=True, check=True)
    assert Path(out.stdout.strip()).is_relative_to(source), out.stdout
    listing = _run(bin_dir, tmp_path, "list", "socs")
    assert listing.returncode == 0 and "snapdragon865" in listing.stdout, listing.stderr
    run = _run(bin_dir, tmp_path, "run", "quickstart", "--out", "q", "--quiet")
    assert run.returncode == 0, run.stderr
    assert (tmp_path / "q" / "results.csv").is_file()
