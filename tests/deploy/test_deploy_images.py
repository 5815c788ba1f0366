"""Dockerfile.operator and Dockerfile.trainer linted by the real hadolint, their shape checked
(multi-stage, pinned bases, wheel-only installs, non-root, entrypoints), and the build script's
skip path. The images themselves are built by scripts/build-images.sh, not in the test run."""
from __future__ import annotations

import ast
import importlib.metadata
import os
import re
import subprocess
import sys

import pytest

from deploy_tools import ROOT, run

DOCKERFILES = ['Dockerfile.operator', 'Dockerfile.trainer']


def instructions(name: str) -> list[tuple[str, str]]:
    text = (ROOT / name).read_text().replace('\\\n', ' ')
    out = []
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith('#'):
            word, _, rest = line.partition(' ')
            out.append((word.upper(), rest.strip()))
    return out


def final_stage(name: str) -> list[tuple[str, str]]:
    ins = instructions(name)
    last = max(i for i, (w, _) in enumerate(ins) if w == 'FROM')
    return ins[last:]


@pytest.mark.parametrize('name', DOCKERFILES)
def test_hadolint_passes(hadolint, name):
    run([hadolint, str(ROOT / name)])


def test_hadolint_flags_a_bad_dockerfile(hadolint, tmp_path):
    bad = tmp_path / 'Dockerfile'
    bad.write_text('FROM python:latest\nRUN pip install kopf\nRUN apt-get install curl\n')
    proc = run([hadolint, str(bad)], ok=False)
    assert proc.returncode != 0
    for rule in ('DL3007', 'DL3013', 'DL3042'):
        assert rule in proc.stdout, proc.stdout


@pytest.mark.parametrize('name', DOCKERFILES)
def test_dockerfile_shape(name):
    ins = instructions(name)
    args = {m.group(1): m.group(2) for w, rest in ins if w == 'ARG'
            for m in [re.match(r'(\w+)=(\S+)', rest)] if m}
    froms = [rest for w, rest in ins if w == 'FROM']
    assert len(froms) >= 3, 'multi-stage'
    for image in (v for k, v in args.items() if k.endswith('_IMAGE')):
        repo, _, tag = image.rpartition(':')
        assert repo and re.match(r'\d+\.\d+\.\d+', tag) and tag != 'latest', image
    assert 'slim' in args['PYTHON_IMAGE']
    runs = ' '.join(rest for w, rest in ins if w == 'RUN')
    for pip in re.findall(r'pip (?:install|wheel)[^&]*', runs):
        assert '--no-index' in pip and '--no-cache-dir' in pip, pip     # the host-built wheelhouse only
    final = final_stage(name)
    users = [rest for w, rest in final if w == 'USER']
    assert users and users[-1].split(':')[0] not in ('root', '0')
    # The final stage copies the venv and adds the user; nothing else runs there (no build tools).
    assert [rest.split()[0] for w, rest in final if w in ('RUN', 'ADD')] == ['useradd']
    assert any(w == 'RUN' and '--uid 65532' in rest for w, rest in final)
    copies = [rest for w, rest in final if w == 'COPY']
    data = (['examples/ /opt/tensorfleet/examples/', 'build/data/ /opt/tensorfleet/data/']   # no code is built
            if name == 'Dockerfile.trainer' else [])
    assert copies == ['--from=venv /opt/venv /opt/venv', *data]
    env = ' '.join(rest for w, rest in final if w == 'ENV')
    assert 'PYTHONDONTWRITEBYTECODE=1' in env


def test_operator_image_entrypoint_and_ports():
    final = dict(final_stage('Dockerfile.operator'))
    assert final['ENTRYPOINT'] == '["python3", "-m", "tensorfleet_operator"]'
    assert set(final['EXPOSE'].split()) == {'8080', '8081'}


def test_trainer_image_entrypoint_ports_and_variants():
    ins = instructions('Dockerfile.trainer')
    final = dict(final_stage('Dockerfile.trainer'))
    assert final['ENTRYPOINT'] == '["tensorfleet-train"]'
    assert set(final['EXPOSE'].split()) == {'2222', '9100'}
    # the examples' workingDir (deploy/examples) holds examples/ and the MNIST set the built-in models read
    assert final['WORKDIR'] == '/opt/tensorfleet'
    assert 'TENSORFLEET_DATA_DIR=/opt/tensorfleet/data' in ' '.join(r for w, r in final_stage('Dockerfile.trainer')
                                                                   if w == 'ENV')
    ignore = (ROOT / '.dockerignore').read_text().splitlines()
    assert '!build/data/' in ignore and '!examples/' in ignore
    args = dict(rest.split('=', 1) for w, rest in ins if w == 'ARG' and '=' in rest)
    assert args['VARIANT'] == 'cuda' and 'runtime' in args['CUDA_IMAGE']
    stages = {rest.split(' AS ')[-1] for w, rest in ins if w == 'FROM' and ' AS ' in rest}
    assert {'base-cpu', 'base-cuda', 'runtime', 'wheel', 'venv'} <= stages
    # The CUDA variant installs the gpu extra (cupy), the CPU one none; the extra exists in pyproject.
    text = (ROOT / 'Dockerfile.trainer').read_text()
    assert 'TENSORFLEET_EXTRAS="[gpu]"' in text and 'TENSORFLEET_EXTRAS=""' in text
    import tomllib
    project = tomllib.loads((ROOT / 'pyproject.toml').read_text())['project']
    assert any(d.startswith('cupy') for d in project['optional-dependencies']['gpu'])


def test_operator_image_installs_what_the_operator_imports():
    """The operator image installs the wheel --no-deps plus an explicit list: that list (and what
    it pulls in) must cover every third-party module the operator imports."""
    imported = set()
    for path in (ROOT / 'operator' / 'tensorfleet_operator').glob('*.py'):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                imported |= {a.name.split('.')[0] for a in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                imported.add(node.module.split('.')[0])
    third_party = {m for m in imported if m not in sys.stdlib_module_names and m != 'tensorfleet_operator'}
    assert 'kopf' in third_party
    runs = ' '.join(rest for w, rest in instructions('Dockerfile.operator') if w == 'RUN')
    listed = re.search(r'--find-links /wheelhouse ([A-Za-z][\w .-]*?)\s*&&', runs.split('--no-deps')[-1])
    assert listed, runs
    dists = set(listed.group(1).split())
    provided = set()
    for dist in dists | {r.split()[0].split(';')[0].split('>')[0].split('<')[0].split('=')[0].split('[')[0]
                         for d in dists for r in importlib.metadata.requires(d) or [] if 'extra ==' not in r}:
        try:
            files = importlib.metadata.files(dist) or []
        except importlib.metadata.PackageNotFoundError:
            continue
        provided |= {f.parts[0].removesuffix('.py') for f in files if f.parts}
    assert third_party <= provided, third_party - provided


def test_build_script_skips_without_buildah(tmp_path):
    env = {**os.environ, 'BUILDAH': 'buildah-that-does-not-exist', 'TENSORFLEET_CONTAINERS_DIR': str(tmp_path)}
    proc = subprocess.run(['bash', str(ROOT / 'scripts' / 'build-images.sh'), 'operator'], env=env,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and 'buildah not found: skipping' in proc.stderr
    assert not list(tmp_path.iterdir())        # nothing prepared, nothing built
