"""fake_cupy: a strict, numpy-backed stand-in for the part of cupy (>= 13) that tensorfleet uses. Tests only.

`install(monkeypatch, devices=1)` makes `kernels.backend.cupy_module()` and `import cupy` return this module,
so a plain `Session()` finds `devices` real-looking GPUs. Arrays are `ndarray` wrappers around numpy arrays;
the arithmetic is numpy's, the rules are cupy's, so the bugs a numpy-computing simulated GPU hides show up:

- `ndarray` is no `numpy.ndarray` (as for cupy); `__cuda_array_interface__` is on the type (tensorfleet's test).
- Kernel operands (operators, ufuncs, `cupy.*` functions, methods) must be device arrays, Python scalars of
  exact type int/float/bool/complex, or numpy scalars. A `numpy.ndarray`, 0-d included, raises
  `TypeError: Unsupported type <class 'numpy.ndarray'>`: cupy/_core/_kernel.pyx `_preprocess_arg` passes
  non-cupy arguments to `_scalar.CScalar`, which takes Python scalars and `numpy.generic` only. A numpy
  `out=` raises "Output arguments type must be cupy.ndarray". Exceptions, as in cupy: index keys and `take`/
  `ufunc.at` indices and values (cupy uploads them), and the functions that only call their first argument's
  method (`cupy.sum(a)` is `a.sum()`: a host array is summed on the host; cupy/_math/sumprod.py).
- `numpy.asarray(device_array)` raises TypeError (`__array__`); `.get()`/`cupy.asnumpy` download,
  `cupy.asarray/array(host)` and `.set(host)` upload; `int()/float()/bool()/.item()/.tolist()` sync.
  Every such transfer is counted in `transfers`, so tests can assert a step has no hidden syncs.
- numpy functions and ufuncs called on device arrays dispatch here (`__array_function__`/`__array_ufunc__`,
  like cupy) or fail like numpy does when there is no such function.
- `a[basic_index] = host_array` raises unless 0-d (cupy's `fill`), `a[advanced] = host_array` uploads;
  `cupy.full/copyto` take a size-1 host array only (cupy/_manipulation/basic.py).
- ufunc methods as cupy: `reduce`/`accumulate` for add and multiply only, `at` for add only (others raise
  NotImplementedError, cupy/_core/_kernel.pyx `ufunc.reduce`/`ufunc.at`).
- Devices: an array belongs to the device current when it was made (`cuda.Device(i)`: a per-thread context
  like CUDA's). A kernel given an array of another device raises cupy's no-peer-access ValueError; `copy()`,
  `cupy.array/asarray` and `copyto` copy across devices like cupy.
- Stream capture: cupy raises for synchronous device<->host transfers while capturing (cupy/cuda/stream.pyx);
  the fake raises for every transfer and sync above, uploads included (a captured upload would replay a
  stale host buffer). Captured work does not count (`end_capture` restores what it overwrote) and
  `Graph.launch` replays every captured operation on the same arrays: what a CUDA graph does.

Not modelled: asynchrony and stream order (everything runs at once), memory pools, OOM and the reuse of freed
blocks (a graph keeps its arrays alive here), peer access (always absent), per-dtype kernel support and
numerical differences (cuBLAS, cuDNN, atomics), cupy functions that accept host arrays beyond those above
(the fake rejects them: stricter), and signature differences between numpy and cupy functions.
"""
from __future__ import annotations

import sys
import threading
from collections import Counter
from types import SimpleNamespace

import numpy as np

DEVICE_COUNT = 1
#: host<->device traffic: (kind, call) -> count; kind "d2h" (downloads and implicit syncs) or "h2d" (uploads)
transfers: Counter = Counter()
_local = threading.local()  # per thread: current device, current stream, context stack


def _current() -> int:
    return getattr(_local, "device", 0)


def _stack() -> list:
    if not hasattr(_local, "stack"):
        _local.stack = []
    return _local.stack


