"""Status transitions of the pure core (plan.reconcile) for chief/worker/ps scenarios.

Expected outcomes follow Kubeflow's documented semantics (success: chief, else
worker 0 or all workers; failure by restart policy; ExitCode 1-127 permanent,
128+ retryable) plus Tensorfleet's enforced backoffLimit and deadline.
"""
import copy
import datetime

import pytest

from op_builders import pod, service, tfjob
from tensorfleet_operator.core.children import ChildOptions
from tensorfleet_operator.core.plan import reconcile

NOW = datetime.datetime(2026, 1, 1, 0, 1, 0, tzinfo=datetime.timezone.utc)
LATER = NOW + datetime.timedelta(seconds=30)
#: Kubeflow's clean-up: a succeeded job's running pods go at once (Tensorfleet's grace is tested on its own)
KUBEFLOW = ChildOptions(clean_pod_grace_seconds=0)


def step(body, pods=(), services=None, now=NOW, opts=KUBEFLOW):
    """Reconcile and store the new status on the body (like the handler's status patch)."""
    if services is None:     # every pod has its service unless told otherwise
        services = [service(p['metadata']['labels']['training.kubeflow.org/job-name'],
                            p['metadata']['labels']['training.kubeflow.org/replica-type'],
                            int(p['metadata']['labels']['training.kubeflow.org/replica-index']))
                    for p in pods]
    plan = reconcile(body, list(pods), services, now, opts)
    body['status'] = plan.status
    return plan


def conds(body):
    return {c['type']: c['status'] for c in body['status'].get('conditions', [])}


def cond(body, ctype):
    return next(c for c in body['status']['conditions'] if c['type'] == ctype)


def reasons(plan):
    return [e.reason for e in plan.events]


def running(job, *names):
    return [pod(job, t, i) for t, i in names]


def test_new_job_creates_every_pod_and_service_and_is_created():
    body = tfjob('j', chief=1, ps=1, worker=2, evaluator=1)
    plan = step(body)
    assert [p['metadata']['name'] for p in plan.create_pods] == [
        'j-ps-0', 'j-chief-0', 'j-worker-0', 'j-worker-1', 'j-evaluator-0']
    assert [s['metadata']['name'] for s in plan.create_services] == [p['metadata']['name'] for p in plan.create_pods]
    assert plan.ensure_secret
    assert conds(body) == {'Created': 'True'}
    assert cond(body, 'Created')['reason'] == 'TFJobCreated'
    assert body['status']['startTime'] == '2026-01-01T00:01:00Z'
    assert body['status']['replicaStatuses']['Worker']['pending'] == 2
    assert plan.transitions == [('created', None)]
    assert plan.events == []


def test_worker_only_job_runs_when_a_worker_runs():
    body = tfjob('j', worker=2)
    step(body)
    plan = step(body, [pod('j', 'worker', 0), pod('j', 'worker', 1, 'Pending')])
    assert conds(body) == {'Created': 'True', 'Running': 'True'}
    assert cond(body, 'Running')['reason'] == 'TFJobRunning'
    assert body['status']['replicaStatuses']['Worker']['active'] == 1
    assert body['status']['replicaStatuses']['Worker']['pending'] == 1
    assert plan.create_pods == [] and plan.create_services == []


def test_with_chief_running_needs_the_chief():
    body = tfjob('j', chief=1, ps=1, worker=1)
    step(body)
    step(body, [pod('j', 'ps', 0), pod('j', 'worker', 0), pod('j', 'chief', 0, 'Pending')])
    assert 'Running' not in conds(body)
    step(body, running('j', ('ps', 0), ('worker', 0), ('chief', 0)), now=LATER)
    assert conds(body)['Running'] == 'True'
    assert body['status']['allRunningTime'] == '2026-01-01T00:01:30Z'


