"""Numpy references for the Keras layer tests: convolutions, transposed convolutions, pooling, the RNN cells.

Written from the operations' definitions (direct loops over output positions, TF's SAME-padding rule: total
padding max((out - 1) * stride + dilated_kernel - in, 0), the smaller half before), not from tensorfleet code.
"""
import numpy as np


def same_padding(n, k, stride, dilation=1):
    dk = (k - 1) * dilation + 1
    out = -(-n // stride)
    total = max((out - 1) * stride + dk - n, 0)
    return total // 2, total - total // 2


def conv2d(x, w, strides=(1, 1), padding="valid", dilation=(1, 1)):
    """x [N, H, W, C], w [kh, kw, C, F] -> [N, H', W', F] (cross-correlation, as TF)."""
    n, h, wd, c = x.shape
    kh, kw, _, f = w.shape
    if padding == "same":
        (pt, pb), (pl, pr) = same_padding(h, kh, strides[0], dilation[0]), same_padding(wd, kw, strides[1], dilation[1])
        x = np.pad(x, [(0, 0), (pt, pb), (pl, pr), (0, 0)])
    dkh, dkw = (kh - 1) * dilation[0] + 1, (kw - 1) * dilation[1] + 1
    oh, ow = (x.shape[1] - dkh) // strides[0] + 1, (x.shape[2] - dkw) // strides[1] + 1
    out = np.zeros((n, oh, ow, f))
    for i in range(oh):
        for j in range(ow):
            r0, c0 = i * strides[0], j * strides[1]
            patch = x[:, r0:r0 + dkh:dilation[0], c0:c0 + dkw:dilation[1]]
            out[:, i, j] = np.tensordot(patch, w, axes=([1, 2, 3], [0, 1, 2]))
    return out


def conv2d_transpose(x, w, out_hw, strides=(1, 1), padding="valid"):
    """The adjoint of conv2d: x [N, H, W, F], w [kh, kw, C, F] -> [N, out_h, out_w, C] (scatter of each input
    pixel times the kernel, then the 'same' padding cropped)."""
    n, h, wd, f = x.shape
    kh, kw, c, _ = w.shape
    oh, ow = out_hw
    pt = pl = 0
    if padding == "same":
        pt = max((h - 1) * strides[0] + kh - oh, 0) // 2
        pl = max((wd - 1) * strides[1] + kw - ow, 0) // 2
    full = np.zeros((n, (h - 1) * strides[0] + kh + oh, (wd - 1) * strides[1] + kw + ow, c))
    for i in range(h):
        for j in range(wd):
            contrib = np.tensordot(x[:, i, j], w, axes=([1], [3]))  # [N, kh, kw, C]
            full[:, i * strides[0]:i * strides[0] + kh, j * strides[1]:j * strides[1] + kw] += contrib
    return full[:, pt:pt + oh, pl:pl + ow]


def depthwise_conv2d(x, w, strides=(1, 1), padding="valid"):
    """w [kh, kw, C, M] -> output channel c * M + m."""
    outs = [conv2d(x[..., c:c + 1], w[:, :, c:c + 1, :], strides, padding) for c in range(x.shape[-1])]
    return np.concatenate(outs, axis=-1)


def pool2d(x, size, strides, padding="valid", mode="max"):
    """x [N, H, W, C]; 'same' padding ignores the padded cells (TF's avg pool divides by the real count)."""
    n, h, w, c = x.shape
    if padding == "same":
        (pt, pb), (pl, pr) = same_padding(h, size[0], strides[0]), same_padding(w, size[1], strides[1])
    else:
        pt = pb = pl = pr = 0
    xp = np.pad(x, [(0, 0), (pt, pb), (pl, pr), (0, 0)], constant_values=np.nan)
    oh, ow = (xp.shape[1] - size[0]) // strides[0] + 1, (xp.shape[2] - size[1]) // strides[1] + 1
    out = np.zeros((n, oh, ow, c))
    reduce = np.nanmax if mode == "max" else np.nanmean
    for i in range(oh):
        for j in range(ow):
            patch = xp[:, i * strides[0]:i * strides[0] + size[0], j * strides[1]:j * strides[1] + size[1]]
            out[:, i, j] = reduce(patch, axis=(1, 2))
    return out


def hard_sigmoid(x):
    return np.clip(0.2 * x + 0.5, 0.0, 1.0)


def sigmoid(x):
    return 1 / (1 + np.exp(-x))


def lstm(x, kernel, recurrent, bias, h0=None, c0=None, act=np.tanh, rec_act=hard_sigmoid, mask=None):
    """Keras's LSTM over x [N, T, D] (gates i, f, c, o); masked steps keep h and c. Returns (outputs, h, c)."""
    n, t, _ = x.shape
    u = recurrent.shape[0]
    h = np.zeros((n, u)) if h0 is None else h0
    c = np.zeros((n, u)) if c0 is None else c0
    outs = []
    for s in range(t):
        z = x[:, s] @ kernel + h @ recurrent + bias
        i, f, g, o = rec_act(z[:, :u]), rec_act(z[:, u:2 * u]), act(z[:, 2 * u:3 * u]), rec_act(z[:, 3 * u:])
        c_new = f * c + i * g
        h_new = o * act(c_new)
        if mask is not None:
            m = mask[:, s:s + 1]
            h_new, c_new = np.where(m, h_new, h), np.where(m, c_new, c)
        h, c = h_new, c_new
        outs.append(h)
    return np.stack(outs, 1), h, c


def gru(x, kernel, recurrent, bias, act=np.tanh, rec_act=hard_sigmoid, reset_after=False):
    """Keras's GRU (gates z, r, h); reset_after=False: hh = act(x_h + (r * h) @ U_h)."""
    n, t, _ = x.shape
    u = recurrent.shape[0]
    h = np.zeros((n, u))
    in_bias, rec_bias = (bias[0], bias[1]) if reset_after else (bias, np.zeros(3 * u))
    outs = []
    for s in range(t):
        mx = x[:, s] @ kernel + in_bias
        mh = h @ recurrent + rec_bias
        z = rec_act(mx[:, :u] + mh[:, :u])
        r = rec_act(mx[:, u:2 * u] + mh[:, u:2 * u])
        if reset_after:
            hh = act(mx[:, 2 * u:] + r * mh[:, 2 * u:])
        else:
            hh = act(mx[:, 2 * u:] + (r * h) @ recurrent[:, 2 * u:])
        h = z * h + (1 - z) * hh
        outs.append(h)
    return np.stack(outs, 1), h


def simple_rnn(x, kernel, recurrent, bias, act=np.tanh):
    h = np.zeros((x.shape[0], recurrent.shape[0]))
    outs = []
    for s in range(x.shape[1]):
        h = act(x[:, s] @ kernel + bias + h @ recurrent)
        outs.append(h)
    return np.stack(outs, 1), h
