"""`tensorfleet run` end to end with real processes: the operator core's lifecycle rules decide how a
local job ends (restarts per policy, backoffLimit, deadline, success policy), and what each replica sees."""
import json
import signal

import pytest

from local_helpers import read_yaml, script, tensorfleet, tfjob, write_job
from tensorfleet_operator.local import operator_core as core

ECHO_ENV = """
import json, os
keys = ['TF_CONFIG', 'CUDA_VISIBLE_DEVICES', 'TENSORFLEET_METRICS_PORT', 'TENSORFLEET_PROCESSES_PER_HOST',
        'TENSORFLEET_RPC_TOKEN', 'GREETING']
print('ENV ' + json.dumps({k: os.environ.get(k) for k in keys}), flush=True)
"""

# A replica that is killed on its first run and succeeds once restarted: the first run records
# itself and waits to be killed by the test's SIGKILL (it kills itself after READY, standing in for
# an OOM kill or a node problem), the second run sees the record and exits 0.
KILLED_ONCE = """
import os, pathlib, signal, sys
marker = pathlib.Path(sys.argv[1])
if marker.exists():
    print('second run: done', flush=True)
    sys.exit(0)
marker.write_text(str(os.getpid()))
print('first run: killed now', flush=True)
os.kill(os.getpid(), signal.SIGKILL)
"""


# A ps that says what it sees, then marks itself up (a file) and serves forever; workers that
# wait for that mark before they end, so the ps has always spoken before the job can end.
PS_UP = ECHO_ENV + """
import pathlib, sys, time
pathlib.Path(sys.argv[1]).write_text('up')
time.sleep(600)
"""
AFTER_PS = """
import pathlib, sys, time
deadline = time.monotonic() + 60
while not pathlib.Path(sys.argv[1]).exists() and time.monotonic() < deadline:
    time.sleep(0.02)
""" + ECHO_ENV


def run_job(tmp_path, body, *extra, timeout=120, env=None):
    # these scripts' replicas never end by themselves: cleanPodPolicy's clean-up at once (Kubeflow's), not after
    # Tensorfleet's grace (tests/local/test_local_examples.py's real trainers end within it)
    if '--clean-pod-grace' not in extra:
        extra = ('--clean-pod-grace', '0', *extra)
    path = write_job(tmp_path, body)
    run_dir = tmp_path / 'run'
    proc = tensorfleet('run', path, '--run-dir', run_dir, '--no-tui', *extra, timeout=timeout, env=env)
    status = read_yaml(run_dir / 'status.yaml')['status'] if (run_dir / 'status.yaml').exists() else None
    return proc, status, run_dir


def env_lines(output):
    return {line.split(']')[0][1:]: json.loads(line.split('ENV ', 1)[1])
            for line in output.splitlines() if '] ENV ' in line}


def test_single_worker_runs_and_succeeds(tmp_path):
    body = tfjob('one', {'Worker': {'argv': ['python', script(tmp_path, 'w.py', ECHO_ENV)],
                                    'env': {'NAME': 'hi', 'GREETING': '$(NAME) and $(UNDEFINED) $$(NAME)'}}})
    proc, status, run_dir = run_job(tmp_path, body)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    seen = env_lines(proc.stdout)['worker-0']
    assert seen['TF_CONFIG'] is None                  # one replica: not distributed (Kubeflow's rule)
    assert seen['CUDA_VISIBLE_DEVICES'] == '' and seen['TENSORFLEET_PROCESSES_PER_HOST'] == '1'
    assert len(seen['TENSORFLEET_RPC_TOKEN']) >= 32 and seen['GREETING'] == 'hi and $(UNDEFINED) $(NAME)'
    assert int(seen['TENSORFLEET_METRICS_PORT']) > 0
    assert status['reason'] == 'Succeeded' and status['message'].endswith('all Worker replicas succeeded.')
    assert status['replicaStatuses']['Worker']['replicas'][0]['exitCode'] == 0
    assert (run_dir / 'worker-0.log').read_text().startswith('ENV {')
    assert 'TFJob one: Succeeded (Succeeded)' in proc.stdout
    st = tensorfleet('status', run_dir)
    assert st.returncode == 0 and st.stdout.startswith('job one: Succeeded (Succeeded)')
    logs = tensorfleet('logs', 'worker-0', '--run-dir', run_dir)
    assert logs.returncode == 0 and logs.stdout == (run_dir / 'worker-0.log').read_text()
    assert tensorfleet('logs', 'one-worker-0', '--run-dir', run_dir).stdout == logs.stdout
    missing = tensorfleet('logs', 'ps-0', '--run-dir', run_dir)
    assert missing.returncode == 2 and "replica 'ps-0' is not in the run" in missing.stderr


