"""The experiment manifest: a YAML file parsed into frozen dataclasses and validated before anything runs.

A manifest names the transfers to score (a published source, a table, or systems x settings x files), the
training corpus, the style classifiers, the style lexicon, the metrics, the tradeoff axes, the seed and the
output folder.  Every problem (unknown key, missing file, unknown metric or backend, a tradeoff axis that no
metric produces) raises :class:`ManifestError` naming the manifest file and the dotted key, so a run never
starts on a bad manifest.  Paths are relative to the manifest file; ``${TSTEVAL_DATA}`` expands to the data
root.  The file is UTF-8, at most ``MAX_MANIFEST_BYTES``, without YAML aliases (``*name``: a few hundred bytes of
them can expand to gigabytes) and without repeated keys.  Schema (``?`` = optional)::

    name?: mir                       # defaults to the file's stem
    seed?: 0
    output?: ../runs/mir             # overridden by ``tsteval run --out``
    transfers:                       # exactly one of published / table / systems
      published: mir | dualrl        # + dataset?: yelp (dualrl), systems?: [CAAE, ...], sample?: N items
      table: outputs.csv             # + hp_cols?: [rho]; columns input, output, source_style, target_style, ...
      systems:                       # one entry per system
        - name: CAAE
          source_style?: "0"         # inherited by settings and files
          target_style?: "1"
          settings:
            - label?: rho=0.5
              hyperparameters?: {rho: 0.5}
              files: [{inputs: in.0, outputs: out.0, source_style?: "0", target_style?: "1"}, {tsv: io.tsv}]
    corpus?:                         # training data of classifiers / lexicon / word2vec; one of:
      published: yelp                # + splits?: [dev, test]
      style: {"0": neg.txt, "1": pos.txt}
      table: corpus.csv              # + text_col?: text, label_col?: label
      exclude_inputs?: true          # drop every evaluation input from the training texts
      max_per_style?: N              # seeded subsample per style (for small runs)
    classifiers?:
      NAME: {backend: fasttext|textcnn|tfidf-lr|transformer, params?: {...}, heldout?: 0.1, corpus?: {...}}
    lexicon?: {file: path} | {build: {penalty?: l1, C?: 3.0, D?: 2.0}}
    metrics:
      names?: [sti, bleu, ppl, ...]  # any registered metric by name, routed as ``tsteval score --metrics``
      style?: {classifiers: [NAME, ...], ground?: nominal|ordinal}
      content?: {metrics: [bleu_mir, "bleu:smooth_method=floor", ...],   # NAME:KEY=VALUE sets a parameter
                 modifications?: [none, mask, remove, attribution-mask, attribution-delete, erase],
                 vectors?: glove|word2vec|DIR, placeholder?: "<masked>",
                 attribution?: {classifier: NAME, threshold?: 0.2, steps?: 16, neutral?: FILE},  # a transformer
                 references?: [FILE, ...] | dualrl}   # human references (line i: item i): METRIC@ref columns
      naturalness?: [NAME, ...]      # unigram, textcnn, unigram-pooled, kn3, smollm2 (naturalness.registry)
      folds?: 5                      # cross-fitting folds of the adversarial naturalness classifiers
      human?: FILE                   # human-written sentences (default: the corpus' texts, else the inputs)
      compatibility?: {hh?: {NAME: DIR}, ah?: {NAME: DIR}, documents?: FILE}   # pair classifiers; ah: documents
    tradeoff?: {style?: sti@NAME, content?: wmd@mask, naturalness?: COLUMN}
    baselines?: [copy, delete-lexicon, retrieve-nearest]   # trivial systems (lexicon / corpus needed)
    joint?: auto | strap | none | {name?: custom, style: COLUMN, content: COLUMN, fluency: COLUMN>=T}
    compare?: true | {metrics?: [COLUMN, ...], resamples?: N}   # system x system significance matrix
    report?: {worst_examples?: 3, bootstrap_resamples?: 1000}
    meta_eval?: {ratings: {ASPECT: COLUMN or [COLUMN, ...]}, baselines?: {ASPECT or COLUMN: COLUMN}, resamples?: N}
    engine?: local | ray | {name: ray, address?: HOST:PORT, workers?: N}   # ray: per-sentence metrics on Ray Data
    device?: cpu | cuda | cuda:N | auto   # neural models (sentence encoder); auto = CUDA when present
    threads?: N                      # torch threads for every neural model (default: torch's)

``joint`` (default ``auto``: STRAP's J when its columns are scored) is the per-sentence joint score and the
leaderboard (:mod:`tsteval.metrics.joint.score`); ``compare`` adds to the report one significance matrix per column
(default: the tradeoff axes and J), paired bootstrap over shared inputs with Holm's correction.  ``meta_eval``
picks the ratings, baselines and resamples of the run's agreement with human ratings (``meta_eval/``, as ``tsteval
meta-eval`` writes it); without it every ``human_style_intensity``, ``human_content_preservation`` and
``human_naturalness_output`` column the transfers carry is used, with ``report.bootstrap_resamples`` resamples.
"""

from __future__ import annotations

