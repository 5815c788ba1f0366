"""The one rule for "a replica has finished" (issue 20), on the pure core.

A real kubelet reports a finished container (``state.terminated``) while the pod's
``status.phase`` still says ``Running``; the terminal phase comes 0.5-1 s later, or
never if the pod is deleted first. The oracle is the kubelet's restart rule: under
the pod's ``restartPolicy`` ``Never`` (TFJob ``Never``/``ExitCode``) any exit is
final, under ``OnFailure`` only exit 0, under ``Always`` none. Every table row
below observes pods in that window (phase ``Running``, container terminated).
"""
import datetime

import pytest

from op_builders import pod, tfjob
from test_op_plan import LATER, conds, step
from tensorfleet_operator.core.api import RestartPolicy
from tensorfleet_operator.core.observe import container_finished, observe_pod


def window(rtype, index, code, **kw):
    """A pod whose tensorflow container has exited while status.phase is still Running."""
    return pod('j', rtype, index, 'Running', exit_code=code, **kw)


def entry(body, rtype, index):
    return body['status']['replicaStatuses'][rtype]['replicas'][index]


@pytest.mark.parametrize('policy, code, finished', [
    ('Never', 0, True), ('Never', 1, True), ('Never', 137, True),
    ('OnFailure', 0, True), ('OnFailure', 1, False), ('OnFailure', 137, False),
    ('Always', 0, False), ('Always', 1, False),
])
def test_kubelet_rule(policy, code, finished):
    assert container_finished(policy, code) is finished


@pytest.mark.parametrize('replica_policy, kubelet_policy', [
    (RestartPolicy.NEVER, 'Never'), (RestartPolicy.EXIT_CODE, 'Never'),
    (RestartPolicy.ON_FAILURE, 'OnFailure'), (RestartPolicy.ALWAYS, 'Always')])
@pytest.mark.parametrize('code', [0, 1])
def test_observed_phase_comes_from_the_container_in_the_window(replica_policy, kubelet_policy, code):
    p = window('worker', 0, code)
    view = observe_pod(p, replica_policy)
    assert view.pod_phase == 'Running'
    expected = ('Succeeded' if code == 0 else 'Failed') if container_finished(kubelet_policy, code) else 'Running'
    assert view.phase == expected and view.finished is (expected != 'Running')
    # The pod's own spec.restartPolicy (what the kubelet applies) wins over the replica's.
    p['spec'] = {'restartPolicy': 'Always'}
    assert observe_pod(p, replica_policy).phase == 'Running'


def test_terminal_phase_without_exit_code_still_counts_and_deletion_wins():
    evicted = pod('j', 'worker', 0, 'Failed')
    evicted['status'] = {'phase': 'Failed', 'reason': 'Evicted'}
    assert observe_pod(evicted, RestartPolicy.ALWAYS).phase == 'Failed'
    assert observe_pod(window('worker', 0, 0, deleting=True), RestartPolicy.NEVER).phase == 'Terminating'


ALL_PODS = ['j-ps-0', 'j-worker-0', 'j-worker-1']


def _run_to_window(restart, clean, code):
    body = tfjob('j', ps=1, worker=2, restart=restart, run_policy={'cleanPodPolicy': clean})
    step(body)
    step(body, [pod('j', 'ps', 0), pod('j', 'worker', 0), pod('j', 'worker', 1)])
    plan = step(body, [pod('j', 'ps', 0), window('worker', 0, code, uid='w0'), pod('j', 'worker', 1)], now=LATER)
    return body, plan


# (restartPolicy, cleanPodPolicy) -> pods deleted when worker 0 exits 0 in the window.
SUCCESS_DELETES = {'All': ALL_PODS, 'Running': ['j-ps-0', 'j-worker-1'], 'None': []}


@pytest.mark.parametrize('clean', ['All', 'Running', 'None'])
@pytest.mark.parametrize('restart', ['Never', 'ExitCode', 'OnFailure', 'Always'])
def test_worker0_exits_0_while_phase_running(restart, clean):
    body, plan = _run_to_window(restart, clean, 0)
    w0 = entry(body, 'Worker', 0)
    if restart == 'Always':      # the kubelet restarts it in place: not finished, nothing happens
        assert conds(body) == {'Created': 'True', 'Running': 'True'}
        assert w0['phase'] == 'Running' and plan.delete_pods == []
        return
    assert conds(body)['Succeeded'] == 'True'
    assert body['status']['completionTime'] == '2026-01-01T00:01:30Z'
    assert w0['phase'] == 'Succeeded' and w0['exitCode'] == 0 and w0['reason'] == 'Completed'
    assert sorted(plan.delete_pods) == SUCCESS_DELETES[clean]
    assert sorted(plan.delete_services) == SUCCESS_DELETES[clean]
    workers = body['status']['replicaStatuses']['Worker']
    assert (workers['succeeded'], workers['active'], workers['failed']) == (2, 0, 0)   # active folded
    if clean != 'None':      # the running worker it deleted says so; its phase stays what it was
        assert entry(body, 'Worker', 1)['reason'] == 'DeletedAtJobEnd'
    # The terminal phase arrives later: nothing more is deleted, nothing changes.
    frozen = {k: v for k, v in body['status'].items()}
    late = pod('j', 'worker', 0, 'Succeeded', exit_code=0, uid='w0')
    survivors = [p for p in (pod('j', 'ps', 0), late, pod('j', 'worker', 1))
                 if p['metadata']['name'] not in plan.delete_pods]
    plan = step(body, survivors, now=LATER + datetime.timedelta(seconds=1))
    assert plan.delete_pods == [] and plan.events == [] and body['status'] == frozen