def _capturing():
    s = getattr(_local, "stream", None)
    return s if s is not None and s._tape is not None else None


def _sync(what, kind="d2h"):
    transfers[kind, what] += 1
    if _capturing() is not None:
        raise RuntimeError(f"fake_cupy: {what} ({kind}) while a stream is capturing a CUDA graph (not capturable)")


class ndarray:
    """A device array: numpy array `_a` on device `_dev`."""

    __slots__ = ("_a", "_dev", "__weakref__")
    __array_priority__ = 100
    __hash__ = None  # like cupy's
    __cuda_array_interface__ = property(lambda s: {"shape": s.shape, "typestr": s.dtype.str, "version": 3,
                                                   "data": (s._a.ctypes.data, False)})
    device = property(lambda s: cuda.Device(s._dev))
    base = property(lambda s: None if s._a.base is None else _wrap(s._a.base, s._dev))
    T = property(lambda s: _call(np.transpose, (s,), {}))

    def __init__(self, a, dev=None):
        self._a, self._dev = a, _current() if dev is None else dev

    def __array__(self, *a, **k):
        raise TypeError("Implicit conversion to a NumPy array is not allowed. Please use `.get()` to construct "
                        "a NumPy array explicitly.")

    def __array_ufunc__(self, uf, method, *inputs, **kw):
        return _ufunc_call(uf, method, inputs, kw)

    def __array_function__(self, func, types, args, kwargs):
        fn = _OVERRIDES.get(func.__name__) or _forward(func.__name__)
        return NotImplemented if fn is None else fn(*args, **kwargs)

    def __getattr__(self, name):  # numpy's methods, with cupy's operand rules and device results
        if name.startswith("_"):  # never numpy's __array_interface__ & co: they would bypass __array__
            raise AttributeError(name)
        attr = getattr(self._a, name)
        if not callable(attr):
            return _wrap(attr, self._dev)
        return lambda *a, **k: _call(attr, a, k, self, check=name != "copy")  # copy() crosses devices

    def get(self, stream=None, order="C", out=None):
        _sync("get")
        if out is None:
            return np.array(self._a, order=order, copy=True)
        if not isinstance(out, np.ndarray):
            raise TypeError("Only numpy.ndarray can be obtained from cupy.ndarray")
        if out.dtype != self.dtype or out.shape != self.shape:
            raise ValueError(f"Shape/dtype mismatch: {out.shape} {out.dtype} vs {self.shape} {self.dtype}")
        np.copyto(out, self._a)
        return out

    def set(self, arr, stream=None):
        _sync("set", "h2d")
        if not isinstance(arr, np.ndarray):
            raise TypeError("Only numpy.ndarray can be set to cupy.ndarray")
        if arr.dtype != self.dtype:
            raise TypeError(f"{arr.dtype} array cannot be set to {self.dtype} array")
        if arr.shape != self.shape:
            raise ValueError(f"Shape mismatch. Old shape: {self.shape}, new shape: {arr.shape}")
        np.copyto(self._a, arr)

    def __len__(self):
        return len(self._a)

    def __iter__(self):
        return (self[i] for i in range(len(self)))

    def __repr__(self):
        return f"fake_cupy.ndarray(device={self._dev}, {np.array2string(self._a)})"

    def __getitem__(self, key):
        return _call(lambda a, k: a[k], (self, _host_ok(key)), {}, self)

    def __setitem__(self, key, value):
        if isinstance(value, np.ndarray):  # cupy: basic indexing fills (0-d only), advanced indexing uploads
            if value.ndim and not any(isinstance(k, (np.ndarray, ndarray, list))
                                      for k in (key if isinstance(key, tuple) else (key,))):
                raise ValueError("non-scalar numpy.ndarray cannot be used for fill")
            value = _HostOk(value)
        _call(_setitem, (self, _host_ok(key), value), {}, self)


def _setitem(a, k, v):
    a[k] = v