import re
from collections.abc import Hashable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

import yaml

from tsteval.core.errors import TstevalError, clip, quote
from tsteval.core.options import COLUMN_NAME
from tsteval.metrics import registry
from tsteval.metrics.naturalness.registry import NATURALNESS_METRICS
from tsteval.readers.loaders import HUMAN_PREFIX

if TYPE_CHECKING:
    from tsteval.metrics.selection import Selection

PUBLISHED_TRANSFERS = ("mir", "dualrl")
PUBLISHED_CORPORA = ("yelp",)
MAX_MANIFEST_BYTES = 1 << 20
_VAR = re.compile(r"\$\{([^}]*)\}")


class ManifestError(TstevalError):
    """A manifest problem, located to the manifest file and the dotted key (or the line, for YAML problems)."""

    def __init__(self, path: Path, key: str, message: str, fix: str | None = None, *,
                 line: int | None = None) -> None:
        self.path = path
        self.key = key
        self.line = line
        where = f"{path}:{line}" if line is not None else str(path)
        text = f"{where}: {clip(key)}: {message}" if key else f"{where}: {message}"
        super().__init__(text + (f" (fix: {clip(fix, 400)})" if fix else ""))


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


def _parse_yaml(path: Path) -> tuple[object, str]:
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


@dataclass(frozen=True)
class FileSpec:
    """One file of a setting: aligned ``inputs``/``outputs`` line files, or a ``tsv`` of input<TAB>output."""

    source_style: str
    target_style: str
    inputs: Path | None = None
    outputs: Path | None = None
    tsv: Path | None = None


@dataclass(frozen=True)
class SettingSpec:
    """A hyperparameter setting of a system: its label, numeric hyperparameters and output files."""

    label: str
    hyperparameters: Mapping[str, float]
    files: tuple[FileSpec, ...]


@dataclass(frozen=True)
class SystemSpec:
    """A style-transfer system and its settings."""

    name: str
    settings: tuple[SettingSpec, ...]


@dataclass(frozen=True)
class TransfersSpec:
    """Where the transfers come from: ``published`` (+ filters), a ``table``, or ``systems``."""

    published: str | None = None
    dataset: str | None = None
    systems_filter: tuple[str, ...] | None = None
    sample: int | None = None
    table: Path | None = None
    hp_cols: tuple[str, ...] = ()
    systems: tuple[SystemSpec, ...] = ()


@dataclass(frozen=True)
class CorpusSpec:
    """A labelled training corpus: a published one, one file per style, or a table."""

    published: str | None = None
    splits: tuple[str, ...] = ("dev", "test")
    style: Mapping[str, Path] = field(default_factory=lambda: MappingProxyType({}))
    table: Path | None = None
    text_col: str = "text"
    label_col: str = "label"
    exclude_inputs: bool = True
    max_per_style: int | None = None


@dataclass(frozen=True)
class ClassifierSpec:
    """A style classifier: backend, parameters, held-out share and (optionally) its own training corpus."""

    name: str
    backend: str
    params: Mapping[str, Any]
    heldout: float = 0.1
    corpus: CorpusSpec | None = None


@dataclass(frozen=True)
class LexiconSpec:
    """A lexicon file, or the parameters to build one from the corpus (Mir et al.: L1, C=3, D=2)."""

    file: Path | None = None
    penalty: str = "l1"
    C: float = 3.0
    D: float = 2.0


@dataclass(frozen=True)
class StyleSpec:
    """Which classifiers give style columns (``sti@NAME`` etc.) and the EMD ground distance."""

    classifiers: tuple[str, ...] = ()
    ground: str = "nominal"


@dataclass(frozen=True)
class AttributionSpec:
    """Attribution masking (``attribution-mask``/``attribution-delete``): the transformer classifier, its threshold,
    the integrated-gradients steps and a file of neutral sentences for the no-style guard
    (:class:`tsteval.lexicons.attribution.AttributionMasker`)."""

    classifier: str
    threshold: float = 0.2
    steps: int = 16
    neutral: Path | None = None


@dataclass(frozen=True)
class ContentSpec:
    """Content metrics x modifications, the word vectors, the mask placeholder and attribution masking."""

    metrics: tuple[str, ...] = ()
    modifications: tuple[str, ...] = ("none",)
    vectors: str = "glove"
    vectors_dir: Path | None = None
    placeholder: str = "<masked>"
    attribution: AttributionSpec | None = None
    references: tuple[Path, ...] | str | None = None
    params: Mapping[str, Mapping[str, object]] = field(default_factory=dict)


@dataclass(frozen=True)
class CompatibilitySpec:
    """Pair classifiers (saved folders) for HH (``hh@NAME``) and AH (``ah@NAME``, with a documents table)."""

    hh: Mapping[str, Path] = field(default_factory=lambda: MappingProxyType({}))
    ah: Mapping[str, Path] = field(default_factory=lambda: MappingProxyType({}))
    documents: Path | None = None


