"""ConfigProto and GPUOptions (filled in by the devices/executor work)."""
__all__ = []
