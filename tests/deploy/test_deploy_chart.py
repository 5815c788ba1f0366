"""The Helm chart checked by the real helm (lint, template) and kubernetes-validate (k8s 1.32),
and the files derived from one source (CRDs, rules, dashboard, deploy/operator.yaml) current."""
from __future__ import annotations

import importlib.util
import json

import jsonschema
import pytest
import yaml

from deploy_tools import CHART, ROOT, helm_template, run, tool

NONDEFAULT = CHART / 'ci' / 'nondefault-values.yaml'
NAMESPACED = CHART / 'ci' / 'namespaced-values.yaml'
ESCAPE_HATCHES = CHART / 'ci' / 'escape-hatches-values.yaml'
VALUE_SETS = {'default': [], 'nondefault': ['-f', str(NONDEFAULT)], 'namespaced': ['-f', str(NAMESPACED)],
              'escape-hatches': ['-f', str(ESCAPE_HATCHES)]}


def _gen_deploy():
    spec = importlib.util.spec_from_file_location('gen_deploy', ROOT / 'scripts' / 'gen_deploy.py')
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def by_kind(docs: list[dict], kind: str) -> list[dict]:
    return [d for d in docs if d['kind'] == kind]


@pytest.mark.parametrize('values', sorted(VALUE_SETS))
def test_helm_lint_strict(helm, values):
    proc = run([helm, 'lint', '--strict', str(CHART), '--kube-version', '1.32.0', *VALUE_SETS[values]])
    assert '0 chart(s) failed' in proc.stdout


@pytest.mark.parametrize('values', sorted(VALUE_SETS))
def test_rendered_objects_pass_kubernetes_validate_strict(kubernetes_validate, helm, values):
    rendered = run([helm, 'template', 'tf', str(CHART), '-n', 'ops', '--kube-version', '1.32.0',
                    *VALUE_SETS[values]]).stdout
    proc = run([kubernetes_validate, '-k', '1.32.0', '--strict', '-'], input=rendered)
    # Everything but the custom resources (Prometheus Operator's, kopf's), which have no schema there.
    docs = [d for d in yaml.safe_load_all(rendered) if d]
    known = [d for d in docs if d['apiVersion'].split('/')[0] not in ('monitoring.coreos.com', 'kopf.dev')]
    assert proc.stdout.count('passed for resource') + proc.stderr.count('passed for resource') == len(known) > 4


def test_kubernetes_validate_rejects_a_broken_deployment(kubernetes_validate):
    """The oracle itself: a wrong type and an unknown field in the rendered Deployment fail."""
    dep = by_kind(helm_template(), 'Deployment')[0]
    dep['spec']['replicas'] = 'one'
    proc = run([kubernetes_validate, '-k', '1.32.0', '--strict', '-'], input=yaml.safe_dump(dep), ok=False)
    assert proc.returncode != 0 and 'replicas' in proc.stdout + proc.stderr
    dep = by_kind(helm_template(), 'Deployment')[0]
    dep['spec']['template']['spec']['containers'][0]['livenesProbe'] = {}
    proc = run([kubernetes_validate, '-k', '1.32.0', '--strict', '-'], input=yaml.safe_dump(dep), ok=False)
    assert proc.returncode != 0


def test_deploy_files_pass_kubernetes_validate_strict(kubernetes_validate):
    files = sorted(str(p) for p in (ROOT / 'deploy').rglob('*.yaml') if 'prometheus' not in p.parts)
    proc = run([kubernetes_validate, '-k', '1.32.0', '--strict', *files])
    assert 'deploy/operator.yaml' in ' '.join(files) and 'error' not in proc.stdout.lower()


