"""Run options declared once: name, default, help, the command-line flag, the manifest key and one reader that
converts and checks a value from any front end.

``tsteval score`` derives its flags from :data:`OPTIONS` (:func:`add_flags`, :func:`from_args`), the manifest
reader reads each option's key through the same :meth:`Option.read` into a :class:`RunOptions`,
``tsteval.evaluate`` takes each as a keyword, and :class:`~tsteval.Plan` (a :class:`RunOptions` with the rest of a
plan) holds them as fields read by the same readers, so a value means the same everywhere and a bad one is the same
one-line message (the manifest adds its file and key, the command line ``tsteval: error:``).  A new run option is
one :class:`Option` in :data:`OPTIONS` (and the code that uses it).

>>> OPTIONS["threads"].read("2"), OPTIONS["modifications"].read("none,mask")
(2, ('none', 'mask'))
>>> OPTIONS["device"].read("cuda:1")
'cuda:1'
>>> OPTIONS["folds"].read("1")
Traceback (most recent call last):
...
tsteval.core.errors.TstevalError: folds must be an integer of at least 2, not '1'
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, make_dataclass
from pathlib import Path
from types import MappingProxyType

from tsteval.core.errors import TstevalError, did_you_mean, quote
from tsteval.metrics.languages import DEFAULT_LANGUAGE
from tsteval.metrics.naturalness.packaged import DEFAULT_LM, DefaultModel, packaged_help


@dataclass(frozen=True)
class Option:
    """One run option: ``name`` is the :class:`~tsteval.Plan` field and the ``evaluate`` keyword, ``flag`` the
    ``tsteval score`` flag, ``manifest`` the dotted manifest key; ``reader`` converts and checks any front end's
    value (text from the command line, a YAML scalar or list, a Python value) and raises one
    :class:`TstevalError` line."""

    name: str
    default: object
    help: str
    reader: Callable[[str, object], object]
    flag: str
    manifest: str
    metavar: str = "VALUE"

    def read(self, value: object) -> object:
        """``value`` converted and checked (the default when None)."""
        return self.default if value is None else self.reader(self.name, value)


def _integer(low: int, high: float = math.inf) -> Callable[[str, object], int]:
    def read(name: str, value: object) -> int:
        try:
            if isinstance(value, bool) or (isinstance(value, float) and not value.is_integer()):
                raise ValueError
            number = int(value)
        except (TypeError, ValueError):
            number = None
        if number is None or not low <= number < high:
            bound = f"of at least {low}" if high == math.inf else f"in [{low}, {'2**32' if high == 2**32 else high})"
            raise TstevalError(f"{name} must be an integer {bound}, not {quote(str(value))}")
        return number
    return read


def _optional_positive(name: str, value: object) -> int | None:
    return None if value in ("", "none") else _integer(1)(name, value)


def _share(name: str, value: object) -> float:
    try:
        share = float(value)
    except (TypeError, ValueError):
        share = math.nan
    if not 0 < share <= 1:
        raise TstevalError(f"{name} must be a number in (0, 1], not {quote(str(value))}")
    return share


def _one_of(*choices: str) -> Callable[[str, object], str]:
    def read(name: str, value: object) -> str:
        if value not in choices:
            raise TstevalError(f"{name} must be one of {list(choices)}, not {quote(str(value))}"
                               f"{did_you_mean(str(value), choices, '; ')}")
        return str(value)
    return read


def _precision(name: str, value: object) -> str:
    from tsteval.core.devices import PRECISIONS

    return _one_of(*PRECISIONS)(name, value)


def _ground(name: str, value: object) -> str:
    from tsteval.metrics.style.intensity import GROUND_KINDS

    return _one_of(*GROUND_KINDS)(name, value)


def _device(name: str, value: object) -> str:
    from tsteval.core.devices import DEVICES

    text = str(value)
    if text not in DEVICES and not (text.startswith("cuda:") and text[5:].isdigit()):
        raise TstevalError(f"{name} must be one of {list(DEVICES)} (or cuda:N), not {quote(text)}")
    return text


def _names(value: object) -> tuple[str, ...]:
    """A comma-separated text (the command line) or a list (a manifest, Python) as names."""
    if isinstance(value, str):
        return tuple(v.strip() for v in value.split(",") if v.strip())
    if isinstance(value, Sequence):
        return tuple(str(v) for v in value)
    raise TstevalError(f"expected names, not {type(value).__name__}")


def _modifications(name: str, value: object) -> tuple[str, ...]:
    from tsteval.metrics.content.scorer import check_modifications

    modifications = _names(value)
    if not modifications:
        raise TstevalError(f"{name}: give at least one (none, mask, remove, attribution-mask, attribution-delete, "
                           "erase)")
    return check_modifications(modifications, name)


def _baselines(name: str, value: object) -> tuple[str, ...]:
    from tsteval.experiment.plan.baselines import check_baselines

    return check_baselines(_names(value))


def _vectors(name: str, value: object) -> object:
    if value in ("glove", "word2vec") or not isinstance(value, (str, Path)):
        return value
    if not Path(value).is_dir():
        raise TstevalError(f"{name} must be glove, word2vec or a folder of saved word vectors, not {quote(str(value))}")
    return Path(value)


def _joint(name: str, value: object) -> object:
    from tsteval.metrics.joint.score import JointRecipe

    if value in ("auto", "strap", "none") or isinstance(value, JointRecipe):
        return value
    if isinstance(value, Mapping) or (isinstance(value, str) and "," in value):
        try:
            return JointRecipe.parse(value if isinstance(value, str) else {k: str(v) for k, v in value.items()})
        except TstevalError as error:
            raise TstevalError(f"the {name} recipe: {error}") from None
    shown = quote(value) if isinstance(value, str) else type(value).__name__
    raise TstevalError(f"{name} must be auto, strap, none or a recipe STYLE,CONTENT,FLUENCY, not {shown}")


def _text(name: str, value: object) -> str:
    if not isinstance(value, str) or not value.strip():
        raise TstevalError(f"{name} must be a non-empty text, not {quote(str(value))}")
    return value


def _address(name: str, value: object) -> str | None:
    return None if value is None else _text(name, value)


def _language_model(name: str, value: object) -> str:
    from tsteval.metrics.naturalness.lm_names import check_model_name

    if isinstance(value, DefaultModel):  # read again (a Plan made from read options): still the default
        return value
    return check_model_name(_text(name, value), name)


def _endpoint(name: str, value: object) -> str | None:
    from tsteval.backends.options import check_endpoint

    return None if value in (None, "", "none") else check_endpoint(name, value)


def _variable(name: str, value: object) -> str:
    from tsteval.backends.options import check_variable

    return check_variable(name, value)


def _line(name: str, value: object) -> str:
    if not isinstance(value, str) or "\n" in value:
        shown = quote(value) if isinstance(value, str) else type(value).__name__
        raise TstevalError(f"{name} must be one line of text (the model's start token as text, e.g. <|im_start|>), "
                           f"not {shown}")
    return value


def _boolean(name: str, value: object) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text not in ("true", "false", "yes", "no", "1", "0"):
        raise TstevalError(f"{name} must be true or false, not {quote(str(value))}")
    return text in ("true", "yes", "1")


def _language(name: str, value: object) -> str:
    from tsteval.metrics.languages import check_language

    return check_language(name, value)


def _text_form(name: str, value: object) -> str:
    from tsteval.core.text_form import TEXT_FORMS

    return _one_of(*TEXT_FORMS)(name, value)


def _style_labels(name: str, value: object) -> Mapping[str, str]:
    """``LABEL=NAME,...`` (the command line) or a mapping (a manifest, Python): what each style label means."""
    from tsteval.core.options import key_values

    if isinstance(value, Mapping):
        pairs = {str(k): str(v) for k, v in value.items()}
    elif isinstance(value, str):
        pairs = key_values([v for v in value.split(",") if v.strip()], name, "NAME")
    else:
        raise TstevalError(f"{name} must map each style label to its name (0=negative,1=positive), not "
                           f"{type(value).__name__}")
    empty = [label for label, text in pairs.items() if not label.strip() or not text.strip()]
    if empty:
        raise TstevalError(f"{name}: label {quote(empty[0])} has an empty name or is empty itself (0=negative)")
    return MappingProxyType({label.strip(): text.strip() for label, text in pairs.items()})


def _classifier_labels(name: str, value: object) -> Mapping[str, Mapping[str, str]]:
    """``NAME=LABEL:STYLE,...`` (the command line) or ``{NAME: {LABEL: STYLE}}`` (a manifest, Python): which style
    each label of a ready-made classifier's model scores."""
    from tsteval.core.options import check_column_name, label_maps

    if isinstance(value, str):
        maps = label_maps(value, name)
    elif isinstance(value, Mapping) and all(isinstance(m, Mapping) for m in value.values()):
        maps = {check_column_name(str(n), name): {str(k).strip(): str(v).strip() for k, v in m.items()}
                for n, m in value.items()}
    else:
        raise TstevalError(f"{name} must map each classifier NAME to {{LABEL: STYLE}} (e.g. {{sentiment: "
                           f"{{NEGATIVE: '0', POSITIVE: '1'}}}}), not {quote(str(value))}")
    empty = [n for n, m in maps.items() if not m or not all(k and v for k, v in m.items())]
    if empty:
        raise TstevalError(f"{name}: the mapping of {quote(empty[0])} is empty or has an empty label or style")
    return MappingProxyType({n: MappingProxyType(m) for n, m in maps.items()})


