"""Where a cell launches its Triton kernels, and where each launch parameter of a launch is set.

A knob (a ``tl.constexpr`` block size, a group size, ``num_warps``, ``num_stages``) is set in one of the ways
public kernels set it: a literal in the launch (``BLOCK=1024``); a variable assigned once (``BLOCK = 1024``, in
the function or the module); an entry of a dict passed as ``**config``; a parameter of a helper that launches
(its default, or what its callers pass); ``min(4096, triton.next_power_of_2(n))`` (the cap); an entry of the
kernel's ``@triton.autotune`` configurations; a constant ``@triton.heuristics`` value; or a value computed at
run time (``calculate_settings(n)``, ``triton.next_power_of_2(n)``).

Each knob found has the literals to rewrite (its *sites*) or the reason it cannot be changed safely. What a
block size does in the kernel (:func:`roles`) says which values are safe: a block that tiles the grid needs a
grid that follows it (one that reads it, by a variable or ``META``, or spells its value, as in ``cdiv(n, 32)``);
a block that covers a whole row is never shrunk; a block a loop steps by, the group size and the launch options
take any value. :func:`parameter_only` decides, from the syntax trees alone, that a variant changes nothing but
these literals.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from kernel_lab.cells import parse

BLOCK_NAME = re.compile(r"BLOCK|TILE|SIZE|CHUNK", re.I)
#: a group of programs that share a tile row (program order, as the Triton tutorial's GROUP_SIZE_M): not a group of
#: heads, of quantized values or of tensors, which the problem sets
GROUP_NAME = re.compile(r"^GROUP(_SIZE)?_[MN]$")
EXPLICIT_BLOCK = re.compile(r"^[A-Z0-9_]*(BLOCK|TILE)[A-Z0-9_]*$")  # a block's name (VOCAB_SIZE, PAGE_SIZE: the data's)
OPTIONS = ("num_warps", "num_stages")
DEFAULTS = {"num_warps": 4, "num_stages": 3}  # Triton's, when a launch does not say
#: what a knob does: ``tile`` (the grid's programs each take one block), ``loop`` (a loop steps by it), ``row``
#: (one block covers a whole row: never shrunk), ``group`` (program order), ``option`` (num_warps, num_stages)
ROLES = ("tile", "loop", "row", "group", "option", "other")
_DEPTH = 8  # how many assignments a value is followed through


@dataclass
class Knob:
    """One launch parameter: its value as written (None: known only at run time), where it is written, and
    whether it may change (``why_not`` says why not)."""

    name: str
    value: int | None
    role: str
    sites: list[ast.expr] = field(default_factory=list)  # the nodes rewritten with a new value, together
    why_not: str = ""
    added: bool = False  # a launch option the launch does not give: added to the call
    pinned: bool = False  # set by the kernel's @triton.autotune configs: a variant pins one configuration
    moves: str = "any"  # "up": only grows (a block covering a row); "down": only shrinks (an unmasked tile)
    carriers: set[str] = field(default_factory=set)  # the variables its value flows through to the launch

    @property
    def tunable(self) -> bool:
        return not self.why_not


@dataclass
class Kernel:
    """A ``@triton.jit`` kernel of the cell, with what each of its block sizes does."""

    name: str
    node: ast.FunctionDef
    params: list[str]
    constexprs: list[str]
    roles: dict[str, str]
    loops: bool  # it loops (num_stages matters)
    dots: bool  # it multiplies tiles (tl.dot)
    strided: bool  # a grid-stride loop (tl.num_programs): any grid covers the work
    masked: set[str] = field(default_factory=set)  # the blocks it masks: they may grow past the data they cover
    autotune: ast.Call | None = None  # its @triton.autotune(...) decorator
    heuristics: ast.Call | None = None  # its @triton.heuristics(...) decorator


@dataclass
class Launch:
    """One ``kernel[grid](...)`` call in the cell, its knobs, and the grid's literals that follow them."""

    kernel: str
    call: ast.Call
    knobs: dict[str, Knob]
    grid: ast.expr  # the grid as written at the launch
    grid_sites: list[tuple[ast.Constant, str]] = field(default_factory=list)  # (literal, the knob it follows)
    loops: bool = False
    dots: bool = False
    configs: ast.expr | None = None  # an autotuned kernel's configs: replaced by the one pinned
    hooks: bool = False  # its configs may carry a pre_hook (one written out, or configs made by code): kept when pinned
    notes: list[str] = field(default_factory=list)  # what cannot be changed, and why

    @property
    def params(self) -> dict[str, int]:
        """The tunable knobs' values as written (those known before the cell runs)."""
        return {n: k.value for n, k in self.knobs.items() if k.tunable and k.value is not None}

    @property
    def line(self) -> int:
        return self.call.lineno


# --- the cell's kernels ---------------------------------------------------------------------------------