def test_chief_success_folds_active_and_cleans_running_pods():
    body = tfjob('j', chief=1, ps=1, worker=2)
    step(body)
    pods = running('j', ('ps', 0), ('worker', 0), ('worker', 1)) + [pod('j', 'chief', 0, 'Succeeded', exit_code=0)]
    plan = step(body, pods)
    assert conds(body) == {'Created': 'True', 'Succeeded': 'True'}
    st = body['status']
    assert st['reason'] == 'Succeeded' and st['completionTime'] == '2026-01-01T00:01:00Z'
    assert st['replicaStatuses']['Worker']['succeeded'] == 2 and st['replicaStatuses']['Worker']['active'] == 0
    assert sorted(plan.delete_pods) == ['j-ps-0', 'j-worker-0', 'j-worker-1']   # default cleanPodPolicy Running
    assert sorted(plan.delete_services) == ['j-ps-0', 'j-worker-0', 'j-worker-1']
    assert reasons(plan) == ['TFJobSucceeded'] and plan.transitions == [('succeeded', 'Succeeded')]


def test_running_condition_flips_false_on_success():
    body = tfjob('j', chief=1, worker=1)
    step(body)
    step(body, running('j', ('chief', 0), ('worker', 0)))
    step(body, [pod('j', 'chief', 0, 'Succeeded', exit_code=0), pod('j', 'worker', 0)], now=LATER)
    assert conds(body) == {'Created': 'True', 'Running': 'False', 'Succeeded': 'True'}


def test_worker0_success_without_chief():
    body = tfjob('j', ps=1, worker=3)
    step(body)
    step(body, [pod('j', 'ps', 0), pod('j', 'worker', 0, 'Succeeded', exit_code=0),
                pod('j', 'worker', 1), pod('j', 'worker', 2)])
    assert conds(body)['Succeeded'] == 'True'
    assert 'Worker 0 succeeded' in body['status']['message']


def test_worker0_tensorflow_exit_zero_counts_even_with_running_sidecar():
    body = tfjob('j', worker=2)
    step(body)
    w0 = pod('j', 'worker', 0, 'Running', exit_code=0)
    step(body, [w0, pod('j', 'worker', 1)])
    assert conds(body)['Succeeded'] == 'True'


def test_all_workers_policy_waits_for_every_worker():
    body = tfjob('j', worker=2, success_policy='AllWorkers')
    step(body)
    step(body, [pod('j', 'worker', 0, 'Succeeded', exit_code=0), pod('j', 'worker', 1)])
    assert 'Succeeded' not in conds(body)
    step(body, [pod('j', 'worker', 0, 'Succeeded', exit_code=0), pod('j', 'worker', 1, 'Succeeded', exit_code=0)])
    assert conds(body)['Succeeded'] == 'True'
    assert 'all Worker replicas succeeded' in body['status']['message']


@pytest.mark.parametrize('failed', [('worker', 1), ('ps', 0), ('evaluator', 0)])
def test_never_policy_failure_of_any_replica_fails_the_job(failed):
    body = tfjob('j', chief=1, ps=1, worker=2, evaluator=1, restart='Never')
    step(body)
    pods = [pod('j', t, i) for t, i in (('chief', 0), ('ps', 0), ('worker', 0), ('worker', 1), ('evaluator', 0))
            if (t, i) != failed]
    pods.append(pod('j', *failed, phase='Failed', exit_code=1))
    plan = step(body, pods)
    assert conds(body)['Failed'] == 'True'
    assert body['status']['reason'] == 'ReplicaFailed'
    assert f'j-{failed[0]}-{failed[1]}' in body['status']['message']
    assert 'exit code 1' in body['status']['message']
    assert reasons(plan) == ['TFJobFailed'] and plan.transitions == [('failed', 'ReplicaFailed')]
    assert plan.create_pods == []


def test_exit_code_policy_permanent_code_fails():
    body = tfjob('j', ps=1, worker=2, restart='ExitCode')
    step(body)
    step(body, [pod('j', 'ps', 0), pod('j', 'worker', 0), pod('j', 'worker', 1, 'Failed', exit_code=3)])
    assert body['status']['reason'] == 'PermanentExitCode'
    assert cond(body, 'Failed')['reason'] == 'PermanentExitCode'
    assert body['status']['replicaStatuses']['Worker']['replicas'][1]['exitCode'] == 3