OPTIONS: Mapping[str, Option] = MappingProxyType({o.name: o for o in (
    Option("device", "cpu", "where neural models run (the sentence encoder, SmolLM2): cpu, cuda, cuda:N or auto "
           "(CUDA when present)", _device, "--device", "device", "DEVICE"),
    Option("threads", None, "torch threads for every neural model (default: torch's; 1 per process on a shared "
           "machine)", _optional_positive, "--threads", "threads", "N"),
    Option("precision", "auto", "floating-point precision of the neural models (the sentence encoder, BERTScore, "
           "the causal LM, and a neural classifier the run trains unless its params name one): auto (bf16 where "
           "the device computes it natively: a CUDA GPU from Ampere on, a CPU with AVX512-BF16 or AMX; fp32 "
           "elsewhere), fp32, bf16, or on a CUDA device fp16; values differ, so the signatures name the precision "
           "that ran", _precision, "--precision", "precision", "PRECISION"),
    Option("seed", 0, "seed of every sampled or trained thing and of the bootstrap", _integer(0, 2**32), "--seed",
           "seed", "N"),
    Option("folds", 5, "cross-fitting folds of the adversarial naturalness classifiers (at least 2)", _integer(2),
           "--folds", "metrics.folds", "K"),
    Option("ground", "nominal", "ground distance of STI: nominal (any two styles 1 apart) or ordinal (ordered "
           "styles)", _ground, "--ground", "metrics.style.ground", "KIND"),
    Option("modifications", ("none",), "text modifications before the content metrics: none, remove, mask (with "
           "a lexicon), attribution-mask, attribution-delete (a transformer classifier), erase (LEACE on a "
           "style-labelled corpus)", _modifications, "--modification", "metrics.content.modifications", "MODES"),
    Option("placeholder", "<masked>", "token that replaces masked style words", _text, "--placeholder",
           "metrics.content.placeholder", "TOKEN"),
    Option("vectors", "glove", "word vectors of the embedding metrics: glove, word2vec (trained on the corpus) or "
           "a saved folder", _vectors, "--vectors", "metrics.content.vectors", "VECTORS"),
    Option("encoder", None, "the sentence encoder of sbert, bertscore_* and the erase modification: the packaged "
           "all-MiniLM-L6-v2 (default; English) or a Hugging Face id or local folder (LaBSE, multilingual-e5, ...: "
           "its mean-pooled last hidden states; its languages are yours to know)", _address, "--encoder",
           "metrics.content.encoder", "ID_OR_DIR"),
    Option("learned", None, "the folder of a learned content metric (tsteval train-metric): scored by the metric "
           "learned", _address, "--learned", "metrics.content.learned", "DIR"),
    Option("attribution_threshold", 0.2, "share of a text's attribution mass masked by attribution-mask/-delete",
           _share, "--attribution-threshold", "metrics.content.attribution.threshold", "SHARE"),
    Option("baselines", (), "trivial systems scored beside the real ones: copy, delete-lexicon, retrieve-nearest",
           _baselines, "--baselines", "baselines", "NAMES"),
    Option("joint", "auto", "the joint score J: auto (STRAP's when its columns are scored), strap, none, or "
           "[NAME=]STYLE,CONTENT,FLUENCY>=T", _joint, "--joint", "joint", "RECIPE"),
    Option("engine", "local", "where the per-sentence metrics run: local or ray", _one_of("local", "ray"),
           "--engine", "engine.name", "ENGINE"),
    Option("address", None, "with the ray engine: the Ray cluster to join (HOST:PORT from `ray start --head`)",
           _address, "--address", "engine.address", "HOST:PORT"),
    Option("workers", None, "with the ray engine: scoring workers (default: one per CPU of the cluster); locally "
           "with --device cuda: the processes scoring the CPU-side metrics beside the GPU (default: the cores but one)",
           _optional_positive, "--workers", "engine.workers", "N"),
    Option("language_model", DEFAULT_LM, "the causal LM of every LM metric (ppl/lp_mean/slor@smollm2, cond_lp, "
           f"logprop_*, judge_*): a packaged one, {packaged_help()}; or a Hugging Face id or a local folder; with "
           "--lm-endpoint, the name the server serves it under (default: the one it lists)",
           _language_model, "--language-model", "metrics.language_model", "MODEL"),
    Option("lm_endpoint", None, "the base URL of an OpenAI-compatible server (vLLM, llama.cpp's server, "
           "llama-cpp-python, a hosted API; e.g. http://127.0.0.1:8000/v1) that serves --language-model to the "
           "LM metrics (judge_*, cond_lp, logprop_*, ppl, lp_mean, slor) instead of the in-process model "
           "(default: none, in process)", _endpoint,
           "--lm-endpoint", "metrics.lm.endpoint", "URL"),
    Option("api_key_env", "OPENAI_API_KEY", "the environment variable holding the LM server's API key (the key "
           "itself is never written anywhere)", _variable, "--api-key-env", "metrics.lm.api_key_env", "VAR"),
    Option("max_concurrency", 4, "requests in flight at once to the LM server", _integer(1, 257),
           "--max-concurrency", "metrics.lm.max_concurrency", "N"),
    Option("lm_start_text", "", "with --lm-endpoint: the text before each text the server scores for ppl and "
           "lp_mean, the model's start token as text (e.g. <|im_start|> for SmolLM2, as in process; default: the "
           "server's own start)", _line, "--lm-start-text", "metrics.lm.start_text", "TEXT"),
    Option("dry_run", False, "with --lm-endpoint: print the requests and prompt tokens the run would send to the LM "
           "server, per metric, and send none (nothing is scored or written)", _boolean, "--dry-run",
           "metrics.lm.dry_run", ""),
    Option("lm_tokenizer", None, "with --lm-endpoint: the served model's tokenizer (a Hugging Face id or folder, or "
           "a packaged model's name), whose chat template renders the prompts of cond_lp and logprop_* (default: "
           "the served name, where it loads as one)", _language_model, "--lm-tokenizer", "metrics.lm.tokenizer",
           "ID_OR_DIR"),
    Option("batch_tokens", None, "padded tokens per batch of the causal LM (none: 2048 on a CPU, 16384 on a GPU)",
           _optional_positive, "--batch-tokens", "metrics.batch_tokens", "N"),
    Option("text_form", "auto", "how the transfers are written, for the neural LMs: as-is, tokenised-lowercase "
           "(detokenised and sentence-cased before an LM reads them) or auto (detected)", _text_form,
           "--text-form", "metrics.text_form", "FORM"),
    Option("language", DEFAULT_LANGUAGE, "the texts' language, an ISO 639 code (en, ru, hi, zh...): recorded in the "
           "signature of every metric whose model is tied to languages, and each such metric whose model does not "
           "cover it says so in one line (scored anyway); a run whose texts are mostly in another script than the "
           "language's says so too (docs/languages.md)", _language, "--language", "language", "CODE"),
    Option("style_labels", MappingProxyType({}), "what each style label means, LABEL=NAME,... (0=negative,"
           "1=positive): LM prompts and reports name styles by it (default: the reader's names, else the labels)",
           _style_labels, "--style-labels", "transfers.style_labels", "LABEL=NAME,..."),
    Option("classifier_labels", MappingProxyType({}), "which run style each label of a ready-made classifier's "
           "model scores (--classifier NAME=hf:MODEL), NAME=LABEL:STYLE,... (sentiment=NEGATIVE:0,POSITIVE:1; "
           "several classifiers one after another); needed where the model's labels (config.id2label) are neither "
           "the styles nor their --style-labels names", _classifier_labels, "--classifier-labels",
           "classifier_labels", "NAME=LABEL:STYLE,..."),
)})


