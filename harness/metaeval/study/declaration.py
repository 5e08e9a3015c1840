"""A study declaration: one YAML file says what evidence a page shows; :mod:`tsteval.metaeval.study.runner` runs it.

The keys (all but ``kind``, ``title``, ``sets`` and ``columns`` optional; an unknown key is an error naming the file
and line)::

    kind: tsteval-study
    title: Content measures on the content-pair sets
    include: [common.yaml]          # read first, then this file over it (mappings merged, lists replaced)
    text: |                         # the page's text, Markdown with `code` spans
      What the page shows and why.
    sets:                           # rated sets: a built-in name, a rated table, or a tsteval annotate study
      - mir
      - {set: lai, label: Lai, ratings: [content]}          # only its content ratings
      - {table: my_ratings.csv, label: mine, ratings: {human_content: content}}
      - {study: runs/my-study, label: my study}
      - {set: mir, label: masked, rows: "benchmarks.evidence.mask_placeholder:with_masked_word"}  # rows a hook keeps
    sample: all                     # or {inputs: 100, seed: 0}: that many seeded inputs per set (every output of each)
    columns:                        # what scores each set, through the one plan and runner (tsteval.evaluate)
      - {metrics: [bleu, chrf, sbert]}
      - {metrics: [target_prob], classifier: {fasttext: fasttext}}     # trained on the set's style corpus
      - {metrics: ["judge_fluency@smollm2:template=2"], suffix: -t2}   # column judge_fluency@smollm2-t2
      - {authors: true}              # the scores the set's authors published beside their ratings
      - {hook: "benchmarks.studies.hooks:my_column", aspect: content}  # what no metric computes yet
      - {metrics: [ppl], sets: [Lai]}                                  # only on these sets (their labels)
      - {metrics: [bleu], modifications: [mask], options: {lexicon: published}}  # the authors' lexicon (Mir's)
    baselines: {content: bleu@none}  # per aspect or rating column (default: tsteval.metaeval.tables.BASELINES)
    incumbent: {content: sbert@none} # a second comparison per aspect
    comparisons: [baseline, incumbent, pairwise]
    pairs: [[sbert@none, bleu@none]]  # the pairwise comparisons: these (first minus second), not every pair
    statistics: [pearson, spearman, kendall, pairwise_accuracy]
    levels: [sentence, within_system, system]
    cluster: input
    resamples: 1000
    seed: 0
    aggregates: [mean, pooled]       # over sets: the mean of per-set figures, and all sets' rows pooled
    groups: {style transfer: [Mir, Lai]}  # aggregate over each named group of sets instead of over all of them
    published:                       # figures from the literature, shown beside ours
      - {column: BLEURT, set: mean, statistic: spearman, level: sentence, value: 0.537, source: Babakov et al. 2022}
    rule: {version: 2, reference: {content: sbert@none}, min_gain: 0.02, costs: column_costs.json}
    describe: "benchmarks.evidence.mask_placeholder:rises"  # a table no statistic against ratings gives
    out: ../results/studies/content_sets   # relative to this file

>>> import tempfile, pathlib
>>> folder = pathlib.Path(tempfile.mkdtemp())
>>> _ = (folder / "common.yaml").write_text("kind: tsteval-study\\nresamples: 200\\ncolumns: [{metrics: [bleu]}]\\n")
>>> _ = (folder / "s.yaml").write_text("include: [common.yaml]\\ntitle: T\\nsets: [mir]\\nresamples: 100\\n")
>>> study = load_study(folder / "s.yaml")
>>> study.resamples, study.sets[0].name, study.columns[0].metrics
(100, 'mir', ('bleu',))
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from tsteval.aggregate import N_RESAMPLES
from tsteval.core.errors import InputError, did_you_mean, quote
from tsteval.metaeval.statistics import LEVELS, STATISTICS

KIND = "tsteval-study"
KEYS = ("kind", "title", "include", "text", "sets", "sample", "columns", "baselines", "incumbent", "comparisons",
        "pairs", "statistics", "levels", "cluster", "resamples", "seed", "aggregates", "groups", "published", "rule",
        "describe", "out")
SET_KEYS = ("set", "table", "study", "label", "ratings", "sample", "style_corpus", "language", "task", "rows")
LEXICONS = ("fitted", "published")  # a column's options.lexicon: fitted on the set's corpus, or its authors'
COLUMN_KEYS = ("metrics", "classifier", "modifications", "language_model", "suffix", "options", "authors", "hook",
               "params", "aspect", "higher_is_better", "sets")
RULE_KEYS = ("version", "reference", "min_gain", "costs", "statistic", "level", "per")
PUBLISHED_KEYS = ("column", "set", "aspect", "statistic", "level", "value", "source")
COMPARISONS = ("baseline", "incumbent", "pairwise")
AGGREGATES = ("mean", "pooled")


@dataclass(frozen=True)
class StudySet:
    """One rated set of a study: a built-in (``name``), a rated table (``table``) or an annotate study (``study``)."""

    name: str
    label: str
    table: Path | None = None
    study: Path | None = None
    ratings: tuple[str, ...] | Mapping[str, str] | None = None  # aspects or rating columns to keep / {COLUMN: ASPECT}
    sample: int | None = None  # inputs; None: all
    sample_seed: int = 0
    style_corpus: str | None = None
    language: str | None = None
    task: str | None = None
    rows: str | None = None  # a hook MODULE:FUNCTION: (SetData) -> which rows to keep, before any sample


@dataclass(frozen=True)
class ColumnGroup:
    """What scores some columns: ``metrics`` through :func:`tsteval.evaluate`, the set's published scores
    (``authors``) or a ``hook`` (``module:function``)."""

    metrics: tuple[str, ...] = ()
    classifier: Mapping[str, str] = field(default_factory=dict)
    modifications: tuple[str, ...] = ()
    language_model: str | None = None
    suffix: str = ""
    options: Mapping[str, object] = field(default_factory=dict)
    authors: bool = False
    hook: str | None = None
    params: Mapping[str, object] = field(default_factory=dict)
    aspect: str | None = None
    higher_is_better: bool = True
    sets: tuple[str, ...] | None = None  # the labels of the sets it scores (default: every set)

    def spec(self) -> dict:
        """The group as plain data (what its cache key hashes)."""
        return {"metrics": list(self.metrics), "classifier": dict(self.classifier),
                "modifications": list(self.modifications), "language_model": self.language_model,
                "suffix": self.suffix, "options": dict(self.options), "authors": self.authors, "hook": self.hook,
                "params": dict(self.params), "aspect": self.aspect, "higher_is_better": self.higher_is_better}


@dataclass(frozen=True)
class Published:
    """A figure from the literature shown beside ours: ``set`` a set's label or ``mean``."""

    column: str
    value: float
    source: str
    set: str = "mean"
    aspect: str = "content"
    statistic: str = "pearson"
    level: str = "sentence"


