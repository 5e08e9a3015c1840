"""Signatures identify what was scored with: two models with equal settings but different data never share one."""

from __future__ import annotations

import json
from pathlib import Path

from badinput import NEGATIVE, POSITIVE, run_cli, sentences


def test_equal_settings_different_data_give_different_signatures(tmp_path: Path, capsys) -> None:
    (tmp_path / "in.txt").write_text("the food was cold and the staff was rude .\n")
    (tmp_path / "out.txt").write_text("the food was warm and the staff was friendly .\n")
    signatures = []
    for seed in (0, 1):  # same backend, parameters and seed; different training sentences
        for style, words in (("neg", NEGATIVE), ("pos", POSITIVE)):
            (tmp_path / f"{style}{seed}.txt").write_text("\n".join(sentences(words, 10 + seed)) + "\n")
        model, run = tmp_path / f"model{seed}", tmp_path / f"run{seed}"
        assert run_cli(["train-classifier", "tfidf-lr", "--style", f"neg={tmp_path / f'neg{seed}.txt'}", "--style",
                        f"pos={tmp_path / f'pos{seed}.txt'}", "--out", model, "--quiet"], capsys).code == 0
        assert run_cli(["score", "--classifier", f"m={model}", "--pairs", tmp_path / "in.txt", tmp_path / "out.txt",
                        "--source-style", "neg", "--target-style", "pos", "--out", run, "--quiet"], capsys).code == 0
        signatures.append(json.loads((run / "signatures.json").read_text())["sti@m"])
    assert signatures[0] != signatures[1], signatures
    assert all(s.startswith("metric:sti|ground:nominal") for s in signatures)
