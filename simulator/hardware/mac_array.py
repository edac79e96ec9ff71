"""How much of a fixed MAC array a matrix-product kernel keeps busy.

A fabric accelerator such as Xilinx's DPUCZDX8G computes, each cycle,
``pixels`` output positions x ``out_channels`` output channels from
``in_channels`` input channels (PG338 "Architecture of the DPUCZDX8G": pixel,
input-channel and output-channel parallelism; B4096 = 8 x 16 x 16). A layer
whose dimensions are not multiples of these still takes whole array steps: the
padded lanes compute nothing. So the array's utilisation is

    u = C_in / (ICP ceil(C_in / ICP)) * C_out / (OCP ceil(C_out / OCP))
        * P / (PP ceil(P / PP))

with ``P`` the output positions along the pixel dimension: the output row
(``out_w``), or the rows (``out_h``) when the map has one column (a matrix
product over a sequence, traced as ``out_h`` positions of width 1). Whether a
map has one column is read from its input width (``in_w``), which a split
leaves whole: a band of a 2-D map narrowed to one output column (a split by
columns) still has a wide input, and fills one pixel lane, not its rows;
a sequence's input has one column too (``in_w`` 1, or 0 when not traced). A
3-channel first convolution keeps 3 of 16 input lanes busy (u = 0.1875 on a
16-channel array); a fully connected layer at batch 1 one of 8 pixel lanes.
A core computes one frame at a time: a batch does not fill the pixel lanes
(the Xenos runs are batch 1).
A dimension the trace leaves out (0) is taken as filling the array. Each factor
is :func:`.lanes.lane_fill`.
"""

from __future__ import annotations

from .lanes import lane_fill

# kernels the array computes as matrix products over (positions, in, out channels)
ARRAY_OPS = ("conv", "deconv", "matmul", "fc")


def utilisation(array, in_channels: int, out_channels: int, out_h: int, out_w: int,
                in_w: int = 0) -> float:
    """Fraction of ``array`` (a :class:`~simulator.spec.processor.MacArray`) busy
    for a layer of these dimensions (see the module docstring)."""
    one_column = out_w <= 1 and in_w <= 1
    positions = out_h if one_column else out_w
    return (lane_fill(in_channels, array.in_channels)
            * lane_fill(out_channels, array.out_channels)
            * lane_fill(positions, array.pixels))
