"""The two scripts at the zip's root. ``{...}`` fields are filled in when the zip is built."""

SETUP_SH = r"""#!/usr/bin/env bash
# seqgrade autograder for {assignment}: Gradescope runs this once, as root, when it builds the image.
# It installs seqgrade's dependencies (torch's CPU build, then the pins of constraints.txt) into a
# virtual environment in {prefix}, where every user can read them: student code may run as an
# unprivileged uid that must be able to load Python. The environment uses the image's own python3 when
# it is 3.10 or newer (with its venv module); otherwise uv fetches Python {python}, the version this zip
# was built with. seqgrade's own source (the grader, its checks and the reference solutions) stays in
# /autograder/source/seqgrade, readable by root only.
#
# Set SEQGRADE_TORCH_FIND_LINKS to a folder of wheels to install torch from there instead of PyTorch's
# CPU index (https://download.pytorch.org/whl/cpu); pip's own PIP_* variables apply to the rest.
set -euo pipefail
HERE="$(cd "$(dirname "${{BASH_SOURCE[0]}}")" && pwd)"
PREFIX={prefix}
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
apt-get install -y -q --no-install-recommends python3 python3-venv python3-pip ca-certificates
if python3 -c 'import sys, venv, ensurepip; sys.exit(sys.version_info < (3, 10))' 2>/dev/null; then
    echo "setup.sh: using the image's $(python3 --version)"
    python3 -m venv "$PREFIX/venv"
    PY="$PREFIX/venv/bin/python"
    PIP=("$PY" -m pip install --quiet --disable-pip-version-check)
else
    echo "setup.sh: the image's python3 is older than 3.10 (or has no venv): uv fetches Python {python}"
    # uv puts the standalone Python in PREFIX, not under /root where the unprivileged uid could not read it.
    python3 -m pip install --quiet --disable-pip-version-check --target "$PREFIX/uv" "{uv}"
    export UV_PYTHON_INSTALL_DIR="$PREFIX/python" UV_CACHE_DIR=/tmp/seqgrade-uv-cache
    "$PREFIX/uv/bin/uv" venv --python {python} --python-preference only-managed "$PREFIX/venv"
    PY="$PREFIX/venv/bin/python"
    PIP=("$PREFIX/uv/bin/uv" pip install --python "$PY")
fi
# torch first, its CPU build alone, so that nothing later pulls in a multi-GB CUDA build.
if [ -n "${{SEQGRADE_TORCH_FIND_LINKS:-}}" ]; then
    "${{PIP[@]}}" --no-index --find-links "$SEQGRADE_TORCH_FIND_LINKS" --no-deps "{torch}"
    "${{PIP[@]}}" "{torch}"  # torch's own dependencies, from the package index (torch is installed already)
else
    "${{PIP[@]}}" --index-url https://download.pytorch.org/whl/cpu "{torch}"
fi
if ! "${{PIP[@]}}" -c "$HERE/constraints.txt" -r "$HERE/requirements.txt"; then
    # A pin can need a newer Python than the image's (soupsieve 4.1.2 needed 3.11.5 while Debian 12 has 3.11.2).
    echo "setup.sh: the pins of constraints.txt do not all install on $("$PY" --version); installing the" \
         "ranges of requirements.txt instead, with {torch} kept"
    "${{PIP[@]}}" -r "$HERE/requirements.txt" "{torch}"
fi
"$PY" -c "import torch, sys; sys.exit('a CUDA build of torch was installed' if torch.version.cuda else 0)"
rm -rf /tmp/seqgrade-uv-cache
chmod -R a+rX "$PREFIX"
chmod -R go-rwx "$HERE"
# A last check that the grader imports with this environment (seconds; fails the image build if not).
PYTHONPATH="$HERE/seqgrade" "$PY" -c "import grader.assignments.registry, grader.gradescope.container"
"""

RUN_AUTOGRADER = r"""#!/usr/bin/env bash
# seqgrade autograder for {assignment}: Gradescope runs this once per submission, as root, in /autograder.
# It grades the one notebook in submission/ and writes results/results.json. Whatever fails, a valid
# results.json is left behind: Python writes one saying why, and if Python itself cannot start, this
# script writes one. To try it elsewhere, give another root: run_autograder DIR (DIR/source holds the
# unpacked zip, DIR/submission the notebook); `seqgrade gradescope-autograder ASSIGNMENT --try NOTEBOOK`
# does that for you.
ROOT="${{1:-${{SEQGRADE_AUTOGRADER_ROOT:-/autograder}}}}"
SOURCE="$ROOT/source"
PY="${{SEQGRADE_PYTHON:-{prefix}/venv/bin/python}}"
[ -x "$PY" ] || PY="$(command -v python3 || true)"
RESULTS="$ROOT/results/results.json"
mkdir -p "$ROOT/results"
rm -f "$RESULTS"
chmod 700 "$SOURCE" 2>/dev/null || true  # the grader and the reference: never readable by student code
if [ -n "$PY" ]; then
    cd "$SOURCE/seqgrade" && PYTHONPATH="$SOURCE/seqgrade" SEQGRADE_AUTOGRADER_ROOT="$ROOT" "$PY" -m grader.cli gradescope-run
    echo "seqgrade gradescope-run exited with status $?"
else
    echo "no Python found: neither {prefix}/venv/bin/python nor python3 on PATH (did setup.sh fail?)"
fi
if [ ! -s "$RESULTS" ]; then
    cat > "$RESULTS" <<'JSON'
{{"score": 0, "output": "Not graded: the autograder could not start. This is not a problem with your notebook; please tell course staff.", "tests": []}}
JSON
fi
exit 0
"""
