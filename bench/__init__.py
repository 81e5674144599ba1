"""Performance benchmarks: ``python -m bench.run`` runs the ``core``, ``training`` and
``distributed`` suites side by side with TensorFlow and PyTorch; ``python -m bench.devices``
measures cross-device edges. ``common`` holds the timing helpers."""
