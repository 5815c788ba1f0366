"""Hot standby through kopf peering (``--peering NAME --priority N``): two real operators
against the emulated API, the standby embedded in the test's loop, the primary in a thread."""

import pytest

from op_builders import tfjob

pytestmark = pytest.mark.filterwarnings('ignore:read_binary is deprecated:DeprecationWarning')

PEERING = 'tfjobs'
PEERING_PATH = '/apis/kopf.dev/v1/clusterkopfpeerings'


def reconciles(controller):
    return controller.metrics.registry.get_sample_value('tensorfleet_operator_reconcile_duration_seconds_count')


def peers(cluster):
    for key in list(cluster.kmock.objects):
        if key[0].plural == 'clusterkopfpeerings' and key[2] == PEERING:
            return set((cluster.kmock.objects[key].raw.get('status') or {}))
    return set()


async def test_standby_does_nothing_while_paused_and_takes_over_without_duplicates(cluster):
    await cluster.call('POST', PEERING_PATH, {'apiVersion': 'kopf.dev/v1', 'kind': 'ClusterKopfPeering',
                                              'metadata': {'name': PEERING}})
    # kopf touches its entry every max(1, lifetime - 5..10) s: 2 s left 1 s of margin, which a loaded machine ate
    # (the standby saw the primary expire and reconciled); a clean stop removes the entry at once either way
    peering = dict(peering_name=PEERING, standalone=False, peering_lifetime=15)

    # Alone, the standby works: it creates the pods and arms the job's deadline timer (far away).
    standby = await cluster.start(identity='standby', priority=1, **peering)
    await cluster.create_job(tfjob('dl', worker=1, run_policy={'activeDeadlineSeconds': 3600}))
    await cluster.wait_for(lambda: 'dl-worker-0' in cluster.pods(), what='pod made by the lone standby')
    await cluster.set_pod('dl-worker-0', 'Running')
    await cluster.wait_for(lambda: cluster.conditions('dl').get('Running') == 'True')
    await cluster.wait_for(lambda: standby._jobs[('ns', 'dl')].timer is not None, what='deadline timer armed')

    # A higher priority joins: kopf pauses the standby, which must stop its own timers too.
    primary = await cluster.start_in_thread('primary', priority=100, **peering)
    await cluster.wait_for(lambda: peers(cluster) == {'standby', 'primary'}, what='both in the peering')
    # kopf pauses the standby (its peering daemon stops; getattr: no such flag without the fix).
    await cluster.wait_for(lambda: not getattr(standby, 'active', False), what='standby paused')
    assert all(s.timer is None for s in standby._jobs.values()), 'the paused standby kept a timer'
    paused_at = reconciles(standby)
    # The deadline is brought near and passes while the standby is paused: only the primary acts.
    await cluster.patch_job('dl', {'spec': {'runPolicy': {'activeDeadlineSeconds': 1}}})
    await cluster.wait_for(lambda: cluster.status('dl').get('reason') == 'DeadlineExceeded')
    await cluster.create_job(tfjob('ha', ps=1, worker=2))
    await cluster.wait_for(lambda: len(cluster.pods('ha')) == 3, what='pods made by the primary')
    for name in cluster.pods('ha'):
        await cluster.set_pod(name, 'Running')
    await cluster.wait_for(lambda: cluster.conditions('ha').get('Running') == 'True')
    await cluster.settle(quiet=0.5)
    assert reconciles(standby) == paused_at, 'the paused standby reconciled'
    assert len(cluster.events('DeadlineExceeded')) == 1
    assert standby.metrics.registry.get_sample_value('tensorfleet_operator_pods_created_total',
                                                     {'namespace': 'ns'}) == 1     # dl's pod only

    uids = {n: p['metadata']['uid'] for n, p in cluster.pods('ha').items()}
    # The primary goes away; the standby resumes once its peering entry is gone and finishes 'ha'.
    await primary.stop()
    await cluster.wait_for(lambda: peers(cluster) == {'standby'}, what='primary gone from peering')
    await cluster.set_pod('ha-worker-1', 'Failed', exit_code=1)       # Never: fails the job
    await cluster.wait_for(lambda: cluster.status('ha').get('reason') == 'ReplicaFailed', what='standby acts')
    await cluster.wait_for(lambda: not cluster.pods('ha').keys() - {'ha-worker-1'}, what='cleanup')
    await cluster.wait_for(lambda: [e for e in cluster.events('SuccessfulDeletePod')
                                    if e['involvedObject']['name'] == 'ha'], what='delete event')
    await cluster.settle()
    assert cluster.pods('ha')['ha-worker-1']['metadata']['uid'] == uids['ha-worker-1']   # not recreated
    ha_events = [e for e in cluster.events() if e['involvedObject']['name'] == 'ha']
    reasons = sorted(e['reason'] for e in ha_events)
    assert reasons.count('SuccessfulCreatePod') == 1 and reasons.count('TFJobFailed') == 1
    assert reasons.count('SuccessfulDeletePod') == 1
    assert len(cluster.events('DeadlineExceeded')) == 1
