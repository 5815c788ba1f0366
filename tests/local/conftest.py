"""Fixtures for the local-mode tests."""
import pytest


@pytest.fixture
def job_file(tmp_path):
    """Write a TFJob manifest (YAML text) into tmp_path and return its path."""
    def write(text, name='job.yaml'):
        path = tmp_path / name
        path.write_text(text)
        return path
    return write