for _p in ("shape", "dtype", "ndim", "size", "nbytes", "itemsize", "strides"):
    setattr(ndarray, _p, property(lambda s, _p=_p: getattr(s._a, _p)))
ndarray.flags = property(lambda s: SimpleNamespace(c_contiguous=s._a.flags.c_contiguous,  # no writeable
                                                   f_contiguous=s._a.flags.f_contiguous, owndata=s.base is None))
for _p, _conv in (("__int__", int), ("__float__", float), ("__bool__", bool), ("__index__", int),
                  ("item", np.ndarray.item), ("tolist", np.ndarray.tolist)):  # implicit syncs
    setattr(ndarray, _p, lambda s, _p=_p, _c=_conv: (_sync(_p), _c(s._a))[1])
_BINARY = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "truediv": np.true_divide, "pow": np.power,
           "floordiv": np.floor_divide, "mod": np.remainder, "matmul": np.matmul, "and": np.bitwise_and,
           "or": np.bitwise_or, "xor": np.bitwise_xor}
for _p, _u in _BINARY.items():
    setattr(ndarray, f"__{_p}__", lambda s, o, _u=_u: _ufunc_call(_u, "__call__", (s, o), {}))
    setattr(ndarray, f"__r{_p}__", lambda s, o, _u=_u: _ufunc_call(_u, "__call__", (o, s), {}))
    setattr(ndarray, f"__i{_p}__", lambda s, o, _u=_u: _ufunc_call(_u, "__call__", (s, o), {"out": s}))
for _p, _u in (("lt", np.less), ("le", np.less_equal), ("gt", np.greater), ("ge", np.greater_equal),
               ("eq", np.equal), ("ne", np.not_equal)):
    setattr(ndarray, f"__{_p}__", lambda s, o, _u=_u: _ufunc_call(_u, "__call__", (s, o), {}))
for _p, _u in (("neg", np.negative), ("pos", np.positive), ("abs", np.absolute), ("invert", np.invert)):
    setattr(ndarray, f"__{_p}__", lambda s, _u=_u: _ufunc_call(_u, "__call__", (s,), {}))


# -- running numpy on device arrays --------------------------------------------------------------------
class _HostOk:
    """A host value cupy converts by itself (index arrays, scatter values)."""

    __slots__ = ("v",)

    def __init__(self, v):
        self.v = v


def _host_ok(key):
    if isinstance(key, tuple):
        return tuple(_host_ok(k) for k in key)
    return _HostOk(key) if isinstance(key, (np.ndarray, list)) else key


def _unwrap(x, dev, host_ok=False):
    """Device arrays -> their numpy arrays (checked to be on device `dev` unless None); host arrays rejected."""
    if isinstance(x, ndarray):
        if dev is not None and x._dev != dev:
            raise ValueError(f"The device where the array resides ({x._dev}) is different from the current "
                             f"device ({dev}). Peer access is unavailable between these devices.")
        return x._a
    if isinstance(x, _HostOk):
        return _unwrap(x.v, dev, True)
    if isinstance(x, np.ndarray) and not host_ok:
        raise TypeError(f"Unsupported type {type(x)}")
    if isinstance(x, (list, tuple)):
        return type(x)(_unwrap(v, dev, host_ok) for v in x)
    return x


def _wrap(r, dev, inputs=()):
    if isinstance(r, np.ndarray):
        for x in inputs:  # an op returning its own input (astype(copy=False), out=) keeps the array's identity
            if isinstance(x, ndarray) and x._a is r:
                return x
        return ndarray(r, dev)
    if isinstance(r, np.generic):
        return ndarray(np.asarray(r), dev)  # cupy returns 0-d arrays, never numpy scalars
    if isinstance(r, (list, tuple)):
        return type(r)(_wrap(v, dev, inputs) for v in r)
    return r


