"""The real handlers (kopf embedded) against the emulated API: children, status,
events, restarts, timers, suspend, invalid specs and an operator restart."""
import asyncio
import base64

import pytest

from op_builders import tfjob

pytestmark = pytest.mark.filterwarnings('ignore:read_binary is deprecated:DeprecationWarning')

LABEL = 'training.kubeflow.org/job-name'


async def test_lifecycle_children_status_events(cluster):
    await cluster.start()
    await cluster.create_job(tfjob('mnist', ps=1, worker=2))
    names = ['mnist-ps-0', 'mnist-worker-0', 'mnist-worker-1']
    await cluster.wait_for(lambda: sorted(cluster.pods('mnist')) == names, what='pods')
    await cluster.wait_for(lambda: all(n in cluster.objects('services') for n in names), what='services')
    job = cluster.job('mnist')
    for name in names:
        for obj in (cluster.pods()[name], cluster.objects('services')[name]):
            assert obj['metadata']['ownerReferences'] == [{
                'apiVersion': 'tensorfleet.io/v1', 'kind': 'TFJob', 'name': 'mnist',
                'uid': job['metadata']['uid'], 'controller': True, 'blockOwnerDeletion': True}]
    env = {e['name']: e for e in cluster.pods()['mnist-worker-1']['spec']['containers'][0]['env']}
    assert env['TF_CONFIG']['value'] == (
        '{"cluster":{"ps":["mnist-ps-0.ns.svc:2222"],'
        '"worker":["mnist-worker-0.ns.svc:2222","mnist-worker-1.ns.svc:2222"]},'
        '"task":{"type":"worker","index":1},"environment":"cloud"}')
    secret = cluster.objects('secrets')['mnist-rpc-token']
    assert len(base64.b64decode(secret['data']['token'])) >= 32
    assert env['TENSORFLEET_RPC_TOKEN']['valueFrom']['secretKeyRef'] == {'name': 'mnist-rpc-token', 'key': 'token'}
    await cluster.wait_for(lambda: cluster.conditions('mnist') == {'Created': 'True'}, what='Created')
    # Children are watched with a server-side selector (not every pod of the cluster).
    watches = [str(r.url) for r in cluster.kmock._requests if 'watch=true' in str(r.url)]
    assert any('/pods?' in u and 'labelSelector=training.kubeflow.org/job-name' in u for u in watches)

    for name in names:
        await cluster.set_pod(name, 'Running')
    await cluster.wait_for(lambda: cluster.conditions('mnist').get('Running') == 'True', what='Running')
    await cluster.wait_for(lambda: cluster.status('mnist')['replicaStatuses']['Worker']['active'] == 2)
    assert cluster.status('mnist').get('allRunningTime')

    await cluster.set_pod('mnist-worker-0', 'Succeeded', exit_code=0)
    await cluster.wait_for(lambda: cluster.conditions('mnist').get('Succeeded') == 'True', what='Succeeded')
    # cleanPodPolicy Running (the default): the ps and the running worker go, the finished worker stays.
    await cluster.wait_for(lambda: sorted(cluster.pods('mnist')) == ['mnist-worker-0'], what='cleanup')
    status = cluster.status('mnist')
    assert status['reason'] == 'Succeeded' and status['completionTime']
    assert cluster.conditions('mnist') == {'Created': 'True', 'Running': 'False', 'Succeeded': 'True'}
    await cluster.wait_for(lambda: cluster.events('SuccessfulDeletePod'), what='delete event')
    await cluster.settle()       # any stray reconcile would have happened: now count
    assert len(cluster.events('TFJobSucceeded')) == 1
    created = cluster.events('SuccessfulCreatePod')
    assert len(created) == 1 and created[0]['type'] == 'Normal'
    assert created[0]['involvedObject']['name'] == 'mnist'
    assert len(cluster.events('SuccessfulDeletePod')) == 1
    metrics = cluster.controller.metrics.registry
    assert metrics.get_sample_value('tensorfleet_operator_jobs_created_total', {'namespace': 'ns'}) == 1
    assert metrics.get_sample_value('tensorfleet_operator_jobs_succeeded_total', {'namespace': 'ns'}) == 1
    assert metrics.get_sample_value('tensorfleet_operator_pods_created_total', {'namespace': 'ns'}) == 3
    assert metrics.get_sample_value('tensorfleet_operator_pods_deleted_total', {'namespace': 'ns'}) == 2
    assert metrics.get_sample_value('tensorfleet_operator_jobs', {'condition': 'Succeeded'}) == 1
    assert metrics.get_sample_value('tensorfleet_operator_job_all_pods_running_seconds_count') == 1