def test_default_deployment_is_hardened_and_probed():
    docs = helm_template()
    (dep,) = by_kind(docs, 'Deployment')
    spec = dep['spec']
    assert spec['replicas'] == 1 and spec['strategy'] == {'type': 'Recreate'}
    pod = spec['template']['spec']
    assert pod['securityContext']['runAsNonRoot'] is True and pod['securityContext']['runAsUser'] != 0
    assert pod['securityContext']['seccompProfile'] == {'type': 'RuntimeDefault'}
    (c,) = pod['containers']
    sc = c['securityContext']
    assert sc['readOnlyRootFilesystem'] is True and sc['allowPrivilegeEscalation'] is False
    assert sc['capabilities'] == {'drop': ['ALL']}
    assert c['resources']['requests'] and c['resources']['limits']['memory']
    # Probes hit the operator's own health endpoints (`--liveness`, the CLI's default port 8081):
    # liveness /healthz (the event loop answers), readiness /readyz (the API answers).
    assert '--liveness=http://0.0.0.0:8081/healthz' in c['args']
    ports = {p['name']: p['containerPort'] for p in c['ports']}
    for probe, path in ((c['livenessProbe'], '/healthz'), (c['readinessProbe'], '/readyz')):
        assert probe['httpGet']['path'] == path and ports[probe['httpGet']['port']] == 8081
    assert pod['automountServiceAccountToken'] is True and 'hostNetwork' not in pod and 'dnsPolicy' not in pod
    assert ports['http-metrics'] == 8080 and '--metrics-port=8080' in c['args']
    (svc,) = by_kind(docs, 'Service')
    assert svc['spec']['ports'][0]['port'] == 8080 and svc['spec']['selector'].items() <= \
        spec['template']['metadata']['labels'].items()
    assert '--all-namespaces' in c['args'] and '--api-group=tensorfleet.io' in c['args']
    assert not any(a.startswith(('--peering', '--gang-scheduler')) for a in c['args'])
    assert {d['kind'] for d in docs} == {'ServiceAccount', 'ConfigMap', 'CustomResourceDefinition', 'ClusterRole',
                                         'ClusterRoleBinding', 'Service', 'Deployment'}


def test_deployment_args_parse_with_the_operator_cli():
    """Every flag the chart passes is one `python -m tensorfleet_operator` accepts, with the value meant."""
    from tensorfleet_operator.__main__ import parse_args
    for values in VALUE_SETS.values():
        (dep,) = by_kind(helm_template(*values), 'Deployment')
        args = parse_args(dep['spec']['template']['spec']['containers'][0]['args'])
        assert args.liveness == 'http://0.0.0.0:8081/healthz'
    (dep,) = by_kind(helm_template(*VALUE_SETS['nondefault']), 'Deployment')
    args = parse_args(dep['spec']['template']['spec']['containers'][0]['args'])
    assert (args.api_group, args.gang_scheduler, args.peering, args.cluster_domain) == \
        ('kubeflow.org', 'volcano', 'tensorfleet-ha', 'cluster.local')
    (dep,) = by_kind(helm_template(*VALUE_SETS['namespaced']), 'Deployment')
    args = parse_args(dep['spec']['template']['spec']['containers'][0]['args'])
    assert args.namespace == ['team-a', 'team-b'] and args.metrics_port == 0
    (dep,) = by_kind(helm_template(*VALUE_SETS['escape-hatches']), 'Deployment')
    args = parse_args(dep['spec']['template']['spec']['containers'][0]['args'])
    assert args.api_timeout == 300 and args.namespace == ['ops', 'team-x']


def rules_of(docs, kind):
    return [r for role in by_kind(docs, kind) for r in role['rules']]


def grants(rules, group, resource, verb):
    return any(group in r['apiGroups'] and resource in r['resources'] and verb in r['verbs'] for r in rules)


