"""The operator's layering (issue 8): the pure core imports no kopf, aiohttp or
prometheus and does no I/O (no environment, file, socket or process access), so
the local mode can import it without the shell; every operator module stays
under 500 lines; and the core passes ruff (E,F,B,C90) and mypy."""
import ast
import pathlib
import shutil
import subprocess
import sys

import pytest

OPERATOR = pathlib.Path(__file__).resolve().parents[2] / 'operator' / 'tensorfleet_operator'
CORE = OPERATOR / 'core'
FORBIDDEN_MODULES = {'kopf', 'aiohttp', 'prometheus_client', 'os', 'socket', 'subprocess', 'pathlib', 'shutil',
                     'tempfile', 'urllib', 'http', 'asyncio', 'threading', 'time', 'random', 'secrets', 'io'}
FORBIDDEN_CALLS = {'open', 'input', 'print', 'exec', 'eval'}


def _imports(tree):
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (a.name.split('.')[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            yield node.module.split('.')[0]


@pytest.mark.parametrize('path', sorted(CORE.glob('*.py')), ids=lambda p: p.name)
def test_core_module_does_no_io_and_imports_no_shell(path):
    tree = ast.parse(path.read_text())
    assert set(_imports(tree)) & FORBIDDEN_MODULES == set()
    calls = {n.func.id for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)}
    assert calls & FORBIDDEN_CALLS == set()
    relative = [n for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.level > 1]
    assert relative == [], 'the core imports nothing from the shell'


def test_importing_the_core_loads_no_shell_library():
    code = ('import sys, tensorfleet_operator.core, tensorfleet_operator.core.crd;'
            'print(sorted(m for m in ("kopf", "aiohttp", "prometheus_client", "tensorfleet_operator.handlers",'
            ' "tensorfleet_operator.controller", "tensorfleet_operator.kubeclient") if m in sys.modules))')
    out = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout.strip() == '[]'


@pytest.mark.parametrize('path', sorted(OPERATOR.rglob('*.py')), ids=lambda p: str(p.relative_to(OPERATOR)))
def test_module_line_budget_and_docstring(path):
    text = path.read_text()
    assert len(text.splitlines()) < 500
    assert ast.get_docstring(ast.parse(text)), f'{path.name} needs a docstring saying where it sits in the flow'


def _tool(name):
    found = shutil.which(name) or shutil.which(name, path=str(pathlib.Path(sys.executable).parent))
    if not found:
        pytest.skip(f'{name} is not installed')
    return found


def test_ruff_on_the_operator():
    out = subprocess.run([_tool('ruff'), 'check', '--isolated', '--select', 'E,F,B,C90', '--line-length', '120',
                          str(OPERATOR)], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stdout + out.stderr


def test_mypy_on_the_core():
    out = subprocess.run([_tool('mypy'), '--ignore-missing-imports', '--no-incremental', str(CORE)],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stdout + out.stderr
