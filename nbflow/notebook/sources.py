"""Which notebook cell created an op: creation sites named by cell id and execution count.

Python records where each op was created (``Operation.traceback``: file, line, function). In a
notebook the file is the kernel's name for one execution of a cell (ipykernel: a temporary
file named after the cell's code; plain IPython: ``<ipython-input-N-…>``; a ``%%dataflow`` cell:
``<dataflow-cell KEY>``). Before each cell runs, ``CellFiles`` computes that name the way the
shell's compiler will and remembers the front end's cell id and the execution count for it. The
GraphDef the FileWriter logs then says ``_source: "cell:ID#N:line"`` instead of a temporary
path, and the Board's graph view links the op to its cell.

    files = CellFiles()
    files.install(get_ipython())      # load_ipython_extension does this
"""

from __future__ import annotations

from typing import Any

from nbflow.framework.graph_def import register_source_namer
from nbflow.notebook.cells import CELL_FILENAME_PREFIX
from nbflow.notebook.magics import cell_id, named_cell_ids


class CellFiles:
    """Kernel file names of executed cells -> (cell id, execution count)."""

    def __init__(self) -> None:
        self._files: dict[str, tuple[str, int]] = {}
        self._counts: dict[str, int] = {}  # cell id -> its latest execution count

    def install(self, shell: Any) -> None:
        shell.events.register("pre_run_cell", lambda info: self.before_cell(shell, info))
        register_source_namer(self.name)

    def before_cell(self, shell: Any, info: Any) -> None:
        cell = getattr(info, "cell_id", None) or cell_id(shell)
        raw = getattr(info, "raw_cell", None)
        if not cell or raw is None:
            return
        count = int(shell.execution_count)
        self.record(cell, count, self.file_name(shell, raw, count))

    @staticmethod
    def file_name(shell: Any, raw: str, count: int) -> str | None:
        """The name the shell's compiler gives this execution's code (None if it cannot say)."""
        try:
            return shell.compile.get_code_name(raw, shell.transform_cell(raw), count)
        except Exception:  # an older compiler or a cell that does not transform
            return None

    def record(self, cell: str, count: int, filename: str | None) -> None:
        self._counts[cell] = count
        if filename:
            self._files[filename] = (cell, count)

    def name(self, filename: str, line: int) -> str | None:
        """``"cell:ID#N:line"`` for a file of a recorded cell, else None."""
        known = self._files.get(filename)
        if known:
            return f"cell:{known[0]}#{known[1]}:{line}"
        if filename.startswith(CELL_FILENAME_PREFIX):  # a %%dataflow body, keyed by its cell id
            key = filename[len(CELL_FILENAME_PREFIX) : -1]  # or by its name (``--name``)
            cell = named_cell_ids.get(key, key)
            if cell in self._counts:
                return f"cell:{cell}#{self._counts[cell]}:{line + 1}"  # +1: the magic's line
        return None
