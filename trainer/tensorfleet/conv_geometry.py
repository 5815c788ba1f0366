"""Convolution and pooling window geometry: output sizes and paddings, TF's exact rule.

Framework layer (numbers only, no graph): the op definitions (`ops/conv_ops.py`,
shape inference) and the kernels (`kernels/conv_kernels.py`, im2col) both use
it, so neither imports the other.
"""
from __future__ import annotations


def window_geometry(in_size, k: int, stride: int, dilation: int, padding: str, explicit=(0, 0)):
    """(out_size, pad_before, pad_after) along one spatial dim, exactly TF's rule.

    VALID: out = ceil((in - eff_k + 1) / s). SAME: out = ceil(in / s) and the total padding
    max((out - 1) * s + eff_k - in, 0) is split with the extra (odd) element after.
    `in_size` None gives (None, None, None).
    """
    if in_size is None:
        return None, None, None
    eff = (k - 1) * dilation + 1
    if padding == "VALID":
        return max((in_size - eff) // stride + 1, 0), 0, 0
    if padding == "SAME":
        out = -(-in_size // stride)
        total = max((out - 1) * stride + eff - in_size, 0)
        return out, total // 2, total - total // 2
    before, after = explicit
    return max((in_size + before + after - eff) // stride + 1, 0), before, after


def spatial_hw(values, data_format: str):
    """The (H, W) entries of a 4-element attr (strides, ksize, dilations) in `data_format`."""
    return (values[2], values[3]) if data_format == "NCHW" else (values[1], values[2])


def conv_output_hw(attrs, in_hw, k_hw):
    """Output (H, W) and pads ((top, bottom), (left, right)) of a conv/pool with these attrs."""
    s = spatial_hw(attrs["strides"], attrs["data_format"])
    d = spatial_hw(attrs.get("dilations", (1, 1, 1, 1)), attrs["data_format"])
    ex = attrs.get("explicit_paddings", ((0, 0), (0, 0)))
    gh = window_geometry(in_hw[0], k_hw[0], s[0], d[0], attrs["padding"], ex[0])
    gw = window_geometry(in_hw[1], k_hw[1], s[1], d[1], attrs["padding"], ex[1])
    return (gh[0], gw[0]), ((gh[1], gh[2]), (gw[1], gw[2]))
