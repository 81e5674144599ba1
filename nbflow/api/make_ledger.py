"""Write the API ledger: TensorFlow 1.15's public graph-mode names, per namespace.

The ledger (``tf1_names.json`` beside this file) is what ``python -m nbflow.api.coverage`` measures
nbflow against and what turns ``tf.some_missing_name`` into an AttributeError that says so. It is
made from two sources, neither of them needed at run time:

- TensorFlow 1.15's API goldens, ``tensorflow/tools/api/golden/v1/tensorflow.<namespace>.pbtxt``
  in a 1.15 source tree: the list TensorFlow's own CI checked its public API against, so exactly
  the names ``import tensorflow as tf`` offered in 1.15. (``tf.flags`` has no golden: 1.15 made it
  ``from absl.flags import *``, so its names are ``absl.flags.__all__``.)
- A newer TensorFlow's ``tf.compat.v1`` (its generated ``_api/v2/compat/v1/**/__init__.py``),
  the frozen 1.x API: read only to cross-check, recording per namespace what differs.

Names TensorFlow 1.15 had that nbflow deliberately leaves out (Keras, contrib, TPU/XLA, eager-only
and v2-only switches, C++ build details) go into the ledger's ``excluded`` table with the reason,
instead of silently vanishing.

    python -m nbflow.api.make_ledger --golden TF115/tensorflow/tools/api/golden/v1 \\
        --compat-v1 SITE/tensorflow/_api/v2/compat/v1
"""

from __future__ import annotations

import argparse
import ast
import json
import re
from pathlib import Path

import absl.flags

LEDGER = Path(__file__).with_name("tf1_names.json")

NAMESPACES = (
    "tf",
    "tf.nn",
    "tf.nn.rnn_cell",
    "tf.train",
    "tf.layers",
    "tf.losses",
    "tf.metrics",
    "tf.image",
    "tf.math",
    "tf.linalg",
    "tf.random",
    "tf.strings",
    "tf.io",
    "tf.data",
    "tf.summary",
    "tf.sparse",
    "tf.errors",
    "tf.saved_model",
    "tf.initializers",
    "tf.gfile",
    "tf.app",
    "tf.flags",
    "tf.logging",
    "tf.test",
    "tf.distributions",
)

# name -> reason, for names left out of every namespace they appear in.
EXCLUDED = {
    "keras": "Keras is its own project; nbflow is TensorFlow's graph API (use tf.layers)",
    "contrib": "tf.contrib was never part of TensorFlow's stable API",
    "tpu": "TPU only",
    "xla": "XLA compiler only",
    "lite": "TensorFlow Lite converter",
    "autograph": "AutoGraph converts Python for tf.function (TensorFlow 2)",
    "distribute": "tf.distribute strategies (Keras/TF2 training); nbflow distributes through Dask "
    "and tf.train.Server",
    "raw_ops": "TensorFlow's generated wrappers of its C++ kernels",
    "pywrap_tensorflow": "TensorFlow's C++ bindings",
    "user_ops": "TensorFlow's C++ custom-op examples",
    "sysconfig": "compiler and linker flags for building C++ ops against TensorFlow",
    "load_op_library": "loads C++ kernels into TensorFlow",
    "load_file_system_library": "loads C++ file systems into TensorFlow",
    "COMPILER_VERSION": "build metadata of TensorFlow's C++ binary",
    "CXX11_ABI_FLAG": "build metadata of TensorFlow's C++ binary",
    "MONOLITHIC_BUILD": "build metadata of TensorFlow's C++ binary",
    "GIT_VERSION": "build metadata of TensorFlow's C++ binary",
    "GradientTape": "eager only",
    "enable_eager_execution": "eager only",
    "enable_v2_behavior": "switches to TensorFlow 2 behaviour",
    "enable_v2_tensorshape": "switches to TensorFlow 2 behaviour",
    "enable_control_flow_v2": "switches to TensorFlow 2 behaviour",
    "enable_tensor_equality": "switches to TensorFlow 2 behaviour",
    "function": "tf.function traces Python for TensorFlow 2",
    "init_scope": "lifts ops out of tf.function graphs (TensorFlow 2)",
    "Module": "tf.Module is TensorFlow 2's object model",
}
# Name patterns left out wherever they appear: "tpu" or "xla" as a word of the name (not OUTPUT).
EXCLUDED_PATTERNS = {
    re.compile(r"(?:^|_)(?:tpu|TPU)(?:_|$|[A-Z])"): "TPU only",
    re.compile(r"(?:^|_)(?:xla|XLA)(?:_|$|[A-Z])"): "XLA compiler only",
}