@pytest.mark.parametrize('code, reason', [(137, 'OOMKilled'), (143, 'Error'), (130, 'Error')])
def test_exit_code_policy_retryable_code_restarts_the_pod_once(code, reason):
    body = tfjob('j', ps=1, worker=2, restart='ExitCode')
    step(body)
    step(body, running('j', ('ps', 0), ('worker', 0), ('worker', 1)))
    failed = pod('j', 'worker', 1, 'Failed', exit_code=code, reason=reason, uid='w1-a')
    pods = running('j', ('ps', 0), ('worker', 0)) + [failed]
    plan = step(body, pods)
    assert plan.delete_pods == ['j-worker-1'] and plan.create_pods == []
    assert conds(body) == {'Created': 'True', 'Restarting': 'True'}
    assert reasons(plan) == ['TFJobRestarting'] and plan.transitions == [('restarted', 'Worker')]
    entry = body['status']['replicaStatuses']['Worker']['replicas'][1]
    assert entry['restarts'] == 1 and entry['exitCode'] == code and entry['reason'] == reason
    assert body['status']['restarts'] == 1
    # The same observation again (delete not yet seen): no double count, no new event, delete re-sent.
    plan = step(body, pods)
    assert plan.delete_pods == ['j-worker-1'] and plan.events == [] and plan.transitions == []
    assert body['status']['restarts'] == 1
    # The pod is gone: recreated under the same name, still one restart.
    plan = step(body, running('j', ('ps', 0), ('worker', 0)))
    assert [p['metadata']['name'] for p in plan.create_pods] == ['j-worker-1']
    assert body['status']['restarts'] == 1 and plan.events == []
    # It runs again: Running replaces Restarting.
    step(body, running('j', ('ps', 0), ('worker', 0), ('worker', 1)))
    assert conds(body) == {'Created': 'True', 'Running': 'True'}
    entry = body['status']['replicaStatuses']['Worker']['replicas'][1]
    assert entry['restarts'] == 1 and entry['lastExitCode'] == code and entry['lastReason'] == reason
    assert 'exitCode' not in entry and 'reason' not in entry      # the running pod has neither


def test_on_failure_evicted_pod_is_recreated():
    body = tfjob('j', worker=2, restart='OnFailure')
    step(body)
    evicted = pod('j', 'worker', 0, 'Failed')
    evicted['status']['reason'] = 'Evicted'
    plan = step(body, [evicted, pod('j', 'worker', 1)])
    assert plan.delete_pods == ['j-worker-0']
    assert body['status']['replicaStatuses']['Worker']['replicas'][0]['reason'] == 'Evicted'


def test_never_policy_evicted_pod_fails_the_job():
    body = tfjob('j', worker=2, restart='Never')
    step(body)
    evicted = pod('j', 'worker', 0, 'Failed')
    evicted['status']['reason'] = 'Evicted'
    step(body, [evicted, pod('j', 'worker', 1)])
    assert body['status']['reason'] == 'ReplicaFailed' and 'Evicted' in body['status']['message']


def test_in_place_restarts_past_backoff_limit_fail():
    body = tfjob('j', worker=2, restart='OnFailure', run_policy={'backoffLimit': 2})
    step(body)
    step(body, [pod('j', 'worker', 0, restarts=2), pod('j', 'worker', 1)])
    assert 'Failed' not in conds(body) and body['status']['restarts'] == 2
    plan = step(body, [pod('j', 'worker', 0, restarts=2), pod('j', 'worker', 1, restarts=1)])
    assert body['status']['reason'] == 'BackoffLimitExceeded'
    assert '3 restart(s) exceed backoffLimit 2' in body['status']['message']
    assert sorted(plan.delete_pods) == ['j-worker-0', 'j-worker-1']


def test_recreations_count_toward_backoff_limit():
    body = tfjob('j', worker=1, ps=1, restart='ExitCode', run_policy={'backoffLimit': 1})
    step(body)
    step(body, [pod('j', 'ps', 0), pod('j', 'worker', 0, 'Failed', exit_code=137, uid='a')])
    assert body['status']['restarts'] == 1 and 'Failed' not in conds(body)
    step(body, [pod('j', 'ps', 0)])                        # gone, recreated
    plan = step(body, [pod('j', 'ps', 0), pod('j', 'worker', 0, 'Failed', exit_code=137, uid='b')])
    assert body['status']['reason'] == 'BackoffLimitExceeded'
    assert 'backoffLimit 1 reached after 1 restart(s)' in body['status']['message']
    assert reasons(plan) == ['BackoffLimitExceeded']


