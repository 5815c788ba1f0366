"""cleanPodPolicy Running with Tensorfleet's clean-up grace, against the emulated API and the real handlers: when
the chief succeeds, a ps that ends by itself within the grace (the trainer's release rule) stays, Succeeded with
its exit code, and only what still runs at the end of the grace is deleted."""
import time

import pytest

from op_builders import tfjob

pytestmark = pytest.mark.filterwarnings('ignore:read_binary is deprecated:DeprecationWarning')   # kmock's


async def test_a_ps_that_ends_within_the_grace_is_kept_and_a_worker_still_running_after_it_is_deleted(cluster):
    await cluster.start(clean_pod_grace_seconds=3.0)
    await cluster.create_job(tfjob('g', chief=1, ps=1, worker=2))
    names = ['g-chief-0', 'g-ps-0', 'g-worker-0', 'g-worker-1']
    await cluster.wait_for(lambda: sorted(cluster.pods('g')) == names, what='pods')
    for name in names:
        await cluster.set_pod(name, 'Running')
    await cluster.wait_for(lambda: cluster.conditions('g').get('Running') == 'True', what='Running')
    await cluster.set_pod('g-chief-0', 'Succeeded', exit_code=0)
    await cluster.wait_for(lambda: cluster.conditions('g').get('Succeeded') == 'True', what='Succeeded')
    succeeded = time.monotonic()
    await cluster.set_pod('g-worker-0', 'Succeeded', exit_code=0)   # its own loop's end, after the chief's
    await cluster.set_pod('g-ps-0', 'Succeeded', exit_code=0)       # released: ends once the workers have
    await cluster.wait_for(lambda: 'g-worker-1' not in cluster.pods('g'), what='the straggler deleted', timeout=30)
    assert time.monotonic() - succeeded >= 2.0   # not before the grace (completionTime has 1 s resolution)
    assert sorted(cluster.pods('g')) == ['g-chief-0', 'g-ps-0', 'g-worker-0']   # the finished ones stay
    replicas = cluster.status('g')['replicaStatuses']
    assert replicas['PS']['replicas'][0]['phase'] == 'Succeeded' and replicas['PS']['replicas'][0]['exitCode'] == 0
    assert replicas['Worker']['replicas'][1]['reason'] == 'DeletedAtJobEnd'
