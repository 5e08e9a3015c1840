"""``train_metric``: a learned metric trained from the data root's rated sets and saved as a folder, the one
function behind ``tsteval train-metric``, ``tsteval.train_metric`` and the out-of-set evidence (which trains one
model per held-out group, each kept in the cache: ``learned-metrics/KEY``, the key hashing the training sets'
files, the base encoder's files and the recipe).

>>> training_sets("content", exclude=["content_cae"])[:3]
['mir', 'lai', 'tox600']
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from tsteval.core.errors import TstevalError, did_you_mean
from tsteval.metrics.learned.rated_pairs import SCORED_ONLY, SOURCES, check_aspect, group_of, groups, rated_pairs
from tsteval.metrics.learned.training import ASPECT_SHAPES, Recipe

Log = Callable[[str], None]
KIND = "learned-metric"


def training_sets(aspect: str, sets: Sequence[str] | None = None, exclude: Sequence[str] = ()) -> list[str]:
    """The sets a model of ``aspect`` trains on: ``sets`` (default every source of the aspect) less the whole group
    of every set in ``exclude`` (a set and every set that shares a text with it)."""
    check_aspect(aspect)
    known = {**SOURCES[aspect], **SCORED_ONLY[aspect]}
    for name in [*(sets or ()), *exclude]:
        if name not in known:
            raise TstevalError(f"no {aspect} ratings in rated set {name!r}; the sets are {sorted(known)}"
                               f"{did_you_mean(name, known, '; ')}")
    chosen = [n for n in (sets or SOURCES[aspect]) if n in SOURCES[aspect]]
    if not exclude:
        return chosen
    all_groups = groups(rated_pairs(aspect).frame)
    left_out = {n for name in exclude for n in group_of(name, all_groups)}
    return [n for n in chosen if n not in left_out]


def _base(encoder: str | None) -> tuple[str, str]:
    """The base encoder's folder or id, and its identity (the packaged MiniLM's files hash to one name)."""
    from tsteval.metrics.content.embedding_cache import model_identity
    from tsteval.metrics.content.sentence_embedding import default_model

    model = encoder or default_model()
    return model, model_identity(model, 256)


def train_metric(aspect: str, out: str | Path | None = None, *, recipe: Recipe | None = None,
                 encoder: str | None = None, sets: Sequence[str] | None = None, exclude: Sequence[str] = (),
                 overwrite: bool = False, log: Log = print) -> Path:
    """Train a learned metric of ``aspect`` on :func:`training_sets` and return its folder: ``out`` (written
    atomically), or with ``out`` None the cache entry (trained once per key)."""
    from tsteval.classifiers.training_texts import text_digests
    from tsteval.core.atomic import check_output_directory, output_directory
    from tsteval.core.cache import cached_dir
    from tsteval.core.signature import content_hash
    from tsteval.metrics.learned.folder import save
    from tsteval.metrics.learned.training import fine_tune

    shapes = ASPECT_SHAPES[check_aspect(aspect)]
    recipe = recipe or Recipe(shape=shapes[0])
    if recipe.shape not in shapes:
        raise TstevalError(f"a learned {aspect} metric has the shape {' or '.join(shapes)}, not "
                           f"{recipe.shape!r}")
    names = training_sets(aspect, sets, exclude)
    if not names:
        raise TstevalError(f"no {aspect} set is left to train on once {list(exclude)} and their groups are out")
    pairs = rated_pairs(aspect, names)
    model_path, base = _base(encoder)
    record = {n: {"question": SOURCES[aspect][n], "rows": int((pairs.frame["set"] == n).sum()),
                  "files": dict(pairs.files[n])} for n in names}

    def build(directory: Path) -> None:
        log(f"train-metric {aspect} ({recipe.shape}): {len(pairs.frame):,} rated pairs of {len(names)} sets "
            f"({', '.join(names)}), base {base}")
        model, report = fine_tune(pairs.frame, model_path, recipe, log)
        digests = text_digests([*pairs.frame["input"], *pairs.frame["output"]])
        save(model, directory, aspect=aspect, sets=record, recipe=recipe.record(), report=report, base=base,
             digests=digests)

    if out is None:
        key = content_hash(KIND, aspect, record, base, recipe.record(), length=16)
        return cached_dir(KIND, key, build)
    check_output_directory(out, KIND, overwrite)
    with output_directory(out, KIND, overwrite) as tmp:
        build(tmp)
    return Path(out)
