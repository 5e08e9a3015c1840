"""WordNet 3.0 for NLTK from Debian's ``wordnet-base`` files, without any download at run time.

NLTK's :class:`WordNetCorpusReader` needs the WordNet database files plus a ``lexnames`` file, which
Debian does not ship.  We build an NLTK-compatible directory in the tsteval cache holding symlinks to the
Debian files and a generated ``lexnames`` (the 45 standard lexicographer files of WordNet 3.0) and point
a reader at it.  The files are copied (about 30 MB, once), not linked: NLTK's path sandbox
resolves symlinks, refuses hard-linked files and only reads below ``nltk.data.path``, so the cache directory
itself is added to ``nltk.data.path``.
The source directory is ``$TSTEVAL_WORDNET``, else ``/usr/share/wordnet``.

The reader parses the index and exception files itself with plain file reads (NLTK's ``nltk.data`` stream takes
about 3 CPU-seconds for them; the results equal NLTK's, tests/test_content_metrics.py), keeps the lemma index in
the cache in :mod:`marshal`'s format, and gives METEOR the lemma names of a word's synsets from the data files'
lemma fields (:meth:`DebianWordNetReader.lemma_names_of`) without building NLTK's ``Synset`` objects.
"""

from __future__ import annotations

import gc
import marshal
import mmap
import os
import re
import shutil
import warnings
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path

import nltk.data
from nltk.corpus.reader.wordnet import ADJ, ADJ_SAT, POS_LIST, WordNetCorpusReader, WordNetError

from tsteval.core.cache import cache_root, cached_dir
from tsteval.core.errors import TstevalError
from tsteval.core.signature import content_hash

DEFAULT_WORDNET = Path("/usr/share/wordnet")
POS_FILES = ("adj", "adv", "noun", "verb")
REQUIRED = tuple(f"{kind}.{pos}" for kind in ("data", "index") for pos in POS_FILES)
OPTIONAL = tuple(f"{pos}.exc" for pos in POS_FILES) + ("cntlist.rev", "index.sense")
INDEX_FILE = "lemma_pos_offset_map.marshal"
MARSHAL_VERSION = 4  # readable by every Python since 3.4
SYNTACTIC_MARKER = re.compile(r"(.*?)(\([^()]*\))?$")  # NLTK's split of a lemma name and its marker

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


def database_lines(path: Path) -> list[str]:
    """The lines of a WordNet database file as NLTK's reader reads them: UTF-8 (a leading BOM skipped), split as
    ``str.splitlines`` splits, in one plain read instead of NLTK's ``nltk.data`` stream."""
    return path.read_bytes().decode("utf-8-sig").splitlines()


@contextmanager
def collector_paused() -> Iterator[None]:
    """The cyclic garbage collector off while a few hundred thousand acyclic containers are built (it would
    re-scan them several times over), restored afterwards."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def satellite_offsets(directory: Path) -> set[int]:
    """NLTK's ``_scan_satellites``: the offsets of the adjective-satellite synsets (type ``s``) in ``data.adj``."""
    offsets = set()
    for line in database_lines(directory / "data.adj"):
        fields = line.split(None, 3)
        if not line.startswith(" ") and len(fields) >= 3 and fields[2] == ADJ_SAT:
            offsets.add(int(fields[0]))
    return offsets


def index_entry(line: str) -> tuple[str, str, list[int]]:
    """Lemma, part of speech and synset offsets of one ``index.*`` line: ``lemma pos synset_cnt p_cnt
    [ptr_symbol...] sense_cnt tagsense_cnt synset_offset...`` (ValueError when the counts do not fit)."""
    fields = line.split()
    n_synsets, n_pointers = int(fields[2]), int(fields[3])
    start = 6 + n_pointers
    if n_synsets <= 0 or n_pointers < 0 or len(fields) < start + n_synsets:
        raise ValueError(f"{n_synsets} synsets and {n_pointers} pointers do not fit {len(fields)} fields")
    if int(fields[4 + n_pointers]) != n_synsets:
        raise ValueError(f"sense count {fields[4 + n_pointers]} is not the synset count {n_synsets}")
    return fields[0], fields[1], [int(field) for field in fields[start:start + n_synsets]]


def lemma_index(directory: Path, satellites: set[int]) -> dict[str, dict[str, list[int]]]:
    """NLTK's ``_load_lemma_pos_offset_map`` on plain file reads: lemma -> part of speech -> synset offsets, in
    NLTK's order (files adj, adv, noun, verb), each ``a`` entry followed by an ``s`` entry with those of its
    offsets that are ``satellites``."""
    index: dict[str, dict[str, list[int]]] = {}
    with collector_paused():
        for suffix in WordNetCorpusReader._FILEMAP.values():
            for number, line in enumerate(database_lines(directory / f"index.{suffix}"), 1):
                if line.startswith(" "):
                    continue
                try:
                    lemma, pos, offsets = index_entry(line)
                except (ValueError, IndexError) as error:
                    raise WordNetError(f"file index.{suffix}, line {number}: {error}") from error
                entry = index.setdefault(lemma, {})
                entry[pos] = offsets
                if pos == ADJ:
                    entry[ADJ_SAT] = [offset for offset in offsets if offset in satellites]
    return index