async def test_exit_code_restart_then_permanent_failure(cluster):
    await cluster.start()
    await cluster.create_job(tfjob('ec', ps=1, worker=1, restart='ExitCode'))
    await cluster.wait_for(lambda: len(cluster.pods('ec')) == 2)
    first_uid = cluster.pods()['ec-worker-0']['metadata']['uid']
    for name in ('ec-ps-0', 'ec-worker-0'):
        await cluster.set_pod(name, 'Running')
    await cluster.wait_for(lambda: cluster.conditions('ec').get('Running') == 'True')
    await cluster.set_pod('ec-worker-0', 'Failed', exit_code=137, reason='OOMKilled')
    await cluster.wait_for(lambda: cluster.pods().get('ec-worker-0', {}).get('metadata', {}).get('uid')
                           not in (None, first_uid), what='recreated pod')
    await cluster.wait_for(lambda: cluster.conditions('ec').get('Restarting') == 'True')
    second_uid = cluster.pods()['ec-worker-0']['metadata']['uid']
    worker0 = lambda: cluster.status('ec')['replicaStatuses']['Worker']['replicas'][0]   # noqa: E731
    await cluster.wait_for(lambda: worker0().get('podUID') == second_uid, what='index 0 shows the new pod')
    entry = worker0()
    # The new pod has no exit code or reason yet; the one that was OOM-killed is "last", both fields.
    assert entry['restarts'] == 1 and entry['lastExitCode'] == 137 and entry['lastReason'] == 'OOMKilled'
    assert 'exitCode' not in entry and 'reason' not in entry
    assert cluster.status('ec')['restarts'] == 1
    restarting = cluster.events('TFJobRestarting')
    assert len(restarting) == 1 and restarting[0]['type'] == 'Warning'
    assert 'exit code 137' in restarting[0]['message'] and 'OOMKilled' in restarting[0]['message']

    await cluster.set_pod('ec-worker-0', 'Running')
    await cluster.wait_for(lambda: cluster.conditions('ec').get('Running') == 'True', what='running again')
    await cluster.set_pod('ec-worker-0', 'Failed', exit_code=2)
    await cluster.wait_for(lambda: cluster.conditions('ec').get('Failed') == 'True')
    assert cluster.status('ec')['reason'] == 'PermanentExitCode'
    await cluster.wait_for(lambda: 'ec-ps-0' not in cluster.pods(), what='ps cleaned up')
    await cluster.wait_for(lambda: cluster.events('TFJobFailed'), what='failure event')
    await cluster.settle()
    assert len(cluster.events('TFJobFailed')) == 1 and len(cluster.events('TFJobRestarting')) == 1


async def test_operator_restart_midway_creates_no_duplicates(cluster):
    cluster.kmock.create_delay = 0.02       # slow creates, one at a time: stop really is mid-way
    await cluster.start(max_in_flight=1)
    await cluster.create_job(tfjob('big', ps=1, worker=30))
    await cluster.wait_for(lambda: len(cluster.pods('big')) >= 3, what='first pods')
    await cluster.stop()
    assert len(cluster.pods('big')) < 31
    cluster.kmock.create_delay = 0.0
    await cluster.start()
    await cluster.wait_for(lambda: len(cluster.pods('big')) == 31 and len(cluster.objects('services')) == 31,
                           what='all children')
    await cluster.wait_for(lambda: cluster.status('big').get('replicaStatuses', {}).get('Worker', {})
                           .get('pending') == 30)
    await cluster.settle()
    for name in cluster.pods('big'):
        assert len(cluster.history('pods', name)) == 1, f'{name} was created more than once'
    # (pods_created_total may undercount here: creates in flight when the first operator was
    # cancelled completed server-side, and the second operator saw them as AlreadyExists.)
    jobs_created = sum(c.metrics.registry.get_sample_value('tensorfleet_operator_jobs_created_total',
                                                           {'namespace': 'ns'}) or 0 for c in cluster.controllers)
    assert jobs_created == 1
    assert cluster.status('big')['restarts'] == 0