def test_backoff_limit_zero_fails_on_first_retryable_failure():
    body = tfjob('j', worker=2, restart='OnFailure', run_policy={'backoffLimit': 0})
    step(body)
    step(body, [pod('j', 'worker', 0, 'Failed', exit_code=1), pod('j', 'worker', 1)])
    assert body['status']['reason'] == 'BackoffLimitExceeded'


def test_vanished_pod_is_recreated_and_counted_as_restart():
    body = tfjob('j', worker=2)
    step(body)
    step(body, running('j', ('worker', 0), ('worker', 1)))
    plan = step(body, running('j', ('worker', 0)))
    assert [p['metadata']['name'] for p in plan.create_pods] == ['j-worker-1']
    assert body['status']['restarts'] == 1 and reasons(plan) == ['TFJobRestarting']


def test_deadline_exceeded_fails_and_deletes_everything():
    body = tfjob('j', ps=1, worker=1, run_policy={'activeDeadlineSeconds': 60, 'cleanPodPolicy': 'None'})
    plan = step(body)
    assert plan.requeue_after == 60
    plan = step(body, running('j', ('ps', 0), ('worker', 0)), now=LATER)
    assert plan.requeue_after == 30
    plan = step(body, running('j', ('ps', 0), ('worker', 0)), now=NOW + datetime.timedelta(seconds=61))
    assert body['status']['reason'] == 'DeadlineExceeded' and conds(body)['Failed'] == 'True'
    assert sorted(plan.delete_pods) == ['j-ps-0', 'j-worker-0']
    assert sorted(plan.delete_services) == ['j-ps-0', 'j-worker-0']
    assert reasons(plan) == ['DeadlineExceeded']


def test_suspend_deletes_pods_and_resume_recreates_with_new_start_time():
    body = tfjob('j', ps=1, worker=1)
    step(body)
    step(body, running('j', ('ps', 0), ('worker', 0)))
    body['spec']['runPolicy'] = {'suspend': True}
    plan = step(body, running('j', ('ps', 0), ('worker', 0)), now=LATER)
    assert sorted(plan.delete_pods) == ['j-ps-0', 'j-worker-0'] and plan.create_pods == []
    assert conds(body) == {'Created': 'True', 'Running': 'False', 'Suspended': 'True'}
    assert 'startTime' not in body['status'] and reasons(plan) == ['TFJobSuspended']
    plan = step(body, [], services=[], now=LATER)       # pods gone while suspended: nothing to do
    assert plan.create_pods == [] and plan.events == []
    body['spec']['runPolicy'] = {'suspend': False}
    later = LATER + datetime.timedelta(seconds=100)
    plan = step(body, [], services=[], now=later)
    assert len(plan.create_pods) == 2 and reasons(plan) == ['TFJobResumed']
    assert conds(body)['Suspended'] == 'False' and cond(body, 'Suspended')['reason'] == 'TFJobResumed'
    assert body['status']['startTime'] == '2026-01-01T00:03:10Z'
    assert body['status']['restarts'] == 0                # suspension is not a restart


def test_ttl_after_finished_requeues_then_deletes_the_job():
    body = tfjob('j', worker=1, run_policy={'ttlSecondsAfterFinished': 100})
    step(body)
    plan = step(body, [pod('j', 'worker', 0, 'Succeeded', exit_code=0)])
    assert plan.requeue_after == 100 and not plan.delete_job
    plan = step(body, [pod('j', 'worker', 0, 'Succeeded', exit_code=0)], now=NOW + datetime.timedelta(seconds=99))
    assert plan.requeue_after == 1 and not plan.delete_job and plan.events == []
    plan = step(body, [pod('j', 'worker', 0, 'Succeeded', exit_code=0)], now=NOW + datetime.timedelta(seconds=100))
    assert plan.delete_job


@pytest.mark.parametrize('policy, deleted', [
    ('All', ['j-ps-0', 'j-worker-0', 'j-worker-1']),
    ('Running', ['j-ps-0', 'j-worker-1']),
    ('None', []),
])
def test_clean_pod_policy_after_success(policy, deleted):
    body = tfjob('j', ps=1, worker=2, run_policy={'cleanPodPolicy': policy})
    step(body)
    plan = step(body, [pod('j', 'ps', 0), pod('j', 'worker', 0, 'Succeeded', exit_code=0), pod('j', 'worker', 1)])
    assert sorted(plan.delete_pods) == deleted