def test_distributed_replicas_get_local_tf_config_and_ps_is_stopped(tmp_path):
    up = str(tmp_path / 'ps-up')
    body = tfjob('dist', {'PS': {'argv': ['python', script(tmp_path, 'ps.py', PS_UP), up]},
                          'Worker': {'n': 2, 'argv': ['python', script(tmp_path, 'w.py', AFTER_PS), up]}},
                 success_policy='AllWorkers')     # worker 1 is not stopped before it has spoken
    proc, status, _ = run_job(tmp_path, body)
    assert proc.returncode == 0, proc.stdout
    seen = env_lines(proc.stdout)
    assert set(seen) == {'ps-0', 'worker-0', 'worker-1'}
    configs = {label: json.loads(env['TF_CONFIG']) for label, env in seen.items()}
    cluster = configs['ps-0']['cluster']
    assert all(c['cluster'] == cluster for c in configs.values())
    addresses = cluster['ps'] + cluster['worker']
    assert len(set(addresses)) == 3 and all(a.startswith('127.0.0.1:') for a in addresses)
    assert configs['worker-1']['task'] == {'type': 'worker', 'index': 1}
    assert len({env['TENSORFLEET_METRICS_PORT'] for env in seen.values()}) == 3
    assert len({env['TENSORFLEET_RPC_TOKEN'] for env in seen.values()}) == 1
    assert {env['TENSORFLEET_PROCESSES_PER_HOST'] for env in seen.values()} == {'3'}
    # The job ends when the workers do; the never-ending ps is deleted (cleanPodPolicy Running).
    assert status['reason'] == 'Succeeded'
    assert 'ps-0' in proc.stdout.split('TFJob dist: Succeeded')[1] and 'stopped by tensorfleet, exit 143' in proc.stdout


@pytest.mark.parametrize('policy, restarts_field', [('OnFailure', 'restarts'), ('ExitCode', 'recreations')])
def test_killed_worker_is_restarted_per_policy_and_job_succeeds(tmp_path, policy, restarts_field):
    worker = script(tmp_path, 'w.py', KILLED_ONCE)
    body = tfjob('restart', {'Worker': {'argv': ['python', worker, str(tmp_path / 'marker')], 'policy': policy}},
                 run_policy={'backoffLimit': 3})
    proc, status, run_dir = run_job(tmp_path, body, '--restart-backoff', '0.1')
    assert proc.returncode == 0, proc.stdout
    entry = status['replicaStatuses']['Worker']['replicas'][0]
    assert status['reason'] == 'Succeeded' and entry[restarts_field] == 1 and status['restarts'] == 1
    log = (run_dir / 'worker-0.log').read_text()
    assert log.index('first run: killed now') < log.index('second run: done')
    if policy == 'ExitCode':         # 137 = SIGKILL: retryable, the pod is recreated by the operator
        assert entry['lastExitCode'] == 137 and 'TFJobRestarting' in proc.stdout
    else:                            # the kubelet restarts the container in place
        assert entry['exitCode'] == 0


def test_always_policy_restarts_even_a_successful_exit(tmp_path):
    # Always: the kubelet restarts the container whatever its exit code, so a worker that exits 0
    # never finishes; every restart counts against backoffLimit (the operator's rule).
    body = tfjob('always', {'Worker': {'argv': ['python', '-c', 'print("ran")'], 'policy': 'Always'}},
                 run_policy={'backoffLimit': 2})
    proc, status, run_dir = run_job(tmp_path, body, '--restart-backoff', '0.05')
    assert proc.returncode == 1 and status['reason'] == 'BackoffLimitExceeded'
    assert (run_dir / 'worker-0.log').read_text().splitlines().count('ran') >= 3


def test_never_policy_fails_the_job_on_a_killed_worker(tmp_path):
    worker = script(tmp_path, 'w.py', KILLED_ONCE)
    body = tfjob('never', {'Worker': {'argv': ['python', worker, str(tmp_path / 'marker')], 'policy': 'Never'}})
    proc, status, _ = run_job(tmp_path, body)
    assert proc.returncode == 1
    assert status['reason'] == core.TerminalReason.REPLICA_FAILED.value
    assert status['message'].startswith('pod never-worker-0 failed (exit code 137')


def test_exit_code_policy_permanent_code_fails_at_once(tmp_path):
    body = tfjob('perm', {'Worker': {'argv': ['python', '-c', 'import sys; sys.exit(3)'], 'policy': 'ExitCode'}},
                 run_policy={'backoffLimit': 5})
    proc, status, _ = run_job(tmp_path, body)
    assert proc.returncode == 1 and status['reason'] == 'PermanentExitCode' and status['restarts'] == 0


