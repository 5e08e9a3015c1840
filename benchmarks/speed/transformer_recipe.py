"""The fast training recipe of the ``transformer`` style classifier, measured (issue 42).

Data: 20,000 Yelp sentences (dev + test without Mir et al.'s rated inputs; a seeded sample stratified by
sentiment) and 2,000 other ones held out.  Two parts, each a run on one device (``--device``):

* ``speed`` (CPU): training throughput of each step of the recipe, cumulatively (:data:`STEPS`), on
  :data:`SPEED_BATCHES` batches of 32 after :data:`WARM_BATCHES` untimed ones, through
  :func:`tsteval.classifiers.transformer.fine_tune`: every text padded to 64 tokens (static padding), padded to its
  batch's longest (dynamic), batches of similar length, the length cap at 32 tokens, the lowest layers frozen, bf16
  autocast (only where the CPU computes bf16 natively: ``tsteval.core.devices.native_bf16``); each row's projected
  minutes for one epoch over 20,000 sentences.
* ``curve``: held-out accuracy against training time.  ``TransformerClassifier`` trained with each setting of
  :data:`CURVES` (the recipe as it stops by default, after one epoch; the recipe for :data:`LONG_EPOCHS` epochs, long
  enough to plateau; the un-capped variant, 64 tokens and nothing frozen, one epoch), the held-out accuracy taken
  every :data:`CHECKPOINTS_PER_EPOCH`-th of an epoch through ``TransformerClassifier.step_callback``, the clock paused
  while it is taken.  "Best" is the best held-out accuracy of any checkpoint of any curve of the run;
  :func:`curve_verdict` gives the first wall minute at which each curve is within :data:`WITHIN` points of it.
* ``accuracy``: ``TransformerClassifier`` trained end to end with each setting of :data:`ACCURACY` (the slow full
  fine-tune only where asked, ``--full``: it takes tens of minutes on 2 cores), its wall time, its process's CPU time
  and its held-out accuracy.

Every timing carries ``os.getloadavg()`` at its start: the 2-core machine is shared, and a load above 2 means other
work took CPU time from the run, so its wall time is longer than the 2 cores alone would take.  Results go to
``results/transformer_recipe.json`` under the run's name (``--run``, default the device), the page to
``transformer_recipe.md``.

Run: ``python -m benchmarks.speed.transformer_recipe [--part speed|curve|accuracy] [--curve LABEL] [--device cpu|cuda]
[--run NAME]`` (``--part curve`` alone: only the new measurement, about 30 minutes on 2 idle cores).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import torch
from sklearn.model_selection import train_test_split

from tsteval.classifiers.transformer import (
    TransformerClassifier,
    _from_pretrained,
    default_model_path,
    fine_tune,
    freeze_lower,
)
from tsteval.core import markdown as md
from tsteval.core.devices import native_bf16

RESULTS = Path(__file__).resolve().parents[1] / "results"
N_TRAIN = 20_000
N_HELDOUT = 2_000
BATCH = 32
SPEED_BATCHES = 15
WARM_BATCHES = 2
# Cumulative steps of the recipe: (label, padding, length-sorted batches, max_length, frozen layers, bf16).
STEPS = (
    ("padded to 64 tokens", "static", False, 64, 0, False),
    ("dynamic padding", "dynamic", False, 64, 0, False),
    ("+ batches of similar length", "dynamic", True, 64, 0, False),
    ("+ length cap 32", "dynamic", True, 32, 0, False),
    ("+ 2 lowest layers frozen", "dynamic", True, 32, 2, False),
    ("+ 4 lowest layers frozen", "dynamic", True, 32, 4, False),
    ("+ bf16 autocast, 2 frozen", "dynamic", True, 32, 2, True),
    ("+ bf16 autocast, 4 frozen", "dynamic", True, 32, 4, True),
)
RECIPE = "recipe (the defaults)"
FULL = "full fine-tune: nothing frozen, fp32, 64 tokens, 2 epochs"
# Settings trained end to end: (label, TransformerClassifier parameters, run without --full).
ACCURACY = (
    (RECIPE, {}, True),
    ("recipe, 4 layers frozen", {"freeze_layers": 4}, True),
    ("recipe, 10,000 sentences", {"max_train": 10_000}, True),
    ("recipe, nothing frozen", {"freeze_layers": 0}, True),
    (FULL, {"freeze_layers": 0, "precision": "fp32", "max_length": 64, "epochs": 2}, False),
)
Split = tuple[list[str], list[str], list[str], list[str]]
CHECKPOINTS_PER_EPOCH = 8
LONG_EPOCHS = 3
WITHIN = 1.0  # points of held-out accuracy
FIVE_MINUTES = 300
CURVE_RECIPE = "recipe, 1 epoch (the default stopping)"
# Settings whose held-out accuracy is followed through training: (label, TransformerClassifier parameters).
CURVES = (
    (CURVE_RECIPE, {}),
    (f"recipe, {LONG_EPOCHS} epochs", {"epochs": LONG_EPOCHS}),
    ("64 tokens, nothing frozen, 1 epoch", {"max_length": 64, "freeze_layers": 0}),
)


def data(seed: int = 0) -> Split:
    """Training and held-out Yelp texts and labels: stratified, seeded, disjoint."""
    from benchmarks.common import mir_and_yelp

    _, corpus = mir_and_yelp()
    train_x, rest_x, train_y, rest_y = train_test_split(corpus.texts, corpus.labels, train_size=N_TRAIN,
                                                        random_state=seed, stratify=corpus.labels)
    held_x, _, held_y, _ = train_test_split(rest_x, rest_y, train_size=N_HELDOUT, random_state=seed,
                                            stratify=rest_y)
    return train_x, train_y, held_x, held_y


def speed_row(step: tuple, split: Split, model_path: str, seed: int) -> dict:
    """Seconds per batch of one recipe step, timed through ``fine_tune`` on a fresh copy of the model."""
    label, padding, sorted_batches, max_length, frozen, bf16 = step
    n = (WARM_BATCHES + SPEED_BATCHES) * BATCH
    torch.manual_seed(seed)
    tokenizer, model = _from_pretrained(model_path, num_labels=2)
    freeze_lower(model, frozen)
    ids = tokenizer(split[0][:n], truncation=True, max_length=max_length)["input_ids"]
    targets = torch.tensor([int(y) for y in split[1][:n]])
    marks: list[tuple[float, float]] = []

    def encode(batch: list[int]) -> dict[str, torch.Tensor]:
        marks.append((time.perf_counter(), time.process_time()))
        rows = {"input_ids": [ids[i] for i in batch]}
        if padding == "static":
            return tokenizer.pad(rows, padding="max_length", max_length=max_length, return_tensors="pt")
        return tokenizer.pad(rows, return_tensors="pt")

    load = os.getloadavg()[0]
    fine_tune(model, encode, targets, epochs=1, batch_size=BATCH, lr=5e-5, seed=seed, desc=label, verbose=False,
              lengths=[len(i) for i in ids] if sorted_batches else None,
              autocast=torch.bfloat16 if bf16 else None)
    per_batch = (time.perf_counter() - marks[WARM_BATCHES][0]) / SPEED_BATCHES
    cpu_per_batch = (time.process_time() - marks[WARM_BATCHES][1]) / SPEED_BATCHES
    return {"step": label, "padding": padding, "length_sorted": sorted_batches, "max_length": max_length,
            "frozen_layers": frozen, "bf16": bf16, "seconds_per_batch": round(per_batch, 4),
            "cpu_seconds_per_batch": round(cpu_per_batch, 4),
            "projected_minutes": round(per_batch * N_TRAIN / BATCH / 60, 2), "load_average": round(load, 2)}


def accuracy_row(label: str, params: dict, split: Split, model_path: str, device: str, seed: int) -> dict:
    """``TransformerClassifier`` with ``params`` trained on the training split: wall time, held-out accuracy."""
    train_x, train_y, held_x, held_y = split
    model = TransformerClassifier(model_path, seed=seed, device=device, verbose=False, **params)
    load = os.getloadavg()[0]
    start, cpu = time.perf_counter(), time.process_time()
    model.fit(train_x, train_y)
    if device.startswith("cuda"):
        torch.cuda.synchronize()
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    accuracy = float(np.mean(model.predict(held_x) == np.array(held_y)))
    return {"setting": label, "params": params, "n_train": min(len(train_x), model.max_train or len(train_x)),
            "train_seconds": round(seconds, 1), "cpu_seconds": round(cpu, 1), "heldout_accuracy": round(accuracy, 4),
            "load_average": round(load, 2), "load_average_after": round(os.getloadavg()[0], 2)}


def curve_row(label: str, params: dict, split: Split, model_path: str, device: str, seed: int) -> dict:
    """``TransformerClassifier`` with ``params`` trained on the training split, its held-out accuracy at every
    checkpoint (:data:`CHECKPOINTS_PER_EPOCH` an epoch, and the last batch) against the wall and CPU seconds of
    training so far (model loading and tokenising included, the checkpoints' own scoring excluded)."""
    train_x, train_y, held_x, held_y = split
    truth = np.array(held_y)
    model = TransformerClassifier(model_path, seed=seed, device=device, verbose=False, **params)
    per_epoch = -(-min(len(train_x), model.max_train or len(train_x)) // model.batch_size)
    every = max(1, per_epoch // CHECKPOINTS_PER_EPOCH)
    points: list[dict] = []
    paused = [0.0, 0.0]  # wall and CPU seconds spent scoring the checkpoints

    def checkpoint(classifier: TransformerClassifier, done: int, total: int) -> None:
        if done % every and done != total:
            return
        wall, cpu = time.perf_counter(), time.process_time()
        if device.startswith("cuda"):
            torch.cuda.synchronize()
        predicted = classifier.classes_[classifier._predict_proba(held_x).argmax(axis=1)]
        points.append({"batches": done, "epochs": round(done / per_epoch, 3),
                       "train_seconds": round(wall - start - paused[0], 1),
                       "cpu_seconds": round(cpu - cpu_start - paused[1], 1),
                       "heldout_accuracy": round(float(np.mean(predicted == truth)), 4),
                       "load_average": round(os.getloadavg()[0], 2)})
        print(label, json.dumps(points[-1]), file=sys.stderr, flush=True)
        paused[0] += time.perf_counter() - wall
        paused[1] += time.process_time() - cpu

    model.step_callback = checkpoint
    load = os.getloadavg()[0]
    start, cpu_start = time.perf_counter(), time.process_time()
    model.fit(train_x, train_y)
    return {"setting": label, "params": params, "n_train": model.n_train_, "checkpoints": points,
            "train_seconds": points[-1]["train_seconds"], "load_average": round(load, 2),
            "load_average_after": round(os.getloadavg()[0], 2)}


def curve_verdict(run: dict) -> dict | None:
    """Best held-out accuracy over every checkpoint of ``run``'s curves, and for each curve the first checkpoint
    within :data:`WITHIN` points of it: its wall minutes, and whether that is within five minutes."""
    curves = run.get("curve", [])
    if not curves:
        return None
    best_curve, best = max(((c["setting"], p) for c in curves for p in c["checkpoints"]),
                           key=lambda x: x[1]["heldout_accuracy"])
    rows = []
    for c in curves:
        near = [p for p in c["checkpoints"]  # rounded: accuracies are multiples of 1/2,000, no float noise
                if round(100 * (best["heldout_accuracy"] - p["heldout_accuracy"]), 6) <= WITHIN]
        end = c["checkpoints"][-1]
        rows.append({"setting": c["setting"], "final_accuracy": end["heldout_accuracy"],
                     "final_minutes": round(end["train_seconds"] / 60, 2),
                     "final_points_below_best": round(100 * (best["heldout_accuracy"] - end["heldout_accuracy"]), 2),
                     "first_within": None if not near else {
                         "epochs": near[0]["epochs"], "minutes": round(near[0]["train_seconds"] / 60, 2),
                         "accuracy": near[0]["heldout_accuracy"],
                         "within_five_minutes": near[0]["train_seconds"] <= FIVE_MINUTES}})
    return {"best_accuracy": best["heldout_accuracy"], "best_setting": best_curve, "best_epochs": best["epochs"],
            "best_minutes": round(best["train_seconds"] / 60, 2), "settings": rows}


def machine(device: str) -> dict:
    """The machine a run took its figures on."""
    info = {"cpu_count": os.cpu_count(), "affinity": len(os.sched_getaffinity(0)),
            "torch_threads": torch.get_num_threads(), "torch": torch.__version__, "python": platform.python_version(),
            "device": device, "native_bf16": native_bf16(device),
            "omp_wait_policy": os.environ.get("OMP_WAIT_POLICY", "")}
    if device.startswith("cuda"):
        info["gpu"] = torch.cuda.get_device_name()
    return info


def verdict(report: dict) -> dict | None:
    """The recipe on the CPU run against the best held-out accuracy of any setting on any run."""
    rows = [(name, r) for name, run in report["runs"].items() for r in run.get("accuracy", [])]
    recipe = [(name, r) for name, r in rows if r["setting"] == RECIPE and report["runs"][name]["machine"]["device"]
              == "cpu"]
    if not recipe:
        return None
    best_name, best = max(rows, key=lambda x: x[1]["heldout_accuracy"])
    name, row = recipe[0]
    gap = 100 * (best["heldout_accuracy"] - row["heldout_accuracy"])
    return {"recipe_run": name, "recipe_accuracy": row["heldout_accuracy"], "recipe_minutes": row["train_seconds"] / 60,
            "best_run": best_name, "best_setting": best["setting"], "best_accuracy": best["heldout_accuracy"],
            "points_below_best": round(gap, 2), "within_one_point": gap <= 1.0,
            "within_five_minutes": row["train_seconds"] <= 300}


def markdown(report: dict) -> str:
    """``transformer_recipe.md`` from the report."""
    lines = ["# The transformer classifier's fast training recipe (Yelp, 20,000 sentences)", "",
             "Runs (the 1-minute load average at the start of each timing is in its row):", ""]
    for name, run in report["runs"].items():
        m = run["machine"]
        lines.append(f"- `{name}`: {m['device']}{' (' + m['gpu'] + ')' if 'gpu' in m else ''}, {m['affinity']} of "
                     f"{m['cpu_count']} CPUs, torch {m['torch']} with {m['torch_threads']} threads, bf16 native: "
                     f"{'yes' if m['native_bf16'] else 'no'}"
                     f"{', OMP_WAIT_POLICY=' + m['omp_wait_policy'] if m.get('omp_wait_policy') else ''}. "
                     f"{run.get('note', '')}".rstrip())
    for name, run in report["runs"].items():
        if run.get("speed"):
            lines += ["", f"## Training speed, step by step (`{name}`)", "",
                      f"Seconds per batch of {BATCH} (mean of {SPEED_BATCHES} after {WARM_BATCHES} untimed), MiniLM; "
                      f"projected minutes for one epoch over {N_TRAIN:,} sentences.", "",
                      md.table(pd.DataFrame([{
                          "step": r["step"], "max tokens": r["max_length"], "frozen layers": r["frozen_layers"],
                          "bf16": "yes" if r["bf16"] else "no", "s/batch": f"{r['seconds_per_batch']:.3f}",
                          "CPU s/batch": f"{r['cpu_seconds_per_batch']:.3f}",
                          "projected min": f"{r['projected_minutes']:.1f}", "load avg": f"{r['load_average']:.2f}"}
                          for r in run["speed"]]))]
    for name, run in report["runs"].items():
        lines += curve_markdown(name, run)
    accuracy = [r for run in report["runs"].values() for r in run.get("accuracy", [])]
    lines += [] if not accuracy else ["", "## Accuracy, trained end to end", "",
              f"One epoch unless said; held-out accuracy on {N_HELDOUT:,} other Yelp sentences.", "",
              md.table(pd.DataFrame([{
                  "run": name, "setting": r["setting"], "parameters": json.dumps(r["params"]),
                  "n train": f"{r['n_train']:,}", "wall min": f"{r['train_seconds'] / 60:.2f}",
                  "CPU min": f"{r['cpu_seconds'] / 60:.1f}", "held-out acc": f"{r['heldout_accuracy']:.3f}",
                  "load avg (start, end)": f"{r['load_average']:.2f}, {r['load_average_after']:.2f}"}
                  for name, run in report["runs"].items() for r in run.get("accuracy", [])]))]
    v = verdict(report)
    if v:
        lines += ["", f"The recipe on `{v['recipe_run']}`: {v['recipe_accuracy']:.3f} in {v['recipe_minutes']:.1f} "
                  f"min; the best held-out accuracy of any row: {v['best_accuracy']:.3f} ({v['best_setting']}, "
                  f"`{v['best_run']}`), {v['points_below_best']:.2f} points above the recipe's: "
                  f"{'within' if v['within_one_point'] else 'not within'} 1 point, "
                  f"{'within' if v['within_five_minutes'] else 'over'} 5 minutes."]
    return "\n".join(lines) + "\n"


def _curve_cells(curve: dict, row: dict) -> dict[str, str]:
    """One curve's row of the page's table (``row``: its entry in :func:`curve_verdict`)."""
    first = row["first_within"]
    at = ("never" if first is None else f"{first['minutes']:.1f} min (epoch {first['epochs']:g}, "
          f"{first['accuracy']:.3f}): {'within' if first['within_five_minutes'] else 'over'} 5 min")
    return {"setting": curve["setting"],
            "load avg (start, end)": f"{curve['load_average']:.2f}, {curve['load_average_after']:.2f}",
            f"first within {WITHIN:g} point of best": at,
            "at the end": f"{row['final_accuracy']:.3f} after {row['final_minutes']:.1f} min "
                          f"({row['final_points_below_best']:.2f} points below best)",
            "min per epoch": f"{row['final_minutes'] / curve['checkpoints'][-1]['epochs']:.1f}"}


def curve_markdown(name: str, run: dict) -> list[str]:
    """The page's section on ``run``'s accuracy curves (:func:`curve_row`, :func:`curve_verdict`)."""
    v = curve_verdict(run)
    if v is None:
        return []
    lines = ["", f"## Held-out accuracy against training time (`{name}`)", "",
             f"{N_TRAIN:,} training sentences, {run['machine']['torch_threads']} torch threads; held-out accuracy on "
             f"{N_HELDOUT:,} other Yelp sentences every 1/{CHECKPOINTS_PER_EPOCH} epoch; wall minutes of training "
             "(loading and tokenising included, the checkpoints' scoring excluded). Best over every checkpoint of "
             f"every curve below: **{v['best_accuracy']:.3f}** ({v['best_setting']}, epoch {v['best_epochs']:g}, "
             f"{v['best_minutes']:.1f} min).", "",
             md.table(pd.DataFrame([_curve_cells(c, r) for c, r in zip(run["curve"], v["settings"], strict=True)]))]
    lines += ["", "Every checkpoint (epochs: wall minutes, held-out accuracy):", ""]
    lines += [f"- {c['setting']}: " + "; ".join(f"{p['epochs']:g}: {p['train_seconds'] / 60:.1f} min, "
                                                f"{p['heldout_accuracy']:.3f}" for p in c["checkpoints"])
              for c in run["curve"]]
    return lines


def parser() -> argparse.ArgumentParser:
    """This benchmark's command line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--part", choices=("speed", "curve", "accuracy"), action="append",
                        help="default: speed and accuracy (curve, the longest, only when named)")
    parser.add_argument("--render", action="store_true", help="measure nothing: the page again from the JSON")
    parser.add_argument("--curve", action="append", choices=[c[0] for c in CURVES], help="only these curves")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--run", help="the run's name in the results (default: the device)")
    parser.add_argument("--note", default="", help="a sentence on the machine, shown beside the run")
    parser.add_argument("--out", type=Path, default=RESULTS)
    parser.add_argument("--full", action="store_true", help="also the slow full fine-tune")
    parser.add_argument("--setting", action="append", choices=[a[0] for a in ACCURACY], help="only these settings")
    return parser


def main(argv: list[str] | None = None) -> None:
    args = parser().parse_args(argv)
    torch.set_num_threads(args.threads)
    path = args.out / "transformer_recipe.json"
    report = json.loads(path.read_text()) if path.is_file() else {"runs": {}}
    if args.render:
        (args.out / "transformer_recipe.md").write_text(markdown(report))
        return
    split, model_path = data(args.seed), default_model_path()
    run = report["runs"].setdefault(args.run or args.device, {})
    run["machine"], run["note"] = machine(args.device), args.note
    for part in args.part or ["speed", "accuracy"]:
        if part == "speed" and args.device == "cpu":
            run["speed"] = [speed_row(step, split, model_path, args.seed) for step in STEPS
                            if not step[5] or native_bf16("cpu")]  # emulated bf16 is tens of times slower
            print(run["speed"], flush=True)
        elif part == "curve":  # a curve measured again replaces its row; the others' rows are kept
            for label, params in CURVES:
                if not args.curve or label in args.curve:
                    row = curve_row(label, params, split, model_path, args.device, args.seed)
                    rows = {r["setting"]: r for r in run.get("curve", [])} | {label: row}
                    run["curve"] = [rows[x[0]] for x in CURVES if x[0] in rows]
                    print(json.dumps(row), flush=True)
                    path.write_text(json.dumps(report, indent=2) + "\n")
        elif part == "accuracy":  # a setting measured again replaces its row; the others' rows are kept
            for label, params, default in ACCURACY:
                if (default or args.full) and (not args.setting or label in args.setting):
                    row = accuracy_row(label, params, split, model_path, args.device, args.seed)
                    rows = {r["setting"]: r for r in run.get("accuracy", [])} | {label: row}
                    run["accuracy"] = [rows[x[0]] for x in ACCURACY if x[0] in rows]
                    print(row, flush=True)
                    path.write_text(json.dumps(report, indent=2) + "\n")
    args.out.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(report, indent=2) + "\n")
    (args.out / "transformer_recipe.md").write_text(markdown(report))


if __name__ == "__main__":
    main()