@dataclass(frozen=True)
class MetricsSpec:
    """All metrics of the run, per aspect."""

    style: StyleSpec = StyleSpec()
    content: ContentSpec = ContentSpec()
    naturalness: tuple[str, ...] = ()
    folds: int = 5
    human: Path | None = None
    compatibility: CompatibilitySpec = CompatibilitySpec()
    joint: bool = False


@dataclass(frozen=True)
class TradeoffSpec:
    """Scorecard columns on the tradeoff axes (style on x; content and naturalness on y)."""

    style: str | None = None
    content: str | None = None
    naturalness: str | None = None


@dataclass(frozen=True)
class CompareSpec:
    """The report's system x system significance matrices: the columns (None: the tradeoff axes and J) and the
    bootstrap resamples (None: enough for Holm over all pairs, :func:`tsteval.experiment.significance.
    matrix_resamples`)."""

    metrics: tuple[str, ...] | None = None
    resamples: int | None = None


@dataclass(frozen=True)
class ReportSpec:
    """Report options."""

    worst_examples: int = 3
    bootstrap_resamples: int = 1000


@dataclass(frozen=True)
class MetaEvalSpec:
    """``meta_eval:``: rating columns of the transfers by aspect, baselines, resamples (see ``tsteval meta-eval``)."""

    ratings: tuple[tuple[str, str], ...]  # (column, aspect)
    baselines: Mapping[str, str] = field(default_factory=dict)
    resamples: int = 1000


@dataclass(frozen=True)
class EngineSpec:
    """Where the per-sentence metrics run: ``local`` or ``ray`` (a cluster ``address``, ``workers`` in parallel)."""

    name: str = "local"
    address: str | None = None
    workers: int | None = None


@dataclass(frozen=True)
class Manifest:
    """A validated experiment: everything :func:`tsteval.experiment.runner.run_experiment` needs."""

    path: Path
    name: str
    seed: int
    output: Path
    transfers: TransfersSpec
    corpus: CorpusSpec | None
    classifiers: Mapping[str, ClassifierSpec]
    lexicon: LexiconSpec | None
    metrics: MetricsSpec
    tradeoff: TradeoffSpec
    report: ReportSpec
    engine: EngineSpec = EngineSpec()
    text: str = field(repr=False, default="")
    meta_eval: MetaEvalSpec | None = None
    baselines: tuple[str, ...] = ()
    joint: object = "auto"
    compare: CompareSpec | None = None
    device: str = "cpu"
    threads: int | None = None

    def needs_corpus(self) -> bool:
        """Whether the shared training corpus is used (by a classifier, the lexicon builder, word2vec, the style
        erasers or the retrieve-nearest baseline)."""
        from tsteval.metrics.content.scorer import ERASE

        return (any(c.corpus is None for c in self.classifiers.values())
                or (self.lexicon is not None and self.lexicon.file is None)
                or self.metrics.content.vectors == "word2vec"
                or (bool(self.metrics.content.metrics) and ERASE in self.metrics.content.modifications)
                or "retrieve-nearest" in self.baselines)


class _Reader:
    """Typed access to the parsed YAML with errors naming the manifest file and the dotted key."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.base = path.parent

    def error(self, key: str, message: str, fix: str | None = None) -> ManifestError:
        return ManifestError(self.path, key, message, fix)

    def mapping(self, value: object, key: str, allowed: tuple[str, ...], required: tuple[str, ...] = ()) -> dict:
        if not isinstance(value, dict):
            raise self.error(key, f"expected a mapping with keys {list(allowed)}, got {type(value).__name__}")
        for name in value:
            if name not in allowed:
                raise self.error(_join(key, str(name)), "unknown key", fix=f"use one of {list(allowed)}")
        for name in required:
            if name not in value:
                raise self.error(_join(key, name), "missing required key")
        return value

    def free_mapping(self, value: object, key: str) -> dict:
        if not isinstance(value, dict):
            raise self.error(key, f"expected a mapping, got {type(value).__name__}")
        return value

    def string(self, value: object, key: str) -> str:
        if isinstance(value, bool) or not isinstance(value, (str, int, float)) or str(value) == "":
            raise self.error(key, f"expected a non-empty string, got {quote(value)}")
        return str(value)

    def strings(self, value: object, key: str) -> tuple[str, ...]:
        if not isinstance(value, list):
            raise self.error(key, f"expected a list, got {type(value).__name__}")
        return tuple(self.string(v, f"{key}[{i}]") for i, v in enumerate(value))

    def integer(self, value: object, key: str, minimum: int) -> int:
        if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
            raise self.error(key, f"expected an integer >= {minimum}, got {quote(value)}")
        return value

    def number(self, value: object, key: str) -> float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise self.error(key, f"expected a number, got {quote(value)}")
        return float(value)

    def choice(self, value: object, key: str, choices: tuple[str, ...] | list[str], what: str) -> str:
        text = self.string(value, key)
        if text not in choices:
            raise self.error(key, f"unknown {what} {quote(text)}", fix=f"choose one of {sorted(choices)}")
        return text

    def expand(self, value: object, key: str) -> Path:
        """A path: ``${TSTEVAL_DATA}`` expanded, relative paths taken from the manifest's folder."""
        text = self.string(value, key)

        def substitute(match: re.Match) -> str:
            if match.group(1) != "TSTEVAL_DATA":
                raise self.error(key, f"unknown variable ${{{clip(match.group(1), 40)}}}",
                                 fix="only ${TSTEVAL_DATA} expands")
            from tsteval.core.datapaths import data_root

            try:
                return str(data_root())
            except TstevalError as error:
                raise self.error(key, str(error)) from error

        path = Path(_VAR.sub(substitute, text)).expanduser()
        return path if path.is_absolute() else (self.base / path).resolve()

    def file(self, value: object, key: str, directory: bool = False) -> Path:
        path = self.expand(value, key)
        if not (path.is_dir() if directory else path.is_file()):
            raise self.error(key, f"no such {'directory' if directory else 'file'}: {clip(str(path))}",
                             fix="paths are relative to the manifest file; ${TSTEVAL_DATA} is the data root")
        return path