def exception_map(directory: Path) -> dict[str, dict[str, list[str]]]:
    """NLTK's ``_load_exception_map``: per part of speech, irregular form -> base forms (``s`` shares ``a``'s)."""
    exceptions = {pos: {terms[0]: terms[1:] for terms in map(str.split, database_lines(directory / f"{suffix}.exc"))}
                  for pos, suffix in WordNetCorpusReader._FILEMAP.items()}
    exceptions[ADJ_SAT] = exceptions[ADJ]
    return exceptions


def lemma_names(line: bytes) -> tuple[str, ...]:
    """The lemma names of the synset on one ``data.*`` line (``offset lex_filenum ss_type w_cnt word lex_id
    ...``), as NLTK's ``Synset.lemma_names()``: a word's trailing syntactic marker such as ``(p)`` removed."""
    _, _, _, count, rest = line.decode("utf-8").split(None, 4)
    fields = 2 * int(count, 16)  # a word and its lex_id per lemma
    return tuple(SYNTACTIC_MARKER.match(word).group(1) for word in rest.split(None, fields)[:fields:2])


class DebianWordNetReader(WordNetCorpusReader):
    """NLTK's reader over WordNet 3.0 files that are not in ``nltk_data``, reading its index and exception files
    by plain file reads (:func:`satellite_offsets`, :func:`lemma_index`, :func:`exception_map`), the lemma index
    kept in the tsteval cache, with :meth:`lemma_names_of` for METEOR.

    NLTK maps a non-"wordnet" version to WordNet 3.0 (for the multilingual data) by loading its own
    downloaded ``wordnet`` corpus; these files *are* WordNet 3.0, so the map is the identity (``None``).
    """

    def __init__(self, root: str, omw_reader: object = None) -> None:
        self.directory = Path(root)
        self._data_maps: dict[str, mmap.mmap] = {}
        self._synset_names: dict[tuple[str, int], tuple[str, ...]] = {}
        super().__init__(root, omw_reader)

    def _scan_satellites(self) -> None:
        """:func:`satellite_offsets` of the database."""
        self.satellite_offsets = satellite_offsets(self.directory)

    def _load_lemma_pos_offset_map(self) -> None:
        """:func:`lemma_index` of the database, kept in the tsteval cache (kind ``wordnet-index``, keyed by the
        database directory) in :mod:`marshal`'s format, which reads back in about a tenth of a CPU-second."""
        built: list[dict[str, dict[str, list[int]]]] = []

        def build(tmp: Path) -> None:
            built.append(lemma_index(self.directory, self.satellite_offsets))
            (tmp / INDEX_FILE).write_bytes(marshal.dumps(built[0], MARSHAL_VERSION))

        entry = cached_dir("wordnet-index", content_hash(str(self.directory), INDEX_FILE), build)
        if not built:
            with collector_paused():
                built.append(marshal.loads((entry / INDEX_FILE).read_bytes()))
        self._lemma_pos_offset_map = defaultdict(dict, built[0])

    def _load_exception_map(self) -> None:
        """:func:`exception_map` of the database."""
        self._exception_map = exception_map(self.directory)

    def lemma_names_of(self, word: str) -> set[str]:
        """``{lemma.name() for synset in self.synsets(word) for lemma in synset.lemmas()}``, read from the
        lemma fields of the data files (:func:`lemma_names`, kept per synset) without building NLTK's
        ``Synset`` objects."""
        word = word.lower()
        return {name for pos in POS_LIST for form in self._morphy(word, pos)
                for offset in self._lemma_pos_offset_map[form].get(pos, ())
                for name in self._names_at(pos, offset)}

    def _names_at(self, pos: str, offset: int) -> tuple[str, ...]:
        """:func:`lemma_names` of the synset at byte ``offset`` of ``data.<pos>``."""
        if (pos, offset) not in self._synset_names:
            data = self._data_map(pos)
            end = data.find(b"\n", offset)
            line = data[offset:end if end >= 0 else len(data)]
            if not line.startswith(b"%08d " % offset):
                raise WordNetError(f"no synset at offset {offset} of data.{self._FILEMAP[pos]}")
            self._synset_names[pos, offset] = lemma_names(line)
        return self._synset_names[pos, offset]

    def _data_map(self, pos: str) -> mmap.mmap:
        """``data.<pos>`` mapped into memory (read-only), opened once."""
        if pos not in self._data_maps:
            with open(self.directory / f"data.{self._FILEMAP[pos]}", "rb") as handle:
                self._data_maps[pos] = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
        return self._data_maps[pos]

    def map_wn(self, version: str = "wordnet") -> None:
        """No mapping: the loaded database is WordNet 3.0 itself."""
        return None


@lru_cache(maxsize=4)
def _reader(root: str) -> DebianWordNetReader:
    if root not in nltk.data.path:
        nltk.data.path.append(root)
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="The multilingual functions are not available")
        return DebianWordNetReader(root, None)


def load_wordnet(source: Path | None = None) -> DebianWordNetReader:
    """An NLTK WordNet reader over the Debian files (no multilingual data).

    Built, verified and read once per process for each source directory and cache root: METEOR asks for it on
    every call, and reading WordNet's indices costs about a tenth of a CPU-second from the cache.
    """
    return _loaded(Path(source or wordnet_source()).resolve(), cache_root())


@lru_cache(maxsize=4)
def _loaded(source: Path, cache: Path) -> DebianWordNetReader:
    return _reader(str(wordnet_dir(source)))
