"""The autograder zip's setup.sh, run end to end on a clean Debian root file system made here with debootstrap
(only what Debian gives: no Python until setup.sh installs it), then its run_autograder on the solution.

torch's CPU wheel comes from a local folder (setup.sh's SEQGRADE_TORCH_FIND_LINKS, pip's --find-links),
not from PyTorch's index; the other dependencies come from PyPI, with the zip's pins where they install
on Debian's Python (not on bookworm's 3.11.2: soupsieve's pin needs 3.11.5, and setup.sh then installs
the dependency ranges). This machine's CA bundle is given to pip (PIP_CERT), for networks whose HTTPS
passes a proxy with its own CA. Opt-in: it takes minutes and needs root, debootstrap, and Debian's and
PyPI's registries.
"""

import glob
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from grader.assignments.registry import get_assignment
from grader.course.release import release
from grader.gradescope.autograder_zip import build_autograder
from grader.gradescope.trial import unpack

ASSIGNMENT = "rnn_lm"
SUITE = os.environ.get("SEQGRADE_DEBIAN_SUITE", "bookworm")  # its python3 is 3.11, as the wheel must be
MIRROR = os.environ.get("SEQGRADE_DEBIAN_MIRROR", "http://deb.debian.org/debian")

pytestmark = pytest.mark.skipif(
    os.environ.get("SEQGRADE_DEBIAN_SETUP") != "1",
    reason="builds a Debian root with debootstrap and runs setup.sh in it (81 s here; needs root and "
    "Debian's and PyPI's registries): set SEQGRADE_DEBIAN_SETUP=1",
)


def _torch_wheels() -> Path:
    """A folder holding torch's CPU wheel for this Python: SEQGRADE_TORCH_WHEELS, else pip's find-links."""
    for folder in (os.environ.get("SEQGRADE_TORCH_WHEELS"), os.environ.get("PIP_FIND_LINKS"), "/opt/wheels"):
        tag = f"cp{sys.version_info.major}{sys.version_info.minor}"
        if folder and glob.glob(os.path.join(folder, f"torch-*+cpu-{tag}-*.whl")):
            return Path(folder)
    pytest.skip("no torch CPU wheel in a local folder: set SEQGRADE_TORCH_WHEELS to one")


def test_setup_sh_on_a_clean_debian_then_run_autograder(tmp_path):
    if os.geteuid() != 0:
        pytest.skip("debootstrap, chroot and mounts need root")
    if not shutil.which("debootstrap") or not shutil.which("unshare"):
        pytest.skip("needs debootstrap (apt-get install debootstrap) and unshare")
    wheels, root = _torch_wheels(), tmp_path / "debian"
    made = subprocess.run(
        ["debootstrap", "--variant=minbase", SUITE, str(root), MIRROR], capture_output=True, text=True, timeout=900
    )
    if made.returncode != 0:
        pytest.skip(
            f"debootstrap could not build a {SUITE} root from {MIRROR}: {made.stdout[-500:]}{made.stderr[-500:]}"
        )
    assert not (root / "usr" / "bin" / "python3").exists(), "minbase has no Python of its own"
    shutil.copy("/etc/resolv.conf", root / "etc" / "resolv.conf")
    ca = ""
    if Path("/etc/ssl/certs/ca-certificates.crt").is_file():  # this machine's CAs: HTTPS may pass a proxy of its own
        shutil.copy("/etc/ssl/certs/ca-certificates.crt", root / "etc" / "host-ca.crt")
        ca = " PIP_CERT=/etc/host-ca.crt"
    unpack(build_autograder(ASSIGNMENT, tmp_path / "autograder.zip"), root / "autograder" / "source")
    (root / "autograder" / "submission").mkdir(parents=True)
    shutil.copy(
        release(ASSIGNMENT, tmp_path / "solution", solutions=True) / "rnn_lm.ipynb",
        root / "autograder" / "submission" / "my notebook.ipynb",
    )
    (root / "wheels").mkdir()
    env = (
        "/usr/bin/env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8" + ca
    )
    script = f"""set -e
mount -t proc proc {root}/proc
mount --bind /dev {root}/dev
mount --bind {wheels} {root}/wheels
chroot {root} {env} SEQGRADE_TORCH_FIND_LINKS=/wheels bash /autograder/source/setup.sh
echo '--- run_autograder'
chroot {root} {env} bash -c 'cd /autograder && /autograder/source/run_autograder'
"""
    # A private mount namespace: the mounts go away with it, whatever happens.
    proc = subprocess.run(
        ["unshare", "--mount", "--propagation", "private", "bash", "-c", script],
        capture_output=True,
        text=True,
        timeout=1800,
    )
    log = proc.stdout + proc.stderr
    assert proc.returncode == 0, log[-5000:]
    assert "setup.sh: using the image's Python 3." in log and "uv fetches Python" not in log
    results = json.loads((root / "autograder" / "results" / "results.json").read_text())
    total = get_assignment(ASSIGNMENT).max_score
    assert results["score"] == total, (results["output"], log[-3000:])
    assert results["extra_data"]["seqgrade"]["isolation"] in ("namespaces", "rlimits")
