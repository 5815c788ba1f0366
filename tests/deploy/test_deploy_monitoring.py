"""Alerts, recording rules and the Grafana dashboard, checked with the real promtool, and every
metric they name checked against docs/metrics.md (the operator's and the trainer's tables)."""
from __future__ import annotations

import json
import re

import yaml

from deploy_tools import ROOT, run

RULES = ROOT / 'deploy' / 'prometheus' / 'rules.yaml'
RULES_TEST = ROOT / 'tests' / 'deploy' / 'prometheus' / 'rules_test.yaml'
DASHBOARD = ROOT / 'deploy' / 'grafana' / 'tensorfleet.json'
METRICS_DOC = ROOT / 'docs' / 'metrics.md'
ALERTS = {'TFJobStuckPending', 'TFJobHung', 'TFJobRestartStorm', 'TFJobFailed', 'TFJobPSBandwidthSaturated',
          'TensorfleetOperatorDown', 'TensorfleetOperatorErrors'}
PROMQL_WORDS = {'by', 'without', 'and', 'or', 'unless', 'offset', 'bool', 'on', 'ignoring', 'group_left',
                'group_right', 'inf', 'nan'}


def rules() -> list[dict]:
    return [r for g in yaml.safe_load(RULES.read_text())['groups'] for r in g['rules']]


def documented_metrics() -> dict[str, str]:
    """`name -> type` from the tables of docs/metrics.md."""
    out = {}
    for line in METRICS_DOC.read_text().splitlines():
        m = re.match(r'\|\s*`([a-z_:][a-z0-9_:]*)`\s*\|\s*(counter|gauge|histogram|summary)\s*\|', line)
        if m:
            out[m.group(1)] = m.group(2)
    return out


def series_names(documented: dict[str, str]) -> set[str]:
    """Every series name a scrape of the documented metrics can carry (histograms: _bucket/_sum/_count)."""
    names = set()
    for name, kind in documented.items():
        names.add(name)
        if kind == 'histogram':
            names |= {name + '_bucket', name + '_sum', name + '_count'}
    return names


def metric_names(expr: str) -> set[str]:
    """The metric names a PromQL expression reads: what is left after removing strings, label
    matchers, grouping clauses, range/offset durations, function calls, keywords and numbers."""
    e = re.sub(r'"(\\.|[^"\\])*"', '""', expr)
    e = re.sub(r'\{[^}]*\}', ' ', e)
    e = re.sub(r'\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)', ' ', e)
    e = re.sub(r'\[[^\]]*\]', ' ', e)
    e = re.sub(r'\boffset\s+\w+', ' ', e)
    e = re.sub(r'\b[a-zA-Z_][a-zA-Z0-9_]*\s*\(', '(', e)
    tokens = re.findall(r'[a-zA-Z_:][a-zA-Z0-9_:]*', re.sub(r'\b\d[\w.+-]*', ' ', e))
    return {t for t in tokens if t.lower() not in PROMQL_WORDS}


def dashboard_exprs() -> list[tuple[str, str]]:
    d = json.loads(DASHBOARD.read_text())
    return [(p['title'], t['expr']) for p in d['panels'] for t in p.get('targets', [])]


def concrete(expr: str) -> str:
    """A dashboard query as Prometheus sees it after Grafana's variable interpolation."""
    return expr.replace('$__rate_interval', '5m').replace('$namespace', '.*').replace('$job', '.*')


def test_metric_name_extraction_oracle():
    assert metric_names('histogram_quantile(0.9, sum by (le, job_name) (rate(a_bucket{x=~"$y", z="q(w)"}[5m])))') \
        == {'a_bucket'}
    assert metric_names('max by (ns) (changes(g[10m])) == 0 and max by (ns) (g offset 10m) or absent(h)') == {'g', 'h'}
    assert metric_names('sum(rate(c_total[5m])) / clamp_min(sum(rate(d_count[5m])), 1e-9) > 1e9') == \
        {'c_total', 'd_count'}


def test_rules_pass_promtool_check(promtool):
    proc = run([promtool, 'check', 'rules', str(RULES)])
    assert f'SUCCESS: {len(rules())} rules found' in proc.stdout + proc.stderr


def test_rules_unit_tests_pass(promtool):
    proc = run([promtool, 'test', 'rules', str(RULES_TEST)])
    assert 'SUCCESS' in proc.stdout + proc.stderr


def test_every_alert_has_a_firing_and_a_quiet_case():
    alerts = {r['alert'] for r in rules() if 'alert' in r}
    assert alerts == ALERTS
    firing, quiet = set(), set()
    for case in yaml.safe_load(RULES_TEST.read_text())['tests']:
        for check in case.get('alert_rule_test', []):
            (firing if check['exp_alerts'] else quiet).add(check['alertname'])
    assert firing == ALERTS and quiet == ALERTS