def test_a_succeeded_jobs_running_pods_are_deleted_only_after_the_grace_and_those_that_end_meanwhile_stay():
    # Tensorfleet's default: the ps ends by itself once the workers have; worker 1 is in its last steps
    body = tfjob('j', chief=1, ps=1, worker=2)
    step(body, opts=ChildOptions())
    ended = pod('j', 'chief', 0, 'Succeeded', exit_code=0)
    plan = step(body, [ended, pod('j', 'ps', 0), pod('j', 'worker', 0), pod('j', 'worker', 1)], opts=ChildOptions())
    assert conds(body)['Succeeded'] == 'True'
    assert plan.delete_pods == [] and plan.cleanup_pending and plan.requeue_after == 10.0   # the default grace
    four = NOW + datetime.timedelta(seconds=4)
    done = [ended, pod('j', 'ps', 0, 'Succeeded', exit_code=0), pod('j', 'worker', 0, 'Succeeded', exit_code=0),
            pod('j', 'worker', 1)]
    plan = step(body, done, now=four, opts=ChildOptions())
    assert plan.delete_pods == [] and plan.requeue_after == 6.0
    plan = step(body, done, now=NOW + datetime.timedelta(seconds=10), opts=ChildOptions())
    assert plan.delete_pods == ['j-worker-1'] and not plan.cleanup_pending   # the straggler, at the end of the grace
    entries = body['status']['replicaStatuses']
    assert entries['PS']['replicas'][0]['phase'] == 'Succeeded'              # kept, with its logs
    assert entries['Worker']['replicas'][0]['phase'] == 'Succeeded'
    assert entries['Worker']['replicas'][1]['reason'] == 'DeletedAtJobEnd'
    # once every pod has ended there is nothing to wait for
    body = tfjob('k', chief=1, ps=1)
    step(body, opts=ChildOptions())
    plan = step(body, [pod('k', 'chief', 0, 'Succeeded', exit_code=0), pod('k', 'ps', 0, 'Succeeded', exit_code=0)],
                opts=ChildOptions())
    assert plan.delete_pods == [] and not plan.cleanup_pending and plan.requeue_after is None


def test_a_failed_jobs_running_pods_are_deleted_at_once():
    body = tfjob('j', ps=1, worker=2)
    step(body, opts=ChildOptions())
    plan = step(body, [pod('j', 'ps', 0), pod('j', 'worker', 0, 'Failed', exit_code=1), pod('j', 'worker', 1)],
                opts=ChildOptions())
    assert conds(body)['Failed'] == 'True' and sorted(plan.delete_pods) == ['j-ps-0', 'j-worker-1']


def test_finished_job_never_changes_again():
    body = tfjob('j', worker=2)
    step(body)
    step(body, [pod('j', 'worker', 0, 'Failed', exit_code=1), pod('j', 'worker', 1)])
    frozen = dict(body['status'])
    plan = step(body, [pod('j', 'worker', 0, 'Succeeded', exit_code=0)], now=LATER)
    assert body['status'] == frozen and plan.events == [] and plan.create_pods == []


def _worker0(body):
    entry = body['status']['replicaStatuses']['Worker']['replicas'][0]
    return {k: entry[k] for k in ('phase', 'exitCode', 'reason', 'lastExitCode', 'lastReason') if k in entry}


