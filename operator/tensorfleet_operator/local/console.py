"""What ``tensorfleet run`` shows: replica output, the live table, the summary.

Fed by ``runner.py`` (job status and pods after each reconcile) and by
``kubelet.py``'s log pumps (one call per output line). On a terminal (unless
``--no-tui``) a ``rich`` live table of the replicas (phase, restarts, exit code,
and from each trainer's metrics endpoint the global step, loss and steps/s) and a
progress bar (when a trainer says how many steps it trains to) sit under the
scrolling ``[worker-0]`` lines; otherwise lines are plain. The summary's final
loss is the chief's last scraped loss (a replica that has not trained serves a
loss of 0: ignored) and its test accuracy the chief's ``test ... accuracy`` line.
:class:`MetricsReader`
scrapes ``http://127.0.0.1:<TENSORFLEET_METRICS_PORT>/metrics`` of every running
replica once a second (bounded timeout; a replica serving none shows ``-``).
"""
from __future__ import annotations

import math
import os
import re
import sys
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from typing import Any

from prometheus_client.parser import text_string_to_metric_families
from rich.console import Console, Group
from rich.live import Live
from rich.progress_bar import ProgressBar
from rich.table import Table
from rich.text import Text

# The trainer metrics contract (docs/metrics.md, "Trainer metrics").
GLOBAL_STEP = 'tensorfleet_train_global_step'
TARGET_STEPS = 'tensorfleet_train_target_steps'
STEPS_PER_SECOND = 'tensorfleet_train_steps_per_second'
LOSS = 'tensorfleet_train_loss'
STEPS_TOTAL = 'tensorfleet_train_steps_total'    # > 0: the replica has trained, so its loss is a real one
SCRAPED = (GLOBAL_STEP, TARGET_STEPS, STEPS_PER_SECOND, LOSS, STEPS_TOTAL)
# The chief's final test evaluation in its output: the launcher's `test ... accuracy=0.97` (text) or
# `"event": "test", ... "accuracy": 0.97` (JSON) line, or an example script's `test accuracy: 0.97` or
# `test_accuracy=0.97`.
TEST_ACCURACY = re.compile(r'\btest(?:_|\b.*?\b)accuracy\b["\']?\s*[=:]\s*([0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)')
# Who reports the job's final numbers: the chief (or legacy master), else worker 0 (the operator's rule).
CHIEF_ORDER = ('chief-0', 'master-0', 'worker-0')
SCRAPE_INTERVAL = 1.0
SCRAPE_TIMEOUT = 0.5
MAX_SCRAPE_BYTES = 4 << 20
COLOURS = ('cyan', 'magenta', 'green', 'yellow', 'blue', 'bright_red', 'bright_cyan', 'bright_magenta')


def silence_stdout() -> None:
    """stdout's reader is gone: point it at /dev/null, so no later write (or the flush at exit) fails."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):
        pass


def parse_metrics(text: str) -> dict[str, float]:
    """The contract's gauges from a Prometheus text page (first sample of each)."""
    values: dict[str, float] = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name in SCRAPED and sample.name not in values and not math.isnan(sample.value):
                values[sample.name] = sample.value
    return values


class MetricsReader:
    """Background scraper of the replicas' metrics endpoints (127.0.0.1 only, bounded)."""

    def __init__(self, ports: dict[str, int]) -> None:
        self.ports = ports                       # replica label -> metrics port
        self.values: dict[str, dict[str, float]] = {}
        self._active: set[str] = set()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name='metrics-reader', daemon=True)

    def start(self) -> None:
        self._thread.start()

    def set_active(self, label: str, active: bool) -> None:
        """Scrape ``label`` (its process runs) or stop scraping it."""
        with self._lock:
            (self._active.add if active else self._active.discard)(label)

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)

    def scrape(self, label: str) -> None:
        url = f'http://127.0.0.1:{self.ports[label]}/metrics'
        try:
            with urllib.request.urlopen(url, timeout=SCRAPE_TIMEOUT) as resp:
                text = resp.read(MAX_SCRAPE_BYTES).decode('utf-8', 'replace')
            values = parse_metrics(text)
        except (OSError, ValueError, urllib.error.URLError):
            return                               # nothing served (yet): keep the last values
        if values:
            self.values[label] = {**self.values.get(label, {}), **values}

    def _loop(self) -> None:
        while not self._stop.wait(SCRAPE_INTERVAL):
            with self._lock:
                labels = sorted(self._active)
            for label in labels:
                if self._stop.is_set():
                    return
                self.scrape(label)


@dataclass
class ReplicaRow:
    label: str
    phase: str
    restarts: int
    exit_code: int | None


def _chief_first(label: str) -> tuple[int, str]:
    """Sort key: the chief (chief, master, else worker 0), then the other replicas by name."""
    return (CHIEF_ORDER.index(label) if label in CHIEF_ORDER else len(CHIEF_ORDER), label)


def _fmt(value: float | None, spec: str) -> str:
    return '-' if value is None else format(value, spec)