def test_rbac_is_least_privilege():
    rules = rules_of(helm_template(), 'ClusterRole')
    # Exactly these (group, resource) -> verbs, nothing else.
    table = {(g, res): set(r['verbs']) for r in rules for g in r['apiGroups'] for res in r['resources']}
    assert table == {
        ('tensorfleet.io', 'tfjobs'): {'get', 'list', 'watch', 'delete'},
        ('tensorfleet.io', 'tfjobs/status'): {'patch'},
        ('', 'pods'): {'list', 'watch', 'create', 'delete'},
        ('', 'services'): {'list', 'watch', 'create', 'delete'},
        ('', 'secrets'): {'create', 'get'},
        ('', 'events'): {'create'},
    }
    assert not any('*' in r['verbs'] or '*' in r['resources'] for r in rules)
    docs = helm_template(*VALUE_SETS['nondefault'])
    rules = rules_of(docs, 'ClusterRole')
    assert grants(rules, 'kubeflow.org', 'tfjobs/status', 'patch')
    assert not grants(rules, 'tensorfleet.io', 'tfjobs', 'get')
    assert grants(rules, 'scheduling.volcano.sh', 'podgroups', 'create')
    assert grants(rules, 'kopf.dev', 'clusterkopfpeerings', 'patch')
    assert not by_kind(docs, 'Role')
    docs = helm_template(*VALUE_SETS['namespaced'])
    assert not by_kind(docs, 'ClusterRole') and not by_kind(docs, 'ClusterRoleBinding')
    roles = by_kind(docs, 'Role')
    assert sorted(r['metadata']['namespace'] for r in roles) == ['team-a', 'team-b']
    for role in roles:
        assert grants(role['rules'], 'scheduling.x-k8s.io', 'podgroups', 'delete')
        assert grants(role['rules'], 'kopf.dev', 'kopfpeerings', 'watch')
        assert not grants(role['rules'], 'kopf.dev', 'clusterkopfpeerings', 'watch')
    bindings = by_kind(docs, 'RoleBinding')
    assert all(b['subjects'][0]['namespace'] == 'ops' for b in bindings) and len(bindings) == 2


def test_nondefault_values_render_every_optional_part():
    docs = helm_template(*VALUE_SETS['nondefault'])
    kinds = [d['kind'] for d in docs]
    for kind in ('ServiceMonitor', 'PodMonitor', 'PrometheusRule', 'ConfigMap', 'ClusterKopfPeering'):
        assert kind in kinds, kind
    crds = {d['metadata']['name'] for d in by_kind(docs, 'CustomResourceDefinition')}
    assert crds == {'tfjobs.kubeflow.org', 'clusterkopfpeerings.kopf.dev', 'kopfpeerings.kopf.dev'}
    (dep,) = by_kind(docs, 'Deployment')
    assert dep['spec']['replicas'] == 2
    pod = dep['spec']['template']['spec']
    assert pod['imagePullSecrets'] == [{'name': 'regcred'}] and pod['tolerations'][0]['key'] == 'dedicated'
    env = {e['name']: e.get('value') for e in pod['containers'][0]['env']}
    assert env['TENSORFLEET_TRAINER_PROGRESS'] == 'false'
    (peering,) = by_kind(docs, 'ClusterKopfPeering')
    assert peering['metadata']['name'] == 'tensorfleet-ha'
    assert 'post-install' in peering['metadata']['annotations']['helm.sh/hook']
    (rule,) = by_kind(docs, 'PrometheusRule')
    assert rule['spec'] == yaml.safe_load((ROOT / 'deploy' / 'prometheus' / 'rules.yaml').read_text())
    (cm,) = by_kind(docs, 'ConfigMap')
    assert cm['metadata']['namespace'] == 'monitoring' and cm['metadata']['labels']['grafana_dashboard'] == '1'
    assert json.loads(cm['data']['tensorfleet.json']) == json.loads(
        (ROOT / 'deploy' / 'grafana' / 'tensorfleet.json').read_text())
    (pm,) = by_kind(docs, 'PodMonitor')
    assert pm['spec']['podMetricsEndpoints'][0]['port'] == 'tf-metrics'
    (sm,) = by_kind(docs, 'ServiceMonitor')
    assert sm['spec']['endpoints'][0]['port'] == 'http-metrics' and sm['metadata']['labels']['release'] == 'prometheus'


def test_pod_monitor_selects_the_pods_the_operator_creates():
    from tensorfleet_operator.core.children import child_labels
    from tensorfleet_operator.core.spec import parse_job
    from tensorfleet_operator.core.api import ReplicaType
    docs = helm_template(*VALUE_SETS['nondefault'])
    (pm,) = by_kind(docs, 'PodMonitor')
    job = parse_job(yaml.safe_load((ROOT / 'deploy' / 'examples' / '11-simple.yaml').read_text()))
    labels = child_labels(job, ReplicaType.WORKER, 0)
    selector = pm['spec']['selector']
    assert selector['matchLabels'].items() <= labels.items()
    assert all(e['key'] in labels for e in selector['matchExpressions'] if e['operator'] == 'Exists')