async def test_deadline_fires_without_any_other_event(cluster):
    """Only the operator's own timer can end this job: nothing happens after the pods run. The
    deadline (3 s) leaves the last event's reconcile seconds to run before it; and if the test
    sees the pods late, it never waits for pods that are already gone."""
    controller = await cluster.start()
    await cluster.create_job(tfjob('dl', worker=2, run_policy={'activeDeadlineSeconds': 3}))
    ended = lambda: cluster.status('dl').get('reason') == 'DeadlineExceeded'    # noqa: E731
    await cluster.wait_for(lambda: len(cluster.pods('dl')) == 2 or ended(), what='pods or the deadline')
    for name in ('dl-worker-0', 'dl-worker-1'):
        await cluster.set_pod(name, 'Running', missing_ok=True)
    # Nothing else happens: only the operator's own timer can fail the job.
    await cluster.wait_for(ended, what='DeadlineExceeded')
    assert controller.timers_fired >= 1, 'the deadline passed without the timer'
    await cluster.wait_for(lambda: not cluster.pods('dl') and not cluster.objects('services'), what='cleanup')
    await cluster.settle()
    assert len(cluster.events('DeadlineExceeded')) == 1


async def test_ttl_deletes_the_finished_job(cluster):
    await cluster.start()
    await cluster.create_job(tfjob('ttl', worker=1, run_policy={'ttlSecondsAfterFinished': 1}))
    await cluster.wait_for(lambda: 'ttl-worker-0' in cluster.pods())
    await cluster.set_pod('ttl-worker-0', 'Succeeded', exit_code=0)
    await cluster.wait_for(lambda: cluster.conditions('ttl').get('Succeeded') == 'True')
    await cluster.wait_for(lambda: cluster.job('ttl') is None, what='job deleted by TTL')


async def test_suspend_and_resume(cluster):
    await cluster.start()
    await cluster.create_job(tfjob('sus', ps=1, worker=1))
    await cluster.wait_for(lambda: len(cluster.pods('sus')) == 2)
    await cluster.patch_job('sus', {'spec': {'runPolicy': {'suspend': True}}})
    await cluster.wait_for(lambda: cluster.conditions('sus').get('Suspended') == 'True')
    await cluster.wait_for(lambda: not cluster.pods('sus'), what='pods deleted')
    assert 'startTime' not in cluster.status('sus')
    await cluster.patch_job('sus', {'spec': {'runPolicy': {'suspend': False}}})
    await cluster.wait_for(lambda: len(cluster.pods('sus')) == 2, what='pods recreated')
    await cluster.wait_for(lambda: cluster.conditions('sus').get('Suspended') == 'False')
    assert cluster.status('sus')['startTime'] and cluster.status('sus')['restarts'] == 0
    assert len(cluster.events('TFJobSuspended')) == 1 and len(cluster.events('TFJobResumed')) == 1