def _names(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def _calls(node: ast.AST, suffix: str) -> bool:
    return any(isinstance(n, ast.Call) and ast.unparse(n.func).endswith(suffix) for n in ast.walk(node))


def _bound(target: ast.AST) -> set[str]:
    """The names an assignment's target binds (``a``, ``a, b``; not ``d["k"]`` nor ``x.attr``)."""
    if isinstance(target, ast.Name):
        return {target.id}
    if isinstance(target, (ast.Tuple, ast.List)):
        return set().union(*(_bound(t) for t in target.elts))
    return _bound(target.value) if isinstance(target, ast.Starred) else set()


def _targets(node: ast.AST) -> set[str]:
    if isinstance(node, ast.Assign):
        return set().union(*(_bound(t) for t in node.targets))
    if isinstance(node, (ast.AugAssign, ast.AnnAssign, ast.For)):
        return _bound(node.target)
    return set()


def roles(fn: ast.FunctionDef, constexprs: list[str]) -> tuple[dict[str, str], bool, set[str]]:
    """What each constexpr does in the kernel (see :data:`ROLES`), whether the kernel strides over the grid, and
    which blocks it masks (compares an offset made from ``tl.arange`` over the block with a bound).

    Values computed from ``tl.program_id`` are followed through assignments; a block multiplied by one tiles the
    grid. A block in a ``range`` a loop walks is a loop step; one only in ``tl.arange`` covers a whole row."""
    pid: set[str] = set()

    def from_pid(node: ast.AST) -> bool:
        return _calls(node, "program_id") or bool(_names(node) & pid)

    grown = True
    while grown:
        before = len(pid)
        for node in ast.walk(fn):
            value = getattr(node, "value", None) if not isinstance(node, ast.For) else node.iter
            if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.For)) and value is not None and from_pid(value):
                pid |= _targets(node)
        grown = len(pid) > before
    loops = [n for n in ast.walk(fn) if isinstance(n, (ast.For, ast.While))]
    loop_vars = set().union(*(_names(n.target) for n in loops if isinstance(n, ast.For))) if loops else set()
    products = [n for n in ast.walk(fn) if isinstance(n, ast.BinOp) and isinstance(n.op, ast.Mult)]
    found: dict[str, str] = {}
    for name in constexprs:
        if GROUP_NAME.search(name):
            found[name] = "group"
            continue
        sides = [(n.left, n.right) for n in products] + [(n.right, n.left) for n in products]
        if any(name in _names(a) and from_pid(b) for a, b in sides):
            found[name] = "tile"
        elif any(isinstance(n, ast.For) and name in _names(n.iter) for n in loops) or any(
            name in _names(a) and _names(b) & loop_vars for a, b in sides
        ):
            found[name] = "loop"
        elif any(isinstance(n, ast.Call) and ast.unparse(n.func).endswith("arange") and name in _names(n) for n in ast.walk(fn)):
            found[name] = "row"
        else:
            found[name] = "other"
    return found, _calls(fn, "num_programs"), _masked(fn, constexprs)


def _masked(fn: ast.FunctionDef, constexprs: list[str]) -> set[str]:
    """The blocks whose offsets (made from ``tl.arange`` over them, through assignments) the kernel compares with a
    bound: a block larger than the data it covers then reads and writes nothing past it."""
    offsets: dict[str, set[str]] = {}  # variable -> the blocks its value is made from, by tl.arange
    for node in ast.walk(fn):
        if isinstance(node, ast.Assign):
            made = {
                name
                for call in ast.walk(node.value)
                if isinstance(call, ast.Call) and ast.unparse(call.func).endswith("arange")
                for name in _names(call) & set(constexprs)
            }
            made |= set().union(*(offsets.get(n, set()) for n in _names(node.value)))
            for target in _targets(node):
                offsets[target] = offsets.get(target, set()) | made
    out: set[str] = set()
    for node in ast.walk(fn):
        if isinstance(node, ast.Compare) and any(isinstance(op, (ast.Lt, ast.LtE, ast.Gt, ast.GtE)) for op in node.ops):
            for name in _names(node):
                out |= offsets.get(name, set())
            out |= {n for call in ast.walk(node) if isinstance(call, ast.Call) for n in _names(call) & set(constexprs)}
    return out


def _wrappers(tree: ast.Module) -> dict[str, list[ast.expr]]:
    """The decorators applied by calls, at the module's top level: ``f = triton.jit(f)``,
    ``f = triton.heuristics({...})(f)`` (as Unsloth writes its kernels), by the function's name."""
    out: dict[str, list[ast.expr]] = {}
    for node in tree.body:
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)):
            continue
        call = node.value
        if (
            isinstance(call, ast.Call)
            and len(call.args) == 1
            and isinstance(call.args[0], ast.Name)
            and call.args[0].id == node.targets[0].id
            and "triton" in ast.unparse(call.func)
        ):
            out.setdefault(call.args[0].id, []).append(call.func)
    return out


def kernels(tree: ast.Module) -> dict[str, Kernel]:
    """The cell's Triton kernels (``@triton.jit``, autotuned or not, decorated or wrapped by calls), by name."""
    wrapped = _wrappers(tree)
    out = {}
    for node in tree.body:
        if not isinstance(node, ast.FunctionDef):
            continue
        decorators = [*node.decorator_list, *wrapped.get(node.name, [])]
        if not any("jit" in ast.unparse(d).split("(")[0] for d in decorators):
            continue
        params = [a.arg for a in node.args.args]
        constexprs = [a.arg for a in node.args.args if a.annotation is not None and "constexpr" in ast.unparse(a.annotation)]
        found, strided, masked = roles(node, constexprs)
        autotune, heuristics = (_decorated(decorators, name) for name in ("autotune", "heuristics"))
        out[node.name] = Kernel(
            node.name,
            node,
            params,
            constexprs,
            found,
            loops=any(isinstance(n, (ast.For, ast.While)) for n in ast.walk(node)),
            dots=_calls(node, ".dot"),
            strided=strided,
            masked=masked,
            autotune=autotune,
            heuristics=heuristics,
        )
    return out


