"""The JupyterLab extension as built and installed by `pip install -e .`: TypeScript unit tests
of its pure parts, and the prebuilt labextension and server config that the wheel installs."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

EXTENSION = Path(__file__).resolve().parents[2] / "extension"


@pytest.mark.skipif(shutil.which("npm") is None, reason="npm is not installed")
@pytest.mark.skipif(
    not (EXTENSION / "node_modules").is_dir(),
    reason="extension/node_modules missing: `pip install -e .` runs npm install",
)
def test_typescript_unit_tests_pass():
    result = subprocess.run(
        ["npm", "test"], cwd=EXTENSION, capture_output=True, text=True, timeout=180
    )
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
    assert "# fail 0" in result.stdout


def installed_labextension() -> Path:
    return Path(sys.prefix) / "share" / "jupyter" / "labextensions" / "nbflow"


@pytest.mark.skipif(not installed_labextension().exists(), reason="nbflow is not pip-installed")
def test_prebuilt_labextension_is_installed_and_loads_nothing_from_a_cdn():
    target = installed_labextension()
    meta = json.loads((target / "package.json").read_text())
    assert meta["name"] == "nbflow"
    load = meta["jupyterlab"]["_build"]["load"]
    assert (target / load).is_file()
    for script in (target / "static").glob("*.js"):
        text = script.read_text(errors="replace")
        for cdn in ("unpkg.com", "cdn.jsdelivr", "cdnjs.", "googleapis.com"):
            assert cdn not in text, f"{script.name} references {cdn}"


@pytest.mark.skipif(not installed_labextension().exists(), reason="nbflow is not pip-installed")
def test_server_extension_is_enabled_by_the_installed_config():
    config = Path(sys.prefix) / "etc" / "jupyter" / "jupyter_server_config.d" / "nbflow.json"
    assert json.loads(config.read_text())["ServerApp"]["jpserver_extensions"]["nbflow.board"]