# Public in 1.15 but loaded lazily, so its goldens do not list them.
LAZY_NAMES = {"tf": ("contrib",)}

_MEMBER = re.compile(r"^  member(?:_method)? \{\n    name: \"([^\"]+)\"", re.MULTILINE)


def golden_names(golden: Path, namespace: str) -> list[str]:
    """The public names a 1.15 golden file lists for ``namespace`` (``tf.nn`` -> tensorflow.nn)."""
    path = golden / f"tensorflow{namespace[2:]}.pbtxt"
    return sorted(set(_MEMBER.findall(path.read_text())))


def compat_v1_names(compat_v1: Path, namespace: str) -> list[str]:
    """The public names a newer TensorFlow's ``tf.compat.v1.<namespace>`` imports."""
    module = compat_v1.joinpath(*namespace.split(".")[1:], "__init__.py")
    if not module.exists():
        return []
    names: set[str] = set()
    for node in ast.parse(module.read_text()).body:
        if isinstance(node, ast.ImportFrom):
            names.update(alias.asname or alias.name for alias in node.names)
    return sorted(n for n in names if not n.startswith("_"))


def exclusion_reason(name: str) -> str | None:
    if name in EXCLUDED:
        return EXCLUDED[name]
    for pattern, reason in EXCLUDED_PATTERNS.items():
        if pattern.search(name):
            return reason
    return None


def build_ledger(golden: Path, compat_v1: Path | None) -> dict:
    namespaces: dict[str, list[str]] = {}
    excluded: dict[str, dict[str, str]] = {}
    cross_check: dict[str, dict[str, list[str]]] = {}
    for namespace in NAMESPACES:
        if namespace == "tf.flags":
            tf115 = sorted(absl.flags.__all__)
        else:
            tf115 = sorted({*golden_names(golden, namespace), *LAZY_NAMES.get(namespace, ())})
        reasons = {name: exclusion_reason(name) for name in tf115}
        namespaces[namespace] = [n for n in tf115 if reasons[n] is None]
        excluded[namespace] = {n: r for n, r in reasons.items() if r is not None}
        if compat_v1 is not None and namespace != "tf.flags":
            newer = compat_v1_names(compat_v1, namespace)
            cross_check[namespace] = {
                "only_in_1.15": sorted(set(tf115) - set(newer)),
                "only_in_compat_v1": sorted(set(newer) - set(tf115)),
            }
    return {
        "source": "TensorFlow 1.15 API goldens (tensorflow/tools/api/golden/v1); tf.flags: "
        "absl.flags.__all__. Made by nbflow/api/make_ledger.py.",
        "namespaces": namespaces,
        "excluded": excluded,
        "cross_check_with_compat_v1": cross_check,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--golden", type=Path, required=True, help="1.15 golden/v1 directory")
    parser.add_argument("--compat-v1", type=Path, help="a newer TF's _api/v2/compat/v1 directory")
    parser.add_argument("--out", type=Path, default=LEDGER)
    args = parser.parse_args()
    ledger = build_ledger(args.golden, args.compat_v1)
    args.out.write_text(json.dumps(ledger, indent=1, sort_keys=False) + "\n")
    for namespace, names in ledger["namespaces"].items():
        excluded = len(ledger["excluded"][namespace])
        print(f"{namespace:20s} {len(names):4d} names, {excluded} excluded")


if __name__ == "__main__":
    main()
