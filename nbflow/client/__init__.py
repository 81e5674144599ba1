"""TensorFlow's ``tensorflow.python.client`` names: ``from nbflow.client import timeline``."""
