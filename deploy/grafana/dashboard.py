"""The Tensorfleet Grafana dashboard as code (grafana-foundation-sdk, Grafana 11.6 branch).

Where it sits: `scripts/gen_deploy.py` calls :func:`build` and writes
deploy/grafana/tensorfleet.json (and the chart's copy); tests/deploy checks the file is
current, that every query parses with promtool and names only documented metrics
(docs/metrics.md). Variables: datasource, namespace, job. Trainer panels filter on
`namespace=~"$namespace", job_name=~"$job"`; operator panels on the jobs' namespace.
"""
from __future__ import annotations

import json

from grafana_foundation_sdk.builders import dashboard as db
from grafana_foundation_sdk.builders import prometheus, stat, timeseries
from grafana_foundation_sdk.cog.encoder import JSONEncoder
from grafana_foundation_sdk.models import dashboard as dm

UID = 'tensorfleet-tfjobs'
DS = dm.DataSourceRef(type_val='prometheus', uid='${datasource}')
JOB = 'namespace=~"$namespace", job_name=~"$job"'      # the trainer series of the selected jobs
NS = 'namespace=~"$namespace"'                           # the operator's per-namespace series
RATE = '$__rate_interval'


def query(expr: str, legend: str, ref: str) -> prometheus.Dataquery:
    return prometheus.Dataquery().expr(expr).legend_format(legend).ref_id(ref).datasource(DS)


def series(title: str, unit: str, targets: list[tuple[str, str]], description: str,
           width: int = 12) -> timeseries.Panel:
    panel = (timeseries.Panel().title(title).description(description).unit(unit)
             .datasource(DS).height(8).span(width).fill_opacity(10))
    for i, (expr, legend) in enumerate(targets):
        panel = panel.with_target(query(expr, legend, chr(ord('A') + i)))
    return panel


def quantiles(metric: str, by: str, selector: str) -> list[tuple[str, str]]:
    return [(f'histogram_quantile({q}, sum by (le{by}) (rate({metric}_bucket{{{selector}}}[{RATE}])))',
             f'p{int(float(q) * 100)}' + (' {{' + by.strip(', ') + '}}' if by else ''))
            for q in ('0.5', '0.9', '0.99')]


def variables() -> list[db.DatasourceVariable | db.QueryVariable]:
    def label_values(name: str, label: str, expr: str) -> db.QueryVariable:
        return (db.QueryVariable(name).label(label).datasource(DS)
                .query({'query': expr, 'refId': 'PrometheusVariableQueryEditor-VariableQuery', 'qryType': 1})
                .refresh(dm.VariableRefresh.ON_TIME_RANGE_CHANGED).sort(dm.VariableSort.ALPHABETICAL_ASC)
                .multi(True).include_all(True).all_value('.*'))
    return [
        db.DatasourceVariable('datasource').label('Data source').type('prometheus'),
        label_values('namespace', 'Namespace', 'label_values(tensorfleet_train_global_step, namespace)'),
        label_values('job', 'Job', 'label_values(tensorfleet_train_global_step{namespace=~"$namespace"}, job_name)'),
    ]


