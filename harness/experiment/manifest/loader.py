"""The experiment manifest: a YAML file parsed into frozen dataclasses and validated before anything runs.

A manifest names the transfers to score (a published source, a table, or systems x settings x files), the
training corpus, the style classifiers, the style lexicon, the metrics, the tradeoff axes, the seed and the
output folder.  Every problem (unknown key, missing file, unknown metric or backend, a tradeoff axis that no
metric produces) raises :class:`ManifestError` naming the manifest file and the dotted key, so a run never
starts on a bad manifest.  Paths are relative to the manifest file; ``${TSTEVAL_DATA}`` expands to the data
root.  The file is UTF-8, of bounded size, without YAML aliases and without repeated keys
(:mod:`tsteval.experiment.manifest.safe_yaml`); what it says is held in :mod:`tsteval.experiment.manifest.specs`, read
through :class:`~tsteval.experiment.manifest.reader.Reader`.  Schema (``?`` = optional)::

    name?: mir                       # defaults to the file's stem
    seed?: 0
    output?: ../runs/mir             # overridden by ``tsteval run --out``
    transfers:                       # exactly one of published / table / systems
      published: mir | dualrl | SET  # + dataset?: yelp (dualrl), systems?: [CAAE, ...], sample?: N items; SET: a
                                     #   rated set (tox600, lai, ...: tsteval.readers.rated_sets)
                                     #   sample (any source): N items drawn (seeded) from all transfer
                                     #   directions together, not N per direction (DualRL's 100: 46 and 54);
                                     #   run.json's sample and the log give the count per direction
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
      NAME: {hf: ID_OR_DIR, params?: {batch_size?: 64, max_length?: N}}   # ready-made: scored as it is
      NAME: {path: DIR}              # a classifier saved by tsteval train-classifier, scored as it is
    classifier_labels?: {NAME: {LABEL: STYLE}}   # a ready-made model's labels -> the run's styles
    lexicon?: {file: path} | {build: {penalty?: l1, C?: 3.0, D?: 2.0}}
    metrics:
      names?: [sti, bleu, ppl, ...]  # any registered metric by name, routed as ``tsteval score --metrics``
                                     #   (profile:FILE: the profile a rating study chose)
      style?: {classifiers: [NAME, ...], ground?: nominal|ordinal}
      content?: {metrics?: [bleu_mir, "bleu:smooth_method=floor", ...],  # NAME:KEY=VALUE sets a parameter
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

Every run option of :data:`tsteval.experiment.options.OPTIONS` (some shown above; ``help(tsteval.evaluate)`` lists
them all) is allowed at its own dotted key and read there by its option into ``Manifest.options``, as ``tsteval
score`` reads its flag.

``joint`` (default ``auto``: STRAP's J when its columns are scored) is the per-sentence joint score and the
leaderboard (:mod:`tsteval.metrics.joint.score`); ``compare`` adds to the report one significance matrix per column
(default: the tradeoff axes and J), paired bootstrap over shared inputs with Holm's correction.  ``meta_eval``
picks the ratings, baselines and resamples of the run's agreement with human ratings (``meta_eval/``, as ``tsteval
meta-eval`` writes it); without it every ``human_style_intensity``, ``human_content_preservation`` and
``human_naturalness_output`` column the transfers carry is used, with ``report.bootstrap_resamples`` resamples.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from tsteval.aggregate import N_RESAMPLES
from tsteval.core.errors import TstevalError, quote
from tsteval.core.options import COLUMN_NAME
from tsteval.core.records import DEFAULT_SETTING
from tsteval.experiment.manifest.reader import ManifestError, Reader
from tsteval.experiment.manifest.safe_yaml import parse_yaml
from tsteval.experiment.manifest.specs import (
    HUB,
    AttributionSpec,
    ClassifierSpec,
    CompareSpec,
    CompatibilitySpec,
    ContentSpec,
    CorpusSpec,
    FileSpec,
    LexiconSpec,
    Manifest,
    MetaEvalSpec,
    MetricsSpec,
    ReportSpec,
    SettingSpec,
    StyleSpec,
    SystemSpec,
    TradeoffSpec,
    TransfersSpec,
    ready_made,
)
from tsteval.experiment.options import OPTIONS, RunOptions, option_values
from tsteval.metrics import registry
from tsteval.metrics.naturalness.registry import NATURALNESS_METRICS
from tsteval.readers.rated_sets import rated_set_names
from tsteval.readers.ratings import HUMAN_PREFIX

if TYPE_CHECKING:
    from tsteval.metrics.selection import Selection

PUBLISHED_TRANSFERS = ("dualrl", *rated_set_names())  # DualRL's outputs, and every rated set
PUBLISHED_CORPORA = ("yelp",)


def _transfers(r: Reader, value: object) -> TransfersSpec:
    key = "transfers"
    d = r.mapping(value, key, _keys(key, "published", "dataset", "systems", "sample", "table", "hp_cols"))
    sources = [s for s in ("published", "table") if s in d]
    if "systems" in d and isinstance(d["systems"], list) and d["systems"] and isinstance(d["systems"][0], dict):
        sources.append("systems")
    if len(sources) != 1:
        raise r.error(key, f"give exactly one source of transfers, got {sources or 'none'}",
                      fix="published: dualrl | a rated set (mir, tox600, ...), table: FILE, or systems: "
                      "[{name, settings}, ...]")
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
                (",".join(f"{k}={v:g}" for k, v in hyper.items()) or DEFAULT_SETTING)
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


def _corpus(r: Reader, value: object, key: str) -> CorpusSpec:
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


def _classifiers(r: Reader, value: object) -> dict[str, ClassifierSpec]:
    from tsteval.classifiers.base import BACKENDS

    if not isinstance(value, dict):
        raise r.error("classifiers", "expected a mapping NAME: {backend, params?, heldout?, corpus?}, {hf: ID_OR_DIR} "
                                     "or {path: DIR}")
    out = {}
    for name, entry in value.items():
        key = f"classifiers.{name}"
        if "@" in str(name):
            raise r.error(key, "classifier names cannot contain '@' (it separates metric and classifier)")
        if isinstance(entry, dict) and "hf" in entry:
            out[str(name)] = _ready_made(r, str(name), entry, key)
            continue
        if isinstance(entry, dict) and "path" in entry:
            out[str(name)] = _saved(r, str(name), entry, key)
            continue
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


def _ready_made(r: Reader, name: str, entry: dict, key: str) -> ClassifierSpec:
    """``NAME: {hf: ID_OR_DIR, params?: {...}}``: a ready-made classifier (a folder relative to the manifest)."""
    d = r.mapping(entry, key, ("hf", "params"), ("hf",))
    params = r.free_mapping(d.get("params", {}), f"{key}.params")
    if "model" in params or "labels" in params:
        raise r.error(f"{key}.params", "the model and its labels are given by hf: and classifier_labels:",
                      fix="remove model and labels from params")
    try:
        spec = ready_made(name, f"{HUB}:{r.string(d['hf'], f'{key}.hf')}", r.base)
    except TstevalError as error:
        raise r.error(f"{key}.hf", str(error)) from None
    _check_params(r, HUB, {**spec.params, **params}, f"{key}.params")
    return ClassifierSpec(name, HUB, MappingProxyType({**spec.params, **params}), 0.0)


def _saved(r: Reader, name: str, entry: dict, key: str) -> ClassifierSpec:
    """``NAME: {path: DIR}``: a classifier saved by ``tsteval train-classifier`` (a folder relative to the manifest;
    verified when the run loads it)."""
    from tsteval.classifiers.base import MANIFEST, saved_backend

    d = r.mapping(entry, key, ("path",), ("path",))
    path = r.expand(d["path"], f"{key}.path")
    fix = "give a folder written by tsteval train-classifier (paths are relative to the manifest file)"
    if not path.is_dir():
        raise r.error(f"{key}.path", f"no such directory: {path}", fix=fix)
    if not (path / MANIFEST).is_file():
        raise r.error(f"{key}.path", f"{path} is not a saved tsteval classifier (no {MANIFEST} in it)", fix=fix)
    try:
        backend = saved_backend(path)
    except TstevalError as error:
        raise r.error(f"{key}.path", str(error), fix=fix) from None
    return ClassifierSpec(name, backend, MappingProxyType({}), 0.0, path=path)


def _check_params(r: Reader, backend: str, params: dict, key: str) -> None:
    """The backend's own parameter rules (``_parameter_constraints``), checked before anything runs."""
    from tsteval.classifiers.base import ParameterError, backend_class  # imports the backend (torch, for some)

    try:
        backend_class(backend).from_params(params)
    except ParameterError as error:
        raise r.error(f"{key}.{error.name}", f"{error.problem} for backend {backend!r}",
                      fix=error.yaml_fix()) from error


