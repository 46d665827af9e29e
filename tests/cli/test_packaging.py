"""A wheel built from the repository carries every prompt and every package, and runs outside the checkout."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

from myrm_tui.llm.local import runtime_available

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``pip wheel --no-deps .`` on a copy of the tracked tree (a build must not write into the checkout)."""
    src = tmp_path_factory.mktemp("src")
    files = subprocess.run(
        ["git", "ls-files", "-co", "--exclude-standard"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split("\n")
    for name in filter(None, files):
        if (ROOT / name).is_file():
            (src / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, src / name)
    out = tmp_path_factory.mktemp("dist")
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "-q",
            "--no-deps",
            "--no-build-isolation",
            str(src),
            "-w",
            str(out),
        ],
        check=True,
        capture_output=True,
        cwd=src,
    )
    return next(out.glob("myrm_tui-*.whl"))


def test_the_wheel_contains_every_prompt_file(wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    prompts = [
        p.relative_to(ROOT / "prompts").as_posix() for p in (ROOT / "prompts").rglob("*") if p.is_file()
    ]
    assert prompts and "rules/security_rules.md" in prompts
    missing = [p for p in prompts if f"myrm_tui/prompts/{p}" not in names]
    assert not missing, f"prompt files left out of the wheel: {missing}"


def test_the_wheel_contains_every_module_and_stylesheet(wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    ours = [
        p.relative_to(ROOT).as_posix()
        for p in (ROOT / "myrm_tui").rglob("*")
        if p.suffix in (".py", ".tcss") and "__pycache__" not in p.parts
    ]
    missing = [p for p in ours if p not in names]
    assert not missing, f"left out of the wheel (add the package to pyproject's list): {missing}"


def test_the_installed_wheel_finds_its_prompts_and_answers_outside_the_checkout(
    wheel: Path, tmp_path: Path
) -> None:
    # A fresh venv with the wheel installed; the dependencies come from this venv's site-packages by a
    # plain path entry (its .pth files, among them the editable install's finder, are not processed).
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    site = next((venv / "lib").glob("python3*/site-packages"))
    (site / "deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(site), str(wheel)],
        check=True,
        capture_output=True,
    )
    py = venv / "bin" / "python"
    where = subprocess.run(
        [str(py), "-c", "from myrm_tui.paths import prompts_dir; print(prompts_dir())"],
        capture_output=True,
        text=True,
        check=True,
        cwd=tmp_path,
    ).stdout.strip()
    assert Path(where) == site / "myrm_tui" / "prompts" and (Path(where) / "identity.md").is_file()
    if not runtime_available():
        pytest.skip("embedded model not installed: the ask half needs it")
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY") and not k.startswith("MYRM_")}
    env |= {"MYRM_DB": str(tmp_path / "a.db"), "MYRM_CONFIG": str(tmp_path / "none.toml")}
    ask = subprocess.run(
        [str(py), "-m", "myrm_tui.cli", "ask", "Say hello."],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=180,
    )
    assert ask.returncode == 0, ask.stderr
    assert ask.stdout.strip() and "[session " in ask.stderr
