"""The house rules of docs/ARCHITECTURE.md, checked on the source: dependencies point one way.

Every import of the project's modules counts, wherever it is written: at the top, inside a
function (a "lazy" import) or under ``TYPE_CHECKING``.

- No import circle among the project's modules (the one exception below, with its reason).
- The distributions depend on each other in one order: the engine (``arboretum``), the SDK
  (``arboretum_sdk``), the referee (``arboretum_server``), the league (``arboretum_worker``), the
  web app (``arboretum_web``); a module never imports from a later one. (The SDK's ``arena``
  command finds the later ones' subcommands by name, with ``importlib``: no import.)
- The engine imports only the standard library and itself.
- No module but ``arboretum_worker.keys`` spells a Redis key.
- The size rule: no module over 600 lines, no function over 100, but the declarative tables named
  here.
"""

from __future__ import annotations

import ast
import functools
import itertools
import re
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = {
    "arboretum": "sdk",
    "arboretum_sdk": "sdk",
    "arboretum_server": "server",
    "arboretum_worker": "worker",
    "arboretum_web": "web",
}
ORDER = list(PACKAGES)
"""The distributions' packages in dependency order (a module imports only from its own or earlier
ones)."""

TYPE_ONLY_EXCEPTIONS = {
    ("arboretum.views", "arboretum.state"): "SeatView.determinize's return annotation: a view "
    "builds a GameState and a GameState builds views; nothing in views.py imports the state at "
    "run time (determinize.py registers the function the method calls)",
}
"""Imports allowed against the order, each under TYPE_CHECKING only, with the reason."""


@dataclass(frozen=True)
class Import:
    source: str
    target: str
    line: int
    type_only: bool


@functools.cache
def modules() -> dict[str, Path]:
    found = {}
    for package, folder in PACKAGES.items():
        for path in (ROOT / folder / package).rglob("*.py"):
            parts = path.relative_to(ROOT / folder).with_suffix("").parts
            name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            found[name] = path
    return found


def _type_checking_lines(tree: ast.Module) -> set[int]:
    lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for child in node.body:
                lines.update(range(child.lineno, (child.end_lineno or child.lineno) + 1))
    return lines


@functools.cache
def imports() -> list[Import]:
    known = modules()
    out = []
    for name, path in known.items():
        tree = ast.parse(path.read_text())
        type_only = _type_checking_lines(tree)
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(tree):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")
                    base = base[: len(base) - (node.level - 1)]
                    module = ".".join([*base, node.module] if node.module else base)
                else:
                    module = node.module or ""
                targets = [module] + [f"{module}.{alias.name}" for alias in node.names]
            for target in targets:
                while target and target not in known and "." in target:
                    target = target.rpartition(".")[0]
                if target in known and target != name:
                    out.append(Import(name, target, node.lineno, node.lineno in type_only))
    return out


def _is_parent_package(a: str, b: str) -> bool:
    """A package's ``__init__`` importing its own submodules (or a submodule, its package)."""
    return b.startswith(a + ".") or a.startswith(b + ".")


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10_000))
    for v in sorted(edges):
        if v not in index:
            visit(v)
    return found


def test_the_project_is_found() -> None:
    names = modules()
    assert {"arboretum.state", "arboretum_sdk.wire.views", "arboretum_server.match"} <= set(names)
    assert {"arboretum_worker.jobs", "arboretum_web.app"} <= set(names)
    assert len(imports()) > 300


def test_no_import_circles() -> None:
    edges: dict[str, set[str]] = {}
    for imp in imports():
        if _is_parent_package(imp.source, imp.target):
            continue
        if (imp.source, imp.target) in TYPE_ONLY_EXCEPTIONS:
            assert imp.type_only, f"{imp.source}:{imp.line} imports {imp.target} at run time"
            continue
        edges.setdefault(imp.source, set()).add(imp.target)
    found = cycles(edges)
    assert not found, "import circles (a module that imports, even lazily, its importer):\n" + (
        "\n".join(" <-> ".join(c) for c in found)
    )


def test_the_distributions_depend_in_one_order() -> None:
    wrong = []
    for imp in imports():
        a, b = imp.source.split(".")[0], imp.target.split(".")[0]
        if ORDER.index(b) > ORDER.index(a):
            wrong.append(f"{imp.source}:{imp.line} imports {imp.target}")
    assert not wrong, "imports against the distributions' order:\n" + "\n".join(wrong)