async def test_invalid_spec_fails_once_and_recovers_when_fixed(cluster):
    await cluster.start()
    body = tfjob('bad', worker=None, ps=2)
    await cluster.create_job(body)
    await cluster.wait_for(lambda: cluster.status('bad').get('reason') == 'InvalidSpec')
    assert 'spec.tfReplicaSpecs' in cluster.status('bad')['message']
    await cluster.create_job(tfjob('garbage', worker=1) | {'spec': 'nonsense'})
    await cluster.wait_for(lambda: cluster.status('garbage').get('reason') == 'InvalidSpec')
    await cluster.patch_job('bad', {'metadata': {'labels': {'touched': 'yes'}}})   # not a spec change
    await cluster.settle()
    assert len([e for e in cluster.events('InvalidSpec') if e['involvedObject']['name'] == 'bad']) == 1
    assert cluster.events('InvalidSpec')[0]['type'] == 'Warning'
    assert not cluster.pods()
    worker = {'replicas': 1, 'template': body['spec']['tfReplicaSpecs']['PS']['template']}
    await cluster.patch_job('bad', {'spec': {'tfReplicaSpecs': {'Worker': worker}}})
    await cluster.wait_for(lambda: len(cluster.pods('bad')) == 3, what='pods after the fix')
    assert 'Failed' not in cluster.conditions('bad')


async def test_gang_volcano_pod_group_first_and_removed_at_the_end(cluster):
    await cluster.start(gang_scheduler='volcano')
    await cluster.create_job(tfjob('gang', ps=1, worker=2))
    await cluster.wait_for(lambda: len(cluster.pods('gang')) == 3)
    group = cluster.objects('podgroups')['gang']
    assert group['spec'] == {'minMember': 3, 'queue': 'default'}
    first_pod = min(int(p['metadata']['resourceVersion']) for p in cluster.pods('gang').values())
    assert int(group['metadata']['resourceVersion']) < first_pod          # created before any pod
    pod = cluster.pods()['gang-worker-0']
    assert pod['spec']['schedulerName'] == 'volcano'
    assert pod['metadata']['annotations']['scheduling.k8s.io/group-name'] == 'gang'
    await cluster.set_pod('gang-worker-0', 'Succeeded', exit_code=0)
    await cluster.wait_for(lambda: 'gang' not in cluster.objects('podgroups'), what='PodGroup deleted')


def pod_groups(cluster, group):
    return {key[2]: obj.raw for key, obj in list(cluster.kmock.objects.items())
            if key[0].plural == 'podgroups' and key[0].group == group and key[1] == 'ns' and not obj.deleted}


async def test_gang_scheduler_plugins_pod_group_first_and_removed_at_the_end(cluster):
    await cluster.start(gang_scheduler='scheduler-plugins')
    await cluster.create_job(tfjob('sp', ps=1, worker=3, run_policy={
        'schedulingPolicy': {'minAvailable': 3, 'scheduleTimeoutSeconds': 60}}))
    await cluster.wait_for(lambda: len(cluster.pods('sp')) == 4)
    group = pod_groups(cluster, 'scheduling.x-k8s.io')['sp']
    assert group['apiVersion'] == 'scheduling.x-k8s.io/v1alpha1' and group['kind'] == 'PodGroup'
    assert group['spec'] == {'minMember': 3, 'scheduleTimeoutSeconds': 60}
    assert group['metadata']['ownerReferences'][0]['uid'] == cluster.job('sp')['metadata']['uid']
    assert pod_groups(cluster, 'scheduling.volcano.sh') == {}
    first_pod = min(int(p['metadata']['resourceVersion']) for p in cluster.pods('sp').values())
    assert int(group['metadata']['resourceVersion']) < first_pod          # created before any pod
    for pod in cluster.pods('sp').values():
        assert pod['spec']['schedulerName'] == 'scheduler-plugins-scheduler'
        assert pod['metadata']['labels']['scheduling.x-k8s.io/pod-group'] == 'sp'
        assert 'scheduling.k8s.io/group-name' not in (pod['metadata'].get('annotations') or {})
    await cluster.set_pod('sp-worker-0', 'Succeeded', exit_code=0)
    await cluster.wait_for(lambda: 'sp' not in pod_groups(cluster, 'scheduling.x-k8s.io'),
                           what='PodGroup deleted')
    assert len(cluster.events('SuccessfulCreatePodGroup')) == 1
    await cluster.wait_for(lambda: len(cluster.events('SuccessfulDeletePodGroup')) == 1)


