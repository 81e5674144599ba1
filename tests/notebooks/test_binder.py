"""What can be checked of the Binder setup offline: the files parse, every dependency they name is
satisfied by this venv (which `pip install -e '.[test]'` made), and postBuild is an executable
script that installs nbflow from the checkout, checks its JupyterLab extension, and opens
JupyterLab on the notebooks."""

import json
import os
import subprocess
import sys
import tomllib
from importlib import metadata
from pathlib import Path

import pytest
import yaml
from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parents[2]
BINDER = ROOT / "binder"


def _environment() -> dict:
    return yaml.safe_load((BINDER / "environment.yml").read_text())


def _pip_requirements() -> list[Requirement]:
    deps = _environment()["dependencies"]
    pip = next(d["pip"] for d in deps if isinstance(d, dict) and "pip" in d)
    return [Requirement(r) for r in pip]


def _project_requirements() -> list[Requirement]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    return [Requirement(r) for r in project["dependencies"]]


def _assert_satisfied(requirement: Requirement) -> None:
    try:
        installed = metadata.version(requirement.name)
    except metadata.PackageNotFoundError:
        pytest.fail(f"{requirement} is not installed in this venv")
    assert requirement.specifier.contains(installed, prereleases=True), (
        str(requirement),
        installed,
    )
    for extra in requirement.extras:  # e.g. dask-gateway-server[local]
        for dep in metadata.requires(requirement.name) or []:
            dep_req = Requirement(dep)
            if dep_req.marker is not None and dep_req.marker.evaluate({"extra": extra}):
                if not dep_req.marker.evaluate({"extra": ""}):
                    _assert_satisfied(Requirement(str(dep_req).split(";")[0]))


def test_environment_has_python_node_and_pip():
    env = _environment()
    conda = [d for d in env["dependencies"] if isinstance(d, str)]
    assert any(d.startswith("python=3.1") for d in conda), conda
    node = next(d for d in conda if d.startswith("nodejs"))
    assert int(node.split("=")[1].split(".")[0]) >= 18, "JupyterLab 4's builder needs Node >= 18"
    assert "pip" in conda
    assert "conda-forge" in env["channels"]


def test_every_binder_pip_requirement_is_satisfied_by_this_venv():
    for requirement in _pip_requirements():
        _assert_satisfied(requirement)


def test_every_nbflow_dependency_postbuild_installs_is_satisfied_by_this_venv():
    for requirement in _project_requirements():
        _assert_satisfied(requirement)


def test_postbuild_is_an_executable_bash_script_that_installs_nbflow_and_checks_the_extension():
    post = BINDER / "postBuild"
    assert os.access(post, os.X_OK), "postBuild must be executable"
    text = post.read_text()
    assert text.startswith("#!/usr/bin/env bash")
    assert "set -euo pipefail" in text
    assert "python -m pip install --no-cache-dir ." in text
    assert "jupyter labextension list" in text and "jupyter server extension list" in text
    subprocess.run(["bash", "-n", str(post)], check=True)


def test_postbuild_commands_exist_and_report_the_extension_here():
    """The checks postBuild runs pass in this venv, where nbflow is installed the same way."""
    jupyter = Path(sys.executable).parent / "jupyter"
    labext = subprocess.run(
        [str(jupyter), "labextension", "list"], capture_output=True, text=True, timeout=120
    )
    assert "nbflow" in labext.stdout + labext.stderr
    serverext = subprocess.run(
        [str(jupyter), "server", "extension", "list"], capture_output=True, text=True, timeout=120
    )
    assert "nbflow.board" in serverext.stdout + serverext.stderr


def test_jupyterlab_opens_on_the_notebooks():
    config = json.loads((BINDER / "jupyter_server_config.json").read_text())
    url = config["ServerApp"]["default_url"]
    assert url == "/lab/tree/notebooks"
    assert (ROOT / url.removeprefix("/lab/tree/")).is_dir()
    assert "binder/jupyter_server_config.json" in (BINDER / "postBuild").read_text()