def _decorated(decorators: list[ast.expr], name: str) -> ast.Call | None:
    found = next((d for d in decorators if name in ast.unparse(d).split("(")[0]), None)
    return found if isinstance(found, ast.Call) else None


def is_block(name: str) -> bool:
    """Whether a knob is a block (or tile) size: not a group size, warps or stages."""
    return bool(BLOCK_NAME.search(name)) and not GROUP_NAME.search(name) and name not in OPTIONS


# --- where a value comes from -----------------------------------------------------------------------------


@dataclass
class Origin:
    """Where a value is written: the literals that set it and their value, or why it is not a literal."""

    sites: list[ast.expr] = field(default_factory=list)
    value: int | None = None
    why: str = ""  # not a literal: computed at run time, ...
    carriers: set[str] = field(default_factory=set)  # the variables the value flows through
    computed: ast.expr | None = None  # not a literal: the one expression that computes it (``b = next_power_of_2(n)``)
    cap: bool = False  # the literal caps a value computed at run time (``min(4096, next_power_of_2(n))``)


class Scopes:
    """The cell's module and functions: which function encloses a node, what a name is assigned there."""

    def __init__(self, tree: ast.Module) -> None:
        self.tree = tree
        self.parent: dict[ast.AST, ast.AST] = {}
        for node in ast.walk(tree):
            for child in ast.iter_child_nodes(node):
                self.parent[child] = node
        self.functions = {n.name: n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)}

    def enclosing(self, node: ast.AST) -> ast.FunctionDef | ast.Module:
        while node in self.parent:
            node = self.parent[node]
            if isinstance(node, ast.FunctionDef):
                return node
        return self.tree

    @staticmethod
    def own(scope: ast.AST) -> Iterator[ast.AST]:
        """The nodes of a scope, not those of the functions and classes it defines."""
        todo = list(ast.iter_child_nodes(scope))
        while todo:
            node = todo.pop()
            yield node
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
                todo.extend(ast.iter_child_nodes(node))

    def assignments(self, name: str, scope: ast.AST) -> list[ast.AST]:
        return [n for n in self.own(scope) if name in _targets(n)]

    def callers(self, fn: ast.FunctionDef) -> list[ast.Call]:
        return [
            n for n in ast.walk(self.tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == fn.name
        ]


def _int(node: ast.AST) -> int | None:
    value = node.value if isinstance(node, ast.Constant) else None
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def origin(expr: ast.expr, scopes: Scopes, depth: int = _DEPTH) -> Origin:
    """Where ``expr``'s value is written (see :class:`Origin`)."""
    if (number := _int(expr)) is not None:
        return Origin([expr], number)
    computed = Origin(why=f"computed at run time (`{ast.unparse(expr)}`)")
    if depth <= 0:
        return computed
    if isinstance(expr, ast.Name):
        return _named(expr, scopes, depth)
    if isinstance(expr, ast.Subscript) and isinstance(expr.value, ast.Name) and isinstance(expr.slice, ast.Constant):
        entries = _dict_entries(expr.value, scopes, depth)
        if entries is not None and str(expr.slice.value) in entries:
            return origin(entries[str(expr.slice.value)], scopes, depth - 1)
    if isinstance(expr, ast.Call) and ast.unparse(expr.func) == "min" and len(expr.args) == 2:
        caps = [a for a in expr.args if _int(a) is not None]
        if len(caps) == 1:  # min(4096, next_power_of_2(n)): the cap is the knob, and its value known when it runs
            return Origin([caps[0]], None, cap=True)
    return computed


#: calls a block size's computation may make and still be replaced by a literal: they do nothing else
PURE_CALLS = frozenset(
    {"min", "max", "int", "abs", "round", "len", "cdiv", "next_power_of_2", "ceil", "floor", "sqrt", "log2"}
    | {"element_size", "numel", "size", "stride", "dim"}
)


def _pure(expr: ast.expr) -> bool:
    """Whether ``expr`` only computes a value (arithmetic, sizes, ``triton.next_power_of_2``): replacing it by a
    literal loses nothing else (``config.pop("BLOCK_K")`` also takes the entry out of ``config``)."""
    calls = [n for n in ast.walk(expr) if isinstance(n, ast.Call)]
    return all(ast.unparse(c.func).rsplit(".", 1)[-1] in PURE_CALLS for c in calls)


def _plain(node: ast.AST) -> ast.expr | None:
    """The value of ``name = value`` (or ``name: T = value``) with one name as its target, else None."""
    if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
        return node.value
    if isinstance(node, ast.AnnAssign) and node.value is not None and isinstance(node.target, ast.Name):
        return node.value
    return None


def _reaching(found: list[ast.AST], use: ast.AST, scopes: Scopes) -> ast.AST | None:
    """The assignment whose value ``use`` reads: the only one, or the last before it of assignments that follow
    each other in one block (``b = min(...); b = max(b, 128)``); None when branches decide (``if``/``else``)."""
    if len(found) == 1:
        return found[0]
    parents = {id(scopes.parent.get(n)) for n in found}
    line = getattr(use, "lineno", 0)
    before = [n for n in found if getattr(n, "lineno", 0) < line]
    return max(before, key=lambda n: n.lineno) if len(parents) == 1 and before else None  # type: ignore[attr-defined]


def _named(name: ast.Name, scopes: Scopes, depth: int) -> Origin:
    scope = scopes.enclosing(name)
    while True:
        found = [n for n in scopes.assignments(name.id, scope) if not (isinstance(n, ast.AnnAssign) and n.value is None)]
        if found:
            break
        if isinstance(scope, ast.FunctionDef) and name.id in [a.arg for a in scope.args.args + scope.args.kwonlyargs]:
            return _parameter(scope, name.id, scopes, depth)
        if isinstance(scope, ast.Module):
            return Origin(why=f"`{name.id}` is not assigned in the cell")
        scope = scopes.enclosing(scope)
    node = _reaching(found, name, scopes)
    if node is None:
        literals = [v for n in found if (v := _plain(n)) is not None and _int(v) is not None]
        if len(literals) == len(found):  # a literal on each branch (one per device): all of them set the block
            values = {_int(v) for v in literals}
            return Origin(literals, values.pop() if len(values) == 1 else None, carriers={name.id})
        return Origin(why=f"`{name.id}` is assigned in {len(found)} places", carriers={name.id})
    if (value := _plain(node)) is not None:
        got = origin(value, scopes, depth - 1)
        got.carriers.add(name.id)
        if not got.sites and got.computed is None and _pure(value):
            got.computed = value
        return got
    if isinstance(node, ast.Assign) and len(node.targets) == 1:
        target = node.targets[0]
        if isinstance(target, ast.Tuple) and isinstance(node.value, ast.Tuple) and len(target.elts) == len(node.value.elts):
            for t, v in zip(target.elts, node.value.elts):
                if isinstance(t, ast.Name) and t.id == name.id:
                    got = origin(v, scopes, depth - 1)
                    got.carriers.add(name.id)
                    return got
        return Origin(why=f"computed at run time (`{ast.unparse(node.value)}`)", carriers={name.id})
    return Origin(why=f"`{name.id}` is computed at run time", carriers={name.id})


def _parameter(fn: ast.FunctionDef, name: str, scopes: Scopes, depth: int) -> Origin:
    """A helper's parameter: what every caller passes (the default where a caller passes nothing)."""
    args = fn.args.args + fn.args.kwonlyargs
    index = [a.arg for a in args].index(name)
    defaults = dict(zip([a.arg for a in fn.args.args][::-1], fn.args.defaults[::-1]))
    defaults |= {a.arg: d for a, d in zip(fn.args.kwonlyargs, fn.args.kw_defaults) if d is not None}
    passed: list[ast.expr] = []
    for call in scopes.callers(fn):
        given = next((k.value for k in call.keywords if k.arg == name), None)
        if given is None and index < len(fn.args.args) and index < len(call.args):
            given = call.args[index]
        if given is None and (any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords)):
            return Origin(why=f"passed to `{fn.name}` through *args or **kwargs")
        passed.append(given if given is not None else defaults.get(name, ast.Constant(None)))
    if not passed:
        passed = [defaults[name]] if name in defaults else []
    if not passed:
        return Origin(why=f"a parameter of `{fn.name}`, which the cell never calls")
    found = [origin(p, scopes, depth - 1) for p in passed]
    values = {o.value for o in found}
    if any(o.why for o in found) or len(values) != 1:
        why = next((o.why for o in found if o.why), f"the callers of `{fn.name}` pass different values")
        return Origin(why=why, carriers={name})
    return Origin(
        [s for o in found for s in o.sites], found[0].value, carriers={name} | set().union(*(o.carriers for o in found))
    )


