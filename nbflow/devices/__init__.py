"""Devices: names (``spec``), the CPU device and its array module (``device``), GPU devices
over CuPy (``gpu``) and their CuPy-only kernels (``gpu_kernels``)."""