def _lexicon(r: Reader, value: object) -> LexiconSpec:
    d = r.mapping(value, "lexicon", ("file", "build"))
    if len(d) != 1:
        raise r.error("lexicon", "give exactly one of file: PATH or build: {penalty, C, D}")
    if "file" in d:
        return LexiconSpec(file=r.file(d["file"], "lexicon.file"))
    b = r.mapping(d["build"] or {}, "lexicon.build", ("penalty", "C", "D"))
    return LexiconSpec(penalty=r.choice(b.get("penalty", "l1"), "lexicon.build.penalty", ("l1", "l2", "none"),
                                        "penalty"),
                       C=r.number(b.get("C", 3.0), "lexicon.build.C"), D=r.number(b.get("D", 2.0), "lexicon.build.D"))


def _pair_classifiers(r: Reader, value: object, key: str) -> Mapping[str, Path]:
    if not isinstance(value, dict):
        raise r.error(key, "expected a mapping NAME: DIR of saved pair classifiers (tsteval train-pairs)")
    out = {}
    for name, path in value.items():
        if not COLUMN_NAME.fullmatch(str(name)):
            raise r.error(f"{key}.{name}", "a pair classifier name may hold only letters, digits, '_', '-' and '.'")
        out[str(name)] = r.file(path, f"{key}.{name}", directory=True)
    return MappingProxyType(out)


