"""The LM metrics' prompt templates (``templates.yaml`` beside this module) and prompts rendered as token ids.

A template with ``chat: true`` (every ``judge_*`` template) is one user turn of the model's chat template with the
assistant's turn opened, so the model's next tokens are its answer; a model without a chat template reads the
prompt plainly, preceded by its BOS (else EOS) token, with ``"\\nAnswer:"`` after a judge's question.  A plain
``cond_lp`` prompt is followed by a space and the output.  The file's sha256 goes into every signature, so a changed
template is a different metric.

>>> sorted(templates()), [t["name"] for t in templates()["judge_fluency"]]
(['cond_lp', 'judge_content', 'judge_fluency', 'judge_style', 'logprop'], ['fluent', 'grammatical', 'natural'])
>>> fill("How {style} is: {output}", input="x", output="{a} b", style="formal", source="informal")
'How formal is: {a} b'
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from pathlib import Path

from tsteval.core.errors import TstevalError
from tsteval.core.integrity import sha256_file

TEMPLATES = Path(__file__).with_name("templates.yaml")
FIELDS = ("input", "output", "style", "source")
PLAIN_ANSWER = "\nAnswer:"
# LogProp's three instructions, in the order its formula names them (p_paraphrase, p_rewrite, p_repeat).
LOGPROP_ROLES = ("paraphrase", "rewrite", "repeat")


@cache
def templates() -> dict[str, list[dict[str, object]]]:
    """The templates of each metric, as the file holds them (checked: known fields only)."""
    import yaml

    data = yaml.safe_load(TEMPLATES.read_text(encoding="utf-8"))
    for metric, entries in data.items():
        for entry in entries:
            for key in ("conditional", "marginal", "prompt", "system", *LOGPROP_ROLES):
                if key in entry:
                    try:
                        fill(str(entry[key]), **dict.fromkeys(FIELDS, ""))
                    except (KeyError, IndexError) as error:
                        raise TstevalError(f"{TEMPLATES}: {metric} template {entry.get('name')!r} uses an unknown "
                                           f"field {error}; fields: {list(FIELDS)}") from None
    return data


def chosen_templates(metric: str, which: Sequence[int] | None = None) -> list[dict[str, object]]:
    """The templates of ``metric``, or those numbered ``which`` (from 1)."""
    entries = templates()[metric]
    return list(entries) if which is None else [entries[k - 1] for k in which]


@cache
def templates_hash() -> str:
    """The first 16 hex digits of the template file's sha256 (its identity in signatures)."""
    return sha256_file(TEMPLATES)[:16]


def fill(template: str, **values: str) -> str:
    """``template`` with its ``{field}`` replaced by ``values`` (a value's own braces are kept as they are)."""
    return template.format(**values)


def render(lm: object, text: str, chat: bool, system: str | None = None) -> list[int]:
    """The token ids of prompt ``text`` for ``lm`` (a :class:`~tsteval.metrics.naturalness.causal_lm.CausalLM`):
    a chat turn (after a ``system`` turn when given) when ``chat`` and the model has a chat template, else BOS +
    the text (after ``system`` and a blank line)."""
    return render_many(lm, [text], chat, system)[0]


def render_many(lm: object, texts: Sequence[str], chat: bool, system: str | None = None) -> list[list[int]]:
    """:func:`render` of each of ``texts``: each distinct text once (an input's prompt repeats for every system's
    output), the chat template applied in one call and the prompts tokenised in one batch (one call per prompt
    cost more than the forward passes on a GPU).  Equal texts share one list of ids."""
    tokenizer = lm.tokenizer
    distinct = list(dict.fromkeys(texts))
    if not distinct:
        return []
    if chat and getattr(tokenizer, "chat_template", None):
        turns = [{"role": "system", "content": system}] if system is not None else []
        rendered = tokenizer.apply_chat_template([[*turns, {"role": "user", "content": t}] for t in distinct],
                                                 tokenize=False, add_generation_prompt=True)
        ids = tokenizer(rendered, add_special_tokens=False)["input_ids"]
    else:
        plain = distinct if system is None else [f"{system}\n\n{t}" for t in distinct]
        ids = [[lm.start_id, *row] for row in tokenizer(plain, add_special_tokens=False)["input_ids"]]
    by_text = dict(zip(distinct, ids, strict=True))
    return [by_text[t] for t in texts]


def end_of_turn(lm: object) -> int:
    """The token that ends the assistant's turn in ``lm``'s chat template (the first token after the answer in a
    rendered conversation), else the end-of-text (EOS, else BOS) token."""
    tokenizer = lm.tokenizer
    end = tokenizer.eos_token_id if tokenizer.eos_token_id is not None else lm.start_id
    if not is_chat(lm):
        return end
    user = [{"role": "user", "content": "a"}]
    opened = tokenizer.apply_chat_template(user, tokenize=False, add_generation_prompt=True)
    answered = tokenizer.apply_chat_template([*user, {"role": "assistant", "content": "b"}], tokenize=False)
    if not answered.startswith(opened + "b"):
        return end
    after = tokenizer(answered[len(opened) + 1:], add_special_tokens=False)["input_ids"]
    special = after and (after[0] in tokenizer.all_special_ids
                         or getattr(tokenizer.added_tokens_decoder.get(after[0]), "special", False))
    return after[0] if special else end


def is_chat(lm: object) -> bool:
    """Whether ``lm`` reads chat turns (has a chat template)."""
    return bool(getattr(lm.tokenizer, "chat_template", None))
