"""Reading YAML files, the bottom layer of the scenario loader: strict (duplicate keys and bad
bytes refused), fast (libyaml's parser), every mapping ``Located`` (its file and line, for
errors about it), and safe (nesting and alias expansion bounded), each error one line naming
the file, the line and column, and what is accepted.

This module imports nothing of lfsim but ``errors``.
"""

from __future__ import annotations

import contextlib
import gc
import re
from pathlib import Path
from typing import Any

import yaml
from yaml.nodes import MappingNode, SequenceNode

from .errors import ScenarioError

MAX_DEPTH = 64
MAX_VALUES = 1_000_000
# An alias may repeat what a file wrote (a block used twice); more than this many times the
# values written is a bomb (10 levels of 10 aliases: 10^10 values from 12 lines).
MAX_EXPANSION = 10


class Located(dict):
    """A mapping read from a file, with where it came from (for error messages)."""

    def __init__(self, data: dict, source: str, line: int):
        super().__init__(data)
        self.source = source
        self.line = line

    def __reduce__(self):
        return (Located, (dict(self), self.source, self.line))


yaml.SafeDumper.add_representer(Located, yaml.representer.SafeRepresenter.represent_dict)


class _TooDeep(Exception):
    pass


# ---------------------------------------------------------------------------------------------
# Long lists of one-line rows (a scenario's flows: `- {src: h1, dst: h0, size: 4096}` a line,
# hundreds of thousands of them) are most of a large file, and building a YAML node for each
# of their values is most of the time it takes to read. A run of such lines, each a flow
# mapping of plain scalars at the same indentation, is read here instead: its keys and values
# resolved and constructed by the loader itself (once per distinct text), each row Located at
# its line. The run is replaced in the text by one tagged entry (and blank lines, so that the
# lines after it keep their numbers), which the sequence constructor splices back. Whatever
# does not come out exactly so (a marker not read as a sequence's entry, as inside a block
# scalar; any error) is read again from the original text alone.

_RUN_TAG = "tag:lfsim,2026:rows"
_RUN_MIN = 64  # shorter runs are not worth it
_SCALAR = r"(?:[A-Za-z0-9_]|[+-][0-9.])[A-Za-z0-9_.+-]*"
_ROW = re.compile(
    rf"( *)- \{{ *([A-Za-z_][A-Za-z0-9_]*: +{_SCALAR}(?: *, *[A-Za-z_][A-Za-z0-9_]*: +{_SCALAR})*)"
    r" *\}(?: +#.*| *)\r?"
)
_PAIR = re.compile(rf"([A-Za-z_][A-Za-z0-9_]*): +({_SCALAR})")


_DECIMAL = re.compile(r"0|[1-9][0-9]*")
_TIME_TEXT = re.compile(r"(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:s|ms|us|ns|ps|fs|min|h|d)")


class _Run:
    __slots__ = ("index",)

    def __init__(self, index: int):
        self.index = index


def _rows_out(text: str, loader: Any, source: str) -> tuple[str, list[list[Located]]] | None:
    """The text with its runs of one-line rows replaced, and the runs' rows; None if it has
    none."""
    if text.count("- {") < _RUN_MIN:
        return None
    lines = text.split("\n")
    memo: dict[str, Any] = {}
    resolvers = type(loader).yaml_implicit_resolvers
    # The first characters some implicit resolver starts with (None: one for every text).
    first = frozenset(k for k in resolvers if k) if None not in resolvers else None

    def value(t: str) -> Any:
        # Shortcuts where PyYAML's implicit resolvers cannot apply (yaml/resolver.py): a text
        # whose first character none of them starts with is a str; decimal digits without a
        # leading zero an int; a number and a time unit a str. Everything else as the loader
        # makes it, once per distinct text.
        if first is not None and t[0] not in first:
            return t
        if _DECIMAL.fullmatch(t):
            return int(t)
        if _TIME_TEXT.fullmatch(t):
            return t
        v = memo.get(t, memo)
        if v is memo:
            tag = loader.resolve(yaml.ScalarNode, t, (True, False))
            v = memo[t] = loader.construct_object(yaml.ScalarNode(tag, t))
        return v

    runs: list[list[Located]] = []
    out: list[str] = []
    i, n = 0, len(lines)
    match = _ROW.fullmatch
    findall = _PAIR.findall
    while i < n:
        m = match(lines[i])
        if m is None:
            out.append(lines[i])
            i += 1
            continue
        indent, rows, j = m.group(1), [], i
        while j < n:
            m = match(lines[j])
            if m is None or m.group(1) != indent:
                break
            pairs = findall(m.group(2))
            row = {value(k): value(v) for k, v in pairs}
            if len(row) != len(pairs):
                break  # a key twice: the YAML loader names it
            rows.append(Located(row, source, j + 1))
            j += 1
        if len(rows) < _RUN_MIN:
            out.extend(lines[i : max(j, i + 1)])
            i = max(j, i + 1)
            continue
        out.append(f"{indent}- !<{_RUN_TAG}> {len(runs)}")
        out.extend([""] * (len(rows) - 1))
        runs.append(rows)
        i = j
    if not runs:
        return None
    return "\n".join(out), runs


