"""``nbflow.client.timeline``: the Chrome-trace exporter, under TensorFlow's module path."""

from nbflow.runtime.timeline import Timeline

__all__ = ["Timeline"]