@dataclass(frozen=True)
class Rule:
    """The profile rule, version 2 (:mod:`tsteval.metaeval.study.rule`): per aspect a ``reference`` column, the
    least mean gain over it, the committed costs (column -> CPU seconds per 1,000 pairs) and the groups of sets it is
    applied to besides all of them (``per``: ``task``, ``language``)."""

    reference: Mapping[str, str]
    costs: Path
    min_gain: float = 0.02
    statistic: str = "pearson"
    level: str = "sentence"
    per: tuple[str, ...] = ()
    version: int = 2


@dataclass(frozen=True)
class Study:
    """A study declaration as read (module notes)."""

    path: Path
    title: str
    sets: tuple[StudySet, ...]
    columns: tuple[ColumnGroup, ...]
    text: str = ""
    sample: int | None = None
    sample_seed: int = 0
    baselines: Mapping[str, str] = field(default_factory=dict)
    incumbent: Mapping[str, str] = field(default_factory=dict)
    comparisons: tuple[str, ...] = ("baseline",)
    pairs: tuple[tuple[str, str], ...] = ()  # the pairwise comparisons (first minus second); empty: every pair
    statistics: tuple[str, ...] = ("pearson", "spearman", "kendall")
    levels: tuple[str, ...] = LEVELS
    cluster: str = "input"
    resamples: int = N_RESAMPLES
    seed: int = 0
    aggregates: tuple[str, ...] = ()
    groups: Mapping[str, tuple[str, ...]] = field(default_factory=dict)  # name -> set labels; empty: all sets
    published: tuple[Published, ...] = ()
    rule: Rule | None = None
    describe: str | None = None  # a hook MODULE:FUNCTION: (scores, {label: SetData}) -> rows of a table
    out: Path | None = None
    sources: tuple[Path, ...] = ()  # this file and every file it includes

    @property
    def name(self) -> str:
        """The declaration's file name without its suffix."""
        return self.path.stem