def _dict_entries(name: ast.Name, scopes: Scopes, depth: int) -> dict[str, ast.expr] | None:
    """The entries of a dict literal (``{"BLOCK": 64}`` or ``dict(BLOCK=64)``) a name is assigned, by key."""
    scope = scopes.enclosing(name)
    while not (found := scopes.assignments(name.id, scope)) and not isinstance(scope, ast.Module):
        scope = scopes.enclosing(scope)
    if len(found) != 1 or not isinstance(found[0], ast.Assign):
        return None
    value = found[0].value
    if isinstance(value, ast.Name) and depth > 0:
        return _dict_entries(value, scopes, depth - 1)
    if isinstance(value, ast.Dict) and all(isinstance(k, ast.Constant) for k in value.keys):
        entries = {str(k.value): v for k, v in zip(value.keys, value.values) if isinstance(k, ast.Constant)}
    elif isinstance(value, ast.Call) and ast.unparse(value.func) == "dict" and not value.args:
        entries = {k.arg: k.value for k in value.keywords if k.arg}
    else:
        return None
    for node in scopes.own(scope):  # d["BLOCK_ROW"] = BLOCK_ROW, where the dict is made
        for target in node.targets if isinstance(node, ast.Assign) else ():
            if isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name) and target.value.id == name.id:
                if not isinstance(target.slice, ast.Constant):
                    return None
                assert isinstance(node, ast.Assign)
                entries[str(target.slice.value)] = node.value
    return entries


