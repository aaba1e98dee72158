"""The similarity report: recall on planted copies, rings of copies in a class, false pairs among independent
work, and its speed.

    .venv/bin/python benchmarks/similarity.py            # all four assignments, 20 classes, 300 notebooks timed

1. Originals, per assignment: the solution, the solution with each of the course corpus's alternative
   solutions (tests/corpus/courses/<assignment>/alternative), and the solution with the wrong cells of
   grader/assignments/<assignment>/samples.py. A planted copy is an original after one transformation, or several:
   - rename: every local variable and parameter renamed (tokens, layout kept);
   - reorder: the top-level statements after the imports in reverse order (each one's own text kept);
   - comments: every comment removed and a comment line put before every third line;
   - format: the code rewritten by ``ast.unparse`` (layout, quotes, parentheses, blank lines);
   - padded: a statement that changes nothing (``_ = 0``, ``None``, ``pass``, ...) after every statement.
   Recall: the share of (original, copy) pairs the report flags, with the course's release as boilerplate.
2. Independent solutions: for every two distinct sources of an assignment's code (the solution, each
   alternative, the samples' wrong cells), the cells both wrote and wrote differently, each pair compared
   alone. False pairs: the share of those pairs the report flags.
3. Classes (tests/batch/similarity_class.py, one per seed): 30 sequence_models students, a ring of one
   student and eleven renamed copies, one student and a padded copy, and 16 students who wrote their own
   code (each function one of several ways, drawn alone; two of them wrote at most one longer function
   alike). Rings found (one cluster of exactly its 12 members), padded pairs found, false pairs (any pair
   with one of the 16).
4. Speed: 300 notebooks' code (sequence_models originals, each copied with random transformations and
   random variant cells) through ``grader.batch.similarity.write_similarity`` into a scratch OUTDIR,
   pages included, from code on disk to the last page written.

Prints one table (markdown, for docs/performance.md).
"""

from __future__ import annotations

import argparse
import ast
import io
import itertools
import json
import random
import sys
import tempfile
import time
import tokenize
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from grader.assignments.registry import get_assignment  # noqa: E402
from grader.batch.facts import student_code  # noqa: E402
from grader.batch.similarity import Settings, analyse, code_path, release_sources, write_similarity  # noqa: E402
from grader.course.release import release  # noqa: E402
from grader.course.samples import sample_cells  # noqa: E402
from grader.fsutil import write_atomic  # noqa: E402
from tests.batch.similarity_class import independent, notebook_code, padded, renamed, with_names  # noqa: E402

ASSIGNMENTS = ("sequence_models", "attention", "recursive_attention", "rnn_lm")


# ---- transformations -------------------------------------------------------------------------------