def _join(key: str, name: str) -> str:
    return f"{key}.{name}" if key else name


def _transfers(r: _Reader, value: object) -> TransfersSpec:
    key = "transfers"
    d = r.mapping(value, key, ("published", "dataset", "systems", "sample", "table", "hp_cols"))
    sources = [s for s in ("published", "table") if s in d]
    if "systems" in d and isinstance(d["systems"], list) and d["systems"] and isinstance(d["systems"][0], dict):
        sources.append("systems")
    if len(sources) != 1:
        raise r.error(key, f"give exactly one source of transfers, got {sources or 'none'}",
                      fix="published: mir | dualrl, table: FILE, or systems: [{name, settings}, ...]")
    sample = r.integer(d["sample"], f"{key}.sample", 1) if "sample" in d else None
    if sources == ["published"]:
        published = r.choice(d["published"], f"{key}.published", PUBLISHED_TRANSFERS, "published transfers")
        if "dataset" in d and published != "dualrl":
            raise r.error(f"{key}.dataset", "only the dualrl source has datasets")
        dataset = r.choice(d.get("dataset", "yelp"), f"{key}.dataset", ("yelp", "GYAFC"), "DualRL dataset") \
            if published == "dualrl" else None
        systems = r.strings(d["systems"], f"{key}.systems") if "systems" in d else None
        return TransfersSpec(published=published, dataset=dataset, systems_filter=systems, sample=sample)
    if "dataset" in d:
        raise r.error(f"{key}.dataset", "only published transfers take this key")
    if sources == ["table"]:
        hp = r.strings(d["hp_cols"], f"{key}.hp_cols") if "hp_cols" in d else ()
        return TransfersSpec(table=r.file(d["table"], f"{key}.table"), hp_cols=hp, sample=sample)
    systems = []
    for i, system in enumerate(d["systems"]):
        skey = f"{key}.systems[{i}]"
        s = r.mapping(system, skey, ("name", "source_style", "target_style", "settings"), ("name", "settings"))
        if not isinstance(s["settings"], list) or not s["settings"]:
            raise r.error(f"{skey}.settings", "expected a non-empty list of settings")
        settings = []
        for j, setting in enumerate(s["settings"]):
            tkey = f"{skey}.settings[{j}]"
            t = r.mapping(setting, tkey, ("label", "hyperparameters", "files", "source_style", "target_style"),
                          ("files",))
            hps = r.free_mapping(t.get("hyperparameters", {}), f"{tkey}.hyperparameters")
            hyper = {str(k): r.number(v, f"{tkey}.hyperparameters.{k}") for k, v in hps.items()}
            label = r.string(t["label"], f"{tkey}.label") if "label" in t else \
                (",".join(f"{k}={v:g}" for k, v in hyper.items()) or "default")
            if not isinstance(t["files"], list) or not t["files"]:
                raise r.error(f"{tkey}.files", "expected a non-empty list of {inputs, outputs} or {tsv} entries")
            files = []
            for k, entry in enumerate(t["files"]):
                fkey = f"{tkey}.files[{k}]"
                f = r.mapping(entry, fkey, ("inputs", "outputs", "tsv", "source_style", "target_style"))
                styles = {}
                for role in ("source_style", "target_style"):
                    raw = f.get(role, t.get(role, s.get(role)))
                    if raw is None:
                        raise r.error(f"{fkey}.{role}", "missing: give it on the file, the setting or the system")
                    styles[role] = r.string(raw, f"{fkey}.{role}")
                if "tsv" in f and not ("inputs" in f or "outputs" in f):
                    files.append(FileSpec(tsv=r.file(f["tsv"], f"{fkey}.tsv"), **styles))
                elif "inputs" in f and "outputs" in f and "tsv" not in f:
                    files.append(FileSpec(inputs=r.file(f["inputs"], f"{fkey}.inputs"),
                                          outputs=r.file(f["outputs"], f"{fkey}.outputs"), **styles))
                else:
                    raise r.error(fkey, "give either inputs and outputs, or tsv")
            settings.append(SettingSpec(label, MappingProxyType(hyper), tuple(files)))
        labels = [t.label for t in settings]
        if len(set(labels)) != len(labels):
            raise r.error(f"{skey}.settings", f"setting labels repeat: {quote(labels, 200)}")
        systems.append(SystemSpec(r.string(s["name"], f"{skey}.name"), tuple(settings)))
    names = [s.name for s in systems]
    if len(set(names)) != len(names):
        raise r.error(f"{key}.systems", f"system names repeat: {quote(names, 200)}")
    return TransfersSpec(systems=tuple(systems), sample=sample)


