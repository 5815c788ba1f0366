"""status.progress, the pure half (core/progress.py) and the CLI switch: which pod is read, what a real
prometheus_client page says (the trainer's series of docs/metrics.md, rendered by prometheus_client
itself and parsed back by its parser), and when a write is due. The CRD's Step/Loss columns."""
import datetime
import math

import pytest
from prometheus_client import CollectorRegistry, Gauge, generate_latest

from tensorfleet_operator.__main__ import StartupError, parse_args, trainer_progress_setting
from tensorfleet_operator.config import PROGRESS_ENV
from tensorfleet_operator.core.api import ReplicaType
from tensorfleet_operator.core.crd import build_crd
from tensorfleet_operator.core.progress import Progress, Target, apply_patch, final_progress, \
    parse_termination_progress, progress_patch, progress_target, read_progress
from tensorfleet_operator.progress import parse_samples

NOW = datetime.datetime(2026, 1, 2, 3, 4, 5, tzinfo=datetime.timezone.utc)
RUNNING = {'conditions': [{'type': 'Created', 'status': 'True'}, {'type': 'Running', 'status': 'True'}]}
LABELS = ('job_name', 'replica_type', 'replica_index')


def pod(rtype, index, phase='Running', ip='10.0.0.7', ports=None, env=None, deleting=False):
    meta = {'name': f'j-{rtype}-{index}', 'labels': {'training.kubeflow.org/replica-type': rtype,
                                                      'training.kubeflow.org/replica-index': str(index)}}
    if deleting:
        meta['deletionTimestamp'] = '2026-01-01T00:00:00Z'
    container = {'name': 'tensorflow', 'image': 'x', 'ports': ports or [], 'env': env or []}
    status = {'phase': phase}
    if ip:
        status['podIP'] = ip
    return {'metadata': meta, 'spec': {'containers': [{'name': 'sidecar', 'image': 'y'}, container]},
            'status': status}


def trainer_page(replicas, **values):
    """A metrics page as the trainer's prometheus_client serves it: one sample per replica and series."""
    registry = CollectorRegistry()
    gauges = {name: Gauge(f'tensorfleet_train_{name}', name, LABELS, registry=registry)
              for name in ('global_step', 'target_steps', 'loss', 'examples_per_second')}
    for rtype, index, step in replicas:
        for name, gauge in gauges.items():
            value = step if name == 'global_step' else values.get(name)
            if value is not None:
                gauge.labels('j', rtype, str(index)).set(value)
    return generate_latest(registry).decode()


# -- whose metrics -------------------------------------------------------------------
def test_the_chief_is_read_when_there_is_one_else_worker_zero():
    pods = [pod('ps', 0, ip='10.0.0.1'), pod('worker', 0, ip='10.0.0.2'), pod('chief', 0, ip='10.0.0.3')]
    with_chief = progress_target([ReplicaType.PS, ReplicaType.CHIEF, ReplicaType.WORKER], RUNNING, pods, 9100)
    assert with_chief == Target('j-chief-0', '10.0.0.3', 9100, 'chief', 0)
    assert with_chief.url == 'http://10.0.0.3:9100/metrics'
    master = progress_target([ReplicaType.MASTER, ReplicaType.WORKER], RUNNING,
                             [pod('worker', 0), pod('master', 0, ip='10.0.0.9')], 9100)
    assert (master.replica_type, master.host) == ('master', '10.0.0.9')
    no_chief = progress_target([ReplicaType.PS, ReplicaType.WORKER], RUNNING,
                               [pod('ps', 0), pod('worker', 1, ip='10.0.0.5'), pod('worker', 0, ip='10.0.0.4')], 9100)
    assert (no_chief.pod, no_chief.host, no_chief.replica_type) == ('j-worker-0', '10.0.0.4', 'worker')
    assert progress_target([ReplicaType.PS, ReplicaType.EVALUATOR], RUNNING, [pod('ps', 0)], 9100) is None
    v6 = progress_target([ReplicaType.WORKER], RUNNING, [pod('worker', 0, ip='fd00::7')], 9100)
    assert v6.url == 'http://[fd00::7]:9100/metrics'


def test_the_port_is_the_one_the_pod_declares():
    declared = pod('worker', 0, ports=[{'name': 'tfjob-port', 'containerPort': 2222},
                                       {'name': 'tf-metrics', 'containerPort': 9300}])
    assert progress_target([ReplicaType.WORKER], RUNNING, [declared], 9100).port == 9300
    env = pod('worker', 0, env=[{'name': 'TENSORFLEET_METRICS_PORT', 'value': '9400'}])
    assert progress_target([ReplicaType.WORKER], RUNNING, [env], 9100).port == 9400
    assert progress_target([ReplicaType.WORKER], RUNNING, [pod('worker', 0)], 9555).port == 9555


