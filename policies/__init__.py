"""Built-in scheduling policies.

Each module below registers its policies in :data:`simulator.policy.POLICIES`
when imported, exactly as an outside plugin would register its own; the
registry imports this package through the ``socsim.policies`` entry point
(``setup.cfg``) the first time a policy is looked up.
"""

from policies import heft, manual, single  # noqa: F401
from policies.cappuccino import baselines as _cappuccino_baselines  # noqa: F401
from policies.cappuccino import cnndroid as _cnndroid  # noqa: F401
from policies.cappuccino import policy as _cappuccino  # noqa: F401
from policies.dyno import policies as _dyno  # noqa: F401
from policies.flexdnn import policy as _flexdnn  # noqa: F401
from policies.mandheling import baselines as _mandheling_baselines  # noqa: F401
from policies.mandheling import policy as _mandheling  # noqa: F401
from policies.nestdnn import policies as _nestdnn  # noqa: F401
from policies.nestdnn import switching_policy as _nestdnn_switching  # noqa: F401
from policies.xenos import distributed as _dxenos  # noqa: F401
from policies.xenos import policy as _xenos  # noqa: F401