class _Lines(yaml.SafeLoader):
    """A YAML loader that remembers the line of every mapping key (``key path -> line``)."""


def _read_yaml(path: Path) -> tuple[object, dict[tuple, int]]:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError("no such study declaration", path=path, fix="give the path of a study YAML file") from None
    except UnicodeDecodeError as error:
        raise InputError(f"not UTF-8 text ({error.reason} at byte {error.start})", path=path) from None
    try:
        node = yaml.compose(text, Loader=_Lines)
        data = yaml.load(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        raise InputError(f"not valid YAML: {getattr(error, 'problem', error)}", path=path,
                         line=None if mark is None else mark.line + 1, fix="correct the YAML syntax") from None
    lines: dict[tuple, int] = {}

    def walk(n: yaml.Node | None, prefix: tuple) -> None:
        if isinstance(n, yaml.MappingNode):
            for key, value in n.value:
                lines[(*prefix, key.value)] = key.start_mark.line + 1
                walk(value, (*prefix, key.value))
        elif isinstance(n, yaml.SequenceNode):
            for i, value in enumerate(n.value):
                lines[(*prefix, i)] = value.start_mark.line + 1
                walk(value, (*prefix, i))

    walk(node, ())
    return data, lines


def _merge(base: dict, over: dict) -> dict:
    out = dict(base)
    for key, value in over.items():
        out[key] = _merge(out[key], value) if isinstance(value, dict) and isinstance(out.get(key), dict) else value
    return out


class _Reader:
    """Reads one declaration's data, each error naming the file and line of the key it is about."""

    def __init__(self, path: Path, lines: Mapping[tuple, int], origins: Mapping[str, Path]) -> None:
        self.path, self.lines, self.origins = path, lines, origins

    def error(self, where: tuple, message: str, fix: str | None = None) -> InputError:
        path = self.origins.get(str(where[0]), self.path) if where else self.path
        line = next((self.lines[where[:n]] for n in range(len(where), 0, -1) if where[:n] in self.lines), None)
        shown = ".".join(str(part) for part in where)
        return InputError(f"{shown}: {message}" if shown else message, path=path, line=line, fix=fix)

    def keys(self, data: object, known: Sequence[str], where: tuple) -> dict:
        if not isinstance(data, dict):
            raise self.error(where, f"expected a mapping, not {quote(data)}")
        for key in data:
            if key not in known:
                hint = did_you_mean(str(key), known)
                raise self.error((*where, key), f"unknown key {key!r}", fix=hint or f"the keys are {list(known)}")
        return data

    def names(self, value: object, known: Sequence[str], where: tuple) -> tuple[str, ...]:
        items = [value] if isinstance(value, str) else value
        if not isinstance(items, list) or not all(isinstance(v, str) for v in items):
            raise self.error(where, f"expected a list of names, not {quote(value)}")
        for item in items:
            if item not in known:
                raise self.error(where, f"unknown {where[-1]} {item!r}", fix=did_you_mean(item, known) or
                                 f"use some of {list(known)}")
        return tuple(items)

    def integer(self, value: object, where: tuple, least: int = 0) -> int:
        if isinstance(value, bool) or not isinstance(value, int) or value < least:
            raise self.error(where, f"expected an integer of at least {least}, not {quote(value)}")
        return value

    def hook(self, value: object, where: tuple) -> str | None:
        if value is not None and (not isinstance(value, str) or value.count(":") != 1):
            raise self.error(where, f"expected MODULE:FUNCTION, not {quote(value)}")
        return value

    def text(self, value: object, where: tuple) -> str:
        if not isinstance(value, str) or not value:
            raise self.error(where, f"expected a text, not {quote(value)}")
        return value

    def columns_map(self, value: object, where: tuple) -> dict[str, str]:
        if not isinstance(value, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in value.items()):
            raise self.error(where, f"expected {{ASPECT: COLUMN}}, not {quote(value)}")
        return dict(value)

    def pairs(self, value: object, where: tuple) -> tuple[tuple[str, str], ...]:
        if not isinstance(value, list) or not value or not all(
                isinstance(p, list) and len(p) == 2 and all(isinstance(c, str) and c for c in p) and p[0] != p[1]
                for p in value):
            raise self.error(where, f"expected a list of [COLUMN, OTHER COLUMN] pairs, not {quote(value)}",
                             fix="pairs: [[sti@ensemble, sti@fasttext]]")
        return tuple((a, b) for a, b in value)

    def groups(self, value: object, labels: Sequence[str], where: tuple) -> dict[str, tuple[str, ...]]:
        if not isinstance(value, dict) or not value:
            raise self.error(where, f"expected {{NAME: [SET LABELS]}}, not {quote(value)}")
        return {str(name): self.names(members, labels, (*where, name)) for name, members in value.items()}

    def sample(self, value: object, where: tuple) -> tuple[int | None, int]:
        if value == "all" or value is None:
            return None, 0
        data = self.keys(value, ("inputs", "seed"), where)
        return self.integer(data.get("inputs"), (*where, "inputs"), 3), self.integer(data.get("seed", 0),
                                                                                     (*where, "seed"))


def _read_set(reader: _Reader, entry: object, i: int, folder: Path) -> StudySet:
    from tsteval.readers.rated_sets import rated_set_names

    where = ("sets", i)
    if isinstance(entry, str):
        entry = {"set": entry}
    data = reader.keys(entry, SET_KEYS, where)
    kinds = [k for k in ("set", "table", "study") if k in data]
    if len(kinds) != 1:
        raise reader.error(where, "give exactly one of set: NAME, table: FILE or study: FOLDER")
    kind = kinds[0]
    value = reader.text(data[kind], (*where, kind))
    ratings = data.get("ratings")
    if kind == "table":
        if not isinstance(ratings, dict):
            raise reader.error((*where, "ratings"), "a rated table names its rating columns: ratings: {COLUMN: "
                               "ASPECT}", fix="e.g. ratings: {human_content: content}")
    elif ratings is not None:
        ratings = reader.names(ratings, list(ratings) if isinstance(ratings, list) else [], (*where, "ratings"))
    if kind == "set" and value not in rated_set_names():
        raise reader.error((*where, "set"), f"no built-in rated set {value!r}",
                           fix=did_you_mean(value, rated_set_names()) or f"use one of {rated_set_names()}")
    inputs, seed = reader.sample(data["sample"], (*where, "sample")) if "sample" in data else (-1, 0)
    path = None if kind == "set" else (folder / value)
    if path is not None and not path.exists():
        raise reader.error((*where, kind), f"no such {'file' if kind == 'table' else 'folder'} {str(path)!r}",
                           fix="give a path relative to the declaration's folder")
    return StudySet(value if kind == "set" else str(data.get("label", Path(value).stem)),
                    str(data.get("label", value)), table=path if kind == "table" else None,
                    study=path if kind == "study" else None, ratings=ratings, sample=inputs, sample_seed=seed,
                    style_corpus=data.get("style_corpus"), language=data.get("language"), task=data.get("task"),
                    rows=reader.hook(data.get("rows"), (*where, "rows")))


def _read_column(reader: _Reader, entry: object, i: int, labels: Sequence[str]) -> ColumnGroup:
    where = ("columns", i)
    data = reader.keys(entry, COLUMN_KEYS, where)
    kinds = [k for k in ("metrics", "authors", "hook") if k in data]
    if len(kinds) != 1:
        raise reader.error(where, "give exactly one of metrics: [...], authors: true or hook: MODULE:FUNCTION")
    metrics = data.get("metrics", [])
    if isinstance(metrics, str):
        metrics = [metrics]
    if not isinstance(metrics, list) or not all(isinstance(m, str) and m for m in metrics):
        raise reader.error((*where, "metrics"), f"expected a list of metric entries, not {quote(metrics)}")
    if metrics:
        from tsteval.metrics.registry import METRICS
        from tsteval.metrics.selection import parse_metric

        for metric in metrics:
            name = parse_metric(metric)[0].partition("@")[0]
            if name not in METRICS and name != "recommended":
                raise reader.error((*where, "metrics"), f"no metric {name!r}", fix=did_you_mean(name, METRICS)
                                   or "see tsteval metrics")
    hook = reader.hook(data.get("hook"), (*where, "hook"))
    options = data.get("options", {})
    if isinstance(options, dict) and options.get("lexicon", "fitted") not in LEXICONS:
        raise reader.error((*where, "options", "lexicon"), f"lexicon {quote(options['lexicon'])} is neither fitted "
                           "nor published", fix="lexicon: published (the set's authors' lexicon), or leave it out")
    classifier = data.get("classifier", {})
    if not isinstance(classifier, dict):
        raise reader.error((*where, "classifier"), "expected {NAME: BACKEND}, e.g. {fasttext: fasttext}")
    return ColumnGroup(tuple(metrics), {str(k): str(v) for k, v in classifier.items()},
                       tuple(data.get("modifications", ())), data.get("language_model"), str(data.get("suffix", "")),
                       dict(data.get("options", {})), bool(data.get("authors", False)), hook,
                       dict(data.get("params", {})), data.get("aspect"), bool(data.get("higher_is_better", True)),
                       None if "sets" not in data else reader.names(data["sets"], labels, (*where, "sets")))


def _read_rule(reader: _Reader, data: object, folder: Path) -> Rule:
    where = ("rule",)
    data = reader.keys(data, RULE_KEYS, where)
    if data.get("version", 2) != 2:
        raise reader.error((*where, "version"), f"this tsteval applies rule version 2, not {data.get('version')}")
    if "reference" not in data or "costs" not in data:
        raise reader.error(where, "the rule names its reference columns and its costs file",
                           fix="reference: {ASPECT: COLUMN}, costs: FILE")
    costs = folder / reader.text(data["costs"], (*where, "costs"))
    gain = data.get("min_gain", 0.02)
    if not isinstance(gain, int | float) or isinstance(gain, bool):
        raise reader.error((*where, "min_gain"), f"expected a number, not {quote(gain)}")
    return Rule(reader.columns_map(data["reference"], (*where, "reference")), costs, float(gain),
                *(reader.names(data.get(k, d), known, (*where, k))[0] for k, d, known in
                  (("statistic", "pearson", STATISTICS), ("level", "sentence", LEVELS))),
                per=reader.names(data.get("per", []), ("task", "language"), (*where, "per")))


def _read_published(reader: _Reader, data: object, i: int) -> Published:
    where = ("published", i)
    data = reader.keys(data, PUBLISHED_KEYS, where)
    value = data.get("value")
    if not isinstance(value, int | float) or isinstance(value, bool):
        raise reader.error((*where, "value"), f"expected a number, not {quote(value)}")
    return Published(reader.text(data.get("column"), (*where, "column")), float(value),
                     reader.text(data.get("source"), (*where, "source")), str(data.get("set", "mean")),
                     str(data.get("aspect", "content")),
                     reader.names(data.get("statistic", "pearson"), STATISTICS, (*where, "statistic"))[0],
                     reader.names(data.get("level", "sentence"), LEVELS, (*where, "level"))[0])


def _gather(path: Path, seen: tuple[Path, ...] = ()) -> tuple[dict, dict[tuple, int], dict[str, Path], list[Path]]:
    """The declaration's data with its includes merged under it, key lines, where each top key came from."""
    path = path.resolve()
    if path in seen:
        raise InputError("includes itself (through " + " -> ".join(p.name for p in (*seen, path)) + ")", path=path,
                         fix="remove the circular include")
    data, lines = _read_yaml(path)
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise InputError(f"a study declaration is a YAML mapping, not {type(data).__name__}", path=path,
                         fix="start from docs/studies.md's example")
    include = data.pop("include", [])
    if isinstance(include, str):
        include = [include]
    if not isinstance(include, list) or not all(isinstance(i, str) for i in include):
        raise InputError(f"include: expected a list of files, not {quote(include)}", path=path,
                         line=lines.get(("include",)))
    merged: dict = {}
    all_lines: dict[tuple, int] = {}
    origins: dict[str, Path] = {}
    sources = [path]
    for name in include:
        part, part_lines, part_origins, part_sources = _gather(path.parent / name, (*seen, path))
        merged = _merge(merged, part)
        all_lines.update(part_lines)
        origins.update(part_origins)
        sources += part_sources
    merged = _merge(merged, data)
    all_lines.update(lines)
    origins.update({str(key): path for key in data})
    return merged, all_lines, origins, sources


def page_declarations(folder: str | Path) -> list[Path]:
    """The declarations of pages in ``folder``: its YAML files with a ``title`` (the others are only included)."""
    out = []
    for path in sorted(Path(folder).glob("*.yaml")):
        data, _ = _read_yaml(path)
        if isinstance(data, dict) and "title" in data:
            out.append(path)
    return out


def load_study(path: str | Path) -> Study:
    """Read and check the study declaration ``path`` (module notes); every error names the file and line."""
    path = Path(path)
    data, lines, origins, sources = _gather(path)
    reader = _Reader(path.resolve(), lines, origins)
    reader.keys(data, KEYS, ())
    if data.get("kind") != KIND:
        raise reader.error(("kind",), f"expected kind: {KIND}, not {quote(data.get('kind'))}",
                           fix=f"start the file with kind: {KIND}")
    folder = path.resolve().parent
    sets_data = data.get("sets")
    if not isinstance(sets_data, list) or not sets_data:
        raise reader.error(("sets",), "a study needs a list of rated sets", fix="sets: [mir, lai]")
    sets = tuple(_read_set(reader, entry, i, folder) for i, entry in enumerate(sets_data))
    labels = [s.label for s in sets]
    if len(set(labels)) != len(labels):
        raise reader.error(("sets",), f"two sets share a label in {labels}", fix="give each a label: NAME")
    columns_data = data.get("columns", [])
    if not isinstance(columns_data, list) or not columns_data:
        raise reader.error(("columns",), "a study needs a list of columns", fix="columns: [{metrics: [bleu]}]")
    sample, sample_seed = reader.sample(data.get("sample"), ("sample",))
    sets = tuple(s if s.sample != -1 else StudySet(**{**s.__dict__, "sample": sample, "sample_seed": sample_seed})
                 for s in sets)
    comparisons = reader.names(data.get("comparisons", ["baseline"]), COMPARISONS, ("comparisons",))
    incumbent = reader.columns_map(data.get("incumbent", {}), ("incumbent",))
    if "incumbent" in comparisons and not incumbent:
        raise reader.error(("comparisons",), "compares with the incumbent but names none",
                           fix="incumbent: {ASPECT: COLUMN}")
    pairs = reader.pairs(data["pairs"], ("pairs",)) if "pairs" in data else ()
    if pairs and "pairwise" not in comparisons:
        raise reader.error(("pairs",), "names pairs, and comparisons has no pairwise",
                           fix="comparisons: [baseline, pairwise]")
    out = data.get("out")
    return Study(path.resolve(), reader.text(data.get("title"), ("title",)), sets,
                 tuple(_read_column(reader, entry, i, labels) for i, entry in enumerate(columns_data)),
                 text=str(data.get("text", "")).strip(), sample=sample, sample_seed=sample_seed,
                 baselines=reader.columns_map(data.get("baselines", {}), ("baselines",)), incumbent=incumbent,
                 comparisons=comparisons, pairs=pairs,
                 statistics=reader.names(data.get("statistics", ["pearson", "spearman", "kendall"]), STATISTICS,
                                         ("statistics",)),
                 levels=reader.names(data.get("levels", list(LEVELS)), LEVELS, ("levels",)),
                 cluster=reader.text(data.get("cluster", "input"), ("cluster",)),
                 resamples=reader.integer(data.get("resamples", N_RESAMPLES), ("resamples",), 1),
                 seed=reader.integer(data.get("seed", 0), ("seed",)),
                 aggregates=reader.names(data.get("aggregates", []), AGGREGATES, ("aggregates",)),
                 groups=reader.groups(data["groups"], labels, ("groups",)) if "groups" in data else {},
                 published=tuple(_read_published(reader, p, i) for i, p in enumerate(data.get("published", []))),
                 rule=_read_rule(reader, data["rule"], folder) if "rule" in data else None,
                 describe=reader.hook(data.get("describe"), ("describe",)),
                 out=None if out is None else (folder / reader.text(out, ("out",))).resolve(), sources=tuple(sources))
