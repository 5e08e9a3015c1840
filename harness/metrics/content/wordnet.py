"""WordNet 3.0 for NLTK from Debian's ``wordnet-base`` files, without any download at run time.

NLTK's :class:`WordNetCorpusReader` needs the WordNet database files plus a ``lexnames`` file, which
Debian does not ship.  We build an NLTK-compatible directory in the tsteval cache holding symlinks to the
Debian files and a generated ``lexnames`` (the 45 standard lexicographer files of WordNet 3.0) and point
a reader at it.  The files are copied (about 30 MB, once), not linked: NLTK's path sandbox
resolves symlinks, refuses hard-linked files and only reads below ``nltk.data.path``, so the cache directory
itself is added to ``nltk.data.path``.
The source directory is ``$TSTEVAL_WORDNET``, else ``/usr/share/wordnet``.
"""

from __future__ import annotations

import json
import os
import shutil
import warnings
from collections import defaultdict
from functools import lru_cache
from pathlib import Path

import nltk.data
from nltk.corpus.reader.wordnet import WordNetCorpusReader

from tsteval.core.cache import cache_root, cached_dir
from tsteval.core.errors import TstevalError
from tsteval.core.signature import content_hash

DEFAULT_WORDNET = Path("/usr/share/wordnet")
POS_FILES = ("adj", "adv", "noun", "verb")
REQUIRED = tuple(f"{kind}.{pos}" for kind in ("data", "index") for pos in POS_FILES)
OPTIONAL = tuple(f"{pos}.exc" for pos in POS_FILES) + ("cntlist.rev", "index.sense")

# WordNet 3.0 lexicographer files: number = position, syntactic category 1 noun, 2 verb, 3 adj, 4 adv.
LEXNAMES: tuple[tuple[str, int], ...] = (
    ("adj.all", 3), ("adj.pert", 3), ("adv.all", 4), ("noun.Tops", 1), ("noun.act", 1), ("noun.animal", 1),
    ("noun.artifact", 1), ("noun.attribute", 1), ("noun.body", 1), ("noun.cognition", 1),
    ("noun.communication", 1), ("noun.event", 1), ("noun.feeling", 1), ("noun.food", 1), ("noun.group", 1),
    ("noun.location", 1), ("noun.motive", 1), ("noun.object", 1), ("noun.person", 1), ("noun.phenomenon", 1),
    ("noun.plant", 1), ("noun.possession", 1), ("noun.process", 1), ("noun.quantity", 1), ("noun.relation", 1),
    ("noun.shape", 1), ("noun.state", 1), ("noun.substance", 1), ("noun.time", 1), ("verb.body", 2),
    ("verb.change", 2), ("verb.cognition", 2), ("verb.communication", 2), ("verb.competition", 2),
    ("verb.consumption", 2), ("verb.contact", 2), ("verb.creation", 2), ("verb.emotion", 2), ("verb.motion", 2),
    ("verb.perception", 2), ("verb.possession", 2), ("verb.social", 2), ("verb.stative", 2), ("verb.weather", 2),
    ("adj.ppl", 3),
)


def wordnet_source() -> Path:
    """The directory holding the WordNet 3.0 database files: ``$TSTEVAL_WORDNET`` or ``/usr/share/wordnet``."""
    return Path(os.environ.get("TSTEVAL_WORDNET", DEFAULT_WORDNET))


def lexnames_text() -> str:
    """The ``lexnames`` file NLTK expects: ``NN<TAB>name<TAB>category`` per line."""
    return "".join(f"{i:02d}\t{name}\t{cat}\n" for i, (name, cat) in enumerate(LEXNAMES))


def wordnet_dir(source: Path | None = None) -> Path:
    """An NLTK-compatible WordNet directory in the tsteval cache, built from ``source`` once."""
    source = Path(source or wordnet_source()).resolve()
    missing = [name for name in REQUIRED if not (source / name).is_file()]
    if missing:
        raise TstevalError(
            f"WordNet 3.0 files {missing} not found in {source}; install the Debian package 'wordnet-base' "
            "(apt-get install wordnet-base) or set TSTEVAL_WORDNET to a directory holding them")
    stats = [(name, (source / name).stat().st_size) for name in REQUIRED + OPTIONAL if (source / name).is_file()]

    def build(tmp: Path) -> None:
        for name, _ in stats:
            shutil.copyfile(source / name, tmp / name)
        (tmp / "lexnames").write_text(lexnames_text())

    return cached_dir("wordnet", content_hash(str(source), stats, lexnames_text()), build)


class DebianWordNetReader(WordNetCorpusReader):
    """NLTK's reader over WordNet 3.0 files that are not in ``nltk_data``.

    NLTK maps a non-"wordnet" version to WordNet 3.0 (for the multilingual data) by loading its own
    downloaded ``wordnet`` corpus; these files *are* WordNet 3.0, so the map is the identity (``None``).
    """

    def _load_lemma_pos_offset_map(self) -> None:
        """NLTK's parse of the four index files (about 3 CPU-seconds, every process), kept as JSON in the tsteval
        cache (kind ``wordnet-index``, keyed by the database directory and NLTK's version) and read from there."""
        root = str(getattr(self.root, "path", self.root))
        parsed = []

        def build(tmp: Path) -> None:
            super(DebianWordNetReader, self)._load_lemma_pos_offset_map()
            parsed.append(True)
            (tmp / "lemma_pos_offset_map.json").write_text(json.dumps(self._lemma_pos_offset_map))

        entry = cached_dir("wordnet-index", content_hash(root, nltk.__version__), build)
        if not parsed:
            self._lemma_pos_offset_map = defaultdict(
                dict, json.loads((entry / "lemma_pos_offset_map.json").read_text()))

    def map_wn(self, version: str = "wordnet") -> None:
        """No mapping: the loaded database is WordNet 3.0 itself."""
        return None


@lru_cache(maxsize=4)
def _reader(root: str) -> WordNetCorpusReader:
    if root not in nltk.data.path:
        nltk.data.path.append(root)
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="The multilingual functions are not available")
        return DebianWordNetReader(root, None)


def load_wordnet(source: Path | None = None) -> WordNetCorpusReader:
    """An NLTK WordNet reader over the Debian files (no multilingual data).

    Built, verified and read once per process for each source directory and cache root: METEOR asks for it on
    every call, and reading WordNet's indices costs about a CPU-second.
    """
    return _loaded(Path(source or wordnet_source()).resolve(), cache_root())


@lru_cache(maxsize=4)
def _loaded(source: Path, cache: Path) -> WordNetCorpusReader:
    return _reader(str(wordnet_dir(source)))
