"""Reading YAML files, the bottom layer of the scenario loader: strict (duplicate keys and bad
bytes refused), fast (libyaml's parser), every mapping ``Located`` (its file and line, for
errors about it), and safe (nesting and alias expansion bounded), each error one line naming
the file, the line and column, and what is accepted.

This module imports nothing of lfsim but ``errors``.
"""

from __future__ import annotations

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
        return self.construct_sequence(node, deep=True)


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
    loader_class = _LOADERS[-1] if _shallow(text) else _PyLoader
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


def read_yaml(path: Path) -> Any:
    return parse_yaml(read_text(path), str(path))


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
