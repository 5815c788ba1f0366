"""`tf.keras.utils.Progbar`: Keras 1.15's progress bar, byte for byte.

verbose=1 redraws one line (`\\b`s and `\\r` when the display is dynamic: a tty, IPython, or any POSIX system
as Keras decides) at most every `interval` seconds:
`  32/1000 [>.............................] - ETA: 3s - loss: 2.3026`, and ends with
`1000/1000 [==============================] - 1s 1ms/sample - loss: 0.5000 - acc: 0.8000` and a newline.
verbose=2 writes only the final line, `1000/1000 - 1s - loss: 0.5000 - acc: 0.8000`. Values are averaged over
the samples seen, except `stateful_metrics`, shown as given; values under 1e-3 in absolute value use `%.4e`.
"""
from __future__ import annotations

import sys
import time

import numpy as np


class Progbar:
    def __init__(self, target, width=30, verbose=1, interval=0.05, stateful_metrics=None, unit_name="step"):
        self.target = target
        self.width = width
        self.verbose = verbose
        self.interval = interval
        self.unit_name = unit_name
        self.stateful_metrics = set(stateful_metrics) if stateful_metrics else set()
        self._dynamic_display = ((hasattr(sys.stdout, "isatty") and sys.stdout.isatty())
                                 or "ipykernel" in sys.modules or "posix" in sys.modules)
        self._total_width = 0
        self._seen_so_far = 0
        self._values: dict = {}
        self._values_order: list = []
        self._start = time.time()
        self._last_update = 0.0

    def update(self, current, values=None):
        """Shows progress `current` (of `target`) with `values`, a list of (name, value)."""
        for k, v in values or []:
            if k not in self._values_order:
                self._values_order.append(k)
            if k not in self.stateful_metrics:
                seen = current - self._seen_so_far
                if k not in self._values:
                    self._values[k] = [v * seen, seen]
                else:
                    self._values[k][0] += v * seen
                    self._values[k][1] += seen
            else:
                self._values[k] = [v, 1]
        self._seen_so_far = current
        now = time.time()
        info = " - %.0fs" % (now - self._start)
        if self.verbose == 1:
            if now - self._last_update < self.interval and self.target is not None and current < self.target:
                return
            self._write_bar(current, now, info)
        elif self.verbose == 2:
            if self.target is not None and current >= self.target:
                numdigits = int(np.log10(self.target)) + 1
                info = ("%" + str(numdigits) + "d/%d") % (current, self.target) + info
                for k in self._values_order:
                    info += " - %s:" % k
                    avg = np.mean(self._values[k][0] / max(1, self._values[k][1]))
                    info += (" %.4f" % avg) if avg > 1e-3 else (" %.4e" % avg)
                sys.stdout.write(info + "\n")
                sys.stdout.flush()
        self._last_update = now

    def _write_bar(self, current, now, info):
        prev_total_width = self._total_width
        if self._dynamic_display:
            sys.stdout.write("\b" * prev_total_width)
            sys.stdout.write("\r")
        else:
            sys.stdout.write("\n")
        if self.target is not None:
            numdigits = int(np.log10(self.target)) + 1
            bar = ("%" + str(numdigits) + "d/%d [") % (current, self.target)
            prog_width = int(self.width * float(current) / self.target)
            if prog_width > 0:
                bar += "=" * (prog_width - 1)
                bar += ">" if current < self.target else "="
            bar += "." * (self.width - prog_width)
            bar += "]"
        else:
            bar = "%7d/Unknown" % current
        self._total_width = len(bar)
        sys.stdout.write(bar)
        time_per_unit = (now - self._start) / current if current else 0
        if self.target is not None and current < self.target:
            eta = time_per_unit * (self.target - current)
            if eta > 3600:
                eta_format = "%d:%02d:%02d" % (eta // 3600, (eta % 3600) // 60, eta % 60)
            elif eta > 60:
                eta_format = "%d:%02d" % (eta // 60, eta % 60)
            else:
                eta_format = "%ds" % eta
            info = " - ETA: %s" % eta_format
        elif time_per_unit >= 1 or time_per_unit == 0:
            info += " %.0fs/%s" % (time_per_unit, self.unit_name)
        elif time_per_unit >= 1e-3:
            info += " %.0fms/%s" % (time_per_unit * 1e3, self.unit_name)
        else:
            info += " %.0fus/%s" % (time_per_unit * 1e6, self.unit_name)
        for k in self._values_order:
            info += " - %s:" % k
            if isinstance(self._values[k], list):
                avg = np.mean(self._values[k][0] / max(1, self._values[k][1]))
                info += (" %.4f" % avg) if abs(avg) > 1e-3 else (" %.4e" % avg)
            else:
                info += " %s" % self._values[k]
        self._total_width += len(info)
        if prev_total_width > self._total_width:
            info += " " * (prev_total_width - self._total_width)
        if self.target is not None and current >= self.target:
            info += "\n"
        sys.stdout.write(info)
        sys.stdout.flush()

    def add(self, n, values=None):
        self.update(self._seen_so_far + n, values)
