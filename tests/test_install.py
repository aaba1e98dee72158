"""pyproject.toml resolves on the machines course staff have: a Linux GPU box with the registry's default
(CUDA) torch, a Linux machine with the CPU wheel, a Mac, and every Python version it declares.

Resolution only (`uv pip compile` for another platform: metadata, no downloads of the wheels), so each
row takes about a second; uv evaluates environment markers for the target platform, which pip's
`--platform` does not. The dependency list the project had before (exact pins, triton required) is
resolved the same way and must fail where it failed for users.
"""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
UV = shutil.which("uv", path=str(Path(sys.executable).parent)) or shutil.which("uv")
CPU_WHEELS = Path("/opt/wheels")  # where this machine keeps torch's CPU wheel (see Makefile's TORCH_SPEC)
DECLARED_PYTHONS = ("3.10", "3.11", "3.12", "3.13")
# The dependencies as they were before ranges (issue 20): torch and triton pinned to versions that
# torch's own CUDA build and macOS contradict.
OLD_PINS = [
    "numpy==2.4.6",
    "torch==2.13.0",
    "triton==3.9.0",
    "hypothesis==6.170.15",
    "nbformat==5.11.1",
    "nbclient==0.11.0",
    "nbgrader==0.9.6",
    "rich==15.0.0",
]

pytestmark = pytest.mark.skipif(UV is None, reason="uv is not installed (the test extra installs it)")


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    return tmp_path_factory.mktemp("uv-cache")


def compile_for(
    tmp_path, platform: str, python: str, *inputs: str, extra=("--extra", "test"), cache=None
) -> subprocess.CompletedProcess:
    out = tmp_path / f"{platform}-{python}.txt"
    command = [
        UV,
        "pip",
        "compile",
        *inputs,
        *extra,
        "--python-platform",
        platform,
        "--python-version",
        python,
        "--no-header",
        "--quiet",
        "-o",
        str(out),
    ]
    result = subprocess.run(
        command,
        capture_output=True,
        text=True,
        timeout=300,
        env={
            "PATH": "/usr/bin:/bin",
            "HOME": str(tmp_path),
            "UV_CACHE_DIR": str(cache or tmp_path / "cache"),
            "SSL_CERT_DIR": "/etc/ssl/certs",
        },
    )
    if result.returncode == 2 and ("failed to fetch" in result.stderr.lower() or "network" in result.stderr.lower()):
        pytest.skip(f"the package registry cannot be reached: {result.stderr.strip()[-300:]}")
    result.pins = {}
    if out.exists():
        for line in out.read_text().splitlines():
            if "==" in line and not line.startswith((" ", "#")):
                name, version = line.split("==", 1)
                result.pins[name.lower()] = version.split()[0]
    return result


def _ok(result) -> dict:
    assert result.returncode == 0, result.stderr[-2000:]
    return result.pins


def test_linux_gpu_box_with_the_registrys_default_torch(tmp_path, cache):
    pins = _ok(compile_for(tmp_path, "x86_64-manylinux_2_28", "3.11", str(ROOT / "pyproject.toml"), cache=cache))
    assert "torch" in pins and any(name.startswith("nvidia-") for name in pins), "expected torch's CUDA build"
    assert "triton" in pins  # the one torch's CUDA build requires; our test extra accepts it


def test_linux_with_the_cpu_wheel_and_the_pinned_constraints(tmp_path, cache):
    wheels = sorted(CPU_WHEELS.glob("torch-*+cpu-*.whl")) if CPU_WHEELS.is_dir() else []
    if not wheels:
        pytest.skip(f"no CPU wheel of torch in {CPU_WHEELS} on this machine")
    version = wheels[-1].name.split("-")[1]
    (tmp_path / "torch.txt").write_text(f"torch=={version}\n")
    python = ".".join(map(str, sys.version_info[:3]))  # the pinned constraints are for this interpreter
    pins = _ok(
        compile_for(
            tmp_path,
            "x86_64-manylinux_2_28",
            python,
            str(ROOT / "pyproject.toml"),
            str(tmp_path / "torch.txt"),
            "-c",
            str(ROOT / "constraints.txt"),
            "--find-links",
            str(CPU_WHEELS),
            cache=cache,
        )
    )
    assert pins["torch"] == version and not any(name.startswith("nvidia-") for name in pins)


def test_mac_arm64_without_triton(tmp_path, cache):
    pins = _ok(compile_for(tmp_path, "aarch64-apple-darwin", "3.11", str(ROOT / "pyproject.toml"), cache=cache))
    assert "torch" in pins and "triton" not in pins


@pytest.mark.parametrize("python", DECLARED_PYTHONS)
def test_every_declared_python_version(tmp_path, cache, python):
    text = (ROOT / "pyproject.toml").read_text()
    assert 'requires-python = ">=3.10"' in text, "update DECLARED_PYTHONS with requires-python"
    _ok(compile_for(tmp_path, "x86_64-manylinux_2_28", python, str(ROOT / "pyproject.toml"), cache=cache))


@pytest.mark.parametrize(
    "platform, why",
    [
        ("x86_64-manylinux_2_28", "triton"),  # torch's CUDA build pins another triton
        ("aarch64-apple-darwin", "torch"),  # no wheel of that torch for the Mac the registry targets
    ],
)
def test_the_old_pins_fail_where_users_saw_them_fail(tmp_path, cache, platform, why):
    (tmp_path / "old.txt").write_text("\n".join(OLD_PINS) + "\n")
    result = compile_for(tmp_path, platform, "3.11", str(tmp_path / "old.txt"), extra=(), cache=cache)
    assert result.returncode != 0 and "unsatisfiable" in result.stderr and why in result.stderr, result.stderr[-1500:]
