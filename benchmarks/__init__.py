"""Benchmarks by kind, one subpackage each: ``speed`` (each against the straightforward library call, in the same
run on the same data; the GPU figures and the annotation server's load), ``reproductions`` (published results
rerun), ``studies`` (of the metrics themselves: meta-evaluations and the investigations behind the profile); the
demo and the screenshots stay at the top.  :data:`KINDS` is what the docs' benchmark index
(``docs/reference/benchmarks.md``, generated) lists; each module runs as ``python -m benchmarks.NAME`` and writes
its results to ``benchmarks/results/``, and ``tests/test_docs.py`` checks that every module is listed here once."""

KINDS = {
    "speed": ("Speed", tuple(f"speed.{name}" for name in (
        "speed_sti", "speed_classifiers", "speed_content", "speed_pairs", "speed_naturalness", "speed_ray",
        "speed_lexical", "speed_encoder", "speed_bertscore", "speed_lm_judges", "speed_logprop", "speed_end_to_end",
        "speed_gpu", "bench_gpu", "profile_lm", "annotate_speed", "transformer_recipe", "speed_style_encoder",
        "speed_remote", "column_costs"))),
    "reproductions": ("Reproductions of published results", tuple(f"reproductions.{name}" for name in (
        "mir_style_reproduction", "mir_content_reproduction", "mir_naturalness", "lexicon_quality", "reed_beck_sweep",
        "bible_compliancy", "dualrl_compliancy", "cds_invariance", "cds_multiclass", "remote_agreement"))),
    "studies": ("Studies of the metrics", tuple(f"studies.{name}" for name in (
        "meta_eval", "meta_eval_lm", "lai_style_investigation", "content_known_answer",
        "cds_erasure", "detox_tox600", "formality_training"))),
    "tools": ("The demo and the pictures", ("demo", "explorer_screenshots", "annotate_screenshots")),
}
# Shared code of the benchmarks, not run by themselves (a results page rendered from its JSON included).
HELPERS = ("common", "evidence.profile", "evidence.babakov", "evidence.judge_language", "evidence.lm_style_probe",
           "evidence.learned", "evidence.mask_placeholder", "evidence.lai_case",
           "evidence.style_ensemble", "evidence.quantization_cost", "evidence.multilingual_lm")
