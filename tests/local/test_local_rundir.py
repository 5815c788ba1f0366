"""The run directory: default location, `tensorfleet status` / `tensorfleet logs [-f]` on a live and a
finished run, `--python`, `workingDir`, and the console script declared in pyproject.toml."""
import importlib
import sys
import tomllib

from local_helpers import ROOT, read_yaml, script, start, tensorfleet, tfjob, wait_for, write_job

SLOW = """
import sys, time, pathlib
go = pathlib.Path(sys.argv[1])
for i in range(5):
    print(f'line {i}', flush=True)
    if i == 1:
        while not go.exists():
            time.sleep(0.05)
print('cwd=' + str(pathlib.Path.cwd()), 'python=' + sys.executable, flush=True)
"""


def test_default_run_dir_status_and_follow(tmp_path):
    go = tmp_path / 'go'
    body = tfjob('slow', {'Worker': {'argv': ['python', script(tmp_path, 'slow.py', SLOW), str(go)]}})
    container = body['spec']['tfReplicaSpecs']['Worker']['template']['spec']['containers'][0]
    container['workingDir'] = str(tmp_path)
    # `python` inside the replica's own shell command is the --python interpreter too
    container['command'] = ['sh', '-c', 'python -c "import sys; print(\'inner=\' + sys.executable)" && exec "$0" "$@"',
                            *container['command']]
    job = write_job(tmp_path, body)
    python = tmp_path / 'py'
    python.symlink_to(sys.executable)
    run = start('run', job, '--no-tui', '--python', python, cwd=tmp_path)
    try:
        runs = tmp_path / 'tensorfleet-runs'
        run_dir = wait_for(lambda: next(iter(runs.glob('slow-*/worker-0.log')), None), what='the log').parent
        wait_for(lambda: 'line 1' in (run_dir / 'worker-0.log').read_text(), what='line 1')
        live = tensorfleet('status', cwd=tmp_path)          # latest run under ./tensorfleet-runs
        assert live.returncode == 0 and live.stdout.startswith('job slow: Running'), live.stdout
        follow = start('logs', 'worker-0', '-f', cwd=tmp_path)
        go.write_text('')
        out = run.communicate(timeout=60)[0]
        assert run.returncode == 0, out
        followed = follow.communicate(timeout=30)[0]
    finally:
        for proc in (run, locals().get('follow')):
            if proc is not None and proc.poll() is None:
                proc.kill()
                proc.wait()
    log = (run_dir / 'worker-0.log').read_text()
    assert followed == log and log.count('line ') == 5
    assert f'cwd={tmp_path}' in log and f'python={python}' in log and f'inner={python}' in log
    done = tensorfleet('status', cwd=tmp_path)
    assert done.stdout.startswith('job slow: Succeeded (Succeeded)')
    assert 'worker-0      Succeeded           0  0' in done.stdout
    assert read_yaml(run_dir / 'run.yaml')['state'] == 'succeeded'


def test_status_and_logs_without_runs_are_one_line(tmp_path):
    for args in (['status'], ['logs', 'worker-0'], ['status', tmp_path / 'nope']):
        proc = tensorfleet(*args, cwd=tmp_path)
        assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
        assert 'Traceback' not in proc.stderr


def test_missing_python_is_one_line(tmp_path):
    job = write_job(tmp_path, tfjob('p', {'Worker': {'argv': ['python', '-c', 'pass']}}))
    proc = tensorfleet('run', job, '--python', 'no-such-python-9', cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stderr.strip() == 'tensorfleet: --python no-such-python-9: interpreter not found'
    assert not (tmp_path / 'tensorfleet-runs').exists()


def test_console_script_is_declared():
    scripts = tomllib.loads((ROOT / 'pyproject.toml').read_text())['project']['scripts']
    module, func = scripts['tensorfleet'].split(':')
    assert getattr(importlib.import_module(module), func).__module__ == 'tensorfleet_operator.local.cli'
    assert tensorfleet('--help').stdout.startswith('usage: tensorfleet ')