def _assigned(name: ast.Name, scopes: Scopes) -> ast.expr | None:
    """The value of a name's one assignment in its scope or an enclosing one, whatever its targets
    (``div, mod = divmod(n, BLOCK)``: both read ``BLOCK``)."""
    scope = scopes.enclosing(name)
    while not (found := scopes.assignments(name.id, scope)) and not isinstance(scope, ast.Module):
        scope = scopes.enclosing(scope)
    node = _reaching(found, name, scopes) if found else None
    return getattr(node, "value", None) if isinstance(node, (ast.Assign, ast.AnnAssign)) else None


def _value_of(expr: ast.expr, scopes: Scopes, depth: int = _DEPTH) -> ast.expr:
    """The expression a name stands for (its one assignment), followed through names."""
    while isinstance(expr, ast.Name) and depth > 0:
        scope = scopes.enclosing(expr)
        while not (found := scopes.assignments(expr.id, scope)) and not isinstance(scope, ast.Module):
            scope = scopes.enclosing(scope)
        if len(found) != 1 or not isinstance(found[0], ast.Assign) or not isinstance(found[0].targets[0], ast.Name):
            return expr
        expr, depth = found[0].value, depth - 1
    return expr


def _reach(expr: ast.expr, scopes: Scopes, depth: int = _DEPTH) -> tuple[set[str], list[tuple[ast.Constant, str]]]:
    """The names an expression reads, through the names' single assignments, and the integer literals on the way,
    each with the text of the call it is an argument of (``cdiv(M, 32)``: it names the side it sizes)."""
    names: set[str] = set()
    literals: list[tuple[ast.Constant, str]] = []
    todo = [(expr, depth)]
    while todo:
        node, left = todo.pop()
        context = {
            id(leaf): call for call in ast.walk(node) if isinstance(call, ast.Call) for a in call.args for leaf in ast.walk(a)
        }
        for leaf in ast.walk(node):
            if isinstance(leaf, ast.Name) and leaf.id not in names:
                names.add(leaf.id)
                value = _assigned(leaf, scopes)
                if value is not None and left > 0:
                    todo.append((value, left - 1))
            elif isinstance(leaf, ast.Constant) and _int(leaf) is not None:
                call = context.get(id(leaf))
                literals.append((leaf, " ".join(ast.unparse(a) for a in call.args) if call else ""))
    return names, literals


# --- the launches ---------------------------------------------------------------------------------------------------


TILE_DIM = re.compile(r"(^|_)([MNK])$|_SIZE_([MNK])$", re.I)  # BLOCK_M, BLOCK_SIZE_K, TILE_N: a matrix tile's side


def side(name: str) -> str | None:
    """Which side of a matrix tile a block size is (M, N or K), if it is one."""
    m = TILE_DIM.search(name) if is_block(name) else None
    return (m.group(2) or m.group(3)).upper() if m else None


#: why a launch option is left as written where Triton's CPU interpreter times the variants
INTERPRETED = "Triton's CPU interpreter runs every value alike, so no time could tell them apart (a GPU tries them)"


def interpreted(launch: Launch) -> Launch:
    """``launch`` with its launch options (``num_warps``, ``num_stages``) left as written, said in its notes: the CPU
    interpreter runs every value alike, so no choice between them could be measured."""
    held = [k for name, k in launch.knobs.items() if name in OPTIONS and k.tunable]
    for knob in held:
        knob.why_not = INTERPRETED
    if held:
        launch.notes.append(f"{' and '.join(k.name for k in held)} left as written: {INTERPRETED}")
    return launch


def launches(source: str) -> list[Launch]:
    """The launches of the cell's own Triton kernels, with their knobs (see the module docstring)."""
    return _launches(parse(source))


def _launches(tree: ast.Module) -> list[Launch]:
    scopes = Scopes(tree)
    found = kernels(tree)
    out = []
    for node in ast.walk(tree):
        func = node.func if isinstance(node, ast.Call) else None
        if isinstance(func, ast.Subscript) and isinstance(func.value, ast.Name) and func.value.id in found:
            assert isinstance(node, ast.Call)
            out.append(_launch(node, found[func.value.id], scopes))
    return out


def _given(call: ast.Call, kernel: Kernel, scopes: Scopes, hidden: list[str]) -> dict[str, ast.expr]:
    """What the launch passes for each of the kernel's parameters (by position, by keyword, by ``**dict``); the
    ``**dicts`` it cannot read go to ``hidden``."""
    given: dict[str, ast.expr] = {}
    if not any(isinstance(a, ast.Starred) for a in call.args):
        given |= dict(zip(kernel.params, call.args))
    for kw in call.keywords:
        if kw.arg is not None:
            given[kw.arg] = kw.value
        elif isinstance(kw.value, ast.Name) and (entries := _dict_entries(kw.value, scopes, _DEPTH)) is not None:
            given |= entries
        else:
            hidden.append(ast.unparse(kw.value))
    return given


