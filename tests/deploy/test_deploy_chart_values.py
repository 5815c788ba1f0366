"""The chart's escape hatches (issue 27): extraEnv, extraEnvFrom, extraArgs, extraVolumes,
extraVolumeMounts, hostNetwork, dnsPolicy, automountServiceAccountToken, podSecurityContext /
securityContext (non-root defaults kept), createNamespaces, and NOTES naming tfjobs.<apiGroup>.
Each value is rendered by the real helm into the place Kubernetes reads it from, the render passes
`kubernetes-validate --strict` (Kubernetes 1.32) and `helm lint --strict`, and the values schema
refuses wrong shapes."""
from __future__ import annotations

import pytest
import yaml

from deploy_tools import CHART, helm_template, run
from test_deploy_chart import by_kind

SETS = {
    'extraEnv': ['--set-json', 'extraEnv=[{"name":"KUBERNETES_SERVICE_HOST","value":"10.0.0.1"},'
                 '{"name":"NODE","valueFrom":{"fieldRef":{"fieldPath":"spec.nodeName"}}}]'],
    'extraEnvFrom': ['--set-json', 'extraEnvFrom=[{"configMapRef":{"name":"proxy"}},'
                     '{"secretRef":{"name":"creds","optional":true},"prefix":"X_"}]'],
    'extraArgs': ['--set-json', 'extraArgs=["--api-timeout=300","--max-in-flight=8"]'],
    'extraVolumes': ['--set-json', 'extraVolumes=[{"name":"sa","projected":{"sources":[{"serviceAccountToken":'
                     '{"path":"token"}}]}}]', '--set-json',
                     'extraVolumeMounts=[{"name":"sa","mountPath":"/var/run/secrets/tf","readOnly":true}]'],
    'hostNetwork': ['--set', 'hostNetwork=true'],
    'dnsPolicy': ['--set', 'hostNetwork=true', '--set', 'dnsPolicy=Default'],
    'automountServiceAccountToken': ['--set', 'automountServiceAccountToken=false'],
    'securityContexts': ['--set', 'podSecurityContext.runAsUser=1001', '--set', 'podSecurityContext.fsGroup=null',
                         '--set', 'securityContext.readOnlyRootFilesystem=false'],
    'createNamespaces': ['--set', 'createNamespaces=true', '--set-json', 'watchNamespaces=["ops","team-x","team-y"]'],
}


def deployment(*args: str) -> tuple[dict, dict]:
    (dep,) = by_kind(helm_template(*args), 'Deployment')
    pod = dep['spec']['template']['spec']
    return pod, pod['containers'][0]


@pytest.mark.parametrize('value', sorted(SETS))
def test_each_new_value_renders_valid_objects_and_lints(helm, kubernetes_validate, value):
    rendered = run([helm, 'template', 'tf', str(CHART), '-n', 'ops', '--kube-version', '1.32.0', *SETS[value]]).stdout
    proc = run([kubernetes_validate, '-k', '1.32.0', '--strict', '-'], input=rendered)
    docs = [d for d in yaml.safe_load_all(rendered) if d]
    assert proc.stdout.count('passed for resource') + proc.stderr.count('passed for resource') == len(docs)
    lint = run([helm, 'lint', '--strict', str(CHART), '--kube-version', '1.32.0', *SETS[value]])
    assert '0 chart(s) failed' in lint.stdout


def test_extra_env_and_env_from_follow_the_operators_own():
    _, c = deployment(*SETS['extraEnv'], *SETS['extraEnvFrom'])
    assert [e['name'] for e in c['env']] == ['POD_ID', 'TENSORFLEET_TRAINER_PROGRESS', 'KUBERNETES_SERVICE_HOST',
                                             'NODE']
    assert c['env'][2] == {'name': 'KUBERNETES_SERVICE_HOST', 'value': '10.0.0.1'}
    assert c['env'][3]['valueFrom'] == {'fieldRef': {'fieldPath': 'spec.nodeName'}}
    assert c['envFrom'] == [{'configMapRef': {'name': 'proxy'}},
                            {'secretRef': {'name': 'creds', 'optional': True}, 'prefix': 'X_'}]
    _, c = deployment()
    assert 'envFrom' not in c


def test_extra_args_come_last_and_the_operator_parses_them():
    from tensorfleet_operator.__main__ import parse_args
    _, c = deployment(*SETS['extraArgs'])
    assert c['args'][-2:] == ['--api-timeout=300', '--max-in-flight=8']
    args = parse_args(c['args'])
    assert args.api_timeout == 300 and args.max_in_flight == 8      # the later flag wins


def test_extra_volumes_and_mounts_join_the_tmp_volume():
    pod, c = deployment(*SETS['extraVolumes'])
    assert [v['name'] for v in pod['volumes']] == ['tmp', 'sa']
    assert pod['volumes'][1]['projected']['sources'][0]['serviceAccountToken'] == {'path': 'token'}
    assert c['volumeMounts'][1:] == [{'name': 'sa', 'mountPath': '/var/run/secrets/tf', 'readOnly': True}]


@pytest.mark.parametrize('value, host, dns', [
    ('hostNetwork', True, 'ClusterFirstWithHostNet'),      # Services still resolve from the node's network
    ('dnsPolicy', True, 'Default'),
])
def test_host_network_and_dns_policy(value, host, dns):
    pod, _ = deployment(*SETS[value])
    assert pod['hostNetwork'] is host and pod['dnsPolicy'] == dns
    pod, _ = deployment('--set', 'dnsPolicy=None')
    assert 'hostNetwork' not in pod and pod['dnsPolicy'] == 'None'