def test_backoff_limit_exhausted_fails_with_the_operators_reason(tmp_path):
    body = tfjob('crash', {'Worker': {'argv': ['python', '-c', 'import sys; print("crash"); sys.exit(1)'],
                                      'policy': 'OnFailure'}}, run_policy={'backoffLimit': 2})
    proc, status, run_dir = run_job(tmp_path, body, '--restart-backoff', '0.05')
    assert proc.returncode == 1, proc.stdout
    assert status['reason'] == core.TerminalReason.BACKOFF_LIMIT_EXCEEDED.value
    assert 'backoffLimit 2' in status['message'] and status['restarts'] == 3
    log = (run_dir / 'worker-0.log').read_text().splitlines()
    assert log.count('--- tensorfleet: restart 3 of crash-worker-0 ---') == 1 and log.count('crash') in (3, 4)
    assert 'TFJob crash: Failed (BackoffLimitExceeded)' in proc.stdout


def test_active_deadline_fails_the_job_and_stops_everything(tmp_path):
    body = tfjob('slow', {'Worker': {'argv': ['python', '-c', 'import time; time.sleep(600)']}},
                 run_policy={'activeDeadlineSeconds': 2})
    proc, status, _ = run_job(tmp_path, body, timeout=90)
    assert proc.returncode == 1 and status['reason'] == 'DeadlineExceeded'
    assert 'stopped by tensorfleet' in proc.stdout


def test_all_workers_success_policy_waits_for_every_worker(tmp_path):
    worker = script(tmp_path, 'w.py', 'import os, time\n'
                    'index = __import__("json").loads(os.environ["TF_CONFIG"])["task"]["index"]\n'
                    'time.sleep(1.5 if index == 1 else 0)\nprint("done", index, flush=True)\n')
    body = tfjob('all', {'Worker': {'n': 2, 'argv': ['python', worker]}}, success_policy='AllWorkers')
    proc, status, _ = run_job(tmp_path, body)
    assert proc.returncode == 0 and status['message'].endswith('all Worker replicas succeeded.')
    assert '[worker-1] done 1' in proc.stdout


def test_two_simulated_gpus_are_shared_out_disjointly(tmp_path):
    up = str(tmp_path / 'ps-up')
    body = tfjob('gpus', {'PS': {'argv': ['python', script(tmp_path, 'ps.py', PS_UP), up]},
                          'Worker': {'n': 2, 'argv': ['python', script(tmp_path, 'w.py', AFTER_PS), up],
                                     'gpus': 1}}, success_policy='AllWorkers')
    proc, _, _ = run_job(tmp_path, body, '--gpus', '0,1')
    assert proc.returncode == 0, proc.stdout
    seen = env_lines(proc.stdout)
    devices = [seen['worker-0']['CUDA_VISIBLE_DEVICES'], seen['worker-1']['CUDA_VISIBLE_DEVICES']]
    assert sorted(devices) == ['0', '1'] and seen['ps-0']['CUDA_VISIBLE_DEVICES'] == ''
    from local_helpers import cli_env
    again, _, _ = run_job(tmp_path, body, env=cli_env(TENSORFLEET_GPUS='3,5'))     # the env override
    assert sorted(e['CUDA_VISIBLE_DEVICES'] for k, e in env_lines(again.stdout).items() if k != 'ps-0') == ['3', '5']


def test_more_gpus_than_exist_is_an_error_before_anything_starts(tmp_path):
    marker = tmp_path / 'started'
    body = tfjob('greedy', {'Worker': {'n': 2, 'gpus': 2,
                                       'argv': ['python', '-c', f'open({str(marker)!r}, "w")']}})
    proc, status, run_dir = run_job(tmp_path, body, '--gpus', '0,1')
    assert proc.returncode == 2 and status is None and not marker.exists() and not run_dir.exists()
    assert proc.stderr.strip() == ('tensorfleet: the job asks for 4 GPU(s) (nvidia.com/gpu: greedy-worker-0 2, '
                                   'greedy-worker-1 2) but this machine has 2 (0,1); use --gpus to name the devices')


@pytest.mark.parametrize('argv, message', [
    (['no-such-command-xyz'], "command 'no-such-command-xyz' not found on PATH"),
    (['./missing.sh'], "command './missing.sh' not found or not executable"),
])
def test_command_not_found_is_one_line(tmp_path, argv, message):
    body = tfjob('nocmd', {'Worker': {'argv': argv}})
    proc, _, _ = run_job(tmp_path, body)
    assert proc.returncode == 2 and proc.stderr.strip() == (
        f'tensorfleet: pod nocmd-worker-0, container tensorflow: {message}')


