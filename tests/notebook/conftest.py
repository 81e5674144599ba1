"""A real IPython shell with the nbflow extension loaded, fresh notebook state per test."""

import pytest
from IPython import get_ipython
from IPython.core.interactiveshell import InteractiveShell
from IPython.terminal.interactiveshell import TerminalInteractiveShell
from IPython.testing import globalipapp

from nbflow.notebook import cells


@pytest.fixture
def ip():
    if InteractiveShell.initialized() and not isinstance(
        InteractiveShell.instance(), TerminalInteractiveShell
    ):
        # a plain shell made by a test before (ipywidgets' Output capture makes one): the
        # test app's terminal shell is its sibling and cannot coexist with it
        InteractiveShell.clear_instance()
    globalipapp.start_ipython()
    shell = get_ipython()
    shell.run_line_magic("load_ext", "nbflow")
    shell.run_cell("import nbflow as tf")
    old = cells._GRAPHS
    cells._GRAPHS = cells.NotebookGraphs()
    yield shell
    cells._GRAPHS.close()
    cells._GRAPHS = old
    shell.parent_header = {}


def run(shell, code):
    """Run a cell; raise its error (so a test sees it) and return its result."""
    result = shell.run_cell(code)
    if result.error_before_exec is not None:
        raise result.error_before_exec
    if result.error_in_exec is not None:
        raise result.error_in_exec
    return result.result