def _configs(kernel: Kernel, scopes: Scopes) -> tuple[ast.expr | None, list[dict[str, ast.expr]], bool]:
    """An autotuned kernel's configs (the node to replace), when written out each one's values by knob, and whether
    they may carry a ``pre_hook`` (one is written out, or code makes them: FlagGems' TMA matmuls set their tensor
    descriptors' block shapes in one)."""
    if kernel.autotune is None:
        return None, [], False
    node = next((k.value for k in kernel.autotune.keywords if k.arg == "configs"), None)
    node = node if node is not None else (kernel.autotune.args[0] if kernel.autotune.args else None)
    if node is None:
        return None, [], False
    listed = _value_of(node, scopes)
    if not isinstance(listed, ast.List):
        return node, [], True
    configs, hooks = [], False
    for element in listed.elts:
        if not (isinstance(element, ast.Call) and element.args and isinstance(element.args[0], ast.Dict)):
            return node, [], True
        values = {str(k.value): v for k, v in zip(element.args[0].keys, element.args[0].values) if isinstance(k, ast.Constant)}
        configs.append(values | {k.arg: k.value for k in element.keywords if k.arg in OPTIONS})
        hooks |= any(k.arg == "pre_hook" for k in element.keywords)
    return node, configs, hooks


def _heuristic(kernel: Kernel, name: str) -> ast.expr | None:
    """The lambda ``@triton.heuristics`` sets a knob with, if it does."""
    if kernel.heuristics is None or not kernel.heuristics.args or not isinstance(kernel.heuristics.args[0], ast.Dict):
        return None
    table = kernel.heuristics.args[0]
    return next((v for k, v in zip(table.keys, table.values) if isinstance(k, ast.Constant) and k.value == name), None)


ROLE_WHY = {
    "tile": "each program takes one block, and the grid is computed with it",
    "row": "one block must cover a whole row",
    "other": "what it does in the kernel is not a tile, a loop step or a row",
}


def _read_elsewhere(names: set[str], call: ast.Call, scopes: Scopes) -> int | None:
    """The line where the launch's scope reads one of ``names`` outside the launch itself, if it does."""
    inside = {id(n) for n in ast.walk(call)}
    scope = scopes.enclosing(call)
    for node in scopes.own(scope):
        if isinstance(node, ast.Name) and node.id in names and isinstance(node.ctx, ast.Load) and id(node) not in inside:
            return node.lineno
    return None


def _knob(
    name: str,
    kernel: Kernel,
    given: dict[str, ast.expr],
    hidden: list[str],
    configs: list | None,
    scopes: Scopes,
    call: ast.Call,
) -> Knob | None:
    """One knob of a launch, with its sites or why it cannot change; None when the launch does not set it."""
    role = "option" if name in OPTIONS else kernel.roles.get(name, "other")
    if name not in given and hidden and configs is None:
        return Knob(name, None, role, why_not=f"it may be set by **{hidden[0]}, which Kernel Lab cannot read")
    if name in given:
        passed = given[name]
        found = origin(passed, scopes)
        carriers = found.carriers | ({passed.id} if isinstance(passed, ast.Name) else set())
        if found.sites and role == "other":
            return Knob(name, found.value, role, why_not=ROLE_WHY["other"], carriers=carriers)
        if found.sites and role == "row" and name not in kernel.masked:
            return Knob(name, found.value, role, why_not="one block covers a whole row, unmasked", carriers=carriers)
        if found.sites:
            return Knob(name, found.value, role, found.sites, carriers=carriers, moves="down" if found.cap else "any")
        if found.computed is not None and role in ("tile", "loop", "group"):
            # pinned where it is computed: whatever else reads it (the grid, a descriptor's block shape) follows
            return Knob(name, None, role, [found.computed], carriers=carriers)
        if role not in ("option", "loop", "group"):
            return Knob(name, None, role, why_not=f"{found.why}, and {ROLE_WHY[role]}", carriers=carriers)
        line = _read_elsewhere(carriers, call, scopes) if role != "option" else None
        if line is not None:  # a descriptor's block shape, a grid: they must change with it
            return Knob(name, None, role, why_not=f"{found.why}, and read again at line {line}", carriers=carriers)
        return Knob(name, None, role, [passed], carriers=carriers)  # any value is right: the launch's own expression
    if configs is not None and (not configs or any(name in c for c in configs) or name in OPTIONS):
        first = _int(configs[0].get(name, ast.Constant(None))) if configs else None
        return Knob(name, first if first is not None or not configs else DEFAULTS.get(name), role, pinned=True)
    if (rule := _heuristic(kernel, name)) is not None:
        body = rule.body if isinstance(rule, ast.Lambda) else rule
        if _int(body) is not None and role != "other":
            return Knob(name, _int(body), role, [body])
        return Knob(name, None, role, why_not=f"set by @triton.heuristics from the arguments (`{ast.unparse(body)}`)")
    default = next((d for a, d in zip(kernel.node.args.args[::-1], kernel.node.args.defaults[::-1]) if a.arg == name), None)
    if default is not None and _int(default) is not None and role != "other":
        return Knob(name, _int(default), role, [default])
    if name in OPTIONS:
        return Knob(name, DEFAULTS[name], role, added=True)
    return None


