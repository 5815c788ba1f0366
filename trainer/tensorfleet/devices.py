"""Device discovery: the devices a session can place ops on, each with its array module.

Sits under `placement` and the executor: `Session(config=...)` calls
`local_devices(config)` once; the placer chooses among the result; the executor
binds kernels with each device's `device_type` and runs them with its `xp`.

- CPU:0 always exists (numpy).
- GPU:i for each CUDA device the process sees through cupy. CUDA itself applies
  `CUDA_VISIBLE_DEVICES`; `gpu_options.visible_device_list` ("1,0") then maps
  the session's GPU:i to the i-th listed visible device, like TF.
  `device_count={"GPU": 0}` hides GPUs.
- Test-only: `config.experimental.simulated_devices` replaces discovery by a
  given list (names or `SimulatedDevice`). A simulated GPU is a real "GPU"
  device type for the placer (GPU kernels and their dtype limits apply) but
  computes with numpy, so GPU placement, copy nodes and memory accounting are
  exercised on CPU-only machines. Names may name other jobs/tasks
  (`/job:ps/task:0/cpu:0`), for placement tests of the distributed layout.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional, Sequence, Union

import numpy as np

from .device_spec import DeviceSpec
from .kernels import backend
from .kernels.gpu_memory import DeviceMemory

LOCAL_JOB = "localhost"
#: TF reports 256 MiB for the CPU device's memory_limit.
CPU_MEMORY_LIMIT = 268435456
_TYPE_PRIORITY = {"GPU": 0, "TPU": 1, "CPU": 2}


@dataclass(frozen=True)
class SimulatedDevice:
    """A test device: its name and (optionally) its memory limit in bytes."""

    name: str
    memory_limit_bytes: int = 0


@dataclass(eq=False)
class Device:
    """One device of a session (TF's DeviceAttributes plus what the executor needs)."""

    name: str                      # full name: /job:localhost/replica:0/task:0/device:GPU:0
    spec: DeviceSpec
    memory_limit_bytes: int
    xp: Any                        # numpy or cupy
    cuda_id: Optional[int] = None  # CUDA ordinal (after CUDA_VISIBLE_DEVICES) for real GPUs
    simulated: bool = False
    incarnation: int = 0
    physical_device_desc: str = ""
    memory: Any = field(default=None, repr=False)  # kernels.gpu_memory.DeviceMemory for GPUs

    @property
    def device_type(self) -> str:
        return self.spec.device_type

    @property
    def is_real_gpu(self) -> bool:
        return self.cuda_id is not None

    @property
    def short_name(self) -> str:
        return self.spec.short_name

    def __repr__(self):
        return f"<Device {self.name} ({'simulated, ' if self.simulated else ''}{self.memory_limit_bytes} bytes)>"


def full_spec(spec: DeviceSpec) -> DeviceSpec:
    """Completes a device spec for this process: job localhost, replica 0, task 0, index 0."""
    return DeviceSpec(spec.job if spec.job is not None else LOCAL_JOB,
                      spec.replica if spec.replica is not None else 0,
                      spec.task if spec.task is not None else 0,
                      spec.device_type or "CPU",
                      spec.device_index if spec.device_index is not None else 0)


def priority_key(device: Device):
    """TF's order among candidates: local first, then GPU before CPU, then replica, task, index."""
    s = device.spec
    return (s.job != LOCAL_JOB, _TYPE_PRIORITY.get(s.device_type, 3), s.job, s.replica, s.task, s.device_index)


def _cpu_device() -> Device:
    spec = full_spec(DeviceSpec(device_type="CPU", device_index=0))
    return Device(spec.to_string(), spec, CPU_MEMORY_LIMIT, np, physical_device_desc="numpy")


def _simulated(entries: Sequence[Union[str, SimulatedDevice]], gpu_options) -> list:
    out = []
    for e in entries:
        e = SimulatedDevice(e) if isinstance(e, str) else e
        spec = full_spec(DeviceSpec.from_string(e.name))
        limit = e.memory_limit_bytes or (CPU_MEMORY_LIMIT if spec.device_type == "CPU" else 16 << 30)
        dev = Device(spec.to_string(), spec, limit, np, simulated=True, physical_device_desc="simulated (numpy)")
        out.append(dev)
    names = [d.name for d in out]
    if len(set(names)) != len(names):
        raise ValueError(f"simulated_devices lists a device twice: {names}")
    if not any(d.spec.job == LOCAL_JOB and d.device_type == "CPU" for d in out):
        raise ValueError(f"simulated_devices must include a local CPU device, got {names}")
    for d in out:
        if d.device_type == "GPU":
            d.memory = DeviceMemory.for_simulated(d.name, d.memory_limit_bytes, gpu_options)
    return sorted(out, key=priority_key)


def parse_visible_device_list(text: str, num_visible: int) -> list:
    """`visible_device_list` "1,0" -> [1, 0]; every entry must name a visible CUDA device, once."""
    if not text or not text.strip():
        return list(range(num_visible))
    ids = []
    for part in text.split(","):
        part = part.strip()
        if not part.isdigit() or int(part) >= num_visible:
            raise ValueError(f"Invalid gpu_options.visible_device_list {text!r}: '{part}' is not a visible GPU "
                             f"id (this process sees {num_visible} GPUs; CUDA_VISIBLE_DEVICES applies first)")
        if int(part) in ids:
            raise ValueError(f"Invalid gpu_options.visible_device_list {text!r}: '{part}' is listed twice")
        ids.append(int(part))
    return ids


def _gpu_devices(config) -> list:
    gpu_options = getattr(config, "gpu_options", None)
    count_limit = (getattr(config, "device_count", None) or {}).get("GPU")
    if count_limit == 0:
        return []
    cp = backend.cupy_module()
    if cp is None:
        return []
    ids = parse_visible_device_list(getattr(gpu_options, "visible_device_list", ""),
                                    cp.cuda.runtime.getDeviceCount())
    if count_limit is not None:
        ids = ids[:count_limit]
    out = []
    for i, cuda_id in enumerate(ids):
        spec = full_spec(DeviceSpec(device_type="GPU", device_index=i))
        props = cp.cuda.runtime.getDeviceProperties(cuda_id)
        mem = DeviceMemory.for_cuda(spec.to_string(), cuda_id, gpu_options)
        name = props.get("name", b"")
        name = name.decode() if isinstance(name, bytes) else str(name)
        out.append(Device(spec.to_string(), spec, mem.cap_bytes, cp, cuda_id=cuda_id, memory=mem,
                          physical_device_desc=f"device: {cuda_id}, name: {name}, "
                                               f"pci bus id: {props.get('pciBusID', '?')}"))
    return out


def local_devices(config=None) -> list:
    """The devices a session with `config` uses, best first (GPUs, then CPU)."""
    exp = getattr(config, "experimental", None)
    simulated = getattr(exp, "simulated_devices", None)
    gpu_options = getattr(config, "gpu_options", None)
    if simulated:
        return _simulated(simulated, gpu_options)
    return sorted([_cpu_device()] + _gpu_devices(config), key=priority_key)


def list_local_devices(session_config=None) -> list:
    """`device_lib.list_local_devices()`: objects with .name, .device_type, .memory_limit_bytes."""
    return local_devices(session_config)