@pytest.mark.parametrize('bad, field', [
    (['--set', 'unknownKey=1'], 'unknownKey'),
    (['--set', 'replicaCount=two'], 'replicaCount'),
    (['--set', 'image.tagg=x'], 'tagg'),
    (['--set', 'apiGroup=example.com'], 'apiGroup'),
    (['--set', 'gangScheduler=kube-batch'], 'gangScheduler'),
    (['--set', 'metrics.port=99999'], 'port'),
    (['--set-json', 'watchNamespaces="team-a"'], 'watchNamespaces'),
    (['--set', 'replicaCount=2'], 'peering'),          # hot standby only with peering
])
def test_values_schema_rejects_wrong_types_and_unknown_keys(helm, bad, field):
    proc = run([helm, 'template', 'tf', str(CHART), *bad], ok=False)
    assert proc.returncode != 0 and field in proc.stderr, proc.stderr


def test_crd_is_the_file_of_deploy_crds_and_survives_uninstall():
    for group in ('tensorfleet.io', 'kubeflow.org'):
        copy = (CHART / 'files' / 'crds' / f'tfjobs.{group}.yaml').read_bytes()
        source = ROOT / 'deploy' / 'crds' / f'tfjobs.{group}.yaml'
        if source.exists():
            assert copy == source.read_bytes()
        else:       # the group deploy/crds/ lacks comes from the same generator as deploy/crds/
            from tensorfleet_operator.core.crd import crd_yaml
            assert copy == crd_yaml(group).encode()
        docs = helm_template('--set', f'apiGroup={group}')
        (crd,) = by_kind(docs, 'CustomResourceDefinition')
        original = yaml.safe_load(copy)
        assert crd['spec'] == original['spec'] and crd['metadata']['name'] == f'tfjobs.{group}'
        assert crd['metadata']['annotations']['helm.sh/resource-policy'] == 'keep'
    assert not by_kind(helm_template('--set', 'crds.install=false'), 'CustomResourceDefinition')


def test_upgrade_changes_nothing_that_running_jobs_depend_on():
    """A new image (what `helm upgrade` usually brings) leaves the CRD and RBAC byte-identical."""
    old = helm_template()
    new = helm_template('--set', 'image.tag=0.2.0', '--set', 'resources.limits.memory=1Gi')
    for kind in ('CustomResourceDefinition', 'ClusterRole', 'ClusterRoleBinding', 'ServiceAccount', 'Service'):
        assert by_kind(old, kind) == by_kind(new, kind), kind


def test_generated_files_are_current():
    """scripts/gen_deploy.py (one command) would change nothing."""
    gen = _gen_deploy()
    tool('helm')
    generated = gen.outputs()
    assert set(generated) >= {'deploy/operator.yaml', 'deploy/grafana/tensorfleet.json',
                              'charts/tensorfleet/files/prometheus-rules.yaml'}
    assert gen.stale(generated) == []


def test_operator_yaml_is_the_default_render():
    docs = [d for d in yaml.safe_load_all((ROOT / 'deploy' / 'operator.yaml').read_text()) if d]
    assert docs[0] == {'apiVersion': 'v1', 'kind': 'Namespace', 'metadata': {'name': 'tensorfleet-system'}}
    assert docs[1:] == helm_template(release='tensorfleet', namespace='tensorfleet-system')


def test_example_tfjobs_match_the_crd_schema():
    crd = yaml.safe_load((ROOT / 'deploy' / 'crds' / 'tfjobs.tensorfleet.io.yaml').read_text())
    schema = crd['spec']['versions'][0]['schema']['openAPIV3Schema']
    examples = sorted((ROOT / 'deploy' / 'examples').glob('*.yaml'))
    assert len(examples) >= 5
    validator = jsonschema.Draft7Validator(schema)
    for path in examples:
        for doc in yaml.safe_load_all(path.read_text()):
            if doc and doc.get('kind') == 'TFJob':
                errors = [f'{list(e.path)}: {e.message}' for e in validator.iter_errors(doc)]
                assert not errors, (path.name, errors)
    bad = yaml.safe_load((ROOT / 'deploy' / 'examples' / '11-simple.yaml').read_text())
    next(iter(bad['spec']['tfReplicaSpecs'].values()))['replicas'] = 'two'
    assert list(validator.iter_errors(bad))
