"""Nothing outlives `tensorfleet run`: after Ctrl-C (SIGINT) and after SIGKILL of tensorfleet itself,
every replica's process group is empty (grandchildren included) and every port it held is free."""
import json
import os
import signal
import sys

import pytest

from local_helpers import live_group_members, port_in_use, read_yaml, script, start, tfjob, wait_for, write_job

pytestmark = pytest.mark.skipif(not sys.platform.startswith('linux'), reason='reads /proc')

# Listens on its TF_CONFIG port and starts a grandchild that shares the listening socket and
# ignores SIGTERM: only a SIGKILL of the whole group frees the port.
HOLDER = """
import json, os, signal, socket, subprocess, sys, time
if sys.argv[1:] == ['ignore-term']:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
cfg = json.loads(os.environ['TF_CONFIG'])
task = cfg['task']
port = int(cfg['cluster'][task['type']][task['index']].rsplit(':', 1)[1])
srv = socket.socket()
srv.bind(('127.0.0.1', port))
srv.listen()
child = subprocess.Popen([sys.executable, '-c', 'import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); '
                          'time.sleep(600)'], pass_fds=(srv.fileno(),))
print('READY ' + json.dumps({'pgid': os.getpgid(0), 'pid': os.getpid(), 'child': child.pid, 'port': port}),
      flush=True)
time.sleep(600)
"""


@pytest.fixture
def reaper():
    """Process groups a test made: whatever happens, nothing of theirs survives the test."""
    groups = []
    yield groups
    for pgid in groups:
        for pid in live_group_members(pgid):
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass


def start_holders(tmp_path, reaper, grace=1):
    holder = script(tmp_path, 'holder.py', HOLDER)
    body = tfjob('hold', {'PS': {'argv': ['python', holder, 'ignore-term']},
                          'Worker': {'n': 2, 'argv': ['python', holder]}})
    run_dir = tmp_path / 'run'
    proc = start('run', write_job(tmp_path, body), '--run-dir', run_dir, '--no-tui', '--grace-period', str(grace))

    def ready():
        infos = {}
        for label in ('ps-0', 'worker-0', 'worker-1'):
            log = run_dir / f'{label}.log'
            lines = [ln for ln in log.read_text().splitlines() if ln.startswith('READY ')] if log.exists() else []
            if not lines:
                return None
            infos[label] = json.loads(lines[0][6:])
        return infos
    try:
        infos = wait_for(ready, timeout=60, what='three replicas READY')
    except AssertionError:
        proc.kill()
        raise AssertionError(proc.communicate(timeout=30)[0]) from None
    finally:
        reaper.extend(info['pgid'] for info in (ready() or {}).values())
    for info in infos.values():
        assert live_group_members(info['pgid']) and info['child'] in live_group_members(info['pgid'])
        assert port_in_use(info['port'])
    # The processes print READY before the runner's next reconcile records the job as Running: wait for that.
    from local_helpers import tensorfleet
    wait_for(lambda: 'Running' in tensorfleet('status', run_dir).stdout.splitlines()[0], timeout=60,
             interval=0.2, what='job Running in the run directory')
    return proc, infos, run_dir


def nothing_left(infos, watchdog=None):
    groups = [live_group_members(info['pgid']) for info in infos.values()]
    ports = [port_in_use(info['port']) for info in infos.values()]
    alive = watchdog is not None and watchdog in live_group_members(watchdog)
    return not any(groups) and not any(ports) and not alive


def test_sigint_stops_every_replica_and_grandchild(tmp_path, reaper):
    proc, infos, run_dir = start_holders(tmp_path, reaper)
    os.kill(proc.pid, signal.SIGINT)
    out = proc.communicate(timeout=60)[0]
    assert proc.returncode == 130, out
    assert nothing_left(infos), [live_group_members(i['pgid']) for i in infos.values()]
    assert 'interrupted: stopping ps-0, worker-0, worker-1 (SIGTERM, SIGKILL after 1s)' in out
    assert 'TFJob hold: interrupted' in out
    run = read_yaml(run_dir / 'run.yaml')
    assert run['state'] == 'interrupted' and run['processes'] == {}
    assert not live_group_members(run['watchdog'])
    from local_helpers import tensorfleet
    shown = tensorfleet('status', run_dir).stdout.splitlines()[0]
    assert shown == 'job hold: interrupted (stopped by the user while Running)'


def test_sigkill_of_tensorfleet_leaves_nothing_running(tmp_path, reaper):
    proc, infos, run_dir = start_holders(tmp_path, reaper)
    watchdog = read_yaml(run_dir / 'run.yaml')['watchdog']
    reaper.append(watchdog)
    assert live_group_members(watchdog) == [watchdog]      # the watchdog leads its own group
    os.kill(proc.pid, signal.SIGKILL)
    proc.communicate(timeout=30)
    wait_for(lambda: nothing_left(infos, watchdog), timeout=30, what='replicas, grandchildren and ports gone')
    status = read_yaml(run_dir / 'run.yaml')
    assert status['state'] == 'running'            # it had no chance to say otherwise...
    from local_helpers import tensorfleet
    shown = tensorfleet('status', run_dir)
    assert '(tensorfleet is no longer running)' in shown.stdout.splitlines()[0]   # ...and status says so


def test_a_second_sigint_kills_at_once(tmp_path, reaper):
    import time
    proc, infos, _ = start_holders(tmp_path, reaper, grace=120)   # the ps ignores SIGTERM
    os.kill(proc.pid, signal.SIGINT)
    wait_for(lambda: not live_group_members(infos['worker-0']['pgid']), timeout=60, what='the workers to stop')
    assert live_group_members(infos['ps-0']['pgid'])        # still in its 120 s grace period
    started = time.monotonic()
    os.kill(proc.pid, signal.SIGINT)
    out = proc.communicate(timeout=60)[0]
    assert proc.returncode == 130 and time.monotonic() - started < 60, out
    assert nothing_left(infos)