def build() -> dict:
    d = (db.Dashboard('Tensorfleet TFJobs').uid(UID).tags(['tensorfleet', 'tfjob', 'kubernetes'])
         .description('TFJobs run by the Tensorfleet operator: job states, training progress, parameter '
                      'servers, GPUs and the operator itself. Metrics: docs/metrics.md.')
         .time('now-1h', 'now').refresh('30s').timezone('browser').editable())
    for v in variables():
        d = d.with_variable(v)

    d = d.with_row(db.Row('Jobs'))
    d = d.with_panel(stat.Panel().title('Jobs by state').datasource(DS).height(8).span(6)
                     .description('TFJobs known to the operator, by their latest condition.')
                     .with_target(query('sum by (condition) (tensorfleet_operator_jobs)', '{{condition}}', 'A')))
    d = d.with_panel(series(
        'Time from creation to all pods running', 's',
        quantiles('tensorfleet_operator_job_all_pods_running_seconds', '', ''),
        'From the TFJob\'s creationTimestamp until all its pods were first seen Running.', 6))
    d = d.with_panel(series(
        'Replica restarts', 'short',
        [(f'sum by (namespace, replica_type) (increase(tensorfleet_operator_jobs_restarted_total{{{NS}}}[{RATE}]))',
          '{{namespace}} {{replica_type}}'),
         (f'sum by (namespace, reason) (increase(tensorfleet_operator_jobs_failed_total{{{NS}}}[{RATE}]))',
          'failed: {{namespace}} {{reason}}')],
        'Pods the operator recreated after a retryable failure, and jobs that failed, by reason.'))

    d = d.with_row(db.Row('Training'))
    d = d.with_panel(series(
        'Steps per second', 'short',
        [(f'sum by (job_name, replica_type, replica_index) (rate(tensorfleet_train_steps_total{{{JOB}}}[{RATE}]))',
          '{{job_name}} {{replica_type}}:{{replica_index}}')],
        'Training steps per second of each replica.'))
    d = d.with_panel(series(
        'Examples per second', 'short',
        [(f'sum by (job_name, replica_type, replica_index) (rate(tensorfleet_train_examples_total{{{JOB}}}[{RATE}]))',
          '{{job_name}} {{replica_type}}:{{replica_index}}')],
        'Training examples per second of each replica.'))
    d = d.with_panel(series(
        'Loss', 'none',
        [(f'tensorfleet_train_loss{{{JOB}}}', '{{job_name}} {{replica_type}}:{{replica_index}}')],
        'The last loss each replica computed.'))
    d = d.with_panel(series(
        'Global step', 'short',
        [(f'max by (job_name) (tensorfleet_train_global_step{{{JOB}}})', '{{job_name}}'),
         (f'max by (job_name) (tensorfleet_train_target_steps{{{JOB}}})', '{{job_name}} target')],
        'The global step of each job, and the step it trains to when known.'))
    d = d.with_panel(series(
        'Step time quantiles', 's',
        quantiles('tensorfleet_train_step_duration_seconds', ', job_name', JOB),
        'Wall time of one training step, over all replicas of the job.', 24))

    d = d.with_row(db.Row('Parameter servers and RPC'))
    d = d.with_panel(series(
        'ps push/pull bandwidth per task', 'Bps',
        [(f'sum by (job_name, replica_index, direction) '
          f'(rate(tensorfleet_rpc_bytes_total{{{JOB}, replica_type="ps"}}[{RATE}]))',
          '{{job_name}} ps:{{replica_index}} {{direction}}')],
        'Bytes per second through each ps task: received = gradient pushes, sent = variable pulls.'))
    d = d.with_panel(series(
        'RPC latency', 's', quantiles('tensorfleet_rpc_duration_seconds', ', method', JOB),
        'Client-side latency of the RPCs the replicas issue, by method.'))
    d = d.with_panel(series(
        'Sync barrier wait', 's', quantiles('tensorfleet_sync_barrier_wait_seconds', ', job_name', JOB),
        'Time a step waits at the sync-replicas barrier.', 8))
    d = d.with_panel(series(
        'Stale gradients dropped', 'short',
        [(f'sum by (job_name) (rate(tensorfleet_sync_stale_gradients_dropped_total{{{JOB}}}[{RATE}]))',
          '{{job_name}}')],
        'Gradients per second the sync-replicas accumulator dropped as stale.', 8))
    d = d.with_panel(series(
        'ps variable bytes', 'bytes',
        [(f'sum by (job_name, replica_index) (tensorfleet_ps_variable_bytes{{{JOB}}})',
          '{{job_name}} ps:{{replica_index}}')],
        'Bytes of variables each ps task holds.', 8))

    d = d.with_row(db.Row('GPU'))
    d = d.with_panel(series(
        'GPU memory against its cap', 'bytes',
        [(f'tensorfleet_gpu_memory_used_bytes{{{JOB}}}', '{{job_name}} {{replica_type}}:{{replica_index}} '
          '{{device}} used'),
         (f'tensorfleet_gpu_memory_limit_bytes{{{JOB}}}', '{{job_name}} {{replica_type}}:{{replica_index}} '
          '{{device}} cap')],
        'Device memory in use per GPU, and the cap it may grow to.', 24))

    d = d.with_row(db.Row('Operator'))
    d = d.with_panel(series(
        'Reconcile latency', 's', quantiles('tensorfleet_operator_reconcile_duration_seconds', '', ''),
        'Time of one reconcile of one TFJob (read, plan, apply).'))
    d = d.with_panel(series(
        'Reconcile errors', 'short',
        [(f'sum(rate(tensorfleet_operator_reconcile_errors_total[{RATE}]))', 'errors/s'),
         (f'sum(rate(tensorfleet_operator_reconcile_duration_seconds_count[{RATE}]))', 'reconciles/s')],
        'Reconciles that raised (each is retried with backoff), against all reconciles.'))
    out = json.loads(json.dumps(d.build(), cls=JSONEncoder))
    for number, panel in enumerate(out['panels'], start=1):   # unique ids: Grafana links panels by id
        panel['id'] = number
    return out


if __name__ == '__main__':
    print(json.dumps(build(), indent=2, sort_keys=True))
