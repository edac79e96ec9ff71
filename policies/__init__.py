"""Built-in scheduling policies.

Importing this package imports every module in it (and in its sub-packages)
but the ``report`` tools, and each module registers its policies in :data:`simulator.policy.POLICIES`,
exactly as an outside plugin would register its own.
"""

import importlib
import pkgutil

for _module in pkgutil.walk_packages(__path__, prefix=f"{__name__}."):
    # reports (``python -m policies.<system>.report``) are tools, not plugins: importing
    # them here would make runpy warn when one is run
    if not _module.name.endswith(".report"):
        importlib.import_module(_module.name)