class _Strict:
    """Construction shared by both loaders: duplicate keys refused, mappings Located, nesting
    counted as it is built (so that a deep document stops at MAX_DEPTH, before Python's own
    recursion limit), and whether any alias was used (only then can values multiply)."""

    source = "<yaml>"
    depth = 0
    aliased = False

    def construct_object(self, node, deep=False):
        if node in self.constructed_objects:
            self.aliased = True
            return self.constructed_objects[node]
        if not isinstance(node, MappingNode | SequenceNode):
            return super().construct_object(node, deep)
        self.depth += 1
        try:
            if self.depth > MAX_DEPTH:
                raise _TooDeep(node.start_mark)
            return super().construct_object(node, deep)
        finally:
            self.depth -= 1

    def construct_strict_mapping(self, node: MappingNode) -> dict:
        # Keys merged in by `<<:` come first and may be overridden by the mapping's own keys;
        # only the mapping's own keys must be unique.
        own = sum(k.tag != "tag:yaml.org,2002:merge" for k, _ in node.value)
        self.flatten_mapping(node)
        pairs = self.construct_pairs(node, deep=True)
        seen = set()
        own_pairs = list(zip(pairs, node.value, strict=True))[len(pairs) - own :]
        for (key, _), (key_node, _) in own_pairs:
            try:
                duplicate = key in seen
            except TypeError:
                raise yaml.constructor.ConstructorError(
                    None, None, "a key must be a plain value", key_node.start_mark
                ) from None
            if duplicate:
                raise yaml.constructor.ConstructorError(
                    None, None, f"key '{key}' appears twice", key_node.start_mark
                )
            seen.add(key)
        return Located(dict(pairs), self.source, node.start_mark.line + 1)

    def construct_strict_sequence(self, node: SequenceNode) -> list:
        # Built at once (not as PyYAML's generator) so that nesting is counted; a sequence that
        # contains itself through an alias is refused ("found unconstructable recursive node").
        items = self.construct_sequence(node, deep=True)
        if not any(type(x) is _Run for x in items):
            return items
        if self.depth + 1 > MAX_DEPTH:
            raise _TooDeep(node.start_mark)
        out = []
        for x in items:
            if type(x) is _Run:
                out.extend(self.runs[x.index])
                self.spliced += 1
            else:
                out.append(x)
        return out

    def construct_run(self, node) -> _Run:
        return _Run(int(node.value))

    runs: list[list[Located]] = []
    spliced = 0


class _PyLoader(_Strict, yaml.SafeLoader):
    pass


_LOADERS: list[type] = [_PyLoader]
if getattr(yaml, "__with_libyaml__", False):

    class _CLoader(_Strict, yaml.CSafeLoader):
        pass

    _LOADERS.append(_CLoader)

for _loader in _LOADERS:
    _loader.add_constructor(
        yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _Strict.construct_strict_mapping
    )
    _loader.add_constructor(
        yaml.resolver.BaseResolver.DEFAULT_SEQUENCE_TAG, _Strict.construct_strict_sequence
    )
    _loader.add_constructor(_RUN_TAG, _Strict.construct_run)