# One index through pod generations: (pod observed or None, expected exitCode/reason of the current
# pod and lastExitCode/lastReason of the pod before it). The fields of one pod always stay together.
OOM = dict(exit_code=137, reason='OOMKilled')
POD_GENERATIONS = [
    ('running', pod('j', 'worker', 0, uid='a'), {'phase': 'Running'}),
    ('oom-killed', pod('j', 'worker', 0, 'Failed', uid='a', **OOM),
     {'phase': 'Failed', 'exitCode': 137, 'reason': 'OOMKilled'}),
    ('deleted, being recreated', None, {'phase': 'Pending', 'lastExitCode': 137, 'lastReason': 'OOMKilled'}),
    ('new pod pulls its image', pod('j', 'worker', 0, 'Pending', uid='b', waiting='ImagePullBackOff'),
     {'phase': 'Pending', 'reason': 'ImagePullBackOff', 'lastExitCode': 137, 'lastReason': 'OOMKilled'}),
    ('new pod runs', pod('j', 'worker', 0, uid='b'),
     {'phase': 'Running', 'lastExitCode': 137, 'lastReason': 'OOMKilled'}),
    ('new pod evicted (no exit code)', dict(pod('j', 'worker', 0, 'Failed', uid='b'),
                                            status={'phase': 'Failed', 'reason': 'Evicted'}),
     {'phase': 'Failed', 'reason': 'Evicted', 'lastExitCode': 137, 'lastReason': 'OOMKilled'}),
    # The evicted pod's own fields replace the OOM ones together: no 137 left next to Evicted.
    ('evicted pod deleted', None, {'phase': 'Pending', 'lastReason': 'Evicted'}),
    ('a third pod exits 143', pod('j', 'worker', 0, 'Failed', uid='c', exit_code=143),
     {'phase': 'Failed', 'exitCode': 143, 'reason': 'Error', 'lastReason': 'Evicted'}),
    ('replaced by a fourth pod without a gap', pod('j', 'worker', 0, uid='d'),
     {'phase': 'Running', 'lastExitCode': 143, 'lastReason': 'Error'}),
]


def test_index_view_keeps_exit_code_and_reason_of_each_pod_together():
    body = tfjob('j', worker=1, restart='OnFailure')
    step(body)
    for what, observed, expected in POD_GENERATIONS:
        step(body, [observed] if observed else [])
        assert _worker0(body) == expected, what


def test_unschedulable_and_image_pull_reasons_in_index_view():
    body = tfjob('j', ps=1, worker=1)
    step(body)
    step(body, [pod('j', 'ps', 0, unschedulable=True), pod('j', 'worker', 0, 'Pending', waiting='ImagePullBackOff')])
    rs = body['status']['replicaStatuses']
    assert rs['PS']['replicas'][0] == {'index': 0, 'phase': 'Pending', 'recreations': 0, 'restarts': 0,
                                       'podUID': 'j-ps-0-uid', 'reason': 'Unschedulable',
                                       'message': '0/3 nodes have nvidia.com/gpu'}
    assert rs['Worker']['replicas'][0]['reason'] == 'ImagePullBackOff'
    assert rs['PS']['pending'] == 1 and rs['PS']['active'] == 0


def test_foreign_pod_with_our_name_is_not_adopted():
    body = tfjob('j', worker=1)
    plan = step(body, [pod('j', 'worker', 0, owner='old-job-uid')], services=[])
    assert plan.create_pods == [] and plan.delete_pods == []
    assert body['status']['replicaStatuses']['Worker']['replicas'][0]['reason'] == 'NameTaken'
    assert plan.requeue_after == 5.0


def test_terminating_pod_is_waited_for():
    body = tfjob('j', worker=1)
    step(body)
    plan = step(body, [pod('j', 'worker', 0, deleting=True)])
    assert plan.create_pods == [] and plan.delete_pods == []


def test_scale_down_deletes_extra_pods():
    body = tfjob('j', worker=2)
    step(body)
    plan = step(body, running('j', ('worker', 0), ('worker', 1), ('worker', 2)))
    assert plan.delete_pods == ['j-worker-2'] and plan.delete_services == ['j-worker-2']


def test_reconcile_is_idempotent():
    body = tfjob('j', chief=1, ps=1, worker=2)
    step(body)
    pods = running('j', ('ps', 0), ('chief', 0), ('worker', 0), ('worker', 1))
    step(body, pods)
    before = dict(body['status'])
    plan = step(body, pods)
    assert body['status'] == before
    assert plan.events == [] and plan.transitions == [] and not plan.create_pods and not plan.delete_pods


