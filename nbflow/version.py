"""``tf.version``: which TensorFlow API nbflow implements, and its GraphDef versions.

``VERSION`` is the TensorFlow release whose Python API nbflow follows (programs check
``tf.VERSION.startswith("1.")``). ``GRAPH_DEF_VERSION`` is the producer version nbflow writes
into its GraphDefs' ``versions`` (nbflow's own numbering, not TensorFlow's C++ one); nbflow reads
GraphDefs of any producer, so the minimum consumer and producer are 0. There is no C++ build, so
``GIT_VERSION`` and ``COMPILER_VERSION`` name nbflow's package version and the Python that runs it.
"""

import platform

from nbflow.framework.graph_def import GRAPH_DEF_VERSION
from nbflow.tf1_extras import VERSION

GRAPH_DEF_VERSION_MIN_CONSUMER = 0
GRAPH_DEF_VERSION_MIN_PRODUCER = 0
__version__ = "0.1.0"  # nbflow's own package version (nbflow.__version__)
GIT_VERSION = f"nbflow-{__version__}"
COMPILER_VERSION = f"{platform.python_implementation()} {platform.python_version()}"

__all__ = [
    "COMPILER_VERSION",
    "GIT_VERSION",
    "GRAPH_DEF_VERSION",
    "GRAPH_DEF_VERSION_MIN_CONSUMER",
    "GRAPH_DEF_VERSION_MIN_PRODUCER",
    "VERSION",
]