def _roots(obj):
    """The numpy base arrays (memory) of the device arrays in `obj`."""
    if isinstance(obj, ndarray):
        a = obj._a
        while isinstance(a.base, np.ndarray):
            a = a.base
        yield a
    elif isinstance(obj, (list, tuple, _HostOk)):
        for v in (obj.v,) if isinstance(obj, _HostOk) else obj:
            yield from _roots(v)


def _call(fn, args, kwargs, *owners, check=True):
    """numpy `fn` on the unwrapped operands on the current device; recorded while a stream captures."""
    dev = _current()
    chk = dev if check else None
    for o in owners:
        _unwrap(o, chk)
    inputs = owners + tuple(args) + tuple(kwargs.values())
    stream = _capturing()
    if stream is not None:  # captured work does not run: keep what it may overwrite, for end_capture
        for root in _roots(inputs):
            if id(root) not in stream._new and id(root) not in stream._saved:
                stream._saved[id(root)] = (root, root.copy())
    out = _wrap(fn(*_unwrap(args, chk), **{n: _unwrap(v, chk) for n, v in kwargs.items()}), dev, inputs)
    if stream is not None:
        stream._new.update((id(root), root) for root in _roots(out) if id(root) not in stream._saved)
        if fn not in (np.empty, np.empty_like):
            stream._tape.append((fn, args, kwargs, out))
    return out


class ufunc:
    """cupy's ufunc: operands checked like cupy's kernels, methods limited like cupy's."""

    METHODS = {"reduce": ("add", "multiply"), "accumulate": ("add", "multiply"), "at": ("add",), "outer": None}

    def __init__(self, uf):
        self._uf, self.__name__ = uf, uf.__name__

    def __call__(self, *args, **kw):
        return _ufunc_call(self._uf, "__call__", args, kw)

    def __getattr__(self, method):
        if method in ufunc.METHODS or method == "reduceat":
            return lambda *args, **kw: _ufunc_call(self._uf, method, args, kw)
        return getattr(self._uf, method)


def _ufunc_call(uf, method, args, kw):
    allowed = ufunc.METHODS.get(method)
    if method == "reduceat" or (allowed is not None and uf.__name__ not in allowed):
        raise NotImplementedError(f"`cupy_{uf.__name__}.{method}` is not supported yet")
    out = kw.get("out")
    if isinstance(out, tuple):  # numpy passes out= as a tuple to __array_ufunc__
        out = kw["out"] = out[0] if len(out) == 1 else out
    if out is not None and not isinstance(out, ndarray):
        raise TypeError("Output arguments type must be cupy.ndarray")
    if method == "at":  # cupy converts the indices and values itself
        args = args[:1] + tuple(_host_ok(a) for a in args[1:])
    for x in args[:1] if method in ("at", "reduce", "accumulate") else args:
        if not (type(x) in (int, float, bool, complex) or isinstance(x, (np.generic, ndarray))):
            raise TypeError(f"Unsupported type {type(x)}")
    return _call(uf if method == "__call__" else getattr(uf, method), args, kw)


#: cupy functions that only call their first argument's method (cupy/_math/sumprod.py: "TODO(okuta): check
#: type"): given a host array they compute on the host
_METHOD_CALLS = {"sum": "sum", "prod": "prod", "mean": "mean", "amax": "max", "max": "max", "amin": "min",
                 "min": "min", "reshape": "reshape", "transpose": "transpose", "squeeze": "squeeze"}


def _forward(name):
    """cupy.<name> for numpy's function or ufunc `name`: strict operands, device results; None if none."""
    f = getattr(np, name, None)
    if isinstance(f, np.ufunc):
        return ufunc(f)
    if f is None or isinstance(f, type) or not callable(f):
        return f  # dtypes and constants as they are
    method = _METHOD_CALLS.get(name)

    def call(*args, **kw):
        if method is not None and isinstance(args[0], np.ndarray):
            return getattr(args[0], method)(*args[1:], **kw)
        return _call(f, args, kw)

    return call


