"""Regenerate the documentation's screenshots from real output: run the demo, then photograph one
student's feedback page and the instructor summary with headless Chromium (Debian's ``chromium``).

    make screenshots
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from rich.console import Console

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    raise SystemExit("headless Chromium is needed: apt-get install chromium")


def shoot(browser: str, page: Path, png: Path, height: int) -> None:
    profile = tempfile.mkdtemp(prefix="seqgrade-chromium-")
    try:
        subprocess.run(
            [
                browser,
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-quic",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                f"--user-data-dir={profile}",
                "--hide-scrollbars",
                f"--window-size=1100,{height}",
                f"--screenshot={png}",
                page.resolve().as_uri(),
            ],
            check=True,
            capture_output=True,
            timeout=120,
        )
    finally:
        shutil.rmtree(profile, ignore_errors=True)


def main(out: Path = ROOT / "docs") -> int:
    from grader.course.demo import run_demo

    browser = chromium()
    work = Path(tempfile.mkdtemp(prefix="seqgrade-shots-"))
    try:
        existing = os.environ.get("SEQGRADE_DEMO_GRADED")  # reuse a demo's graded/ folder (the docs test does)
        graded = Path(existing) if existing else run_demo(work / "demo", Console(quiet=True))["sequence_models"]
        shoot(browser, graded / "feedback" / "student02.html", out / "screenshot-feedback.png", 1400)
        shoot(browser, graded / "summary.html", out / "screenshot-summary.png", 1500)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"wrote {out / 'screenshot-feedback.png'} and {out / 'screenshot-summary.png'}")
    return 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "docs"))
