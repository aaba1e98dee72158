"""Code with its dead statements blanked out, for fingerprinting (``grader.batch.similarity``).

A copy padded with statements that change nothing (``_ = 0``, ``None``, ``pass``, ``len(x)`` after every line)
shares no 25-character passage with its original once each line is cut in two, so its fingerprints would
be new. Before fingerprinting, every dead statement is overwritten with spaces (line breaks kept), so the
text keeps its length and every position: the tokenizer drops the spaces, and the shared passages found
on the blanked text are highlighted on the student's own code.

Dead here, in any block (a module, a function, a loop or branch body, a handler):
- an expression statement that calls nothing but ``PURE`` builtins (a constant, a name, a docstring,
  arithmetic, ``len(x)``, ``print(x)``);
- ``pass``, when the block has other statements;
- a statement after ``return``, ``raise``, ``break`` or ``continue`` in the same block;
- an assignment (plain, annotated or augmented) whose targets are all plain names that nothing reads: no
  load of that name anywhere in the enclosing function (nested functions, lambdas and comprehensions
  included; the whole module for module-level names), counting only statements not already dead, until
  nothing more dies. A function that calls ``locals``, ``vars``, ``eval`` or ``exec`` keeps its stores, and so
  does a class body (its names are read as attributes).

The code is parsed, never run. Text that does not parse (a cell magic, a syntax error) is first tried
with its IPython lines (``%...``, ``!...``) blanked, and otherwise fingerprinted as it is.
"""

from __future__ import annotations

import ast

PURE = frozenset(
    {
        "abs",
        "bool",
        "dict",
        "float",
        "hash",
        "id",
        "int",
        "isinstance",
        "len",
        "list",
        "max",
        "min",
        "print",
        "range",
        "repr",
        "round",
        "set",
        "sorted",
        "str",
        "sum",
        "tuple",
        "type",
    }
)
DYNAMIC = frozenset({"locals", "vars", "eval", "exec"})  # a function that calls these may read any local
ENDS_BLOCK = (ast.Return, ast.Raise, ast.Break, ast.Continue)
MAX_ROUNDS = 10  # a store dies once what read it has died; chains longer than this are not followed


def blank_dead(code: str) -> str:
    """``code`` with every dead statement overwritten by spaces (same length, same line breaks)."""
    for text in (code, _without_magics(code)):
        try:
            tree = ast.parse(text)
        except (SyntaxError, ValueError):  # ValueError: a null byte
            continue
        spans = [_span(text, node) for node in _dead(tree)]
        return _blanked(code, spans)
    return code


def _without_magics(code: str) -> str:
    return "".join(
        " " * len(line.rstrip("\r\n")) + line[len(line.rstrip("\r\n")) :]
        if line.lstrip().startswith(("%", "!"))
        else line
        for line in code.splitlines(keepends=True)
    )


def _blocks(tree: ast.AST):
    """Every statement list of the tree, with the function or module it belongs to."""

    def walk(node, scope):
        for field in ("body", "orelse", "finalbody", "handlers", "cases"):
            block = getattr(node, field, None)
            if isinstance(block, list) and block and isinstance(block[0], ast.stmt):
                yield block, scope
            for child in block if isinstance(block, list) else ():
                inner = child if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) else scope
                yield from walk(child, inner)

    yield from walk(tree, tree)


def _calls_only_pure(node: ast.AST) -> bool:
    for sub in ast.walk(node):
        if isinstance(sub, (ast.Await, ast.Yield, ast.YieldFrom, ast.NamedExpr)):
            return False
        if isinstance(sub, ast.Call) and not (isinstance(sub.func, ast.Name) and sub.func.id in PURE):
            return False
    return True


def _dead(tree: ast.AST) -> list[ast.stmt]:
    dead: set[int] = set()
    found: list[ast.stmt] = []

    def kill(stmt):
        if id(stmt) not in dead:
            dead.add(id(stmt))
            found.append(stmt)

    blocks = list(_blocks(tree))
    for block, _ in blocks:
        ended = False
        for stmt in block:
            if (
                ended
                or (isinstance(stmt, ast.Expr) and _calls_only_pure(stmt.value))
                or (isinstance(stmt, ast.Pass) and len(block) > 1)
            ):
                kill(stmt)
            ended = ended or isinstance(stmt, ENDS_BLOCK)
    for _ in range(MAX_ROUNDS):
        before = len(dead)
        read = {
            id(scope): _loads(scope, dead)
            for scope in {id(s): s for _, s in blocks}.values()
            if not isinstance(scope, ast.ClassDef)
        }
        for block, scope in blocks:
            names = None if isinstance(scope, ast.ClassDef) else read[id(scope)]  # class attributes are read as such
            for stmt in block:
                targets = _stored_names(stmt)
                if targets and names is not None and not targets & names and id(stmt) not in dead:
                    kill(stmt)
        if len(dead) == before:
            break
    return found


def _loads(scope: ast.AST, dead: set[int]) -> set[str] | None:
    """Names read anywhere in ``scope`` outside dead statements (None: it may read any name)."""
    names: set[str] = set()
    stack = [scope]
    while stack:
        node = stack.pop()
        if id(node) in dead:
            continue
        if isinstance(node, ast.Name):
            if isinstance(node.ctx, ast.Load):
                if node.id in DYNAMIC:
                    return None
                names.add(node.id)
            elif isinstance(node.ctx, ast.Del):
                names.add(node.id)
        elif isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
            pass  # ``x += 1`` stores x; it reads x only for its own store
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            names.update(node.names)  # stored for someone else to read
        stack.extend(ast.iter_child_nodes(node))
    return names


def _stored_names(stmt: ast.stmt) -> set[str]:
    """The names an assignment stores when every one of its targets is a plain name, else empty."""
    if isinstance(stmt, ast.Assign):
        targets = stmt.targets
    elif isinstance(stmt, (ast.AnnAssign, ast.AugAssign)) and stmt.value is not None:
        targets = [stmt.target]
    else:
        return set()
    names: set[str] = set()
    for target in targets:
        parts = target.elts if isinstance(target, (ast.Tuple, ast.List)) else [target]
        if not all(isinstance(p, ast.Name) for p in parts):
            return set()
        names.update(p.id for p in parts)
    return names


def _span(text: str, node: ast.stmt) -> tuple[int, int]:
    """The character offsets of ``node`` in ``text`` (ast gives columns in UTF-8 bytes)."""
    lines = text.splitlines(keepends=True)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))

    def at(lineno: int, col: int) -> int:
        line = lines[lineno - 1] if lineno - 1 < len(lines) else ""
        return starts[lineno - 1] + len(line.encode("utf-8", "surrogatepass")[:col].decode("utf-8", "ignore"))

    start, end = at(node.lineno, node.col_offset), at(node.end_lineno, node.end_col_offset)
    before, rest = text[:start].rsplit("\n", 1)[-1], text[end:].split("\n", 1)[0]
    if rest.strip().startswith(";"):  # ``_ = 0; x = 1`` and ``x = 1; _ = 0``: the separator goes with it
        end += rest.index(";") + 1
    elif before.rstrip().endswith(";"):
        start -= len(before) - before.rstrip().rindex(";")
    return start, end


def _blanked(code: str, spans: list[tuple[int, int]]) -> str:
    chars = list(code)
    for start, end in spans:
        for i in range(start, min(end, len(chars))):
            if chars[i] not in "\r\n":
                chars[i] = " "
    return "".join(chars)