def __getattr__(name):  # the module's attributes: whatever numpy has, the cupy way
    f = None if name.startswith("_") else _forward(name)
    if f is None:
        raise AttributeError(f"module 'fake_cupy' has no attribute {name!r}")
    return f


def asarray(a, dtype=None, order=None):
    if isinstance(a, ndarray) and a._dev == _current():
        return a if dtype is None or a.dtype == dtype else a.astype(dtype)
    return array(a, dtype)  # an upload, or a copy from another device


def array(obj, dtype=None, copy=True, order="K", ndmin=0):
    if isinstance(obj, ndarray) or (isinstance(obj, (list, tuple)) and any(isinstance(v, ndarray) for v in obj)):
        return _call(lambda o: np.array(o, dtype=dtype, copy=copy, order=order, ndmin=ndmin), (_HostOk(obj),), {},
                     check=False)
    _sync("cupy.array/asarray of host data", "h2d")
    return ndarray(np.array(obj, dtype=dtype, copy=True, order=order, ndmin=ndmin))


def asnumpy(a, stream=None, order="C", out=None):
    return a.get(stream, order, out) if isinstance(a, ndarray) else np.asarray(a, order=order)


def _size1(v):
    if isinstance(v, np.ndarray):
        if v.size != 1:
            raise ValueError("non-scalar numpy.ndarray cannot be used for copyto")
        return v.reshape(()).item()
    return v


def full(shape, fill_value, dtype=None, order="C"):
    return _call(np.full, (shape, _size1(fill_value)), {"dtype": dtype, "order": order})


def full_like(a, fill_value, dtype=None, order="K", subok=None, shape=None):
    return _call(np.full_like, (a, _size1(fill_value)), {"dtype": dtype, "shape": shape})


def copyto(dst, src, casting="same_kind", where=None):
    across = isinstance(src, ndarray) and src._dev != dst._dev and where is None  # a memcpy between devices
    kw = {"casting": casting} if where is None else {"casting": casting, "where": where}
    _call(np.copyto, (dst, _size1(src)), kw, check=not across)


def take(a, indices, axis=None, out=None):
    return _call(np.take, (a, _host_ok(indices)), {"axis": axis} if out is None else {"axis": axis, "out": out})


def pad(array, pad_width, mode="constant", **kwargs):  # cupy/_padding/pad.py reads these with numpy
    return _call(np.pad, (array, _HostOk(pad_width), mode), {k: _HostOk(v) for k, v in kwargs.items()})


_OVERRIDES = {f.__name__: f for f in (asarray, array, asnumpy, full, full_like, copyto, take, pad)}
lib = SimpleNamespace(stride_tricks=SimpleNamespace(
    as_strided=lambda x, shape=None, strides=None: _call(np.lib.stride_tricks.as_strided, (x, shape, strides), {})))


def _linalg_function(f):
    """cupy.linalg.<f>: numpy.linalg's function (batched, like cupy's) with cupy's operand rules; numpy's
    named-tuple results come back as plain tuples of device arrays."""
    def plain(*args, **kw):
        r = f(*args, **kw)
        return tuple(r) if isinstance(r, tuple) else r

    return lambda *args, **kw: _call(plain, args, kw)


#: cupy.linalg (cupy/linalg/__init__.py re-exports numpy's LinAlgError)
linalg = SimpleNamespace(LinAlgError=np.linalg.LinAlgError, **{
    n: _linalg_function(getattr(np.linalg, n)) for n in ("inv", "det", "slogdet", "cholesky", "qr", "svd", "solve",
                                                         "eigh", "eigvalsh", "norm", "pinv", "lstsq")})


# -- cuda: devices, streams and graphs, events, pinned memory, the memory pool -------------------------
class _Device:
    def __init__(self, device=None):
        self.id = _current() if device is None else int(device)
        if not 0 <= self.id < DEVICE_COUNT:
            raise RuntimeError(f"cudaErrorInvalidDevice: invalid device ordinal {self.id}")

    def __enter__(self):
        _stack().append(_current())
        _local.device = self.id
        return self

    def __exit__(self, *exc):
        _local.device = _stack().pop()

    def use(self):
        _local.device = self.id

    def synchronize(self):
        _sync("Device.synchronize")