def _corpus(r: _Reader, value: object, key: str) -> CorpusSpec:
    d = r.mapping(value, key, ("published", "splits", "style", "table", "text_col", "label_col", "exclude_inputs",
                               "max_per_style"))
    sources = [s for s in ("published", "style", "table") if s in d]
    if len(sources) != 1:
        raise r.error(key, f"give exactly one training corpus source, got {sources or 'none'}",
                      fix="published: yelp, style: {LABEL: FILE, ...}, or table: FILE")
    spec: dict[str, Any] = {}
    if "published" in d:
        spec["published"] = r.choice(d["published"], f"{key}.published", PUBLISHED_CORPORA, "published corpus")
        if "splits" in d:
            spec["splits"] = r.strings(d["splits"], f"{key}.splits")
            for i, split in enumerate(spec["splits"]):
                r.choice(split, f"{key}.splits[{i}]", ("dev", "test"), "Yelp split")
    elif "style" in d:
        styles = r.free_mapping(d["style"], f"{key}.style")
        if len(styles) < 2:
            raise r.error(f"{key}.style", "give at least two styles: {LABEL: FILE, ...}")
        spec["style"] = MappingProxyType({str(label): r.file(path, f"{key}.style.{label}")
                                          for label, path in styles.items()})
    else:
        spec["table"] = r.file(d["table"], f"{key}.table")
    for col in ("text_col", "label_col"):
        if col in d:
            spec[col] = r.string(d[col], f"{key}.{col}")
    if "splits" in d and "published" not in d:
        raise r.error(f"{key}.splits", "only a published corpus has splits")
    if "exclude_inputs" in d:
        if not isinstance(d["exclude_inputs"], bool):
            raise r.error(f"{key}.exclude_inputs", f"expected true or false, got {quote(d['exclude_inputs'])}")
        spec["exclude_inputs"] = d["exclude_inputs"]
    if "max_per_style" in d:
        spec["max_per_style"] = r.integer(d["max_per_style"], f"{key}.max_per_style", 2)
    return CorpusSpec(**spec)


def _classifiers(r: _Reader, value: object) -> dict[str, ClassifierSpec]:
    from tsteval.classifiers.base import BACKENDS

    if not isinstance(value, dict):
        raise r.error("classifiers", "expected a mapping NAME: {backend, params?, heldout?, corpus?}")
    out = {}
    for name, entry in value.items():
        key = f"classifiers.{name}"
        if "@" in str(name):
            raise r.error(key, "classifier names cannot contain '@' (it separates metric and classifier)")
        d = r.mapping(entry, key, ("backend", "params", "heldout", "corpus"), ("backend",))
        params = d.get("params", {})
        if not isinstance(params, dict):
            raise r.error(f"{key}.params", "expected a mapping of backend parameters")
        heldout = r.number(d.get("heldout", 0.1), f"{key}.heldout")
        if not 0 <= heldout < 1:
            raise r.error(f"{key}.heldout", f"must be in [0, 1), got {heldout}")
        corpus = _corpus(r, d["corpus"], f"{key}.corpus") if "corpus" in d else None
        backend = r.choice(d["backend"], f"{key}.backend", list(BACKENDS), "backend")
        _check_params(r, backend, params, f"{key}.params")
        out[str(name)] = ClassifierSpec(str(name), backend, MappingProxyType(dict(params)), heldout, corpus)
    return out


def _check_params(r: _Reader, backend: str, params: dict, key: str) -> None:
    """The backend's own parameter rules (``_parameter_constraints``), checked before anything runs."""
    from tsteval.classifiers.base import ParameterError, backend_class  # imports the backend (torch, for some)

    try:
        backend_class(backend).from_params(params)
    except ParameterError as error:
        raise r.error(f"{key}.{error.name}", f"{error.problem} for backend {backend!r}",
                      fix=error.yaml_fix()) from error


def _lexicon(r: _Reader, value: object) -> LexiconSpec:
    d = r.mapping(value, "lexicon", ("file", "build"))
    if len(d) != 1:
        raise r.error("lexicon", "give exactly one of file: PATH or build: {penalty, C, D}")
    if "file" in d:
        return LexiconSpec(file=r.file(d["file"], "lexicon.file"))
    b = r.mapping(d["build"] or {}, "lexicon.build", ("penalty", "C", "D"))
    return LexiconSpec(penalty=r.choice(b.get("penalty", "l1"), "lexicon.build.penalty", ("l1", "l2", "none"),
                                        "penalty"),
                       C=r.number(b.get("C", 3.0), "lexicon.build.C"), D=r.number(b.get("D", 2.0), "lexicon.build.D"))