def _launch(call: ast.Call, kernel: Kernel, scopes: Scopes) -> Launch:
    notes: list[str] = []
    hidden: list[str] = []
    given = _given(call, kernel, scopes, hidden)
    node, configs, hooks = _configs(kernel, scopes)
    assert isinstance(call.func, ast.Subscript)
    launch = Launch(
        kernel.name, call, {}, call.func.slice, loops=kernel.loops, dots=kernel.dots, configs=node, hooks=hooks, notes=notes
    )
    wanted = [n for n in kernel.constexprs if is_block(n) or GROUP_NAME.search(n)] + list(OPTIONS)
    for name in wanted:  # configs written out are read here; computed ones are pinned from what autotune chose
        if kernel.roles.get(name) == "other" and not EXPLICIT_BLOCK.search(name):
            continue  # a size of the data (VOCAB_SIZE), not of a block
        knob = _knob(name, kernel, given, hidden, configs if node is not None else None, scopes, call)
        if knob is not None:
            if knob.role == "row" or (knob.role == "tile" and name not in kernel.masked):
                knob.moves = "up" if knob.role == "row" else "down"
            _tie(knob, launch.knobs.values())
            launch.knobs[name] = knob
    _follow_grid(launch, kernel, given, scopes)
    for knob in launch.knobs.values():
        if knob.why_not:
            notes.append(f"{knob.name} cannot change: {knob.why_not}")
    return launch


def _tie(knob: Knob, earlier: Iterable[Knob]) -> None:
    """A knob written at another knob's sites (``BLOCK_M=BLOCK, BLOCK_N=BLOCK``) changes with it, not alone."""
    mine = {id(s) for s in knob.sites}
    leader = next((k for k in earlier if mine & {id(s) for s in k.sites}), None)
    if leader is not None:
        knob.sites, knob.why_not = [], f"set with {leader.name} (the same value)"


def _follow_grid(launch: Launch, kernel: Kernel, given: dict[str, ast.expr], scopes: Scopes) -> None:
    """Tie each tiling block size to the grid: the grid reads it (its variable, ``META``) or spells its value (its
    literals follow it); else the block cannot change. A kernel that strides over the grid needs neither."""
    if kernel.strided:
        return
    grid = _value_of(launch.grid, scopes)
    meta = grid.args.args[0].arg if isinstance(grid, ast.Lambda) and grid.args.args else None
    names, literals = _reach(grid.body if isinstance(grid, ast.Lambda) else grid, scopes)
    tiles = [k for k in launch.knobs.values() if k.role == "tile" and k.tunable and not k.pinned]
    own = {id(s) for k in launch.knobs.values() for s in k.sites}
    taken: set[str] = set()
    for node, text in literals:
        if id(node) in own:
            continue
        same = [k for k in tiles if k.value == node.value and not _reads(grid, meta, k, names, scopes)]
        named = [k for k in same if (s := side(k.name)) and re.search(rf"\b{s}\b", text, re.I) and k.name not in taken]
        free = named or [k for k in same if k.name not in taken] or same
        if free:
            launch.grid_sites.append((node, free[0].name))
            taken.add(free[0].name)
    for knob in [k for k in launch.knobs.values() if k.role == "tile" and k.tunable]:
        if knob.name not in taken and not _reads(grid, meta, knob, names, scopes):
            knob.why_not = (
                f"the grid (`{ast.unparse(grid)}`, line {getattr(grid, 'lineno', launch.line)}) does not follow it: a"
                " smaller block would leave work undone"
            )


def _reads(grid: ast.expr, meta: str | None, knob: Knob, names: set[str], scopes: Scopes) -> bool:
    """Whether the grid reads a knob's value: ``META["BLOCK"]``, a variable the value flows through, or an
    expression whose value comes from the knob's own literals (``CONFIG["BLOCK"]``)."""
    if meta is not None and any(
        isinstance(n, ast.Subscript) and ast.unparse(n.value) == meta and ast.unparse(n.slice).strip("'\"") == knob.name
        for n in ast.walk(grid)
    ):
        return True
    if knob.carriers & names:
        return True
    sites = {id(s) for s in knob.sites}
    return any(
        {id(s) for s in origin(n, scopes).sites} & sites for n in ast.walk(grid) if isinstance(n, (ast.Name, ast.Subscript))
    )


# --- variants -------------------------------------------------------------------------------------------------------


def _offset(lines: list[str], line: int, col: int) -> int:
    """The character offset of an AST position (``col`` counts UTF-8 bytes)."""
    text = lines[line - 1] if line <= len(lines) else ""
    return sum(len(t) for t in lines[: line - 1]) + len(text.encode()[:col].decode(errors="ignore"))


def _span(lines: list[str], node: ast.AST) -> tuple[int, int]:
    start = _offset(lines, node.lineno, node.col_offset)  # type: ignore[attr-defined]
    return start, _offset(lines, node.end_lineno or node.lineno, node.end_col_offset or 0)  # type: ignore[attr-defined]


def pinned(launch: Launch, config: dict[str, int], configs_text: str) -> str:
    """An autotuned kernel's configs, pinned to one configuration (what a variant puts in their place); where they may
    carry a pre_hook, it is the first original configuration's (``configs_text``: how the cell writes them)."""
    blocks = {n: v for n, v in config.items() if n not in OPTIONS and launch.knobs[n].pinned}
    options = "".join(f", {n}={config[n]}" for n in OPTIONS if n in config and launch.knobs[n].pinned)
    hook = f", pre_hook=({configs_text})[0].pre_hook" if launch.hooks else ""
    return f"[triton.Config({blocks!r}{options}{hook})]"