def _compatibility(r: Reader, value: object) -> CompatibilitySpec:
    d = r.mapping(value, "metrics.compatibility", ("hh", "ah", "documents"))
    spec = CompatibilitySpec(
        hh=_pair_classifiers(r, d["hh"], "metrics.compatibility.hh") if "hh" in d else MappingProxyType({}),
        ah=_pair_classifiers(r, d["ah"], "metrics.compatibility.ah") if "ah" in d else MappingProxyType({}),
        documents=r.file(d["documents"], "metrics.compatibility.documents") if "documents" in d else None)
    if bool(spec.ah) != (spec.documents is not None):
        raise r.error("metrics.compatibility", "ah and documents go together: the AH check compares each output "
                                               "with its source document", fix="give both ah: and documents:")
    return spec


def _attribution(r: Reader, value: object, classifiers: Mapping[str, ClassifierSpec]) -> AttributionSpec:
    key = "metrics.content.attribution"
    a = r.mapping(value, key, _keys(key, "classifier", "steps", "neutral"), ("classifier",))
    name = r.choice(a["classifier"], f"{key}.classifier", list(classifiers), "classifier")
    if classifiers[name].backend != "transformer":
        raise r.error(f"{key}.classifier", f"attribution masking needs a transformer classifier, and {name!r} is "
                                           f"{classifiers[name].backend}", fix="name a classifier with backend: "
                                                                               "transformer")
    return AttributionSpec(name, r.integer(a.get("steps", 16), f"{key}.steps", 1),
                           r.file(a["neutral"], f"{key}.neutral") if "neutral" in a else None)


def _references(r: Reader, value: object) -> tuple[Path, ...] | str:
    """``metrics.content.references``: ``dualrl`` (the published transfers' dataset) or a list of files."""
    key = "metrics.content.references"
    if value == "dualrl":
        return "dualrl"
    files = r.strings(value, key)
    if not files:
        raise r.error(key, "no reference file", fix="give [FILE, ...] (line i: a reference for item i) or dualrl")
    return tuple(r.file(f, f"{key}[{i}]") for i, f in enumerate(files))


