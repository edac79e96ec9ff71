"""The baseline models' drop ratio from public nested-vs-independent measurements.

NestDNN's baseline per app is a separately trained, compressed model; its
descendants are nested in one model and share parameters. The profile models
both as ``A(r) = top - drop (1 - r)^2`` with the baseline's ``drop`` larger by
``baseline_drop_ratio`` (``workloads/multicapacity/nestdnn.yaml``). The
dissertation's text available to us gives no number, and its own evaluation
figures are held out. Public measurements of the same comparison at equal
width (ImageNet top-1, %):

* nested, shared-parameter sub-networks: slimmable networks (Yu et al.,
  "Slimmable Neural Networks", ICLR 2019; model zoo in JiahuiYu/slimmable_networks
  MODEL_ZOO.md, top-1 error 28.5/30.5/35.2/46.9 for S-MobileNet v1 at widths
  1.0/0.75/0.5/0.25 and 29.5/31.1/35.6/40.3 for S-MobileNet v2 at 1.0/0.75/0.5/0.35);
* independently trained models of those widths: MobileNet v1 (Howard et al.
  2017, Table 6: 70.6/68.4/63.7/50.6) and MobileNet v2 (tensorflow/models,
  research/slim/nets/mobilenet/README.md: 71.8/69.8/65.4/60.3).

The ratio at a width is the independent model's drop from its own full-width
model over the nested one's drop from its own (both curves start at ``top`` in
the profile: NestDNN's largest descendant is the app's full model). Six widths
give 1.03-1.25, median 1.08 (``python -m validation.nestdnn.drop_ratio``).

Against this, Liu et al. ("Rethinking the Value of Network Pruning", ICLR 2019)
found that for structured pruning a pruned architecture trained from scratch
matches or beats the pruned-and-fine-tuned model (e.g. ResNet-50 ThiNet-50:
71.01 fine-tuned vs 73.31/73.90 from scratch, Eric-mingjie/rethinking-network-pruning
imagenet/thinet/README.md), i.e. a ratio at or below 1 for plain pruning.
NestDNN's freeze-and-regrow training is claimed to do better than plain
pruning, so 1.0 is the low end; the accuracy gains' sensitivity to the ratio
is reported in docs/nestdnn_flexdnn.md.
"""

from __future__ import annotations

import statistics

# (backbone, width): (nested sub-network top-1, independently trained top-1), %
NESTED_VS_INDEPENDENT = {
    ("MobileNet v1", 1.0): (100 - 28.5, 70.6),
    ("MobileNet v1", 0.75): (100 - 30.5, 68.4),
    ("MobileNet v1", 0.5): (100 - 35.2, 63.7),
    ("MobileNet v1", 0.25): (100 - 46.9, 50.6),
    ("MobileNet v2", 1.0): (100 - 29.5, 71.8),
    ("MobileNet v2", 0.75): (100 - 31.1, 69.8),
    ("MobileNet v2", 0.5): (100 - 35.6, 65.4),
    ("MobileNet v2", 0.35): (100 - 40.3, 60.3),
}


def drop_ratios(table: dict = NESTED_VS_INDEPENDENT) -> dict[tuple[str, float], float]:
    """Per (backbone, width < 1): independent drop / nested drop, each from its own
    full-width model."""
    out = {}
    for (backbone, width), (nested, independent) in table.items():
        if width >= 1.0:
            continue
        top_nested, top_independent = table[(backbone, 1.0)]
        out[(backbone, width)] = (top_independent - independent) / (top_nested - nested)
    return out


def median_ratio(table: dict = NESTED_VS_INDEPENDENT) -> float:
    """The median of :func:`drop_ratios`, rounded to 0.01 (the profile's value)."""
    return round(statistics.median(drop_ratios(table).values()), 2)


def main() -> None:
    for (backbone, width), ratio in drop_ratios().items():
        print(f"{backbone} x{width:g}: {ratio:.3f}")
    print(f"median: {median_ratio():.2f}")


if __name__ == "__main__":
    main()