def rename(code: str) -> str:
    tree = ast.parse(code)
    top = {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
    imported = {
        (a.asname or a.name).split(".")[0]
        for n in ast.walk(tree)
        if isinstance(n, (ast.Import, ast.ImportFrom))
        for a in n.names
    }
    keywords = {k.arg for n in ast.walk(tree) if isinstance(n, ast.Call) for k in n.keywords if k.arg}
    local = set()
    for fn in (n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.Lambda))):
        local |= {a.arg for a in ast.walk(fn.args) if isinstance(a, ast.arg)}
        local |= {n.id for n in ast.walk(fn) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    names = sorted(local - top - imported - keywords - set(dir(__builtins__)))
    mapping = {n: f"r{i}_{n[::-1]}" for i, n in enumerate(names)}
    return with_names(code, mapping)


def reorder(code: str) -> str:
    tree = ast.parse(code)
    lines = code.splitlines(keepends=True)
    parts = [
        "".join(
            lines[n.lineno - 1 - len(n.decorator_list) if hasattr(n, "decorator_list") else n.lineno - 1 : n.end_lineno]
        )
        for n in tree.body
    ]
    imports = [p for n, p in zip(tree.body, parts) if isinstance(n, (ast.Import, ast.ImportFrom))]
    rest = [p for n, p in zip(tree.body, parts) if not isinstance(n, (ast.Import, ast.ImportFrom))]
    return "\n".join(imports + rest[::-1]) + "\n"


def comments(code: str) -> str:
    kept = [t for t in tokenize.generate_tokens(io.StringIO(code).readline) if t.type != tokenize.COMMENT]
    lines = tokenize.untokenize(kept).splitlines()
    out = []
    for i, line in enumerate(lines):
        if i % 3 == 0 and line.strip():
            out.append(" " * (len(line) - len(line.lstrip())) + f"# step {i}: see below")
        out.append(line)
    return "\n".join(out) + "\n"


def reformat(code: str) -> str:
    return ast.unparse(ast.parse(code)) + "\n"


TRANSFORMS = {"rename": rename, "reorder": reorder, "comments": comments, "format": reformat, "padded": padded}
COMBINATIONS = [(t,) for t in TRANSFORMS] + [
    ("rename", "reorder"),
    ("comments", "format"),
    ("rename", "format"),
    ("rename", "reorder", "comments", "format"),
    ("rename", "reorder", "padded"),
]


def transformed(code: str, names) -> str:
    for name in names:
        code = TRANSFORMS[name](code)
    ast.parse(code)  # every copy is still Python
    return code


# ---- the course's own code ---------------------------------------------------------------------------


def sources(assignment: str, workdir: Path) -> tuple[dict, dict[str, dict[str, str]]]:
    """(the solution notebook, {source name: {grade_id: cell source}}) of one assignment."""
    from tests.corpus.courses import entries

    solution = json.loads(
        (release(assignment, workdir / assignment, solutions=True) / f"{assignment}.ipynb").read_text()
    )
    own = {
        c["metadata"]["nbgrader"]["grade_id"]: "".join(c["source"])
        for c in solution["cells"]
        if c["cell_type"] == "code" and c.get("metadata", {}).get("nbgrader", {}).get("solution")
    }
    found = {"solution": own}
    for e in entries(assignment, "alternative"):
        found[f"alternative {e.name}"] = {k: v for k, v in e.data["REPLACE"].items() if k in own}
    found["samples' wrong cells"] = {k: v.strip("\n") for k, v in sample_cells(assignment).wrong.items() if k in own}
    return solution, found


def notebook_with(solution: dict, cells: dict[str, str]) -> str:
    """The code of the solution notebook with ``cells`` (grade_id -> source) in place of its own."""
    nb = json.loads(json.dumps(solution))
    for c in nb["cells"]:
        gid = c.get("metadata", {}).get("nbgrader", {}).get("grade_id")
        if gid in cells:
            c["source"] = cells[gid]
    return student_code(nb["cells"])


def flagged(report) -> bool:
    return bool(report.pairs)


def measure(settings: Settings, workdir: Path) -> tuple[dict, list, dict]:
    recall = {names: [0, 0] for names in COMBINATIONS}
    false_pairs, scores = [], {"copies": [], "independent": []}
    for assignment in ASSIGNMENTS:
        boiler = release_sources(get_assignment(assignment))
        solution, found = sources(assignment, workdir)
        originals = [notebook_with(solution, cells) for cells in found.values()]
        for original, names in itertools.product(originals, COMBINATIONS):
            report, _ = analyse({"original": original, "copy": transformed(original, names)}, boiler, settings)
            recall[names][0] += flagged(report)
            recall[names][1] += 1
            scores["copies"].append(report.pairs[0].score if report.pairs else report.highest_unflagged)
        for (x, a), (y, b) in itertools.combinations(found.items(), 2):
            both = sorted(k for k in set(a) & set(b) if a[k].strip() != b[k].strip())
            if not both:
                continue
            codes = {x: "\n\n".join(a[k] for k in both) + "\n", y: "\n\n".join(b[k] for k in both) + "\n"}
            report, _ = analyse(codes, boiler, settings)
            false_pairs.append((assignment, x, y, len(both), flagged(report)))
            scores["independent"].append(report.pairs[0].score if report.pairs else report.highest_unflagged)
    return recall, false_pairs, scores


def classes(count: int, settings: Settings) -> tuple[int, int, int, int]:
    """(rings found, padded copies found, false pairs, pairs among the independent students) over ``count``
    classes of 30 (module docstring, 3.)."""
    release = release_sources(get_assignment("sequence_models"))
    rings = pads = wrong = pairs = 0
    for seed in range(count):
        students = independent(18, seed=seed)
        ring = notebook_code(students[0])
        codes = {
            "ring00": ring,
            **{f"ring{i:02d}": renamed(ring, i) for i in range(1, 12)},
            "pad0": notebook_code(students[1]),
            "pad1": padded(notebook_code(students[1])),
            **{f"own{i:02d}": notebook_code(s) for i, s in enumerate(students[2:])},
        }
        report, _ = analyse(codes, release, settings)
        rings += tuple(f"ring{i:02d}" for i in range(12)) in report.clusters
        pads += any((p.a, p.b) == ("pad0", "pad1") for p in report.pairs)
        wrong += sum(p.a.startswith("own") or p.b.startswith("own") for p in report.pairs)
        pairs += 16 * 15 // 2 + 16 * 14  # among the 16, and each of them with a ring or padded member
    return rings, pads, wrong, pairs


def speed(n: int, settings: Settings, workdir: Path, seed: int = 0) -> tuple[float, int, int]:
    """Seconds to compare ``n`` notebooks' code kept in an OUTDIR, pages included; (seconds, pairs, clusters)."""
    rng = random.Random(seed)
    assignment = get_assignment("sequence_models")
    solution, found = sources("sequence_models", workdir / "speed")
    variants = {gid: [cells[gid] for cells in found.values() if gid in cells] for gid in found["solution"]}
    out = workdir / "out"
    students = [f"s{i:03d}" for i in range(n)]
    for student in students:
        cells = {gid: rng.choice(options) for gid, options in variants.items()}
        names = rng.sample(sorted(TRANSFORMS), rng.randrange(0, 3))
        write_atomic(code_path(out, student), transformed(notebook_with(solution, cells), names))
    release_sources(assignment)  # the release is made once per batch anyway (the unmodified-release check)
    start = time.perf_counter()
    report = write_similarity(out, assignment, students, settings)
    return time.perf_counter() - start, len(report.pairs), len(report.clusters)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=300, help="notebooks in the speed run (default 300)")
    parser.add_argument("--classes", type=int, default=20, help="classes of 30 with a ring (default 20)")
    parser.add_argument("--threshold", type=float, default=Settings().threshold)
    parser.add_argument("--min-shared", type=int, default=Settings().min_shared)
    parser.add_argument("--min-run", type=int, default=Settings().min_run)
    args = parser.parse_args(argv)
    settings = Settings(threshold=args.threshold, min_shared=args.min_shared, min_run=args.min_run)
    with tempfile.TemporaryDirectory(prefix="seqgrade-similarity-") as tmp:
        recall, false_pairs, scores = measure(settings, Path(tmp))
        rings, pads, wrong, among = classes(args.classes, settings)
        seconds, pairs, clusters = speed(args.n, settings, Path(tmp))
    print(
        f"settings: threshold {settings.threshold:g}, min_shared {settings.min_shared}, min_run {settings.min_run}, "
        f"noise {settings.noise}, guarantee {settings.guarantee}\n"
    )
    print("| planted copy | recall |\n| --- | --- |")
    for names, (hit, total) in recall.items():
        print(f"| {' + '.join(names)} | {hit}/{total} ({hit / total:.0%}) |")
    wrong = sum(f[-1] for f in false_pairs)
    print(
        f"| **independent solutions: false pairs** | {wrong}/{len(false_pairs)} "
        f"({wrong / max(len(false_pairs), 1):.0%}) |"
    )
    for kind, values in scores.items():
        values = sorted(values)
        print(f"\n{kind}: pair scores min {values[0]:.2f}, median {values[len(values) // 2]:.2f}, max {values[-1]:.2f}")
    for assignment, x, y, cells, hit in false_pairs:
        if hit:
            print(f"flagged independent pair: {assignment}: {x} / {y} ({cells} cells)")
    print(
        f"\nclasses of 30: ring of 12 found as one cluster in {rings}/{args.classes}, padded copy found in "
        f"{pads}/{args.classes}, false pairs {wrong}/{among}"
    )
    print(f"\nspeed: {args.n} notebooks compared in {seconds:.1f} s ({pairs} pairs flagged in {clusters} clusters)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