def _selected(r: Reader, d: Mapping[str, object], classifiers: Mapping[str, ClassifierSpec],
              compatibility: CompatibilitySpec, served: bool) -> Selection:
    """``metrics.names`` routed as the command line's ``--metrics`` (:func:`tsteval.metrics.selection.select`)."""
    from tsteval.metrics.selection import Selection, select

    if "names" not in d:
        return Selection()
    names = r.strings(d["names"], "metrics.names")
    try:
        return select(names, classifiers=bool(classifiers), hh=bool(compatibility.hh), ah=bool(compatibility.ah),
                      served=served)
    except TstevalError as error:
        raise r.error("metrics.names", str(error)) from None


def _metrics(r: Reader, value: object, classifiers: Mapping[str, ClassifierSpec],
             options: RunOptions) -> tuple[MetricsSpec, RunOptions]:
    """``metrics``, and the run options with what its profile files add (their modifications and causal LM:
    :func:`tsteval.metaeval.profile_file.apply_profiles`)."""
    from tsteval.metaeval.profile_file import apply_profiles, reference_columns
    from tsteval.metrics.content.scorer import ATTRIBUTION_MODIFICATIONS, ERASE, erasable
    from tsteval.metrics.selection import parse_metric

    d = r.mapping(value, "metrics", _keys("metrics", "names", "style", "content", "naturalness", "human",
                                          "compatibility"))
    compatibility = _compatibility(r, d["compatibility"]) if "compatibility" in d else CompatibilitySpec()
    chosen = _selected(r, d, classifiers, compatibility, options.lm_endpoint is not None)
    if chosen.recommended is not None:
        raise r.error("metrics.names", "recommended is a command-line profile (tsteval score --metrics recommended)",
                      fix="name the metrics: target_prob, sbert, lp_mean@kn3")
    values = option_values(options)
    given = isinstance(d.get("content"), dict) and "references" in d["content"]
    try:  # references in a table are known once it is read (plan_of_manifest checks them)
        apply_profiles(chosen, values, classifiers=list(classifiers), pairs=[*compatibility.hh, *compatibility.ah],
                       references=True if given else None)
    except TstevalError as error:
        raise r.error("metrics.names", str(error)) from None
    options = RunOptions(**values)
    style = StyleSpec(tuple(classifiers)) if chosen.style else StyleSpec()
    if "style" in d:
        s = r.mapping(d["style"], "metrics.style", _keys("metrics.style", "classifiers"), ("classifiers",))
        names = r.strings(s["classifiers"], "metrics.style.classifiers")
        for i, name in enumerate(names):
            r.choice(name, f"metrics.style.classifiers[{i}]", list(classifiers), "classifier")
        style = StyleSpec(names)
    content = ContentSpec(tuple(chosen.content), params=MappingProxyType(chosen.params))
    if "content" in d:
        c = r.mapping(d["content"], "metrics.content", _keys("metrics.content", "metrics", "attribution",
                                                             "references"))
        for i, entry in enumerate(r.strings(c.get("metrics", []), "metrics.content.metrics")):
            name, params = parse_metric(entry)
            r.choice(name, f"metrics.content.metrics[{i}]", registry.names("content"), "content metric")
            try:
                chosen.add_content(name, params)
            except TstevalError as error:
                raise r.error(f"metrics.content.metrics[{i}]", str(error)) from None
        metrics = list(chosen.content)
        mods = options.modifications
        if ERASE in mods and not erasable(metrics):
            raise r.error("metrics.content.modifications", "erase applies to the embedding metrics only",
                          fix=f"add one of {erasable(registry.names('content'))} to metrics.content.metrics")
        attribution = _attribution(r, c["attribution"], classifiers) if "attribution" in c else None
        if attribution is None and any(m in ATTRIBUTION_MODIFICATIONS for m in mods):
            raise r.error("metrics.content.modifications", "attribution-mask/attribution-delete need an "
                          "attribution classifier",
                          fix="add metrics.content.attribution: {classifier: NAME} (a transformer classifier)")
        content = ContentSpec(tuple(metrics), attribution,
                              _references(r, c["references"]) if "references" in c else None,
                              MappingProxyType(chosen.params))
    naturalness = r.strings(d["naturalness"], "metrics.naturalness") if "naturalness" in d else ()
    for i, name in enumerate(naturalness):
        r.choice(name, f"metrics.naturalness[{i}]", list(NATURALNESS_METRICS), "naturalness metric")
    naturalness = tuple(dict.fromkeys([*naturalness, *chosen.naturalness]))
    human = r.file(d["human"], "metrics.human") if "human" in d else None
    content = replace(content, reference_columns=reference_columns(chosen))
    return MetricsSpec(style, content, naturalness, human, compatibility, chosen.joint, tuple(chosen.judges)), options


