"""The live table of `tensorfleet run`, read from a terminal screen: run under a pseudo-terminal
(pexpect) whose output drives a terminal emulator (pyte); what a user sees is asserted."""
import time

import pexpect
import pyte
import pytest

from local_helpers import CLI, ROOT, cli_env, script, tfjob, write_job

# A trainer stand-in serving the metrics contract (docs/metrics.md) until it is told to stop.
TRAINER = """
import os, pathlib, sys, time
from prometheus_client import CollectorRegistry, Counter, Gauge, start_http_server
registry = CollectorRegistry()
labels = {'job_name': 'tui', 'replica_type': 'worker', 'replica_index': '0'}
for name, value in (('tensorfleet_train_global_step', 42), ('tensorfleet_train_target_steps', 100),
                    ('tensorfleet_train_loss', 0.125), ('tensorfleet_train_steps_per_second', 7.5)):
    Gauge(name, 'test', list(labels), registry=registry).labels(**labels).set(value)
Counter('tensorfleet_train_steps', 'test', list(labels), registry=registry).labels(**labels).inc(42)
start_http_server(int(os.environ['TENSORFLEET_METRICS_PORT']), addr='127.0.0.1', registry=registry)
print('serving metrics', flush=True)
release = pathlib.Path(sys.argv[1])
deadline = time.monotonic() + 120
while not release.exists() and time.monotonic() < deadline:
    time.sleep(0.05)
print('released', flush=True)
"""
QUIET = "import time; print('no metrics here', flush=True); time.sleep(600)"


class Screen:
    def __init__(self, child, rows, cols):
        self.child = child
        self.screen = pyte.Screen(cols, rows)
        self.stream = pyte.Stream(self.screen)

    def pump(self):
        try:
            while True:
                self.stream.feed(self.child.read_nonblocking(65536, timeout=0.1))
        except pexpect.TIMEOUT:
            pass
        except pexpect.EOF:
            return False
        return True

    def text(self):
        return '\n'.join(line.rstrip() for line in self.screen.display)

    def wait_for(self, predicate, timeout=60, what='screen'):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            alive = self.pump()
            if predicate(self.text()):
                return self.text()
            if not alive:
                break
        raise AssertionError(f'{what} never appeared; screen:\n{self.text()}')


def row(text, label):
    return next((line.split() for line in text.splitlines() if line.strip(' │┃|').startswith(label)), None)


def cells(text, label):
    found = row(text, label)
    return [c for c in found if c not in ('│', '┃', '|')] if found else None


@pytest.fixture
def child():
    spawned = []
    yield spawned
    for c in spawned:
        if c.isalive():
            c.kill(9)
            c.wait()


def test_live_table_shows_phase_restarts_and_trainer_metrics(tmp_path, child):
    release = tmp_path / 'release'
    body = tfjob('tui', {'PS': {'argv': ['python', '-c', QUIET]},
                         'Worker': {'argv': ['python', script(tmp_path, 'trainer.py', TRAINER), str(release)]}})
    rows, cols = 40, 140
    proc = pexpect.spawn(CLI[0], [*CLI[1:], 'run', str(write_job(tmp_path, body)), '--run-dir', str(tmp_path / 'run'),
                                  '--grace-period', '1'],
                         cwd=str(ROOT), env=cli_env(TERM='xterm-256color'), dimensions=(rows, cols),
                         encoding='utf-8', codec_errors='replace')
    child.append(proc)
    screen = Screen(proc, rows, cols)
    text = screen.wait_for(lambda t: (cells(t, 'worker-0') or [''])[-3:] == ['42', '0.125', '7.5'],
                           what='worker-0 metrics in the table')
    assert 'TFJob tui: Running' in text
    header = cells(text, 'REPLICA')
    assert header == ['REPLICA', 'PHASE', 'RESTARTS', 'EXIT', 'STEP', 'LOSS', 'STEPS/S']
    assert cells(text, 'worker-0') == ['worker-0', 'Running', '0', '-', '42', '0.125', '7.5']
    assert cells(text, 'ps-0') == ['ps-0', 'Running', '0', '-', '-', '-', '-']     # serves no metrics
    assert 'step 42/100' in text
    assert '[worker-0] serving metrics' in text and '[ps-0] no metrics here' in text
    release.write_text('')
    text = screen.wait_for(lambda t: 'TFJob tui: Succeeded (Succeeded)' in t and 'logs:' in t, what='summary')
    assert cells(text, 'worker-0')[:4] == ['worker-0', 'Succeeded', '0', '0']
    assert 'final loss: 0.125 (worker-0)' in text
    proc.expect(pexpect.EOF, timeout=30)
    proc.wait()
    assert proc.exitstatus == 0


def test_ctrl_c_on_the_terminal_stops_the_job(tmp_path, child):
    from local_helpers import live_group_members, read_yaml
    body = tfjob('ctrlc', {'PS': {'argv': ['python', '-c', QUIET]},
                           'Worker': {'argv': ['python', '-c', QUIET]}})
    run_dir = tmp_path / 'run'
    proc = pexpect.spawn(CLI[0], [*CLI[1:], 'run', str(write_job(tmp_path, body)), '--run-dir', str(run_dir)],
                         cwd=str(ROOT), env=cli_env(TERM='xterm-256color'), dimensions=(30, 120),
                         encoding='utf-8', codec_errors='replace')
    child.append(proc)
    screen = Screen(proc, 30, 120)
    screen.wait_for(lambda t: 'TFJob ctrlc: Running' in t and (cells(t, 'ps-0') or [''])[1:2] == ['Running']
                    and t.count('no metrics here') == 2, what='both replicas running')
    groups = [p['pgid'] for p in read_yaml(run_dir / 'run.yaml')['processes'].values()]
    assert len(groups) == 2 and all(live_group_members(g) for g in groups)
    proc.sendintr()          # ^C from the terminal: SIGINT to the foreground group (the replicas are not in it)
    text = screen.wait_for(lambda t: 'TFJob ctrlc: interrupted' in t, what='the interrupted summary')
    assert 'interrupted: stopping ps-0, worker-0 (SIGTERM, SIGKILL after 10s)' in text
    proc.expect(pexpect.EOF, timeout=30)
    proc.wait()
    assert proc.exitstatus == 130
    assert not any(live_group_members(g) for g in groups)
