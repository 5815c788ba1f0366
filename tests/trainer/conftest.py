"""Trainer-test set-up: puts this folder on sys.path so test modules can import the shared `helpers` and `gradcheck`.

Suite-wide fixtures (a fresh default graph per test, GPU skips) are in `tests/conftest.py`.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
