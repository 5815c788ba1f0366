"""status.progress against the emulated API: the real handlers read a fake chief's metrics endpoint
on 127.0.0.1 (an aiohttp server serving prometheus_client's own output of the trainer's series), write
the progress only when it changed, and a trainer that never answers or refuses the connection does
not hold up reconciliation."""
import asyncio

import pytest
from aiohttp import web
from prometheus_client import CollectorRegistry, Gauge, generate_latest

from op_builders import tfjob

pytestmark = pytest.mark.filterwarnings('ignore:read_binary is deprecated:DeprecationWarning')
LABELS = ('job_name', 'replica_type', 'replica_index')
NS = 'ns'


class FakeTrainer:
    """A chief's /metrics: the trainer's progress gauges in a prometheus_client registry."""

    def __init__(self, job, rtype, hold=False):
        self.registry = CollectorRegistry()
        self.gauges = {name: Gauge(f'tensorfleet_train_{name}', name, LABELS, registry=self.registry)
                       for name in ('global_step', 'target_steps', 'loss', 'examples_per_second')}
        self.labels = (job, rtype, '0')
        self.requests = 0
        self.hold = asyncio.Event() if hold else None      # never answer until released
        self.runner = None
        self.port = None
        self.body = None                                    # served instead of the registry when set

    def set(self, **values):
        for name, value in values.items():
            self.gauges[name].labels(*self.labels).set(value)

    async def _metrics(self, request):
        self.requests += 1
        if self.hold is not None:
            await self.hold.wait()
        return web.Response(body=self.body if self.body is not None else generate_latest(self.registry),
                            content_type='text/plain')

    async def start(self):
        app = web.Application()
        app.router.add_get('/metrics', self._metrics)
        self.runner = web.AppRunner(app, shutdown_timeout=0.1)
        await self.runner.setup()
        site = web.TCPSite(self.runner, '127.0.0.1', 0)
        await site.start()
        self.port = site._server.sockets[0].getsockname()[1]
        return self

    async def stop(self):
        if self.hold is not None:
            self.hold.set()
        if self.runner is not None:
            await self.runner.cleanup()
            self.runner = None


@pytest.fixture()
async def trainers():
    made = []

    async def make(job, rtype, hold=False):
        made.append(await FakeTrainer(job, rtype, hold).start())
        return made[-1]
    yield make
    for t in made:
        await t.stop()


async def run_pods(cluster, job, names):
    """The kubelet's part: the pods run, on 127.0.0.1 (the only address a test may reach)."""
    await cluster.wait_for(lambda: sorted(cluster.pods(job)) == sorted(names), what='pods')
    for name in names:
        await cluster.set_pod(name, 'Running')
        await cluster._patch_status(f'/api/v1/namespaces/{NS}/pods/{name}/status', {'podIP': '127.0.0.1'}, False)
    await cluster.wait_for(lambda: cluster.conditions(job).get('Running') == 'True', what='Running')


def column(job, json_path):
    """kubectl's printer column: the CRD's jsonPath evaluated on the stored TFJob."""
    value = job
    for part in json_path.strip('.').split('.'):
        value = (value or {}).get(part)
    return value


def scrapes(controller, result):
    return controller.metrics.progress_scrapes.labels(result)._value.get()


async def test_progress_is_read_from_the_chief_and_written_only_when_it_changes(cluster, trainers):
    chief = await trainers('prog', 'chief')
    chief.set(global_step=42, target_steps=1000, loss=0.6931471805599453, examples_per_second=812.44)
    controller = await cluster.start(trainer_metrics_port=chief.port, progress_interval_seconds=0.1)
    await cluster.create_job(tfjob('prog', chief=1, ps=1, worker=2))
    await run_pods(cluster, 'prog', ['prog-chief-0', 'prog-ps-0', 'prog-worker-0', 'prog-worker-1'])
    await cluster.wait_for(lambda: cluster.status('prog').get('progress', {}).get('globalStep') == 42,
                           what='status.progress')
    progress = cluster.status('prog')['progress']
    assert progress == {'globalStep': 42, 'totalSteps': 1000, 'loss': 0.693147, 'examplesPerSecond': 812.0,
                        'lastUpdateTime': progress['lastUpdateTime']}
    from tensorfleet_operator.core.crd import build_crd
    columns = {c['name']: c['jsonPath'] for c in build_crd()['spec']['versions'][0]['additionalPrinterColumns']}
    assert column(cluster.job('prog'), columns['Step']) == 42
    assert column(cluster.job('prog'), columns['Loss']) == 0.693147

    # Nothing changes: rounds of reads, no write at all.
    await cluster.settle()
    rv = cluster.job('prog')['metadata']['resourceVersion']
    ok, rounds = scrapes(controller, 'ok'), controller.progress_poller.rounds
    await cluster.wait_for(lambda: controller.progress_poller.rounds >= rounds + 5, what='5 more rounds')
    assert scrapes(controller, 'ok') >= ok + 4
    assert cluster.job('prog')['metadata']['resourceVersion'] == rv

    # The trainer moves on and forgets its total: both show, the total is removed.
    chief.set(global_step=43, loss=0.5)
    chief.gauges['target_steps'].remove(*chief.labels)
    await cluster.wait_for(lambda: cluster.status('prog')['progress'].get('globalStep') == 43, what='step 43')
    moved = cluster.status('prog')['progress']
    assert moved['loss'] == 0.5 and 'totalSteps' not in moved
    assert moved['lastUpdateTime'] >= progress['lastUpdateTime']
    assert chief.requests >= 7

    # Finished: no more reads; the last values stay.
    await cluster.set_pod('prog-chief-0', 'Succeeded', exit_code=0)
    await cluster.wait_for(lambda: cluster.conditions('prog').get('Succeeded') == 'True', what='Succeeded')
    await cluster.wait_for(lambda: not controller.progress_targets(), what='no target')
    # a round that began before the chief ended may still have its read in flight (seen on a loaded machine):
    # one more round ends only after it
    rounds = controller.progress_poller.rounds
    await cluster.wait_for(lambda: controller.progress_poller.rounds >= rounds + 1, what='the round in flight')
    seen, rounds = chief.requests, controller.progress_poller.rounds
    await cluster.wait_for(lambda: controller.progress_poller.rounds >= rounds + 3, what='3 more rounds')
    assert chief.requests == seen
    assert cluster.status('prog')['progress']['globalStep'] == 43


