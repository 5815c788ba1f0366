"""Placement: the simple placer and device setters (filled in by the devices/executor work)."""
__all__ = []