def test_port_taken_is_one_line(tmp_path):
    import socket
    with socket.socket() as taken:
        taken.bind(('127.0.0.1', 0))
        taken.listen()
        port = taken.getsockname()[1]
        body = tfjob('port', {'Worker': {'argv': ['python', '-c', 'pass']}})
        proc, _, _ = run_job(tmp_path, body, '--base-port', port)
    assert proc.returncode == 2
    assert proc.stderr.strip() == f'tensorfleet: port 127.0.0.1:{port} is already in use (from --base-port {port})'


def test_suspended_job_is_refused(tmp_path):
    body = tfjob('sus', {'Worker': {'argv': ['python', '-c', 'pass']}}, run_policy={'suspend': True})
    proc, _, _ = run_job(tmp_path, body)
    assert proc.returncode == 2 and 'spec.runPolicy.suspend is true' in proc.stderr


def test_clean_pod_policy_none_keeps_pods_on_a_cluster_but_nothing_outlives_tensorfleet(tmp_path):
    ps = script(tmp_path, 'ps.py', 'import time\nprint("ps serving", flush=True)\ntime.sleep(600)\n')
    worker = script(tmp_path, 'w.py', 'import time\ntime.sleep(0.5)\n')       # the ps is up before it ends
    body = tfjob('keep', {'PS': {'argv': ['python', ps]}, 'Worker': {'argv': ['python', worker]}},
                 run_policy={'cleanPodPolicy': 'None'})
    proc, status, _ = run_job(tmp_path, body, '--grace-period', '1')
    assert proc.returncode == 0, proc.stdout
    # The operator deleted nothing (its plan), so the final status still shows the ps running ...
    assert status['replicaStatuses']['PS']['replicas'][0]['phase'] == 'Running'
    # ... and tensorfleet, exiting, stopped it anyway and says why.
    assert 'tensorfleet: cleanPodPolicy None keeps them on a cluster; tensorfleet exits: stopping ps-0' in proc.stdout
    assert 'stopped by tensorfleet, exit 143' in proc.stdout


def test_a_users_own_tf_config_is_kept_in_a_single_replica_job(tmp_path):
    mine = '{"cluster":{"worker":["elsewhere:1"]},"task":{"type":"worker","index":0}}'
    body = tfjob('own', {'Worker': {'argv': ['python', script(tmp_path, 'w.py', ECHO_ENV)],
                                    'env': {'TF_CONFIG': mine}}})
    proc, _, _ = run_job(tmp_path, body)
    assert proc.returncode == 0, proc.stdout
    assert env_lines(proc.stdout)['worker-0']['TF_CONFIG'] == mine     # not distributed: the core leaves it


def test_a_closed_stdout_does_not_block_the_replicas(tmp_path):
    # `tensorfleet run job.yaml | head -1`: the replica writes far more than a pipe holds; once the
    # reader is gone tensorfleet must keep draining it (into its log) and still exit with the job's code.
    loud = "import sys\nfor i in range(4000):\n    print(f'line {i:05d} ' + 'x' * 100)\n"
    body = tfjob('loud', {'Worker': {'argv': ['python', '-c', loud]}})
    run_dir = tmp_path / 'run'
    from local_helpers import start
    proc = start('run', write_job(tmp_path, body), '--run-dir', run_dir, '--no-tui')
    try:
        first = proc.stdout.readline()
        proc.stdout.close()
        assert first.startswith('tensorfleet: running TFJob loud')
        assert proc.wait(timeout=120) == 0
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)      # tensorfleet stops its replicas
            proc.wait(timeout=60)
    log = (run_dir / 'worker-0.log').read_text().splitlines()
    assert len(log) == 4000 and log[-1].startswith('line 03999 ')
    assert read_yaml(run_dir / 'status.yaml')['status']['reason'] == 'Succeeded'


def test_a_working_dir_of_the_image_runs_in_workdir(tmp_path):
    body = tfjob('wd', {'Worker': {'argv': ['python', '-c', 'import os; print("cwd=" + os.getcwd())']}})
    body['spec']['tfReplicaSpecs']['Worker']['template']['spec']['containers'][0]['workingDir'] = '/opt/in-image'
    (tmp_path / 'here').mkdir()
    proc, _, _ = run_job(tmp_path, body, '--workdir', tmp_path / 'here')
    assert proc.returncode == 0 and f'[worker-0] cwd={tmp_path / "here"}' in proc.stdout
    assert 'workingDir /opt/in-image is not on this machine' in proc.stdout
    bad, _, _ = run_job(tmp_path, body, '--workdir', tmp_path / 'nope')
    assert bad.returncode == 2
    assert bad.stderr.strip() == f'tensorfleet: --workdir {tmp_path / "nope"}: no such directory'