def _pair_classifiers(r: _Reader, value: object, key: str) -> Mapping[str, Path]:
    if not isinstance(value, dict):
        raise r.error(key, "expected a mapping NAME: DIR of saved pair classifiers (tsteval train-pairs)")
    out = {}
    for name, path in value.items():
        if not COLUMN_NAME.fullmatch(str(name)):
            raise r.error(f"{key}.{name}", "a pair classifier name may hold only letters, digits, '_', '-' and '.'")
        out[str(name)] = r.file(path, f"{key}.{name}", directory=True)
    return MappingProxyType(out)


def _compatibility(r: _Reader, value: object) -> CompatibilitySpec:
    d = r.mapping(value, "metrics.compatibility", ("hh", "ah", "documents"))
    spec = CompatibilitySpec(
        hh=_pair_classifiers(r, d["hh"], "metrics.compatibility.hh") if "hh" in d else MappingProxyType({}),
        ah=_pair_classifiers(r, d["ah"], "metrics.compatibility.ah") if "ah" in d else MappingProxyType({}),
        documents=r.file(d["documents"], "metrics.compatibility.documents") if "documents" in d else None)
    if bool(spec.ah) != (spec.documents is not None):
        raise r.error("metrics.compatibility", "ah and documents go together: the AH check compares each output "
                                               "with its source document", fix="give both ah: and documents:")
    return spec


def _attribution(r: _Reader, value: object, classifiers: Mapping[str, ClassifierSpec]) -> AttributionSpec:
    key = "metrics.content.attribution"
    a = r.mapping(value, key, ("classifier", "threshold", "steps", "neutral"), ("classifier",))
    name = r.choice(a["classifier"], f"{key}.classifier", list(classifiers), "classifier")
    if classifiers[name].backend != "transformer":
        raise r.error(f"{key}.classifier", f"attribution masking needs a transformer classifier, and {name!r} is "
                                           f"{classifiers[name].backend}", fix="name a classifier with backend: "
                                                                               "transformer")
    threshold = _option(r, "attribution_threshold", a.get("threshold"))
    return AttributionSpec(name, threshold, r.integer(a.get("steps", 16), f"{key}.steps", 1),
                           r.file(a["neutral"], f"{key}.neutral") if "neutral" in a else None)


def _references(r: _Reader, value: object) -> tuple[Path, ...] | str:
    """``metrics.content.references``: ``dualrl`` (the published transfers' dataset) or a list of files."""
    key = "metrics.content.references"
    if value == "dualrl":
        return "dualrl"
    files = r.strings(value, key)
    if not files:
        raise r.error(key, "no reference file", fix="give [FILE, ...] (line i: a reference for item i) or dualrl")
    return tuple(r.file(f, f"{key}[{i}]") for i, f in enumerate(files))


def _selected(r: _Reader, d: Mapping[str, object], classifiers: Mapping[str, ClassifierSpec],
              compatibility: CompatibilitySpec) -> Selection:
    """``metrics.names`` routed as the command line's ``--metrics`` (:func:`tsteval.metrics.selection.select`)."""
    from tsteval.metrics.selection import Selection, select

    if "names" not in d:
        return Selection()
    names = r.strings(d["names"], "metrics.names")
    try:
        return select(names, classifiers=bool(classifiers), hh=bool(compatibility.hh), ah=bool(compatibility.ah))
    except TstevalError as error:
        raise r.error("metrics.names", str(error)) from None