def test_invalid_spec_fails_once_and_is_retried_only_when_fixed():
    body = tfjob('j', worker=None, ps=2)
    plan = step(body)
    assert body['status']['reason'] == 'InvalidSpec'
    assert cond(body, 'Failed')['reason'] == 'InvalidSpec'
    assert 'spec.tfReplicaSpecs' in body['status']['message']
    assert [(e.type, e.reason) for e in plan.events] == [('Warning', 'InvalidSpec')]
    plan = step(body, now=LATER)
    assert plan.events == [] and plan.create_pods == []
    ps_template = body['spec']['tfReplicaSpecs']['PS']['template']
    body['spec']['tfReplicaSpecs']['Worker'] = {'replicas': 1, 'template': ps_template}
    plan = step(body, now=LATER)
    assert 'Failed' not in conds(body) and len(plan.create_pods) == 3


def test_invalid_spec_on_a_running_job_removes_its_pods():
    body = tfjob('j', worker=1)
    step(body)
    del body['spec']['tfReplicaSpecs']['Worker']['template']['spec']['containers'][0]['image']
    plan = step(body, [pod('j', 'worker', 0)])
    assert body['status']['reason'] == 'InvalidSpec' and plan.delete_pods == ['j-worker-0']
    assert 'spec.tfReplicaSpecs.Worker.template.spec.containers[0].image' in body['status']['message']


def test_managed_by_another_controller_is_left_alone():
    body = tfjob('j', worker=1, run_policy={'managedBy': 'kueue.x-k8s.io/multikueue'})
    plan = step(body)
    assert plan.create_pods == [] and body['status'] == {}


def _mutations(value, depth=0):
    """Every way of replacing one node of a valid body by garbage."""
    garbage = [None, 'nonsense', 7, -1, [], {}, [1, 'x'], {'a': None}, True]
    yield from garbage
    if depth > 6:
        return
    if isinstance(value, dict):
        for key in value:
            for sub in _mutations(value[key], depth + 1):
                yield {**value, key: sub}
    elif isinstance(value, list):
        for i, item in enumerate(value):
            for sub in _mutations(item, depth + 1):
                yield value[:i] + [sub] + value[i + 1:]


def test_no_input_crashes_the_core():
    """Garbage anywhere in the body (or the status) ends as a plan, never an exception."""
    base = tfjob('j', chief=1, ps=1, worker=2, restart='ExitCode',
                 run_policy={'backoffLimit': 2, 'schedulingPolicy': {'minAvailable': 1}})
    base['status'] = step(tfjob('j', chief=1, ps=1, worker=2), [pod('j', 'worker', 0, 'Failed', exit_code=137)]).status
    count = 0
    for body in _mutations(base):
        if not isinstance(body, dict):
            continue
        plan = reconcile(body, [pod('j', 'worker', 0), pod('j', 'ps', 0, 'Failed', exit_code=1)], [], NOW)
        assert isinstance(plan.status, dict)
        count += 1
    assert count > 300


def test_no_observed_pod_crashes_the_core():
    body = tfjob('j', ps=1, worker=2, restart='ExitCode')
    step(body)
    count = 0
    for bad in _mutations(pod('j', 'worker', 1, 'Failed', exit_code=137)):
        if isinstance(bad, dict):
            plan = reconcile(body, [pod('j', 'worker', 0), bad], [], NOW)
            assert isinstance(plan.status, dict)
            count += 1
    assert count > 100


def test_template_restart_policy_is_overridden_with_one_warning():
    body = tfjob('j', worker=2, restart='OnFailure')
    body['spec']['tfReplicaSpecs']['Worker']['template']['spec']['restartPolicy'] = 'Always'
    plan = step(body)
    assert [(e.type, e.reason) for e in plan.events] == [('Warning', 'SetPodTemplateRestartPolicy')]
    assert 'spec.tfReplicaSpecs.Worker.template.spec.restartPolicy' in plan.events[0].message
    assert plan.create_pods[0]['spec']['restartPolicy'] == 'OnFailure'
    assert step(body).events == []


def test_job_being_deleted_is_left_to_the_garbage_collector():
    """Foreground deletion: the GC deletes the children first; the operator must not recreate them."""
    body = tfjob('j', ps=1, worker=2)
    step(body)
    step(body, running('j', ('ps', 0), ('worker', 0), ('worker', 1)))
    before = copy.deepcopy(body['status'])
    body['metadata']['deletionTimestamp'] = '2026-01-01T00:05:00Z'
    body['metadata']['finalizers'] = ['foregroundDeletion']
    plan = step(body, running('j', ('ps', 0)), services=[], now=LATER)   # workers already collected
    assert body['status'] == before
    assert plan.create_pods == [] and plan.create_services == [] and plan.delete_pods == []
    assert plan.events == [] and plan.transitions == [] and not plan.ensure_secret
    assert plan.requeue_after is None


