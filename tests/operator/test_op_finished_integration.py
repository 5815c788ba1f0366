"""Issue 20 end to end: the real handlers against the emulated API whose fake kubelet
reports a finished container while the pod's phase is still ``Running`` (the
terminal phase comes late, or never before the pod is deleted), as a real kubelet
1.27+ does. Oracle: the kubelet's restart rule (see test_op_finished.py) and the
documented cleanPodPolicy (``Running`` deletes only replicas that have not finished)."""
import pytest

pytestmark = pytest.mark.filterwarnings('ignore:read_binary is deprecated:DeprecationWarning')

from op_builders import tfjob  # noqa: E402


def entries(cluster, job, rtype):
    return (cluster.status(job).get('replicaStatuses', {}).get(rtype) or {}).get('replicas') or []


async def run_all(cluster, job, names):
    await cluster.wait_for(lambda: sorted(cluster.pods(job)) == sorted(names), what='pods')
    for name in names:
        await cluster.set_pod(name, 'Running')
    await cluster.wait_for(lambda: cluster.status(job).get('allRunningTime'), what='all running')


@pytest.mark.parametrize('terminal_delay', [None, 0.5], ids=['phase-never-comes', 'phase-after-0.5s'])
async def test_whole_job_keeps_finished_pods_and_shows_them_finished(cluster, terminal_delay):
    cluster.terminal_delay = terminal_delay
    await cluster.start()
    await cluster.create_job(tfjob('w', chief=1, ps=1, worker=2, restart='Never'))
    names = ['w-chief-0', 'w-ps-0', 'w-worker-0', 'w-worker-1']
    await run_all(cluster, 'w', names)
    await cluster.set_pod('w-worker-1', 'Succeeded', exit_code=0)
    await cluster.wait_for(lambda: entries(cluster, 'w', 'Worker')[1].get('phase') == 'Succeeded',
                           what='worker 1 finished')
    assert 'Succeeded' not in cluster.conditions('w') and len(cluster.pods('w')) == 4
    await cluster.set_pod('w-chief-0', 'Succeeded', exit_code=0)
    await cluster.wait_for(lambda: cluster.conditions('w').get('Succeeded') == 'True', what='Succeeded')
    # cleanPodPolicy Running (default): the ps and the running worker go; the finished ones stay.
    await cluster.wait_for(lambda: sorted(cluster.pods('w')) == ['w-chief-0', 'w-worker-1'], what='cleanup')
    await cluster.wait_for(lambda: sorted(cluster.objects('services')) == ['w-chief-0', 'w-worker-1'],
                           what='services cleaned up')
    chief, = entries(cluster, 'w', 'Chief')
    assert (chief['phase'], chief['exitCode'], chief['reason']) == ('Succeeded', 0, 'Completed')
    w0, w1 = entries(cluster, 'w', 'Worker')
    assert (w1['phase'], w1['exitCode']) == ('Succeeded', 0)
    assert w0['phase'] == 'Running' and w0['reason'] == 'DeletedAtJobEnd'
    if terminal_delay is not None:      # the late phases land on the kept pods; nothing else moves
        await cluster.wait_for(lambda: sorted(cluster.late_phases) == [('w-chief-0', 'Succeeded'),
                                                                       ('w-worker-1', 'Succeeded')])
        await cluster.wait_for(lambda: all(p['status']['phase'] == 'Succeeded'
                                           for p in cluster.pods('w').values()), what='late phases')
    # Let the operator see everything that happened (its own deletes included), then check.
    await cluster.patch_job('w', {'metadata': {'labels': {'poke': '1'}}})
    await cluster.wait_for(lambda: len(cluster.events('SuccessfulDeletePod')) == 1, what='delete event')
    await cluster.wait_for(lambda: cluster.controller.metrics.registry.get_sample_value(
        'tensorfleet_operator_reconcile_duration_seconds_count') >= 1)
    assert sorted(cluster.pods('w')) == ['w-chief-0', 'w-worker-1']
    deleted = {k: n for k, n in cluster.kmock.deletes.items() if k[0] in ('pods', 'services')}
    assert deleted == {('pods', 'w-ps-0'): 1, ('pods', 'w-worker-0'): 1,
                       ('services', 'w-ps-0'): 1, ('services', 'w-worker-0'): 1}
    assert entries(cluster, 'w', 'Chief')[0]['phase'] == 'Succeeded'
    assert entries(cluster, 'w', 'Worker')[1]['phase'] == 'Succeeded'
    assert len(cluster.events('TFJobSucceeded')) == 1


async def test_failed_replica_in_the_window_fails_the_job_and_is_kept(cluster):
    cluster.terminal_delay = None
    await cluster.start()
    await cluster.create_job(tfjob('f', ps=1, worker=2, restart='Never'))
    await run_all(cluster, 'f', ['f-ps-0', 'f-worker-0', 'f-worker-1'])
    await cluster.set_pod('f-worker-1', 'Failed', exit_code=3)
    await cluster.wait_for(lambda: cluster.status('f').get('reason') == 'ReplicaFailed', what='Failed')
    await cluster.wait_for(lambda: sorted(cluster.pods('f')) == ['f-worker-1'], what='cleanup')
    w1 = entries(cluster, 'f', 'Worker')[1]
    assert (w1['phase'], w1['exitCode']) == ('Failed', 3)
    assert cluster.status('f')['replicaStatuses']['Worker']['failed'] == 1


# restartPolicy -> does worker 0's exit 0 finish it (the job then succeeds)?
FINISHES = {'Never': True, 'ExitCode': True, 'OnFailure': True, 'Always': False}
# cleanPodPolicy -> pods left after success (worker 0 finished, the ps never exits).
LEFT = {'All': [], 'Running': ['t-worker-0'], 'None': ['t-ps-0', 't-worker-0']}


@pytest.mark.parametrize('clean', list(LEFT))
@pytest.mark.parametrize('restart', list(FINISHES))
async def test_restart_policy_by_clean_pod_policy_phase_never_comes(cluster, restart, clean):
    cluster.terminal_delay = None
    await cluster.start()
    await cluster.create_job(tfjob('t', ps=1, worker=1, restart=restart, run_policy={'cleanPodPolicy': clean}))
    await run_all(cluster, 't', ['t-ps-0', 't-worker-0'])
    await cluster.set_pod('t-worker-0', 'Succeeded', exit_code=0)
    if not FINISHES[restart]:
        # The operator saw the exit (the index shows it) and still takes the replica for running.
        await cluster.wait_for(lambda: entries(cluster, 't', 'Worker')[0].get('exitCode') == 0, what='seen')
        assert entries(cluster, 't', 'Worker')[0]['phase'] == 'Running'
        assert cluster.conditions('t') == {'Created': 'True', 'Running': 'True'}
        assert sorted(cluster.pods('t')) == ['t-ps-0', 't-worker-0'] and not cluster.kmock.deletes
        return
    await cluster.wait_for(lambda: cluster.conditions('t').get('Succeeded') == 'True', what='Succeeded')
    await cluster.wait_for(lambda: sorted(cluster.pods('t')) == LEFT[clean], what='cleanup')
    w0, = entries(cluster, 't', 'Worker')
    assert (w0['phase'], w0['exitCode']) == ('Succeeded', 0)
    assert all(n == 1 for n in cluster.kmock.deletes.values())
