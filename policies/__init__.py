"""Built-in scheduling policies.

Importing this package registers them in :data:`simulator.policy.POLICIES`,
exactly as an outside plugin would register its own.
"""

from . import heft, manual, single  # noqa: F401