def _read_all(self: RunOptions) -> None:
    """Every option's value read (converted and checked) by its option; None gives the default."""
    for name, option in OPTIONS.items():
        object.__setattr__(self, name, option.read(getattr(self, name)))


RunOptions = make_dataclass(
    "RunOptions", [(o.name, object, field(default_factory=lambda d=o.default: d)) for o in OPTIONS.values()],
    namespace={"__post_init__": _read_all, "__module__": __name__, "__doc__": """Every run option of :data:`OPTIONS`
    as a keyword-only field with its default, each value read by its option when made (a bad one: its one-line
    :class:`TstevalError`); :class:`~tsteval.Plan` extends it.

    >>> options = RunOptions(threads="2", modifications="none,mask")
    >>> options.threads, options.modifications, options.folds
    (2, ('none', 'mask'), 5)
    >>> option_values(options)["device"]
    'cpu'
    """}, frozen=True, kw_only=True)


def option_values(options: RunOptions) -> dict[str, object]:
    """The run options of ``options`` (a :class:`RunOptions` or a :class:`~tsteval.Plan`) by name."""
    return {name: getattr(options, name) for name in OPTIONS}


def add_flags(parser: argparse.ArgumentParser | argparse._ArgumentGroup, names: Sequence[str]) -> None:
    """Add the flags of ``names`` to ``parser``; values stay text until :func:`from_args` reads them."""
    for name in names:
        option = OPTIONS[name]
        if isinstance(option.default, bool):  # a switch
            parser.add_argument(option.flag, dest=name, action="store_true", default=None,
                                help=option.help.replace("%", "%%"))
            continue
        default = option.default if not isinstance(option.default, tuple) else ",".join(option.default)
        parser.add_argument(option.flag, dest=name, metavar=option.metavar,
                            help=f"{option.help} (default: {default or 'none'})".replace("%", "%%"))


def from_args(args: argparse.Namespace) -> dict[str, object]:
    """Every run option as read from the command line (each default when not given)."""
    return {name: option.read(getattr(args, name, None)) for name, option in OPTIONS.items()}