# libyaml's composer recurses in C, one stack frame per level of nesting, with no limit: tens of
# thousands of levels overflow the stack (a segmentation fault, not an exception). It reads a
# document only when its nesting is provably shallow; PyYAML's own composer (which raises
# RecursionError) reads the others.
_C_SAFE_DEPTH = 1000
_DEEP_BLOCK = re.compile(r"^[ \t?:-]{400}", re.MULTILINE)
_BRACKETS = str.maketrans({"[": "(", "{": "(", "]": ")", "}": ")"})


def _shallow(text: str) -> bool:
    """Whether the document nests at most _C_SAFE_DEPTH levels, from an upper bound: block
    nesting needs a column per level (twice at most: a sequence as a mapping's value), flow
    nesting a bracket per level (counted even in strings, which only overestimates)."""
    if _DEEP_BLOCK.search(text):
        return False
    if text.count("[") + text.count("{") <= _C_SAFE_DEPTH - 2 * 400:
        return True
    import numpy as np  # only for documents with many brackets

    b = np.frombuffer(text.encode("utf-8", "surrogatepass"), dtype=np.uint8)
    step = (b == ord("[")).astype(np.int8) + (b == ord("{"))
    step -= (b == ord("]")).astype(np.int8) + (b == ord("}"))
    moves = step[step != 0]
    return not moves.size or int(np.cumsum(moves, dtype=np.int64).max()) <= _C_SAFE_DEPTH - 800


# Characters YAML 1.1 does not allow in a stream (PyYAML's Reader.NON_PRINTABLE).
_NON_PRINTABLE = re.compile(
    "[^\x09\x0a\x0d\x20-\x7e\x85\xa0-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]"
)
ACCEPTED_TEXT = (
    "UTF-8 text without control characters other than tab, line feed and carriage return"
)


def _line_column(text: str, index: int) -> tuple[int, int]:
    line = text.count("\n", 0, index) + 1
    return line, index - (text.rfind("\n", 0, index) + 1) + 1


def read_text(path: Path, what: str = "a readable YAML file") -> str:
    """A file's text, or a ScenarioError: unreadable, not UTF-8, or with bytes YAML refuses
    (named by line and column)."""
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise ScenarioError(
            f"{path}: cannot read ({exc.strerror or exc}); accepted: {what}"
        ) from None
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]  # a byte order mark, which YAML allows
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        column = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        raise ScenarioError(
            f"{path}: bad YAML at line {line}, column {column}: byte 0x{data[exc.start]:02x} is "
            f"not UTF-8; accepted: {ACCEPTED_TEXT}"
        ) from None
    bad = _NON_PRINTABLE.search(text)
    if bad:
        line, column = _line_column(text, bad.start())
        raise ScenarioError(
            f"{path}: bad YAML at line {line}, column {column}: character "
            f"U+{ord(bad.group()):04X} is not allowed; accepted: {ACCEPTED_TEXT}"
        )
    return text


def parse_yaml(text: str, source: str) -> Any:
    """A YAML document's data; a ScenarioError (one line, ``source``, line and column) if it is
    not YAML, nests deeper than MAX_DEPTH or expands beyond MAX_VALUES through aliases."""
    with paused_gc():
        return _parse(text, source)


def _parse(text: str, source: str) -> Any:
    loader_class = _LOADERS[-1] if _shallow(text) else _PyLoader
    fast = _fast(loader_class, text, source)
    if fast is not None:
        return fast
    loader = loader_class(text)
    loader.source = source
    try:
        data = loader.get_single_data()
    except (RecursionError, _TooDeep):
        raise ScenarioError(
            f"{source}: bad YAML: nested too deep; accepted: at most {MAX_DEPTH} levels of nesting"
        ) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(exc, "problem", None) or str(exc)
        lines = text.splitlines() if mark else []
        line = lines[mark.line] if mark and mark.line < len(lines) else ""
        hint = " (indented with spaces, not tabs)" if "\t" in line[: mark.column + 1] else ""
        raise ScenarioError(
            f"{source}: bad YAML{where}: {problem}; accepted: a YAML mapping of scenario keys{hint}"
        ) from None
    finally:
        loader.dispose()
    if loader.aliased:
        check_size(data, source)
    return data