def test_the_engine_imports_only_the_standard_library() -> None:
    stdlib = sys.stdlib_module_names
    for name, path in modules().items():
        if not name.startswith("arboretum.") and name != "arboretum":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                roots = [alias.name.split(".")[0] for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and not node.level:
                roots = [(node.module or "").split(".")[0]]
            else:
                continue
            for root in roots:
                assert root in stdlib or root == "arboretum", f"{name}:{node.lineno}: {root}"


def test_the_exceptions_still_exist() -> None:
    """An exception that no longer happens is taken off the list."""
    seen = {(i.source, i.target) for i in imports()}
    for pair, reason in TYPE_ONLY_EXCEPTIONS.items():
        assert pair in seen, f"{pair} is not imported any more ({reason}): remove the exception"


KEY_MODULE = "arboretum_worker.keys"
"""The one module that spells Redis keys (its table is checked by tests/league/test_keys.py)."""
_KEY_LITERAL = re.compile(r"(arena|rq):(?!\s)")
"""A key's text: the project's prefix or rq's, not followed by a space (``arena: <problem>``
is how the CLI starts an error line)."""


def _docstrings(tree: ast.Module) -> set[int]:
    """The ids of the string constants that are statements (docstrings, attribute docs)."""
    return {
        id(node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
    }


def key_spellings(source: str) -> list[str]:
    """Where ``source`` spells a Redis key itself instead of asking ``Keys``: a string (not a
    docstring) that starts like one, the key prefix or ``key_for`` used to make a new key, or a
    key of ``Keys`` extended by ``+`` or in an f-string (``Keys.x(...) + ":more"``)."""
    tree = ast.parse(source)
    docs = _docstrings(tree)
    found = []
    for node in ast.walk(tree):
        line = getattr(node, "lineno", 0)
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            if id(node) not in docs and _KEY_LITERAL.match(node.value):
                found.append(f"{line}: {node.value!r}")
        elif isinstance(node, ast.Attribute) and node.attr in ("PREFIX", "key_for"):
            if "Keys" in ast.unparse(node.value):
                found.append(f"{line}: {ast.unparse(node)}")
        elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            if "Keys." in ast.unparse(node.left):
                found.append(f"{line}: {ast.unparse(node)}")
        elif isinstance(node, ast.JoinedStr):
            values = node.values
            for part, after in itertools.pairwise(values):
                if (
                    isinstance(part, ast.FormattedValue)
                    and "Keys." in ast.unparse(part.value)
                    and isinstance(after, ast.Constant)
                    and str(after.value).startswith(":")
                ):
                    found.append(f"{line}: {ast.unparse(node)}")
    return found


def test_key_spellings_are_found() -> None:
    """The check finds each way a module could build a key of its own, and not an error line."""
    bad = [
        'KEY = "arena:authors"',
        "def k(m):\n    return f'arena:live:{m}'",
        'AUTHOR = Keys.PREFIX + "author:"',
        'k = Keys.key_for("x:", name)',
        'k = store.Keys.league(name) + ":extra"',
        "k = f'{Keys.match(m)}:extra'",
        'QUEUE = "rq:queue:arena"',
    ]
    for source in bad:
        assert key_spellings(source), source
    good = [
        '"""Keys: ``arena:live:{match}``."""',
        'print(f"arena: {problem}")',
        'k = Keys.live(m)\nmsg = f"waited (lock {Keys.INDEX_LOCK})"',
        'JOB_PREFIX = "arena-match-"',
    ]
    for source in good:
        assert not key_spellings(source), source


def test_no_module_but_keys_spells_a_redis_key() -> None:
    """docs/league.md and keys.py: every key is built by ``Keys``, nothing else spells one."""
    names = modules()
    assert KEY_MODULE in names
    found = []
    for name, path in names.items():
        if name != KEY_MODULE and not name.startswith("arboretum_proto"):
            found += [f"{name}:{hit}" for hit in key_spellings(path.read_text())]
    assert not found, "Redis keys spelled outside keys.py (add a helper to Keys):\n" + "\n".join(
        found
    )


MAX_MODULE_LINES = 600
MAX_FUNCTION_LINES = 100
MAX_CLASS_LINES = 400
DECLARATIVE_TABLES = {
    ("arboretum_web.openapi_schemas", "schemas"): "every response's schema of the OpenAPI "
    "document, one literal after another",
}
"""Functions exempt from the size rule, each a declarative table (docs/ARCHITECTURE.md, "Size
rule")."""


def test_the_size_rule() -> None:
    """No module of a package over 600 lines, no class over 400 and no function over 100 (the
    generated stubs and the declarative tables aside)."""
    over = []
    for name, path in modules().items():
        if name.startswith("arboretum_proto"):
            continue
        source = path.read_text()
        if source.count("\n") > MAX_MODULE_LINES:
            over.append(f"{name}: {source.count(chr(10))} lines")
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                length = (node.end_lineno or node.lineno) - node.lineno + 1
                if length > MAX_FUNCTION_LINES and (name, node.name) not in DECLARATIVE_TABLES:
                    over.append(f"{name}.{node.name}: {length} lines")
            if isinstance(node, ast.ClassDef):
                length = (node.end_lineno or node.lineno) - node.lineno + 1
                if length > MAX_CLASS_LINES:
                    over.append(f"class {name}.{node.name}: {length} lines")
    assert not over, "past the size rule (split along the nouns):\n" + "\n".join(over)


def test_the_declarative_tables_exist() -> None:
    """An exemption whose function is gone, or back under the rule, is taken off the list."""
    for (name, function), reason in DECLARATIVE_TABLES.items():
        tree = ast.parse(modules()[name].read_text())
        found = [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == function]
        assert found, f"{name}.{function} ({reason}) is gone: remove the exemption"
        length = (found[0].end_lineno or 0) - found[0].lineno + 1
        assert length > MAX_FUNCTION_LINES, f"{name}.{function} is {length} lines: no exemption"


def test_a_redis_client_is_typed_as_one() -> None:
    """A parameter ``r`` is the project's name for a Redis client: it is annotated
    ``redis.Redis`` (or ``redis.Redis | None``), never ``Any``, so that mypy checks the commands
    called on it. Where redis-py's replies are typed wider than the replies the project's
    clients get (bytes, never None for a stream's entries), the reply is the one annotated
    ``Any``, at the call."""
    loose = []
    for name, path in modules().items():
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            args = node.args
            for arg in [*args.posonlyargs, *args.args, *args.kwonlyargs]:
                if arg.arg == "r" and (
                    arg.annotation is None or "redis" not in ast.unparse(arg.annotation)
                ):
                    loose.append(f"{name}.{node.name}:{node.lineno}")
    assert not loose, "a Redis client typed loosely (r: redis.Redis):\n" + "\n".join(loose)


ARCHITECTURE = ROOT / "docs" / "ARCHITECTURE.md"
PACKAGE_FOLDERS = ["sdk/arboretum", "sdk/arboretum_sdk", "sdk/arboretum_proto"] + [
    f"{folder}/{package}" for package, folder in PACKAGES.items() if folder != "sdk"
]
"""Every package folder of the project, each with its table in docs/ARCHITECTURE.md."""


def documented_modules() -> dict[str, set[str]]:
    """The module files each package's table of docs/ARCHITECTURE.md names (the first column's
    paths, relative to the package), by the package folder its heading names."""
    found: dict[str, set[str]] = {}
    current: set[str] | None = None
    for line in ARCHITECTURE.read_text().splitlines():
        heading = re.fullmatch(r"### `([\w/]+)/`", line)
        if heading:
            current = found.setdefault(heading.group(1), set())
        elif line.startswith("## "):
            current = None
        elif current is not None and line.startswith("| `"):
            first_cell = line.split("|")[1]
            current.update(re.findall(r"`([\w/]+\.py)`", first_cell))
    return found


def test_every_module_is_named_in_the_architecture_doc() -> None:
    """docs/ARCHITECTURE.md has one line for every module file of every package, and names none
    that is gone."""
    tables = documented_modules()
    assert set(PACKAGE_FOLDERS) <= set(tables), f"packages without a table: {tables.keys()}"
    problems = []
    for folder in PACKAGE_FOLDERS:
        base = ROOT / folder
        files = {
            p.relative_to(base).as_posix()
            for p in base.rglob("*.py")
            if "__pycache__" not in p.parts
        }
        problems += [f"{folder}/{m}: not in its table" for m in sorted(files - tables[folder])]
        problems += [
            f"{folder}/{m}: in the table, not in the tree" for m in sorted(tables[folder] - files)
        ]
    assert not problems, "docs/ARCHITECTURE.md's module tables:\n" + "\n".join(problems)