def test_automount_service_account_token_off_on_pod_and_service_account():
    docs = helm_template(*SETS['automountServiceAccountToken'])
    (sa,) = by_kind(docs, 'ServiceAccount')
    (dep,) = by_kind(docs, 'Deployment')
    assert sa['automountServiceAccountToken'] is False
    assert dep['spec']['template']['spec']['automountServiceAccountToken'] is False


def test_security_contexts_merge_with_the_non_root_defaults():
    pod, c = deployment(*SETS['securityContexts'])
    assert pod['securityContext'] == {'runAsNonRoot': True, 'runAsUser': 1001, 'runAsGroup': 65532,
                                      'seccompProfile': {'type': 'RuntimeDefault'}}          # fsGroup: null drops it
    assert c['securityContext'] == {'allowPrivilegeEscalation': False, 'readOnlyRootFilesystem': False,
                                    'runAsNonRoot': True, 'capabilities': {'drop': ['ALL']}}
    pod, c = deployment()
    assert pod['securityContext']['runAsNonRoot'] is True and pod['securityContext']['runAsUser'] == 65532
    assert c['securityContext']['readOnlyRootFilesystem'] is True


def test_create_namespaces_makes_the_watched_ones_but_the_release_namespace_and_keeps_them():
    docs = helm_template(*SETS['createNamespaces'])
    namespaces = by_kind(docs, 'Namespace')
    assert [n['metadata']['name'] for n in namespaces] == ['team-x', 'team-y']      # not ops, the release's
    for ns in namespaces:
        assert ns['metadata']['annotations']['helm.sh/resource-policy'] == 'keep'
    assert sorted(r['metadata']['namespace'] for r in by_kind(docs, 'Role')) == ['ops', 'team-x', 'team-y']
    assert not by_kind(helm_template('--set-json', 'watchNamespaces=["team-x"]'), 'Namespace')
    assert not by_kind(helm_template('--set', 'createNamespaces=true'), 'Namespace')     # all namespaces


@pytest.mark.parametrize('bad, field', [
    (['--set-json', 'extraEnv=[{"value":"x"}]'], 'name'),
    (['--set-json', 'extraEnv=[{"name":"A","valu":"x"}]'], 'valu'),
    (['--set-json', 'extraEnvFrom=[{"prefix":"X_"}]'], 'extraEnvFrom'),
    (['--set-json', 'extraArgs=["api-timeout=3"]'], 'extraArgs'),
    (['--set-json', 'extraArgs="--verbose"'], 'extraArgs'),
    (['--set-json', 'extraVolumes=[{"name":"v"}]'], 'extraVolumes'),
    (['--set-json', 'extraVolumeMounts=[{"name":"v"}]'], 'mountPath'),
    (['--set', 'hostNetwork=yes'], 'hostNetwork'),
    (['--set', 'dnsPolicy=ClusterFirstWithHostNetwork'], 'dnsPolicy'),
    (['--set', 'automountServiceAccountToken=maybe'], 'automountServiceAccountToken'),
    (['--set', 'podSecurityContext.runAsUsr=1'], 'runAsUsr'),
    (['--set', 'securityContext.readOnlyRootFileSystem=true'], 'readOnlyRootFileSystem'),
    (['--set', 'createNamespaces=please'], 'createNamespaces'),
    (['--set', 'cleanPodGraceSeconds=-1'], 'cleanPodGraceSeconds'),
])
def test_the_schema_refuses_wrong_shapes_of_the_new_values(helm, bad, field):
    proc = run([helm, 'template', 'tf', str(CHART), *bad], ok=False)
    assert proc.returncode != 0 and field in proc.stderr, proc.stderr


@pytest.mark.parametrize('group', ['tensorfleet.io', 'kubeflow.org'])
def test_notes_name_the_full_resource(helm, group):
    """`kubectl get tfj` is ambiguous next to Kubeflow's CRD: NOTES say tfjobs.<apiGroup>."""
    out = run([helm, 'install', 'tf', str(CHART), '-n', 'ops', '--dry-run=client',
               '--set', f'apiGroup={group}']).stdout
    notes = out[out.index('NOTES:'):]
    assert f'kubectl get tfjobs.{group} -w' in notes and f'kubectl describe tfjobs.{group} <name>' in notes
    assert 'get tfj ' not in notes and 'get tfj\n' not in notes


def test_clean_pod_grace_reaches_the_operators_child_options():
    """cleanPodGraceSeconds (default 10; 0 = Kubeflow's immediate clean-up) -> --clean-pod-grace -> the core."""
    import pytest as _pytest

    from tensorfleet_operator.__main__ import build_config, parse_args
    for sets, expected in (([], 10.0), (['--set', 'cleanPodGraceSeconds=0'], 0.0),
                           (['--set', 'cleanPodGraceSeconds=45'], 45.0)):
        _, c = deployment(*sets)
        args = parse_args(c['args'])
        assert build_config(args, True).child_options().clean_pod_grace_seconds == expected
    with _pytest.raises(SystemExit):
        parse_args(['--clean-pod-grace=-1'])