def _metrics(r: _Reader, value: object, classifiers: Mapping[str, ClassifierSpec]) -> MetricsSpec:
    from tsteval.metrics.content.scorer import ATTRIBUTION_MODIFICATIONS, ERASE, erasable
    from tsteval.metrics.selection import parse_metric

    d = r.mapping(value, "metrics", ("names", "style", "content", "naturalness", "folds", "human", "compatibility"))
    compatibility = _compatibility(r, d["compatibility"]) if "compatibility" in d else CompatibilitySpec()
    chosen = _selected(r, d, classifiers, compatibility)
    if chosen.recommended:
        raise r.error("metrics.names", "recommended is a command-line profile (tsteval score --metrics recommended)",
                      fix="name the metrics: target_prob, sbert, lp_mean@kn3")
    style = StyleSpec(tuple(classifiers)) if chosen.style else StyleSpec()
    if "style" in d:
        s = r.mapping(d["style"], "metrics.style", ("classifiers", "ground"), ("classifiers",))
        names = r.strings(s["classifiers"], "metrics.style.classifiers")
        for i, name in enumerate(names):
            r.choice(name, f"metrics.style.classifiers[{i}]", list(classifiers), "classifier")
        style = StyleSpec(names, _option(r, "ground", s.get("ground")))
    content = ContentSpec(tuple(chosen.content), params=MappingProxyType(chosen.params))
    if "content" in d:
        c = r.mapping(d["content"], "metrics.content", ("metrics", "modifications", "vectors", "placeholder",
                                                        "attribution", "references"), ("metrics",))
        for i, entry in enumerate(r.strings(c["metrics"], "metrics.content.metrics")):
            name, params = parse_metric(entry)
            r.choice(name, f"metrics.content.metrics[{i}]", registry.names("content"), "content metric")
            try:
                chosen.add_content(name, params)
            except TstevalError as error:
                raise r.error(f"metrics.content.metrics[{i}]", str(error)) from None
        metrics = list(chosen.content)
        mods = _option(r, "modifications", c.get("modifications"))
        if ERASE in mods and not erasable(metrics):
            raise r.error("metrics.content.modifications", "erase applies to the embedding metrics only",
                          fix=f"add one of {erasable(registry.names('content'))} to metrics.content.metrics")
        attribution = _attribution(r, c["attribution"], classifiers) if "attribution" in c else None
        if attribution is None and any(m in ATTRIBUTION_MODIFICATIONS for m in mods):
            raise r.error("metrics.content.modifications", "attribution-mask/attribution-delete need an "
                          "attribution classifier",
                          fix="add metrics.content.attribution: {classifier: NAME} (a transformer classifier)")
        vectors = r.string(c.get("vectors", "glove"), "metrics.content.vectors")
        vectors_dir = None
        if vectors not in ("glove", "word2vec"):
            vectors_dir = _option(r, "vectors", r.expand(vectors, "metrics.content.vectors"))
            vectors = "dir"
        content = ContentSpec(tuple(metrics), mods, vectors, vectors_dir,
                              _option(r, "placeholder", c.get("placeholder")), attribution,
                              _references(r, c["references"]) if "references" in c else None,
                              MappingProxyType(chosen.params))
    naturalness = r.strings(d["naturalness"], "metrics.naturalness") if "naturalness" in d else ()
    for i, name in enumerate(naturalness):
        r.choice(name, f"metrics.naturalness[{i}]", list(NATURALNESS_METRICS), "naturalness metric")
    naturalness = tuple(dict.fromkeys([*naturalness, *chosen.naturalness]))
    folds = _option(r, "folds", d.get("folds"))
    human = r.file(d["human"], "metrics.human") if "human" in d else None
    return MetricsSpec(style, content, naturalness, folds, human, compatibility, chosen.joint)


def _tradeoff(r: _Reader, value: object, metrics: MetricsSpec) -> TradeoffSpec:
    d = r.mapping(value or {}, "tradeoff", ("style", "content", "naturalness"))
    style_cols = [f"{m}@{c}" for c in metrics.style.classifiers for m in registry.names("style")]
    from tsteval.metrics.content.scorer import ERASE, erasable

    content_cols = [f"{m}@{mod}" for mod in metrics.content.modifications
                    for m in (erasable(metrics.content.metrics) if mod == ERASE else metrics.content.metrics)]
    style = r.choice(d["style"], "tradeoff.style", style_cols, "style column") if "style" in d else \
        (f"sti@{metrics.style.classifiers[0]}" if metrics.style.classifiers else None)
    content = r.choice(d["content"], "tradeoff.content", content_cols, "content column") if "content" in d else \
        (content_cols[0] if content_cols else None)
    naturalness = None
    if "naturalness" in d:
        naturalness = r.string(d["naturalness"], "tradeoff.naturalness")
        if not naturalness.startswith(HUMAN_PREFIX) and naturalness.split("@")[-1] not in metrics.naturalness:
            raise r.error("tradeoff.naturalness", f"unknown naturalness column {quote(naturalness)}",
                          fix=f"name a metric of metrics.naturalness {list(metrics.naturalness)} or a "
                              f"{HUMAN_PREFIX}* column of the transfers")
    return TradeoffSpec(style, content, naturalness)


def _report(r: _Reader, value: object) -> ReportSpec:
    d = r.mapping(value or {}, "report", ("worst_examples", "bootstrap_resamples"))
    return ReportSpec(r.integer(d.get("worst_examples", 3), "report.worst_examples", 0),
                      r.integer(d.get("bootstrap_resamples", 1000), "report.bootstrap_resamples", 1))


def _meta_eval(r: _Reader, value: object) -> MetaEvalSpec:
    """``meta_eval: {ratings: {ASPECT: COLUMN or [COLUMN, ...]}, baselines: {ASPECT or COLUMN: COLUMN},
    resamples: N}``."""
    from tsteval.experiment.metaeval import RATING_ASPECTS

    d = r.mapping(value, "meta_eval", ("ratings", "baselines", "resamples"), ("ratings",))
    ratings = []
    for aspect, columns in r.mapping(d["ratings"], "meta_eval.ratings", RATING_ASPECTS).items():
        key = f"meta_eval.ratings.{aspect}"
        for column in r.strings(columns, key) if isinstance(columns, list) else (r.string(columns, key),):
            ratings.append((column, aspect))
    baselines = {str(k): r.string(v, f"meta_eval.baselines.{k}")
                 for k, v in r.free_mapping(d.get("baselines", {}), "meta_eval.baselines").items()}
    return MetaEvalSpec(tuple(ratings), MappingProxyType(baselines),
                        r.integer(d.get("resamples", 1000), "meta_eval.resamples", 1))


