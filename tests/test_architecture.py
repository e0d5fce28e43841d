"""The architecture, read from the source: the layers, and no import cycle.

Every import statement of every first-party module is read with ``ast`` (deferred imports
inside functions included; imports under ``if TYPE_CHECKING:`` left out, since they never run).

Layers (ARCHITECTURE.md draws them): ``common`` and ``core`` are the bottom and import neither
the daemon nor any client; the daemon imports no client (but its HTTP door, a client of its own
socket, imports the client library and the integrations); the client library (the modules of
``client/`` itself) imports neither the CLI nor the integrations nor the daemon; the
integrations do not import the CLI; ``ui`` imports neither the daemon nor the CLI (it reads the
journal and the registry through ``Client``).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PKG = "maestro_memory"
FOLDERS = ("core", "common", "daemon", "client", "ui")

# (package prefix, what its modules must not import); the most specific prefix applies.
LAYERS: dict[str, tuple[str, ...]] = {
    "common": ("daemon", "client", "ui"),
    "core": ("daemon", "client", "ui"),
    "daemon": ("client", "ui"),
    # The loopback HTTP door is a client of the daemon's own socket, run in its process: it
    # answers with the MCP server and the hook runtime, so both doors give the same answers.
    "daemon.http_door": ("ui", "client.cli"),
    "client": ("daemon", "ui", "client.cli", "client.integrations"),
    "client.integrations": ("daemon", "ui", "client.cli"),
    "client.cli": ("daemon",),
    "ui": ("daemon", "client.cli"),
}


def modules() -> dict[str, tuple[Path, bool]]:
    """``{dotted module: (file, is a package)}`` for every first-party module."""
    out: dict[str, tuple[Path, bool]] = {}
    for folder in FOLDERS:
        for path in sorted((REPO / folder).rglob("*.py")):
            parts = list(path.relative_to(REPO).with_suffix("").parts)
            is_pkg = parts[-1] == "__init__"
            out[".".join([PKG, *(parts[:-1] if is_pkg else parts)])] = (path, is_pkg)
    return out


def _type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(tree: ast.AST) -> Iterator[ast.Import | ast.ImportFrom]:
    stack: list[ast.AST] = [tree]
    while stack:
        for child in ast.iter_child_nodes(stack.pop()):
            if isinstance(child, ast.If) and _type_checking(child):
                stack.extend(child.orelse)  # only the else branch ever runs
            elif isinstance(child, ast.Import | ast.ImportFrom):
                yield child
            else:
                stack.append(child)


def import_graph() -> dict[str, set[str]]:
    """``{module: {first-party modules importing it runs}}``.

    ``from pkg import name`` counts as importing ``pkg.name`` when that is a module, else
    ``pkg``; importing ``a.b.c`` also runs ``a/__init__`` and ``a/b/__init__`` (the importer's
    own packages aside: they are already running), so those count too.
    """
    mods = modules()
    graph: dict[str, set[str]] = {}
    for name, (path, is_pkg) in mods.items():
        package = name.split(".") if is_pkg else name.split(".")[:-1]
        edges: set[str] = set()
        for node in _imports(ast.parse(path.read_text(encoding="utf-8"))):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            else:
                base = ".".join(package[: len(package) - node.level + 1]) if node.level else ""
                module = ".".join(x for x in (base, node.module or "") if x)
                for alias in node.names:
                    sub = f"{module}.{alias.name}"
                    targets.append(sub if sub in mods else module)
            for target in targets:
                while target not in mods and "." in target:
                    target = target.rsplit(".", 1)[0]
                if target not in mods or target == name:
                    continue
                edges.add(target)
                parts = target.split(".")
                for k in range(2, len(parts)):
                    ancestor = ".".join(parts[:k])
                    if ancestor in mods and not name.startswith(ancestor + "."):
                        edges.add(ancestor)
        graph[name] = edges - {name}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work: list[tuple[str, Iterator[str]]] = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component: list[str] = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def layer_of(module: str) -> str:
    rel = module.removeprefix(PKG + ".")
    best = max((p for p in LAYERS if rel == p or rel.startswith(p + ".")), key=len, default="")
    if best == "client" and rel.count(".") > 1:
        # a subpackage of client/ without a rule of its own: the table must name it
        return ""
    return best


def _within(module: str, prefix: str) -> bool:
    full = f"{PKG}.{prefix}"
    return module == full or module.startswith(full + ".")


def test_the_scanner_sees_relative_deferred_and_package_imports() -> None:
    graph = import_graph()
    assert "maestro_memory.common.protocol" in graph["maestro_memory.daemon.writer"]
    # deferred (inside a function) and relative: the CLI builds its parser lazily
    assert "maestro_memory.client.cli.parser" in graph["maestro_memory.client.cli.main"]
    # importing a module of a package runs the package's __init__
    assert "maestro_memory.client" in graph["maestro_memory.ui.app"]


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_every_module_is_in_a_layer() -> None:
    assert [m for m in modules() if not layer_of(m)] == []


def test_no_layer_imports_what_it_must_not() -> None:
    bad = {}
    for module, imported in import_graph().items():
        forbidden = LAYERS[layer_of(module)]
        hits = sorted(i for i in imported if any(_within(i, f) for f in forbidden))
        if hits:
            bad[module] = hits
    assert bad == {}


# The modules of common/ that hold names only (standard library imports, no logic that loads
# anything): the core may import these and no other part of common/, so the rules never depend
# on the protocol, the paths or the daemon's state files.
NAMES_ONLY = (
    "common.agents",
    "common.atomic",
    "common.errors",
    "common.hidden",
    "common.hookio",
    "common.layout",
    "common.limits",
)


def test_the_core_imports_only_the_names_only_modules_of_common() -> None:
    graph = import_graph()
    used = {
        i
        for module, imported in graph.items()
        if _within(module, "core")
        for i in imported
        if _within(i, "common")
    }
    allowed = {f"{PKG}.common"} | {f"{PKG}.{m}" for m in NAMES_ONLY}
    assert used - allowed == set()
    assert f"{PKG}.common.agents" in used  # the agent tool names: core/importing.py, view.py
    for m in NAMES_ONLY:
        assert graph[f"{PKG}.{m}"] <= {f"{PKG}.common"}, f"{m} imports first-party modules"


def test_no_import_cycle_between_first_party_modules() -> None:
    assert cycles(import_graph()) == []


# -- one home for each small fact ---------------------------------------------------------------
AGENT_NAMES = {"claude", "codex", "gemini"}


def _constants(path: Path) -> Iterator[ast.AST]:
    yield from ast.walk(ast.parse(path.read_text(encoding="utf-8")))


def _where(predicate: object) -> set[str]:
    assert callable(predicate)
    found: set[str] = set()
    for path, _ in modules().values():
        if any(predicate(node) for node in _constants(path)):
            found.add(path.relative_to(REPO).as_posix())
    return found


def _is_agent_list(node: ast.AST) -> bool:
    if not isinstance(node, ast.Tuple | ast.List | ast.Set) or len(node.elts) != 3:
        return False
    values = {e.value for e in node.elts if isinstance(e, ast.Constant)}
    return values == AGENT_NAMES


def test_the_agent_tool_names_are_listed_in_one_module() -> None:
    assert _where(_is_agent_list) == {"common/agents.py"}


def test_the_program_name_is_assigned_in_one_module() -> None:
    def names_the_program(node: ast.AST) -> bool:
        return (
            isinstance(node, ast.Assign | ast.AnnAssign)
            and isinstance(node.value, ast.Constant)
            and node.value.value == "maestroctl"
        )

    assert _where(names_the_program) == {"common/agents.py"}


def test_the_maestro_folder_name_is_typed_in_one_module() -> None:
    def is_maestro(node: ast.AST) -> bool:
        return isinstance(node, ast.Constant) and node.value in (".maestro", ".maestro/memory")

    assert _where(is_maestro) == {"common/layout.py"}


def test_the_exit_codes_and_the_program_name_live_in_one_module() -> None:
    def defines(node: ast.AST) -> bool:
        return isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id in ("PROG", "EXIT_USAGE", "EXIT_UNAVAILABLE")
            for t in node.targets
        )

    assert _where(defines) == {"client/cli/exits.py"}


def test_the_state_file_readers_live_in_one_module() -> None:
    def defines(node: ast.AST) -> bool:
        return isinstance(node, ast.FunctionDef) and node.name in (
            "journal_name",
            "read_journal",
            "read_registry",
        )

    assert _where(defines) == {"common/statefiles.py"}


def test_config_toml_is_parsed_by_one_reader() -> None:
    def parses_toml(node: ast.AST) -> bool:
        return (
            isinstance(node, ast.Attribute)
            and node.attr == "loads"
            and isinstance(node.value, ast.Name)
            and node.value.id == "tomllib"
        )

    # Codex's own config.toml is another program's file, edited by its integration.
    assert _where(parses_toml) - {"client/integrations/codex_settings.py"} == {"common/settings.py"}


def test_forget_turns_a_match_into_ids_in_one_place() -> None:
    def ids_of_matches(node: ast.AST) -> bool:
        """``[e.id for e in <x>.matching(...)]``: a text match turned into entry ids."""
        if not isinstance(node, ast.ListComp | ast.SetComp | ast.GeneratorExp):
            return False
        gen = node.generators[0].iter
        return (
            isinstance(node.elt, ast.Attribute)
            and node.elt.attr == "id"
            and isinstance(gen, ast.Call)
            and isinstance(gen.func, ast.Attribute)
            and gen.func.attr == "matching"
        )

    assert _where(ids_of_matches) == {"common/ops.py"}