@pytest.mark.parametrize('status, chief', [
    (RUNNING, pod('chief', 0, phase='Pending')),
    (RUNNING, pod('chief', 0, ip=None)),
    (RUNNING, pod('chief', 0, deleting=True)),
    ({'conditions': [{'type': 'Succeeded', 'status': 'True'}]}, pod('chief', 0)),
    ({'conditions': [{'type': 'Failed', 'status': 'True'}]}, pod('chief', 0)),
    ({'conditions': [{'type': 'Suspended', 'status': 'True'}]}, pod('chief', 0)),
], ids=['pending', 'no-ip', 'terminating', 'succeeded', 'failed', 'suspended'])
def test_nothing_is_read_unless_the_chief_runs_in_a_running_job(status, chief):
    assert progress_target([ReplicaType.CHIEF, ReplicaType.WORKER], status, [chief, pod('worker', 0)], 9100) is None


# -- what they say ------------------------------------------------------------------
TARGET = Target('j-chief-0', '10.0.0.3', 9100, 'chief', 0)


def test_a_real_prometheus_client_page_is_read_for_the_target_replica_only():
    text = trainer_page([('worker', 0, 11), ('chief', 0, 42), ('worker', 1, 40)],
                        target_steps=1000, loss=0.123456789, examples_per_second=812.44)
    samples = parse_samples(text)
    assert any(name == 'tensorfleet_train_global_step' for name, _, _ in samples)
    assert read_progress(samples, TARGET) == Progress(42, 1000, 0.123456789, 812.44)
    assert read_progress(samples, Target('p', 'h', 1, 'worker', 1)).global_step == 40


def test_unknown_total_and_missing_or_nan_values_are_left_out():
    text = trainer_page([('chief', 0, 7)], loss=float('nan'))
    assert read_progress(parse_samples(text), TARGET) == Progress(7, None, None, None)
    zero_total = trainer_page([('chief', 0, 7)], target_steps=0)
    assert read_progress(parse_samples(zero_total), TARGET).total_steps is None
    without_step = 'tensorfleet_train_loss{job_name="j",replica_type="chief",replica_index="0"} 0.5\n'
    assert read_progress(parse_samples(without_step), TARGET) is None
    assert read_progress(parse_samples(trainer_page([('worker', 0, 3)])), TARGET) is None


def test_a_page_that_is_not_prometheus_text_is_an_error_not_a_crash():
    with pytest.raises(ValueError):
        parse_samples('<html><body>not metrics</body></html>\n')


# -- when to write --------------------------------------------------------------------
def test_the_first_read_writes_everything_with_a_time_stamp():
    patch = progress_patch(None, Progress(42, 1000, 0.123456789, 812.44), NOW)
    assert patch == {'globalStep': 42, 'totalSteps': 1000, 'loss': 0.123457, 'examplesPerSecond': 812.0,
                     'lastUpdateTime': '2026-01-02T03:04:05Z'}


def test_unchanged_values_write_nothing_not_even_a_new_time_stamp():
    stored = apply_patch(None, progress_patch(None, Progress(42, 1000, 0.5, 100.0), NOW))
    later = NOW + datetime.timedelta(minutes=5)
    assert progress_patch(stored, Progress(42, 1000, 0.5, 100.0), later) is None
    # noise below the kept digits is no change either
    assert progress_patch(stored, Progress(42, 1000, 0.5 + 1e-9, 100.01), later) is None
    moved = progress_patch(stored, Progress(43, 1000, 0.5, 100.0), later)
    assert moved == {'globalStep': 43, 'totalSteps': 1000, 'loss': 0.5, 'examplesPerSecond': 100.0,
                     'lastUpdateTime': '2026-01-02T03:09:05Z'}


def test_a_value_that_vanishes_is_removed_by_the_merge_patch():
    stored = apply_patch(None, progress_patch(None, Progress(42, 1000, 0.5, 100.0), NOW))
    patch = progress_patch(stored, Progress(42, None, 0.5, None), NOW)
    assert patch['totalSteps'] is None and patch['examplesPerSecond'] is None
    after = apply_patch(stored, patch)
    assert set(after) == {'globalStep', 'loss', 'lastUpdateTime'}
    assert progress_patch(after, Progress(42, None, 0.5, None), NOW) is None


def test_loss_rounding_keeps_six_significant_digits():
    patch = progress_patch(None, Progress(1, loss=1234.56789e-9), NOW)
    assert math.isclose(patch['loss'], 1.23457e-6, rel_tol=0, abs_tol=1e-15)


# -- the CRD columns and the schema of status.progress ---------------------------------
def _resolve(schema, json_path):
    for part in json_path.strip('.').split('.'):
        schema = schema['properties'][part]
    return schema


def test_step_and_loss_printer_columns_read_status_progress():
    version = build_crd()['spec']['versions'][0]
    columns = {c['name']: c for c in version['additionalPrinterColumns']}
    assert columns['Step']['jsonPath'] == '.status.progress.globalStep' and columns['Step']['type'] == 'integer'
    assert columns['Loss']['jsonPath'] == '.status.progress.loss' and columns['Loss']['type'] == 'number'
    assert columns['Step'].get('priority', 0) == 0 and columns['Loss'].get('priority', 0) == 0
    schema = version['schema']['openAPIV3Schema']
    for column in ('Step', 'Total', 'Loss'):
        assert _resolve(schema, columns[column]['jsonPath'])['type'] == columns[column]['type']
    progress = _resolve(schema, '.status.progress')['properties']
    assert set(progress) == {'globalStep', 'totalSteps', 'loss', 'examplesPerSecond', 'lastUpdateTime'}