def _fast(loader_class: type, text: str, source: str) -> Any:
    """The document read with its runs of one-line rows taken out (see _rows_out); None when
    it has none, or when that does not give exactly what the plain loader would."""
    helper = loader_class("")
    try:
        found = _rows_out(text, helper, source)
    finally:
        helper.dispose()
    if found is None:
        return None
    short, runs = found
    loader = loader_class(short)
    loader.source = source
    loader.runs = runs
    try:
        data = loader.get_single_data()
    except (RecursionError, _TooDeep, yaml.YAMLError):
        return None  # the plain loader reads it again and names the error
    finally:
        loader.dispose()
    if loader.spliced != len(runs):
        return None
    if loader.aliased:
        check_size(data, source)
    return data


def read_yaml(path: Path) -> Any:
    return parse_yaml(read_text(path), str(path))


@contextlib.contextmanager
def paused_gc():
    """Python's cyclic collector paused while a large document is read and resolved: the
    millions of containers it makes hold no cycles, and each full collection would walk all
    of them again (1,000,000 flows: 40 s instead of 20 s)."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def check_size(data: Any, where: str) -> None:
    """Refuse a document nested deeper than MAX_DEPTH or that, once its aliases are expanded,
    holds more than MAX_VALUES values and MAX_EXPANSION times the values it writes (an alias
    bomb). Each distinct object is visited once, so the check itself stays cheap."""
    size: dict[int, int] = {}
    depth: dict[int, int] = {}
    open_: set[int] = set()
    written = 0
    stack: list[tuple[Any, bool]] = [(data, False)]
    while stack:
        obj, done = stack.pop()
        if not done and (id(obj) in size or not isinstance(obj, dict | list)):
            continue
        kids = obj.values() if isinstance(obj, dict) else obj
        if not done:
            if id(obj) in open_:  # only a mapping given from Python can contain itself
                raise ScenarioError(f"{where}: a value contains itself; accepted: a tree of values")
            open_.add(id(obj))
            stack.append((obj, True))
            stack.extend((k, False) for k in kids if isinstance(k, dict | list))
            continue
        open_.discard(id(obj))
        n = 1
        d = 0
        for k in kids:
            if isinstance(k, dict | list):
                n += size[id(k)]
                d = max(d, depth[id(k)])
            else:
                n += 1
        written += 1 + len(kids)
        size[id(obj)] = n
        depth[id(obj)] = d + 1
        if d + 1 > MAX_DEPTH:
            raise ScenarioError(
                f"{where}: nested too deep; accepted: at most {MAX_DEPTH} levels of nesting"
            )
    total = size.get(id(data), 1)
    if total > MAX_VALUES and total > MAX_EXPANSION * written:
        raise ScenarioError(
            f"{where}: {total:,} values once its aliases are expanded; accepted: at most "
            f"{MAX_VALUES:,} (or {MAX_EXPANSION} times the values the file writes)"
        )


def copy_data(obj: Any, memo: dict | None = None) -> Any:
    """A copy of a tree of mappings and lists as YAML gives them (check_size first: it bounds
    the depth), ``Located`` kept, what two parents share copied once: a caller's mapping
    copied before the loader keeps it (several times faster than copy.deepcopy)."""
    memo = {} if memo is None else memo
    if not isinstance(obj, dict | list):
        return obj
    done = memo.get(id(obj))
    if done is not None:
        return done
    if isinstance(obj, list):
        out: Any = []
        memo[id(obj)] = out
        out.extend(copy_data(x, memo) for x in obj)
        return out
    items = {k: copy_data(v, memo) for k, v in obj.items()}
    out = Located(items, obj.source, obj.line) if isinstance(obj, Located) else items
    memo[id(obj)] = out
    return out