def test_rule_tests_fail_when_an_alert_is_broken(promtool, tmp_path):
    """The unit tests are an oracle: a hang alert that ignores progress makes them fail."""
    text = RULES.read_text()
    broken = text.replace('[10m])) == 0', '[10m])) >= 0')
    assert broken != text
    (tmp_path / 'rules.yaml').write_text(broken)
    tests = RULES_TEST.read_text().replace('../../../deploy/prometheus/rules.yaml', 'rules.yaml')
    (tmp_path / 'rules_test.yaml').write_text(tests)
    proc = run([promtool, 'test', 'rules', str(tmp_path / 'rules_test.yaml')], ok=False)
    assert proc.returncode != 0 and 'TFJobHung' in proc.stdout + proc.stderr


def test_dashboard_queries_parse_with_promtool(promtool, tmp_path):
    exprs = dashboard_exprs()
    assert len(exprs) >= 20
    group = {'groups': [{'name': 'dashboard', 'rules': [
        {'record': f'dashboard:query_{i}', 'expr': concrete(e)} for i, (_, e) in enumerate(exprs)]}]}
    path = tmp_path / 'dashboard_rules.yaml'
    path.write_text(yaml.safe_dump(group))
    proc = run([promtool, 'check', 'rules', str(path)])
    assert f'SUCCESS: {len(exprs)} rules found' in proc.stdout + proc.stderr
    # The check catches a broken query (the oracle works on this input).
    group['groups'][0]['rules'][0]['expr'] = 'sum by (le (rate(x[5m]))'
    path.write_text(yaml.safe_dump(group))
    assert run([promtool, 'check', 'rules', str(path)], ok=False).returncode != 0


def test_every_metric_named_is_documented():
    documented = documented_metrics()
    assert {'tensorfleet_operator_reconcile_errors_total', 'tensorfleet_train_global_step',
            'tensorfleet_rpc_bytes_total'} <= documented.keys()
    known = series_names(documented)
    recorded = {r['record'] for r in rules() if 'record' in r}
    used = {}
    for title, expr in dashboard_exprs():
        for name in metric_names(expr):
            used.setdefault(name, f'dashboard panel {title!r}')
    for rule in rules():
        for name in metric_names(rule['expr']):
            used.setdefault(name, f'rule {rule.get("alert") or rule.get("record")}')
    undocumented = {name: where for name, where in used.items() if name not in known | recorded}
    assert not undocumented
    assert len(used) >= 20


def test_dashboard_structure():
    d = json.loads(DASHBOARD.read_text())
    assert d['uid'] == 'tensorfleet-tfjobs' and d['title'] and d['schemaVersion'] >= 39   # Grafana 11
    variables = {v['name']: v for v in d['templating']['list']}
    assert variables['datasource']['type'] == 'datasource' and variables['datasource']['query'] == 'prometheus'
    assert 'namespace' in variables['namespace']['query']['query']
    assert 'job_name' in variables['job']['query']['query'] and '$namespace' in variables['job']['query']['query']
    panels = [p for p in d['panels'] if p['type'] != 'row']
    assert len({p['id'] for p in d['panels']}) == len(d['panels'])
    for p in panels:
        assert p['datasource'] == {'type': 'prometheus', 'uid': '${datasource}'}, p['title']
        assert p['targets'] and all(t['datasource']['uid'] == '${datasource}' for t in p['targets'])
    titles = {p['title'] for p in panels}
    for wanted in ('Jobs by state', 'Time from creation to all pods running', 'Replica restarts', 'Steps per second',
                   'Examples per second', 'Loss', 'Step time quantiles', 'ps push/pull bandwidth per task',
                   'RPC latency', 'Sync barrier wait', 'Stale gradients dropped', 'GPU memory against its cap',
                   'Reconcile latency', 'Reconcile errors'):
        assert wanted in titles
    # Trainer panels follow the namespace and job variables.
    for title, expr in dashboard_exprs():
        if 'tensorfleet_train' in expr or 'tensorfleet_rpc' in expr or 'tensorfleet_gpu' in expr:
            assert 'namespace=~"$namespace"' in expr and 'job_name=~"$job"' in expr, title


def test_documented_names_follow_prometheus_conventions():
    documented = documented_metrics()
    assert len([m for m in documented if m.startswith('tensorfleet_train_')]) >= 8
    for metric, kind in documented.items():
        assert metric.startswith('tensorfleet_')
        assert (kind == 'counter') == metric.endswith('_total'), metric
        assert not re.search(r'_(ms|milliseconds|kilobytes|megabytes|minutes)(_total)?$', metric), metric