# -- the switch ---------------------------------------------------------------------
@pytest.mark.parametrize('argv, env, expected', [
    ([], None, True), ([], 'false', False), ([], 'False', False), ([], '0', False), ([], 'true', True),
    (['--no-trainer-progress'], 'true', False), (['--trainer-progress'], 'false', True),
])
def test_the_switch_flag_then_the_environment_then_on(monkeypatch, argv, env, expected):
    if env is None:
        monkeypatch.delenv(PROGRESS_ENV, raising=False)
    else:
        monkeypatch.setenv(PROGRESS_ENV, env)
    assert trainer_progress_setting(parse_args(argv)) is expected


def test_a_garbled_switch_is_named(monkeypatch):
    monkeypatch.setenv(PROGRESS_ENV, 'maybe')
    with pytest.raises(StartupError, match=PROGRESS_ENV):
        trainer_progress_setting(parse_args([]))
    monkeypatch.delenv(PROGRESS_ENV)
    with pytest.raises(StartupError, match='--trainer-progress-interval'):
        trainer_progress_setting(parse_args(['--trainer-progress-interval', '0']))


# -- the controller's bookkeeping ------------------------------------------------------
def test_the_event_of_our_own_progress_write_is_recognised_by_its_resource_version():
    from tensorfleet_operator.config import OperatorConfig
    from tensorfleet_operator.controller import Controller, _JobState

    controller = Controller(OperatorConfig(api_group='tensorfleet.io', trainer_progress=True))
    controller._jobs[('ns', 'j')] = _JobState()
    assert controller.stored_progress('ns', 'j') == (None,) and controller.stored_progress('ns', 'x') is None
    controller.progress_written('ns', 'j', {'globalStep': 5}, '1234')
    assert controller.stored_progress('ns', 'j') == ({'globalStep': 5},)
    assert controller.own_progress_write('ns', 'j', '1234')
    assert not controller.own_progress_write('ns', 'j', '1235')       # someone else changed the job since
    assert not controller.own_progress_write('ns', 'j', None)
    assert not controller.own_progress_write('ns', 'other', '1234')
    controller.forget('ns', 'j')
    assert not controller.own_progress_write('ns', 'j', '1234')
    assert Controller(OperatorConfig(api_group='tensorfleet.io', trainer_progress=False)).progress_poller is None


# -- the final progress: the chief's termination message ------------------------------------------
def ended(rtype, index, message, phase='Succeeded'):
    p = pod(rtype, index, phase=phase)
    p['status']['containerStatuses'] = [
        {'name': 'sidecar', 'state': {'terminated': {'exitCode': 0, 'message': '{"progress": {"globalStep": 1}}'}}},
        {'name': 'tensorflow', 'state': {'terminated': {'exitCode': 0, 'message': message}}}]
    return p


def test_the_chiefs_termination_message_is_the_final_progress():
    message = '{"progress": {"globalStep": 3000, "totalSteps": 3000, "loss": 0.0421, "examplesPerSecond": 812.5}}'
    types = [ReplicaType.PS, ReplicaType.CHIEF, ReplicaType.WORKER]
    pods = [pod('ps', 0), ended('worker', 0, '{"progress": {"globalStep": 2999}}'), ended('chief', 0, message)]
    assert final_progress(types, pods) == Progress(3000, 3000, 0.0421, 812.5)
    # no chief: worker 0's; nothing while that container runs; the sidecar's message is not read
    assert final_progress([ReplicaType.WORKER], [ended('worker', 0, message)]).global_step == 3000
    assert final_progress(types, [pod('chief', 0)]) is None
    assert final_progress(types, [ended('worker', 0, message)]) is None


@pytest.mark.parametrize('message', [
    '', 'not json', '[]', '{"progress": 3}', '{"progress": {"loss": 1.0}}', '{"progress": {"globalStep": -1}}',
    '{"progress": {"globalStep": true}}', '{"progress": {"globalStep": "12"}}', '{"other": {"globalStep": 12}}',
    '{"progress": {"globalStep": 1e999}}', '{"progress": {"globalStep": 12, "pad": "' + 'x' * 5000 + '"}}'])
def test_a_termination_message_that_is_not_a_trainers_progress_is_ignored(message):
    assert parse_termination_progress(message) is None


def test_odd_values_in_a_termination_message_are_left_out_not_trusted():
    got = parse_termination_progress('{"progress": {"globalStep": 7.0, "totalSteps": 0, "loss": NaN, '
                                     '"examplesPerSecond": -3}}')
    assert got == Progress(7, None, None, None)
    patch = progress_patch({'globalStep': 5, 'loss': 1.5}, got, NOW)
    assert patch == {'globalStep': 7, 'loss': None, 'lastUpdateTime': '2026-01-02T03:04:05Z'}