def _engine(r: _Reader, value: object) -> EngineSpec:
    if not isinstance(value, dict):
        return EngineSpec(_option(r, "engine", value, "engine"))
    d = r.mapping(value, "engine", ("name", "address", "workers"), ("name",))
    name = _option(r, "engine", d["name"])
    if name != "ray" and ("address" in d or "workers" in d):
        raise r.error("engine", "address and workers are options of the ray engine", fix="set name: ray")
    return EngineSpec(name, _option(r, "address", d.get("address")), _option(r, "workers", d.get("workers")))


TOP_KEYS = ("name", "seed", "output", "transfers", "corpus", "classifiers", "lexicon", "metrics", "tradeoff",
            "report", "meta_eval", "engine", "baselines", "joint", "compare", "device", "threads")



def _option(r: _Reader, name: str, value: object, key: str | None = None) -> object:
    """The run option ``name`` (:data:`tsteval.experiment.options.OPTIONS`) from its manifest key; its one reader's
    message, located to the key, when the value is bad."""
    from tsteval.experiment.options import OPTIONS

    try:
        return OPTIONS[name].read(value)
    except TstevalError as error:
        raise r.error(key or OPTIONS[name].manifest, str(error)) from None


def _baselines(r: _Reader, value: object) -> tuple[str, ...]:
    return _option(r, "baselines", r.strings(value, "baselines"))


def _joint(r: _Reader, value: object) -> object:
    """``joint``: auto, strap, none, or a recipe mapping (checked as a :class:`JointRecipe`)."""
    if isinstance(value, dict):
        value = r.mapping(value, "joint", ("name", "style", "content", "fluency"), ("style", "content", "fluency"))
    return _option(r, "joint", value)


def _compare(r: _Reader, value: object) -> CompareSpec | None:
    if value is True:
        return CompareSpec()
    if value is False:
        return None
    d = r.mapping(value, "compare", ("metrics", "resamples"))
    metrics = r.strings(d["metrics"], "compare.metrics") if "metrics" in d else None
    for i, column in enumerate(metrics or ()):
        if "@" not in column or column.split("@", 1)[0] not in registry.METRICS:
            raise r.error(f"compare.metrics[{i}]", f"{quote(column)} is not a metric column (METRIC@NAME)",
                          fix=f"name a scored column of one of {sorted(registry.METRICS)}")
    resamples = r.integer(d["resamples"], "compare.resamples", 1) if "resamples" in d else None
    return CompareSpec(metrics, resamples)


def load_manifest(path: str | Path) -> Manifest:
    """Read and validate a manifest file; raises :class:`ManifestError` (file + key) on any problem."""
    path = Path(path).resolve()
    if not path.is_file():
        raise ManifestError(path, "", "no such manifest file")
    data, text = _parse_yaml(path)
    r = _Reader(path)
    d = r.mapping(data, "", TOP_KEYS, ("transfers", "metrics"))
    classifiers = _classifiers(r, d["classifiers"]) if "classifiers" in d else {}
    metrics = _metrics(r, d["metrics"], classifiers)
    if not (metrics.style.classifiers or metrics.content.metrics or metrics.naturalness
            or metrics.compatibility.hh or metrics.compatibility.ah):
        raise r.error("metrics", "no metric to compute", fix="give metrics.style, metrics.content or both")
    lexicon = _lexicon(r, d["lexicon"]) if "lexicon" in d else None
    if lexicon is None and any(m in ("mask", "remove") for m in metrics.content.modifications):
        raise r.error("metrics.content.modifications", "mask/remove need a style lexicon",
                      fix="add lexicon: {file: PATH} or lexicon: {build: {}}")
    manifest = Manifest(
        path=path, name=r.string(d.get("name", path.stem), "name"),
        seed=_option(r, "seed", d.get("seed")),
        output=r.expand(d.get("output", f"runs/{path.stem}"), "output"),
        transfers=_transfers(r, d["transfers"]),
        corpus=_corpus(r, d["corpus"], "corpus") if "corpus" in d else None,
        classifiers=MappingProxyType(classifiers), lexicon=lexicon, metrics=metrics,
        tradeoff=_tradeoff(r, d.get("tradeoff"), metrics), report=_report(r, d.get("report")), text=text,
        meta_eval=_meta_eval(r, d["meta_eval"]) if "meta_eval" in d else None,
        engine=_engine(r, d.get("engine", "local")),
        baselines=_baselines(r, d["baselines"]) if "baselines" in d else (),
        joint=_joint(r, d["joint"]) if "joint" in d else "auto",
        compare=_compare(r, d["compare"]) if "compare" in d else None,
        device=_option(r, "device", d.get("device")), threads=_option(r, "threads", d.get("threads")))
    if "delete-lexicon" in manifest.baselines and lexicon is None:
        raise r.error("baselines", "delete-lexicon needs a style lexicon",
                      fix="add lexicon: {file: PATH} or lexicon: {build: {}}")
    if manifest.corpus is None and manifest.needs_corpus():
        raise r.error("corpus", "missing: a classifier without its own corpus, lexicon.build, word2vec vectors or "
                                "the erase modification need the training corpus",
                       fix="add corpus: {published: yelp} (or style/table)")
    return manifest
