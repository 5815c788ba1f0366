"""Tensorfleet operator: reconciles TFJob custom resources into pods and services."""