def test_finished_job_whose_spec_is_broken_afterwards_stays_as_it_ended():
    body = tfjob('j', ps=1, worker=1, run_policy={'cleanPodPolicy': 'None', 'ttlSecondsAfterFinished': 100})
    step(body)
    finished = [pod('j', 'ps', 0), pod('j', 'worker', 0, 'Succeeded', exit_code=0)]
    step(body, finished)
    before = copy.deepcopy(body['status'])
    assert before['reason'] == 'Succeeded'
    del body['spec']['tfReplicaSpecs']['Worker']['template']['spec']['containers'][0]['image']
    plan = step(body, finished, now=LATER)
    assert body['status'] == before       # not Failed/InvalidSpec on top of Succeeded
    assert plan.delete_pods == [] and plan.delete_services == [] and plan.events == [] and plan.transitions == []
    assert plan.requeue_after == 70 and not plan.delete_job        # TTL still honoured
    assert step(body, finished, now=NOW + datetime.timedelta(seconds=100)).delete_job


def test_in_place_restarts_survive_the_pod_being_recreated():
    """status.restarts never goes down: a recreated pod starts at restartCount 0, but the
    kubelet restarts of the pod it replaces still count toward backoffLimit."""
    body = tfjob('j', worker=2, restart='OnFailure', run_policy={'backoffLimit': 6})
    step(body)
    step(body, [pod('j', 'worker', 0, restarts=3, uid='a'), pod('j', 'worker', 1)])
    assert body['status']['restarts'] == 3
    evicted = pod('j', 'worker', 0, 'Failed', restarts=3, uid='a')
    evicted['status']['reason'] = 'Evicted'
    plan = step(body, [evicted, pod('j', 'worker', 1)])
    assert plan.delete_pods == ['j-worker-0'] and body['status']['restarts'] == 4
    step(body, [evicted, pod('j', 'worker', 1)])                     # delete not seen yet: no change
    assert body['status']['restarts'] == 4
    step(body, [pod('j', 'worker', 1)])                              # gone
    step(body, [pod('j', 'worker', 0, uid='b'), pod('j', 'worker', 1)])   # recreated, restartCount 0
    entry = body['status']['replicaStatuses']['Worker']['replicas'][0]
    assert (entry['restarts'], entry['recreations'], entry['earlierPodRestarts']) == (4, 1, 3)
    assert body['status']['restarts'] == 4 and body['status']['replicaStatuses']['Worker']['restarts'] == 4
    step(body, [pod('j', 'worker', 0, uid='b', restarts=2), pod('j', 'worker', 1)])
    assert body['status']['restarts'] == 6 and 'Failed' not in conds(body)
    plan = step(body, [pod('j', 'worker', 0, uid='b', restarts=3), pod('j', 'worker', 1)])
    assert body['status']['reason'] == 'BackoffLimitExceeded'
    assert body['status']['message'] == '7 restart(s) exceed backoffLimit 6'


def test_restarts_of_a_vanished_pod_and_of_suspended_pods_are_kept():
    body = tfjob('j', worker=2, restart='OnFailure')
    step(body)
    step(body, [pod('j', 'worker', 0, restarts=2, uid='a'), pod('j', 'worker', 1, restarts=1, uid='c')])
    step(body, [pod('j', 'worker', 1, restarts=1, uid='c')])         # worker 0 deleted by hand
    assert body['status']['restarts'] == 4                           # 2 + 1 in place + 1 recreation
    body['spec']['runPolicy'] = {'suspend': True}
    step(body, [pod('j', 'worker', 0, uid='b'), pod('j', 'worker', 1, restarts=1, uid='c')])
    body['spec']['runPolicy'] = {'suspend': False}
    step(body, [], services=[], now=LATER)
    assert body['status']['restarts'] == 4                           # suspension adds none, loses none
    assert [e['restarts'] for e in body['status']['replicaStatuses']['Worker']['replicas']] == [3, 1]
