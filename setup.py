"""Build hook: ship the project's data folders inside the ``simulator`` package.

``socs/`` and ``experiments/`` sit at the top of the checkout (the README's
``socsim run experiments/quickstart.yaml`` uses them there). A wheel copies them
to ``simulator/_data/`` so an installed socsim finds them with
importlib.resources (simulator/bundled.py). Editable installs skip the copy:
they read the checkout itself. Everything else is declared in setup.cfg.
"""

from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

DATA_FOLDERS = ("socs", "experiments")


class BuildWithData(build_py):
    """build_py that also copies the data folders into ``simulator/_data``."""

    def run(self):
        super().run()
        if getattr(self, "editable_mode", False):
            return
        root = Path(__file__).resolve().parent
        for folder in DATA_FOLDERS:
            for source in sorted((root / folder).rglob("*")):
                if source.is_file() and "__pycache__" not in source.parts:
                    target = Path(self.build_lib, "simulator", "_data",
                                  source.relative_to(root))
                    self.mkpath(str(target.parent))
                    self.copy_file(str(source), str(target))


setup(cmdclass={"build_py": BuildWithData})