# restartPolicy -> (job outcome, worker 0's phase, pods deleted under cleanPodPolicy Running) on exit 1.
FAILURE_TABLE = {
    'Never': ('ReplicaFailed', 'Failed', ['j-ps-0', 'j-worker-1']),
    'ExitCode': ('PermanentExitCode', 'Failed', ['j-ps-0', 'j-worker-1']),
    'OnFailure': (None, 'Running', []),          # restarted in place by the kubelet
    'Always': (None, 'Running', []),
}


@pytest.mark.parametrize('clean', ['All', 'Running', 'None'])
@pytest.mark.parametrize('restart', list(FAILURE_TABLE))
def test_worker0_exits_1_while_phase_running(restart, clean):
    body, plan = _run_to_window(restart, clean, 1)
    outcome, phase, deleted_if_running = FAILURE_TABLE[restart]
    w0 = entry(body, 'Worker', 0)
    assert w0['phase'] == phase and w0['exitCode'] == 1
    if outcome is None:
        assert 'Failed' not in conds(body) and plan.delete_pods == []
        assert body['status']['replicaStatuses']['Worker']['active'] == 2
        return
    assert conds(body)['Failed'] == 'True' and body['status']['reason'] == outcome
    expected = {'All': ALL_PODS, 'Running': deleted_if_running, 'None': []}[clean]
    assert sorted(plan.delete_pods) == expected
    assert body['status']['replicaStatuses']['Worker']['failed'] == 1


def test_exit_code_retryable_in_the_window_restarts_once():
    body, plan = _run_to_window('ExitCode', 'Running', 137)
    assert plan.delete_pods == ['j-worker-0'] and conds(body)['Restarting'] == 'True'
    assert body['status']['restarts'] == 1
    # The terminal phase arrives before the delete is seen: still one restart, delete re-sent.
    plan = step(body, [pod('j', 'ps', 0), pod('j', 'worker', 0, 'Failed', exit_code=137, uid='w0'),
                       pod('j', 'worker', 1)], now=LATER)
    assert plan.delete_pods == ['j-worker-0'] and plan.events == [] and body['status']['restarts'] == 1


def test_on_failure_in_place_restart_never_looks_failed():
    """terminated -> waiting (CrashLoopBackOff) -> running, phase Running throughout."""
    body = tfjob('j', worker=2, restart='OnFailure', run_policy={'backoffLimit': 3})
    step(body)
    crash = window('worker', 0, 1)
    waiting = pod('j', 'worker', 0, 'Running', restarts=1, waiting='CrashLoopBackOff')
    waiting['status']['containerStatuses'][0]['lastState'] = {'terminated': {'exitCode': 1, 'reason': 'Error'}}
    back = pod('j', 'worker', 0, 'Running', restarts=1)
    for observed in (crash, waiting, back):
        plan = step(body, [observed, pod('j', 'worker', 1)])
        assert plan.delete_pods == [] and 'Failed' not in conds(body)
        assert entry(body, 'Worker', 0)['phase'] == 'Running'
    assert body['status']['restarts'] == 1


def test_all_running_time_needs_every_replica_really_running():
    body = tfjob('j', worker=2, success_policy='AllWorkers')
    step(body)
    step(body, [window('worker', 0, 0), pod('j', 'worker', 1)])
    assert 'allRunningTime' not in body['status']


def test_after_the_end_a_replica_that_finishes_is_shown_finished():
    """cleanPodPolicy None: the ps exits after the chief's success; its entry becomes true."""
    body = tfjob('j', chief=1, ps=1, run_policy={'cleanPodPolicy': 'None'}, worker=None)
    step(body)
    step(body, [window('chief', 0, 0), pod('j', 'ps', 0)])
    assert conds(body)['Succeeded'] == 'True' and entry(body, 'PS', 0)['phase'] == 'Running'
    plan = step(body, [pod('j', 'chief', 0, 'Succeeded', exit_code=0), window('ps', 0, 143)], now=LATER)
    ps = entry(body, 'PS', 0)
    assert ps['phase'] == 'Failed' and ps['exitCode'] == 143 and plan.delete_pods == []
    counts = body['status']['replicaStatuses']['PS']
    assert (counts['active'], counts['failed']) == (0, 1)
    assert body['status']['completionTime'] == '2026-01-01T00:01:00Z'     # the end is not moved
    assert plan.events == [] and conds(body)['Succeeded'] == 'True'


def test_suspend_keeps_a_replica_that_finished_in_the_window():
    body = tfjob('j', worker=2)
    step(body)
    body['spec']['runPolicy'] = {'suspend': True}
    step(body, [window('worker', 1, 0), pod('j', 'worker', 0)])
    assert [e['phase'] for e in body['status']['replicaStatuses']['Worker']['replicas']] == ['Suspended',
                                                                                              'Succeeded']