async def test_kubeflow_manifest_runs_unchanged_under_the_kubeflow_group(cluster):
    """TENSORFLEET_API_GROUP=kubeflow.org: a Kubeflow TFJob v1 manifest works as-is."""
    import pathlib
    import socket
    import urllib.request

    import yaml
    doc = yaml.safe_load((pathlib.Path(__file__).parents[2] / 'deploy/examples/11-simple.yaml').read_text())
    doc['apiVersion'] = 'kubeflow.org/v1'       # i.e. the original Kubeflow example
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        port = s.getsockname()[1]
    cluster.group = 'kubeflow.org'
    await cluster.start(liveness_endpoint=f'http://127.0.0.1:{port}/healthz')
    await cluster.create_job(doc)
    await cluster.wait_for(lambda: sorted(cluster.pods('tfjob-simple')) == ['tfjob-simple-worker-0',
                                                                            'tfjob-simple-worker-1'])
    pod = cluster.pods()['tfjob-simple-worker-0']
    assert pod['metadata']['ownerReferences'][0]['apiVersion'] == 'kubeflow.org/v1'
    assert pod['spec']['restartPolicy'] == 'OnFailure'
    await cluster.wait_for(lambda: cluster.conditions('tfjob-simple').get('Created') == 'True')
    body = await asyncio.to_thread(lambda: urllib.request.urlopen(f'http://127.0.0.1:{port}/healthz').read())
    assert b'"jobs": 1' in body or b'"jobs":1' in body


async def test_foreground_deletion_is_not_fought(cluster):
    """kubectl delete --cascade=foreground: the job keeps a deletionTimestamp while the GC deletes
    its children; the operator must not recreate them."""
    await cluster.start()
    body = tfjob('fg', ps=1, worker=1)
    body['metadata']['finalizers'] = ['foregroundDeletion']
    await cluster.create_job(body)
    await cluster.wait_for(lambda: len(cluster.pods('fg')) == 2)
    await cluster.call('DELETE', cluster.jobs_path('fg'))
    await cluster.wait_for(lambda: (cluster.job('fg') or {}).get('metadata', {}).get('deletionTimestamp'))
    for name in ('fg-ps-0', 'fg-worker-0'):      # play the garbage collector
        await cluster.delete('pods', name)
    await cluster.settle()
    assert cluster.pods('fg') == {}
    assert cluster.events('TFJobRestarting') == [] and cluster.status('fg').get('restarts') == 0


async def test_stale_rpc_token_secret_of_a_same_named_job_is_waited_for(cluster):
    """A deleted job's Secret still awaiting garbage collection holds the name: no pod may start
    with its token; once it is gone the new job gets its own Secret and its pods."""
    stale = {'apiVersion': 'v1', 'kind': 'Secret', 'metadata': {
        'name': 'again-rpc-token', 'namespace': 'ns', 'ownerReferences': [{
            'apiVersion': 'tensorfleet.io/v1', 'kind': 'TFJob', 'name': 'again', 'uid': 'old-uid',
            'controller': True}]}, 'data': {'token': base64.b64encode(b'old').decode()}}
    await cluster.call('POST', '/api/v1/namespaces/ns/secrets', stale)
    await cluster.start()
    await cluster.create_job(tfjob('again', worker=2))
    await cluster.wait_for(lambda: cluster.events('FailedCreateOrDelete'), what='warning')
    warning = cluster.events('FailedCreateOrDelete')[0]
    assert warning['type'] == 'Warning'
    assert warning['message'] == ('secret again-rpc-token belongs to another owner; '
                                  'waiting for it to be deleted before creating pods')
    await cluster.settle(quiet=0.5)
    assert cluster.pods('again') == {}
    await cluster.delete('secrets', 'again-rpc-token')          # the garbage collector catches up
    await cluster.wait_for(lambda: len(cluster.pods('again')) == 2, what='pods after the stale secret went')
    secret = cluster.objects('secrets')['again-rpc-token']
    assert secret['metadata']['ownerReferences'][0]['uid'] == cluster.job('again')['metadata']['uid']
    assert base64.b64decode(secret['data']['token']) != b'old'
    assert len(cluster.events('FailedCreateOrDelete')) == 1
