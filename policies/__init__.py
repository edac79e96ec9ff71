"""Built-in scheduling policies.

Importing this package imports every module in it (and in its sub-packages),
and each module registers its policies in :data:`simulator.policy.POLICIES`,
exactly as an outside plugin would register its own.
"""

import importlib
import pkgutil

for _module in pkgutil.walk_packages(__path__, prefix=f"{__name__}."):
    importlib.import_module(_module.name)