class _Stream:
    def __init__(self, null=False, non_blocking=False, ptds=False):
        self._null, self._tape = null, None

    def __enter__(self):
        _stack().append(getattr(_local, "stream", None))
        _local.stream = self
        return self

    def __exit__(self, *exc):
        _local.stream = _stack().pop()

    def synchronize(self):
        _sync("Stream.synchronize")

    def begin_capture(self, mode=None):
        if self._null or self._tape is not None:
            raise RuntimeError("cannot capture on the default (legacy) stream, or capture twice")
        self._tape, self._new, self._saved = [], {}, {}

    def end_capture(self):
        if self._tape is None:
            raise RuntimeError("cudaErrorIllegalState: the stream is not capturing")
        for root, before in self._saved.values():  # the captured work never ran
            if root.flags.writeable:
                np.copyto(root, before)
        graph, self._tape, self._new, self._saved = _Graph(self._tape), None, None, None
        return graph


class _Graph:
    """The captured operations, replayed in order on the same arrays."""

    def __init__(self, tape):
        self.tape, self.launches = tape, 0

    def launch(self, stream=None):
        for fn, args, kwargs, out in self.tape:
            _rewrite(out, fn(*_unwrap(args, None), **{n: _unwrap(v, None) for n, v in kwargs.items()}))
        self.launches += 1


def _rewrite(out, new):
    """A replayed kernel writes its captured output buffer again (views follow their base)."""
    if isinstance(out, ndarray) and not np.may_share_memory(new, out._a):
        np.copyto(out._a, new)
    elif isinstance(out, (list, tuple)):
        for o, n in zip(out, new):
            _rewrite(o, n)


class _Event:
    done = True

    def __init__(self, block=False, disable_timing=False, interprocess=False):
        pass

    def record(self, stream=None):
        pass

    def synchronize(self):
        _sync("Event.synchronize")


class _MemoryPool:
    _limit = 0

    def set_limit(self, size=None, fraction=None):
        self._limit = int(size or 0)

    def get_limit(self):
        return self._limit

    def malloc(self, nbytes):
        return nbytes

    def used_bytes(self):
        return 0


_NULL_STREAM, _POOL, _MEMORY = _Stream(null=True), _MemoryPool(), 16 << 30
get_default_memory_pool = lambda: _POOL  # noqa: E731
cuda = SimpleNamespace(
    Device=_Device, Stream=_Stream, Event=_Event, MemoryPool=_MemoryPool,
    get_current_stream=lambda: getattr(_local, "stream", None) or _NULL_STREAM,
    alloc_pinned_memory=lambda nbytes: bytearray(nbytes),
    runtime=SimpleNamespace(
        getDeviceCount=lambda: DEVICE_COUNT, getDevice=_current, setDevice=lambda i: _Device(i).use(),
        memGetInfo=lambda: (_MEMORY, _MEMORY),
        getDeviceProperties=lambda i: {"name": b"fake_cupy GPU", "pciBusID": i, "totalGlobalMem": _MEMORY}))


def install(monkeypatch, devices: int = 1):
    """Makes tensorfleet see `devices` GPUs backed by this module (undone by `monkeypatch`)."""
    from tensorfleet.kernels import backend, gpu_memory

    me = sys.modules[__name__]
    monkeypatch.setitem(sys.modules, "cupy", me)
    monkeypatch.setattr(backend, "_cupy", me)
    monkeypatch.setattr(backend, "_staging", threading.local())  # pinned buffers of earlier fakes
    monkeypatch.setattr(gpu_memory, "_CUDA_MEMORY", {})  # the process-wide policy per CUDA device
    monkeypatch.setattr(me, "DEVICE_COUNT", devices)
    _local.__dict__.clear()
    transfers.clear()
