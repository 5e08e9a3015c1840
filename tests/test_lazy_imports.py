"""Heavy libraries load only when a metric needs them: scoring STI with a TF-IDF classifier and BLEU, chrF and
ROUGE-L imports no POT (which imports torch and scikit-learn's clustering), torch, transformers, Ray or NLTK (only
METEOR needs it)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tsteval.classifiers.base import make_classifier

SCRIPT = """
import json, sys
from tsteval.cli.main import main
code = main(sys.argv[1:])
heavy = ["ot", "torch", "transformers", "sklearn.cluster", "ray", "nltk"]
before = [m for m in heavy if m in sys.modules]
from tsteval.metrics.style.intensity import emd
emd([[0.2, 0.8]], [[0.6, 0.4]], ground=[[0.0, 1.0], [1.0, 0.0]])  # a matrix ground is POT's job
print(json.dumps({"code": code, "before": before, "ot_after_matrix": "ot" in sys.modules}))
"""


def test_sti_and_lexical_metrics_import_no_pot_torch_transformers_or_nltk(tmp_path: Path) -> None:
    clf = make_classifier("tfidf-lr")
    clf.fit(["the food was awful", "terrible service", "i hated it", "bad and cold",
             "the food was great", "lovely service", "i loved it", "good and warm"], ["neg"] * 4 + ["pos"] * 4)
    clf.save(tmp_path / "clf")
    (tmp_path / "in.txt").write_text("the food was awful\ni hated it\n")
    (tmp_path / "out.txt").write_text("the food was great\ni hated it\n")
    argv = ["score", "--quiet", "--classifier", f"c={tmp_path / 'clf'}", "--pairs", str(tmp_path / "in.txt"),
            str(tmp_path / "out.txt"), "--source-style", "neg", "--target-style", "pos",
            "--content", "bleu,chrf,rougeL", "--out", str(tmp_path / "run")]
    done = subprocess.run([sys.executable, "-c", SCRIPT, *argv], capture_output=True, text=True, timeout=300,
                          env={**os.environ, "TSTEVAL_CACHE": str(tmp_path / "cache")}, check=False)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["code"] == 0, done.stderr
    assert (tmp_path / "run" / "summary.csv").is_file()
    assert result["before"] == [], f"imported although no metric needs them: {result['before']}"
    assert result["ot_after_matrix"]  # the check sees imports: POT does load when a matrix ground needs it


def test_rouge_score_is_imported_only_for_rouge_l() -> None:
    """BLEU and chrF score without rouge-score (a GPU machine without it scores them); ROUGE-L loads it."""
    script = ("import sys; from tsteval.metrics.content.overlap import sentence_bleu, sentence_chrf, rouge_l; "
              "sentence_bleu(['a b c'], ['a b d']); sentence_chrf(['a b c'], ['a b d']); before = 'rouge_score' in "
              "sys.modules; rouge_l(['a b c'], ['a b d']); print(before, 'rouge_score' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=True)
    assert done.stdout.split() == ["False", "True"]
