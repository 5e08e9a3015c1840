"""The manifest's YAML, read safely: bounded size, strict UTF-8, PyYAML's safe loader without aliases ("billion
laughs"), repeated keys or over-long integers; every problem a one-line :class:`ManifestError` with its line."""

from __future__ import annotations

from collections.abc import Hashable
from pathlib import Path

import yaml

from tsteval.core.errors import clip, quote
from tsteval.experiment.manifest.reader import ManifestError

MAX_MANIFEST_BYTES = 1 << 20


class _Refused(yaml.MarkedYAMLError):
    """YAML that parses but that a manifest does not accept (an alias, a repeated key, an over-long integer)."""

    def __init__(self, mark: yaml.Mark, problem: str, fix: str) -> None:
        super().__init__(problem=problem, problem_mark=mark)
        self.fix = fix


class _ManifestLoader(yaml.SafeLoader):
    """PyYAML's safe loader, stricter: aliases are refused, so a few hundred bytes cannot expand into gigabytes
    ("billion laughs"); a repeated key is an error instead of silently replacing the first value."""

    def compose_node(self, parent: yaml.Node | None, index: object) -> yaml.Node:
        if self.check_event(yaml.AliasEvent):
            event = self.peek_event()
            raise _Refused(event.start_mark, f"YAML aliases (*{clip(str(event.anchor), 40)}) are not accepted in a "
                                             "manifest", "write the value out in full instead of &anchor / *alias")
        return super().compose_node(parent, index)

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict:
        seen: dict[object, int] = {}
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                continue
            key = self.construct_object(key_node, deep=deep)
            if isinstance(key, Hashable):
                if key in seen:
                    raise _Refused(key_node.start_mark, f"the key {quote(key)} repeats (first on line {seen[key]})",
                                   "give each key once; the second value would silently replace the first")
                seen[key] = key_node.start_mark.line + 1
        return super().construct_mapping(node, deep=deep)

    def construct_yaml_int(self, node: yaml.ScalarNode) -> int:
        try:
            return super().construct_yaml_int(node)
        except ValueError as error:  # Python refuses ints of more than 4300 digits
            raise _Refused(node.start_mark, f"the integer {quote(node.value)} is too long", "write a shorter number") \
                from error


_ManifestLoader.add_constructor("tag:yaml.org,2002:int", _ManifestLoader.construct_yaml_int)


def parse_yaml(path: Path) -> tuple[object, str]:
    """The manifest file's text and its YAML, read with bounded size and strict UTF-8; one-line errors."""
    size = path.stat().st_size
    if size > MAX_MANIFEST_BYTES:
        raise ManifestError(path, "", f"the manifest is {size} bytes, more than the {MAX_MANIFEST_BYTES} a "
                                      "manifest may have", fix="a manifest names files; put the data in those files")
    raw = path.read_bytes()
    try:
        text = raw.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError as error:
        raise ManifestError(path, "", f"byte 0x{raw[error.start]:02x} at byte offset {error.start} is not valid UTF-8",
                            fix="save the manifest as UTF-8", line=raw.count(b"\n", 0, error.start) + 1) from error
    try:
        return yaml.load(text, Loader=_ManifestLoader), text  # a SafeLoader: plain data only
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark or error.context_mark
        problem = "; ".join(clip(p, 120) for p in (error.context, error.problem) if p)
        if isinstance(error, _Refused):
            raise ManifestError(path, "", problem, fix=error.fix, line=mark.line + 1) from error
        raise ManifestError(path, "", f"invalid YAML: {problem} (column {mark.column + 1})" if mark else
                            f"invalid YAML: {problem}", line=mark.line + 1 if mark else None,
                            fix="check the indentation and quoting on that line") from error
    except yaml.reader.ReaderError as error:
        character = error.character if isinstance(error.character, int) else ord(error.character)
        raise ManifestError(path, "", f"the character U+{character:04X} is not allowed in YAML",
                            line=text.count("\n", 0, error.position) + 1,
                            fix="remove control characters from the manifest") from error
    except RecursionError as error:
        raise ManifestError(path, "", "the YAML nests too deeply to read",
                            fix="a manifest needs only a few levels of nesting") from error
