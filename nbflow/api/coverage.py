"""How much of TensorFlow 1.15's API nbflow has, per namespace, as a markdown table.

    python -m nbflow.api.coverage            # the table (README's "TF1 API coverage")
    python -m nbflow.api.coverage --missing  # and, per namespace, the names still missing

A name counts as present when ``import nbflow as tf`` resolves it (``tf.nn.relu``); the list to
resolve is the ledger's (``nbflow.api.ledger``), which already leaves out what nbflow excludes on
purpose.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass

import nbflow
from nbflow.api.ledger import has_public, load_ledger, namespace_module


@dataclass(frozen=True)
class Coverage:
    """nbflow's coverage of one namespace of TensorFlow 1.15's API."""

    namespace: str
    present: tuple[str, ...]
    missing: tuple[str, ...]

    @property
    def total(self) -> int:
        return len(self.present) + len(self.missing)

    @property
    def percent(self) -> float:
        return 100.0 * len(self.present) / self.total if self.total else 100.0


def measure(namespace: str) -> Coverage:
    """Resolve every ledger name of ``namespace`` against nbflow."""
    module = namespace_module(namespace)
    names = load_ledger()["namespaces"][namespace]
    found = {n: has_public(module, n) for n in names}
    return Coverage(
        namespace,
        tuple(n for n in names if found[n]),
        tuple(n for n in names if not found[n]),
    )


def measure_all() -> list[Coverage]:
    """Coverage of every namespace in the ledger, in the ledger's order."""
    assert nbflow.__name__ == "nbflow"  # namespaces are read from the imported package
    return [measure(namespace) for namespace in load_ledger()["namespaces"]]


def markdown_table(coverages: list[Coverage]) -> str:
    """The coverage table as GitHub markdown, with a total row."""
    rows = ["| namespace | TF 1.15 names | in nbflow | coverage |", "| --- | ---: | ---: | ---: |"]
    for c in coverages:
        rows.append(f"| `{c.namespace}` | {c.total} | {len(c.present)} | {c.percent:.0f}% |")
    total = sum(c.total for c in coverages)
    present = sum(len(c.present) for c in coverages)
    rows.append(f"| **all** | {total} | {present} | {100.0 * present / total:.0f}% |")
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--missing", action="store_true", help="list missing names too")
    args = parser.parse_args(argv)
    coverages = measure_all()
    print(markdown_table(coverages))
    if args.missing:
        for c in coverages:
            if c.missing:
                print(f"\n{c.namespace} ({len(c.missing)} missing): {', '.join(c.missing)}")


if __name__ == "__main__":
    main()
