"""Where the calibration data lives: outside the repository, found the same way by every study."""

from __future__ import annotations

import os
from pathlib import Path

from simulator.library import PROJECT_ROOT


class DataMissing(FileNotFoundError):
    """The calibration files are not on this machine."""


def data_folder(subfolder: str, files: tuple[str, ...], path: str | Path | None = None) -> Path:
    """The folder holding ``files``: under ``path``, else ``$SOCSIM_DATA_DIR``, else
    ``<repo>/../shared/data``; each root may be the data root (then ``subfolder`` of
    it) or the folder itself.

    Raises:
        DataMissing: the files are not there.
    """
    root = Path(path or os.environ.get("SOCSIM_DATA_DIR") or
                PROJECT_ROOT.parent / "shared" / "data")
    for folder in (root / subfolder, root):
        if all((folder / name).is_file() for name in files):
            return folder
    raise DataMissing(f"{' / '.join(files)} not found under {root} (set SOCSIM_DATA_DIR)")