def apply(source: str, launch: Launch, config: dict[str, int]) -> str:
    """The cell with ``launch`` using ``config`` (knob -> value; the knobs' current values where it says nothing):
    each knob's sites rewritten, the grid's literals following their block sizes, an autotuned kernel's configs
    pinned to the one configuration, launch options the launch does not give added to it."""
    lines = source.splitlines(keepends=True)
    edits: list[tuple[int, int, str]] = []
    for name, value in config.items():
        knob = launch.knobs[name]
        if knob.pinned:
            continue
        if knob.added:  # after the call's last argument (a trailing comma and comments may follow it)
            given: list[ast.expr | ast.keyword] = [*launch.call.args, *launch.call.keywords]
            last = max(given, key=lambda a: (a.end_lineno or 0, a.end_col_offset or 0), default=None)
            end = _span(lines, last)[1] if last is not None else _span(lines, launch.call)[1] - 1
            edits.append((end, end, f"{', ' if last is not None else ''}{name}={value}"))
        edits += [(*_span(lines, site), str(value)) for site in knob.sites]
    edits += [(*_span(lines, node), str(config[name])) for node, name in launch.grid_sites if name in config]
    if launch.configs is not None:
        full = {n: v for n, k in launch.knobs.items() if k.pinned and (v := config.get(n, k.value)) is not None}
        if any(launch.knobs[n].pinned for n in config):
            start, end = _span(lines, launch.configs)
            edits.append((start, end, pinned(launch, full, source[start:end])))
    text = source
    for start, end, new in sorted(set(edits), reverse=True):
        text = text[:start] + new + text[end:]
    return text


def _pinned_form(node: ast.AST, original: ast.AST) -> bool:
    """Whether ``node`` is a list of ``triton.Config({...int literals}, num_warps=int, num_stages=int)``, with at
    most the ``pre_hook`` of the ``original`` configs' first (:func:`pinned`)."""
    if not isinstance(node, ast.List) or not node.elts:
        return False
    for c in node.elts:
        if not (isinstance(c, ast.Call) and ast.unparse(c.func) in ("triton.Config", "Config") and len(c.args) == 1):
            return False
        table = c.args[0]
        if not isinstance(table, ast.Dict) or not all(
            isinstance(k, ast.Constant) and isinstance(k.value, str) for k in table.keys
        ):
            return False
        if any(_int(v) is None for v in table.values):
            return False
        if not all((k.arg in OPTIONS and _int(k.value) is not None) or _own_hook(k, original) for k in c.keywords):
            return False
    return True


def _own_hook(keyword: ast.keyword, original: ast.AST) -> bool:
    """Whether ``keyword`` is ``pre_hook=(<the original configs>)[0].pre_hook``: the cell's own hook, kept."""
    v = keyword.value
    return (
        keyword.arg == "pre_hook"
        and isinstance(v, ast.Attribute)
        and v.attr == "pre_hook"
        and isinstance(v.value, ast.Subscript)
        and _int(v.value.slice) == 0
        and ast.dump(v.value.value) == ast.dump(original)
    )


def parameter_only(original: str, variant: str) -> bool:
    """Whether ``variant`` differs from ``original`` only in the values of the knobs of its own Triton kernels'
    launches: each site an integer literal, an autotuned kernel's configs one written-out configuration, and no
    launch option added but an integer literal. Decided from the syntax trees, before any of it runs."""
    try:
        a, b = parse(original), parse(variant)
    except SyntaxError:
        return False
    found = _launches(a)
    sites = {id(s) for launch in found for knob in launch.knobs.values() if knob.tunable for s in knob.sites}
    sites |= {id(node) for launch in found for node, _ in launch.grid_sites}
    configs = {id(launch.configs) for launch in found if launch.configs is not None}
    adds = {id(launch.call): {n for n, k in launch.knobs.items() if k.added} for launch in found}
    return _same(a, b, sites, configs, adds)


def _same(x: ast.AST, y: ast.AST, sites: set[int], configs: set[int], adds: dict[int, set[str]]) -> bool:
    """Whether ``y`` is ``x`` but at its sites (an integer literal there, or the site as it was) and configs."""
    if id(x) in sites and _int(y) is not None:
        return True
    if id(x) in configs and _pinned_form(y, x):
        return True
    if type(x) is not type(y):
        return False
    for name, mine in ast.iter_fields(x):
        theirs = getattr(y, name, None)
        if isinstance(mine, list) and isinstance(theirs, list):
            if name == "keywords" and id(x) in adds:
                extra = theirs[len(mine) :]
                if any(k.arg not in adds[id(x)] or _int(k.value) is None for k in extra):
                    return False
                if len({k.arg for k in extra}) != len(extra):
                    return False
                theirs = theirs[: len(mine)]
            if len(mine) != len(theirs) or not all(_same(m, t, sites, configs, adds) for m, t in zip(mine, theirs)):
                return False
        elif isinstance(mine, ast.AST):
            if not isinstance(theirs, ast.AST) or not _same(mine, theirs, sites, configs, adds):
                return False
        elif mine != theirs:
            return False
    return True


def describe(launch: Launch) -> str:
    """One line: the launch, the knobs the search may change, and those it may not (with why)."""
    tunable = [n for n, k in launch.knobs.items() if k.tunable]
    said = f"{launch.kernel} (line {launch.line}): tunes {', '.join(tunable) or 'nothing'}"
    if launch.configs is not None:
        said += " (autotuned: a variant pins one configuration)"
    return "; ".join([said, *launch.notes])
