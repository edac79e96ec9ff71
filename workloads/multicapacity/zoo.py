"""The ``multicapacity`` zoo model: one descendant of an app's multi-capacity model.

``workload: {name: VC, model: multicapacity, options: {app: VC}}`` is NestDNN's
VC app running its largest descendant; ``descendant`` picks another (0 = the
seed). NestDNN policies read the app from the workload and switch descendants
at run time; other policies simply run the chosen descendant.
"""

from __future__ import annotations

from workloads.graph import Graph
from workloads.zoo.base import MODELS, positive_int

from .profile import read_profile_file


@MODELS.register("multicapacity")
def multicapacity(app: str = "VC", descendant: int = -1, profile: str = "nestdnn",
                  input_size: int | None = None, num_classes: int | None = None) -> Graph:
    """A descendant of a NestDNN multi-capacity model (VC, RI-50, RI-100, VS, VG, RP).

    Args:
        app: app name in the profile.
        descendant: index of the descendant, 0 = seed; -1 = the largest.
        profile: bundled profile name or path to a profile YAML.
        input_size: overrides the app's input resolution, pixels.
        num_classes: overrides the app's classes.
    """
    from simulator.errors import ConfigError

    spec = read_profile_file(profile)
    if app not in spec.apps:
        raise ConfigError(f"The 'app' parameter of model 'multicapacity' must be one of "
                          f"{', '.join(spec.apps)}. Got {app!r} instead.")
    entry = spec.apps[app]
    count = len(entry.descendants)
    if isinstance(descendant, bool) or not isinstance(descendant, int) or not (
            -count <= descendant < count):
        raise ConfigError(f"The 'descendant' parameter of model 'multicapacity' must be an "
                          f"index in {-count}..{count - 1}. Got {descendant!r} instead.")
    options = dict(entry.options)
    if input_size is not None:
        options["input_size"] = positive_int("input_size", input_size, "multicapacity")
    if num_classes is not None:
        options["num_classes"] = positive_int("num_classes", num_classes, "multicapacity")
    width = entry.width * entry.descendants[descendant].capacity
    graph = MODELS.get(entry.model)(width=width, **options)
    graph.name = "multicapacity"  # traces name the zoo model they came from
    graph.config.update(app=app, descendant=descendant)
    return graph