def _tradeoff(r: Reader, value: object, metrics: MetricsSpec, modifications: tuple[str, ...]) -> TradeoffSpec:
    d = r.mapping(value or {}, "tradeoff", ("style", "content", "naturalness"))
    style_cols = [f"{m}@{c}" for c in metrics.style.classifiers for m in registry.names("style")]
    from tsteval.metrics.content.scorer import ERASE, erasable

    content_cols = [f"{m}@{mod}" for mod in modifications
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


def _report(r: Reader, value: object) -> ReportSpec:
    d = r.mapping(value or {}, "report", ("worst_examples", "bootstrap_resamples"))
    return ReportSpec(r.integer(d.get("worst_examples", 3), "report.worst_examples", 0),
                      r.integer(d.get("bootstrap_resamples", N_RESAMPLES), "report.bootstrap_resamples", 1))


def _meta_eval(r: Reader, value: object) -> MetaEvalSpec:
    """``meta_eval: {ratings: {ASPECT: COLUMN or [COLUMN, ...]}, baselines: {ASPECT or COLUMN: COLUMN},
    resamples: N}``."""
    from tsteval.metaeval.tables import RATING_ASPECTS

    d = r.mapping(value, "meta_eval", ("ratings", "baselines", "resamples"), ("ratings",))
    ratings = []
    for aspect, columns in r.mapping(d["ratings"], "meta_eval.ratings", RATING_ASPECTS).items():
        key = f"meta_eval.ratings.{aspect}"
        for column in r.strings(columns, key) if isinstance(columns, list) else (r.string(columns, key),):
            ratings.append((column, aspect))
    baselines = {str(k): r.string(v, f"meta_eval.baselines.{k}")
                 for k, v in r.free_mapping(d.get("baselines", {}), "meta_eval.baselines").items()}
    return MetaEvalSpec(tuple(ratings), MappingProxyType(baselines),
                        r.integer(d.get("resamples", N_RESAMPLES), "meta_eval.resamples", 1))


def _engine(r: Reader, value: object) -> dict:
    """``engine``: a name (``engine: ray``) or a mapping with one, as a mapping."""
    if not isinstance(value, dict):
        return {"name": value}
    return r.mapping(value, "engine", _keys("engine"), ("name",))


def _keys(section: str, *keys: str) -> tuple[str, ...]:
    """The keys allowed in the manifest's mapping ``section`` (dotted; "" for the top): ``keys`` and those of the
    run options' manifest keys that lie there (:data:`tsteval.experiment.options.OPTIONS`).

    >>> _keys("engine")
    ('name', 'address', 'workers')
    >>> _keys("metrics.style", "classifiers")
    ('classifiers', 'ground')
    """
    prefix = f"{section}." if section else ""
    below = [o.manifest.removeprefix(prefix).split(".")[0] for o in OPTIONS.values() if o.manifest.startswith(prefix)]
    return tuple(dict.fromkeys([*keys, *below]))


def _at(d: Mapping[str, object], key: str) -> object:
    """The value at the dotted ``key`` of the parsed manifest, or None where it (or a mapping above it) is not there
    (a key of the wrong shape is reported by the part of the manifest that holds it)."""
    node: object = d
    for part in key.split("."):
        if not isinstance(node, dict):
            return None
        node = node.get(part)
    return node


def _options(r: Reader, d: Mapping[str, object]) -> RunOptions:
    """Every run option of :data:`tsteval.experiment.options.OPTIONS` from its manifest key (the default where it is
    not there), read by its option; a word-vector folder is taken relative to the manifest."""
    values = {}
    for name, option in OPTIONS.items():
        value = _at(d, option.manifest)
        if name == "vectors" and value not in (None, "glove", "word2vec"):
            value = r.expand(value, option.manifest)
        try:
            values[name] = option.read(value)
        except TstevalError as error:  # its one reader's message, located to the key
            raise r.error(option.manifest, str(error)) from None
    return RunOptions(**values)


def _compare(r: Reader, value: object) -> CompareSpec | None:
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
    data, text = parse_yaml(path)
    r = Reader(path)
    d = r.mapping(data, "", _keys("", "name", "output", "transfers", "corpus", "classifiers", "lexicon", "metrics",
                                  "tradeoff", "report", "meta_eval", "compare"), ("transfers", "metrics"))
    if "engine" in d:
        d = {**d, "engine": _engine(r, d["engine"])}
    if isinstance(d.get("joint"), dict):  # a recipe, read by the joint option
        r.mapping(d["joint"], "joint", ("name", "style", "content", "fluency"), ("style", "content", "fluency"))
    options = _options(r, d)
    if options.engine != "ray" and (options.address is not None or options.workers is not None):
        raise r.error("engine", "address and workers are options of the ray engine", fix="set name: ray")
    classifiers = _classifiers(r, d["classifiers"]) if "classifiers" in d else {}
    stray = [n for n in options.classifier_labels if getattr(classifiers.get(n), "backend", None) != HUB]
    if stray:
        raise r.error(f"classifier_labels.{stray[0]}", "not a ready-made classifier of the manifest",
                      fix=f"give classifiers: {{{stray[0]}: {{hf: MODEL}}}}, or drop the mapping")
    metrics, options = _metrics(r, d["metrics"], classifiers, options)
    if not (metrics.style.classifiers or metrics.content.metrics or metrics.naturalness or metrics.judges
            or metrics.compatibility.hh or metrics.compatibility.ah):
        raise r.error("metrics", "no metric to compute", fix="give metrics.style, metrics.content or both")
    lexicon = _lexicon(r, d["lexicon"]) if "lexicon" in d else None
    if lexicon is None and any(m in ("mask", "remove") for m in options.modifications):
        raise r.error("metrics.content.modifications", "mask/remove need a style lexicon",
                      fix="add lexicon: {file: PATH} or lexicon: {build: {}}")
    manifest = Manifest(
        path=path, name=r.string(d.get("name", path.stem), "name"),
        output=r.expand(d.get("output", f"runs/{path.stem}"), "output"),
        transfers=_transfers(r, d["transfers"]),
        corpus=_corpus(r, d["corpus"], "corpus") if "corpus" in d else None,
        classifiers=MappingProxyType(classifiers), lexicon=lexicon, metrics=metrics,
        tradeoff=_tradeoff(r, d.get("tradeoff"), metrics, options.modifications), report=_report(r, d.get("report")),
        options=options, text=text, meta_eval=_meta_eval(r, d["meta_eval"]) if "meta_eval" in d else None,
        compare=_compare(r, d["compare"]) if "compare" in d else None)
    if "delete-lexicon" in options.baselines and lexicon is None:
        raise r.error("baselines", "delete-lexicon needs a style lexicon",
                      fix="add lexicon: {file: PATH} or lexicon: {build: {}}")
    if manifest.corpus is None and manifest.needs_corpus():
        raise r.error("corpus", "missing: a classifier without its own corpus, lexicon.build, word2vec vectors or "
                                "the erase modification need the training corpus",
                       fix="add corpus: {published: yelp} (or style/table)")
    return manifest