async def test_a_trainer_that_never_answers_does_not_hold_up_reconciliation(cluster, trainers):
    silent = await trainers('hang', 'worker', hold=True)
    controller = await cluster.start(trainer_metrics_port=silent.port, progress_interval_seconds=0.1,
                                     progress_timeout_seconds=300.0)
    await cluster.create_job(tfjob('hang', worker=1))
    await run_pods(cluster, 'hang', ['hang-worker-0'])
    await cluster.wait_for(lambda: silent.requests >= 1, what='a read in flight')
    # The read hangs (for up to 300 s); the job finishes and is reconciled meanwhile.
    await cluster.set_pod('hang-worker-0', 'Succeeded', exit_code=0)
    await cluster.wait_for(lambda: cluster.conditions('hang').get('Succeeded') == 'True', timeout=60,
                           what='Succeeded while the read hangs')
    assert not silent.hold.is_set() and 'progress' not in cluster.status('hang')
    assert scrapes(controller, 'ok') == 0


async def test_a_refused_connection_counts_as_unreachable_and_changes_nothing(cluster, trainers):
    gone = await trainers('gone', 'worker')
    port = gone.port
    await gone.stop()                                # nothing listens there now
    controller = await cluster.start(trainer_metrics_port=port, progress_interval_seconds=0.1)
    await cluster.create_job(tfjob('gone', worker=1))
    await run_pods(cluster, 'gone', ['gone-worker-0'])
    await cluster.wait_for(lambda: scrapes(controller, 'unreachable') >= 3, what='unreachable reads')
    assert 'progress' not in cluster.status('gone') and controller.metrics.reconcile_errors._value.get() == 0
    await cluster.set_pod('gone-worker-0', 'Succeeded', exit_code=0)
    await cluster.wait_for(lambda: cluster.conditions('gone').get('Succeeded') == 'True', what='Succeeded')


async def test_no_reads_when_turned_off(cluster, trainers):
    chief = await trainers('off', 'worker')
    chief.set(global_step=5)
    controller = await cluster.start(trainer_metrics_port=chief.port, trainer_progress=False)
    assert controller.progress_poller is None
    await cluster.create_job(tfjob('off', worker=1))
    await run_pods(cluster, 'off', ['off-worker-0'])
    await cluster.settle()
    assert chief.requests == 0 and 'progress' not in cluster.status('off')


async def test_a_page_that_is_not_metrics_counts_as_invalid_and_changes_nothing(cluster, trainers):
    chief = await trainers('junk', 'worker')
    chief.body = b'<html><body>a proxy error page</body></html>\n'
    controller = await cluster.start(trainer_metrics_port=chief.port, progress_interval_seconds=0.1)
    await cluster.create_job(tfjob('junk', worker=1))
    await run_pods(cluster, 'junk', ['junk-worker-0'])
    await cluster.wait_for(lambda: scrapes(controller, 'invalid') >= 3, what='invalid reads')
    assert 'progress' not in cluster.status('junk') and scrapes(controller, 'ok') == 0
    chief.body = None                                   # the real page again
    chief.set(global_step=9)
    await cluster.wait_for(lambda: cluster.status('junk').get('progress', {}).get('globalStep') == 9,
                           what='progress once the page is metrics')


async def test_a_job_shorter_than_the_polling_interval_ends_with_the_chiefs_final_progress(cluster, trainers):
    # the poller would read only after an hour: the job is over long before; the chief's termination message
    # (the launcher's last progress) is what status.progress shows
    controller = await cluster.start(progress_interval_seconds=3600)
    await cluster.create_job(tfjob('short', chief=1, ps=1, worker=1))
    await run_pods(cluster, 'short', ['short-chief-0', 'short-ps-0', 'short-worker-0'])
    assert 'progress' not in cluster.status('short')
    await cluster.set_pod('short-worker-0', 'Succeeded', exit_code=0,
                          message='{"progress": {"globalStep": 2998, "totalSteps": 3000, "loss": 0.2}}')
    await cluster.set_pod('short-chief-0', 'Succeeded', exit_code=0,
                          message='{"progress": {"globalStep": 3000, "totalSteps": 3000, "loss": 0.0421}}')
    await cluster.wait_for(lambda: cluster.conditions('short').get('Succeeded') == 'True', what='Succeeded')
    await cluster.wait_for(lambda: cluster.status('short').get('progress', {}).get('globalStep') == 3000,
                           what='the final progress')
    progress = cluster.status('short')['progress']
    assert progress == {'globalStep': 3000, 'totalSteps': 3000, 'loss': 0.0421,
                        'lastUpdateTime': progress['lastUpdateTime']}
    assert controller.progress_poller.rounds == 0     # not a single scrape was needed
    # written once: more reconciles of the finished job change nothing
    rv = cluster.job('short')['metadata']['resourceVersion']
    await cluster.settle()
    assert cluster.job('short')['metadata']['resourceVersion'] == rv