class RunConsole:
    """Line output plus, on a terminal, the live table."""

    def __init__(self, job: str, tui: bool, metrics: MetricsReader) -> None:
        self.job = job
        self.tui = tui
        self.metrics = metrics
        self.console = Console(file=sys.stdout, highlight=False, soft_wrap=True,
                               force_terminal=True if tui else None, no_color=not tui and not sys.stdout.isatty())
        self.rows: list[ReplicaRow] = []
        self.state = 'Created'
        self.started = time.monotonic()
        self._colours: dict[str, str] = {}
        self._lock = threading.Lock()
        self._live: Live | None = None
        self.closed = False
        self.accuracy: dict[str, float] = {}      # replica label -> the last test accuracy it printed

    def start(self) -> None:
        if self.tui:
            self._live = Live(get_renderable=self._render, console=self.console, refresh_per_second=4,
                              redirect_stdout=False, redirect_stderr=False)
            self._live.start()

    def stop(self) -> None:
        if self._live is not None:
            self._live.refresh()
            self._live.stop()
            self._live = None

    def _colour(self, label: str) -> str:
        if label not in self._colours:
            self._colours[label] = COLOURS[len(self._colours) % len(COLOURS)]
        return self._colours[label]

    def _emit(self, plain: str, rich_text: Text) -> None:
        if self.closed:
            return
        try:
            if self.tui:
                self.console.print(rich_text)
            else:
                with self._lock:
                    sys.stdout.write(plain + '\n')
                    sys.stdout.flush()
        except (OSError, ValueError):    # the reader went away (`| head`): keep running, logs still written
            self.closed = True
            silence_stdout()

    def line(self, label: str, text: str) -> None:
        """One output line of a replica, prefixed ``[label]``."""
        found = TEST_ACCURACY.search(text)
        if found:
            self.accuracy[label] = float(found.group(1))
        self._emit(f'[{label}] {text}', Text.assemble((f'[{label}] ', self._colour(label)), text))

    def note(self, text: str, style: str = 'bold') -> None:
        """A line from tensorfleet itself (events, state changes)."""
        self._emit(f'tensorfleet: {text}', Text(f'tensorfleet: {text}', style=style))

    def update(self, state: str, rows: list[ReplicaRow]) -> None:
        self.state = state
        self.rows = rows

    def table(self) -> Table:
        elapsed = time.monotonic() - self.started
        table = Table(title=f'TFJob {self.job}: {self.state}  ({elapsed:.0f}s)', title_justify='left')
        for name, justify in (('REPLICA', 'left'), ('PHASE', 'left'), ('RESTARTS', 'right'), ('EXIT', 'right'),
                              ('STEP', 'right'), ('LOSS', 'right'), ('STEPS/S', 'right')):
            table.add_column(name, justify=justify)   # type: ignore[arg-type]
        for row in self.rows:
            m = self.metrics.values.get(row.label, {})
            step = m.get(GLOBAL_STEP)
            table.add_row(Text(row.label, style=self._colour(row.label)), row.phase, str(row.restarts),
                          '-' if row.exit_code is None else str(row.exit_code),
                          _fmt(step, '.0f'), _fmt(m.get(LOSS), '.4g'), _fmt(m.get(STEPS_PER_SECOND), '.1f'))
        return table

    def progress(self) -> tuple[float, float] | None:
        """(global step, target) from the replicas that know their target."""
        best = None
        for m in self.metrics.values.values():
            if TARGET_STEPS in m and GLOBAL_STEP in m and m[TARGET_STEPS] > 0:
                pair = (min(m[GLOBAL_STEP], m[TARGET_STEPS]), m[TARGET_STEPS])
                best = pair if best is None or pair[0] > best[0] else best
        return best

    def _render(self) -> Group:
        parts: list[Any] = [self.table()]
        progress = self.progress()
        if progress is not None:
            done, total = progress
            parts.append(Group(Text(f'step {done:.0f}/{total:.0f}'), ProgressBar(total=total, completed=done,
                                                                                   width=50)))
        return Group(*parts)

    def final_loss(self) -> tuple[str, float] | None:
        """(replica, loss) of the last loss the chief scraped (chief, master, else worker 0), or of another
        trained worker when the chief never trained; None when no replica reported a step. A replica that has
        not trained (a ps, a trainer before its first step) serves a loss of 0, which is no loss at all."""
        values = self.metrics.values
        trained = [lab for lab, m in values.items()
                   if LOSS in m and m.get(STEPS_TOTAL, 0) > 0 and not lab.startswith(('ps-', 'evaluator-'))]
        if not trained:
            return None
        label = min(trained, key=_chief_first)
        return label, values[label][LOSS]

    def final_accuracy(self) -> tuple[str, float] | None:
        """(replica, accuracy) of the chief's test evaluation line, else of any replica that printed one."""
        if not self.accuracy:
            return None
        label = min(self.accuracy, key=_chief_first)
        return label, self.accuracy[label]
