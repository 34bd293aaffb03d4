#!/usr/bin/env python3
"""Prints one Markdown table from a benchmark run: every criterion benchmark found under
CRITERION_DIR (median and median absolute deviation of the samples, the 95% confidence interval
of the median, throughput, and the speed-up against the peer or naive approach measured in the
same group), the Python peer's figures, and the macro's expansion measurement.

Usage: bench_table.py CRITERION_DIR [--python peers_python.json] [--macro macro.txt] [--machine TEXT]

Standard library only.
"""

import argparse
import json
import os
import re
import statistics
import sys

# Sections in the order of the issue, each with what we set out to show. A group belongs to the
# first section whose prefix it starts with; groups no section claims are listed under "Other".
SECTIONS = [
    ("tokens/throughput", "Token counting, cold and cached, against raw tiktoken-rs",
     "at least as fast as raw tiktoken-rs cold; a cached count costs a hash lookup, not a tokenization"),
    ("tokens/append", "Growing a counted context (CountedText)",
     "appending 1 KB to a counted 1 MB context costs at most twice counting the 1 KB alone"),
    ("tokens/repeat", "An unchanged 1 MB text counted again",
     "at most 100 µs (a hash of the text, not a tokenization); nothing through a CountedText"),
    ("tokens/parallel", "One thread against the chosen count and all, 64 KB to 4 MB", "where counting in parallel starts to pay, and what the choice gives"),
    ("tokens/scaling", "Worst-case scaling, 10 KB to 10 MB",
     "linear in the input on every shape (tiktoken-rs is superlinear on long runs without spaces, "
     "and panics on a ~1 MB whitespace run)"),
    ("manage_context_budget", "manage_context_budget on 1,000 nodes",
     "one exact count of the rendered context per decision, fast enough to run on every retrieval"),
    ("trim_", "History trim",
     "far below the ~60 s llama_index#12264 reports for 217,248 tokens; faster than the naive "
     "recount and than LangChain's trim_messages on the same data"),
    ("peers/", "History trim, side by side with Python (same data, same run)",
     "faster than LangChain trim_messages with exact tiktoken counting, keeping the same messages"),
    ("turn_call", "One retrieval call after 1…64 calls in a turn, against the spec's re-parse",
     "a call costs what it adds (flat), where the spec's re-parse grows with every earlier call"),
    ("contract", "Contract check per request",
     "a cache hit on an unchanged pipeline instead of re-counting every prompt"),
    ("graph_rules", "Pipeline validation: graph rules on 300 steps",
     "linear in steps and transitions, where a transitive closure is cubic"),
    ("validate_spec", "Pipeline validation of the spec's compaction loop",
     "cheap enough to run in every compile and at every load, token check included"),
    ("search_", "Offline retrieval (BM25) on 400 files", "an index lookup, not a rescan of every file"),
    ("offline_summary", "Offline extractive model", "fast enough for tests and demos without a server"),
]

# Function ids that are the approach we compare against, best match first.
BASELINES = [r"^tiktoken-rs$", r"^one-thread$", r"^spec_reparse$", r"^naive_recount_warm_cache$", r"^naive", r"^recompute_cold", r"^recompute",
             r"^spec_reparse", r"^naive_rescan$"]


def fmt_time(ns):
    for unit, scale in (("s", 1e9), ("ms", 1e6), ("µs", 1e3)):
        if ns >= scale:
            return f"{ns / scale:.3g} {unit}"
    return f"{ns:.3g} ns"


def load_criterion(root):
    rows = []
    for dirpath, _dirs, files in os.walk(root):
        if os.path.basename(dirpath) != "new" or "benchmark.json" not in files:
            continue
        with open(os.path.join(dirpath, "benchmark.json"), encoding="utf-8") as f:
            bench = json.load(f)
        with open(os.path.join(dirpath, "estimates.json"), encoding="utf-8") as f:
            est = json.load(f)
        median = est["median"]
        rows.append({
            "group": bench["group_id"],
            "function": bench.get("function_id") or "",
            "value": bench.get("value_str") or "",
            "throughput": bench.get("throughput"),
            "median": median["point_estimate"],
            "ci": (median["confidence_interval"]["lower_bound"], median["confidence_interval"]["upper_bound"]),
            "mad": est["median_abs_dev"]["point_estimate"],
        })
    return rows


def natural(value):
    return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", value)]


def baselines_of(rows):
    """The group's baseline function ids, the primary one first."""
    functions = sorted({r["function"] for r in rows})
    found = []
    for pattern in BASELINES:
        for f in functions:
            if re.search(pattern, f) and f not in found:
                found.append(f)
    return found


COLD = ("cold", "no_cache", "uncached")
WARM = ("warm", "cached", "cache_hit")


def temperature(function):
    if any(t in function for t in COLD):
        return "cold"
    if any(t in function for t in WARM):
        return "warm"
    return None


def pick_baseline(function, candidates):
    """The baseline to compare `function` with: one measured in the same state of the caches
    (cold with cold, warm with warm) when the group has one, else the primary baseline."""
    t = temperature(function)
    if t:
        for c in candidates:
            if temperature(c) == t:
                return c
    return candidates[0] if candidates else None


# Which caches each figure ran with, by group prefix, then by function name; "cold" everywhere
# means the count cache and the process-wide piece cache were emptied before each timed pass.
GROUP_CACHES = [
    ("tokens/parallel", "piece cache warm (one pass before)"),
    ("tokens/scaling", "pieces over 1 KB never cached: every pass merges"),
    ("tokens/long-piece", "none (the merge of one piece)"),
    ("tokens/merge", "none (the merge alone)"),
    ("tokens/append", "piece cache warm for every contender"),
]


def caches_of(group, function):
    if function in ("tiktoken-rs", "bpe-openai"):
        return "none (the peer has none)"
    if function == "naive_recount_no_cache":
        return "count cache of one entry; piece cache kept between passes"
    if "warm-pieces" in function:
        return "piece cache warm, count cache not used"
    if any(t in function for t in COLD):
        return "cold: count and piece caches emptied"
    for prefix, text in GROUP_CACHES:
        if group.startswith(prefix):
            return text
    if any(t in function for t in WARM):
        return "warm: kept from earlier passes"
    return ""


def throughput_text(row):
    t = row["throughput"]
    if not t:
        return ""
    if "Bytes" in t:
        return f"{t['Bytes'] / (row['median'] / 1e9) / 1e6:.1f} MB/s"
    if "Elements" in t:
        return f"{t['Elements'] / (row['median'] / 1e9):.3g} /s"
    return ""


def group_table(group, rows, out):
    candidates = baselines_of(rows)
    by_key = {(r["function"], r["value"]): r for r in rows}
    out.append(f"\n`{group}`" + (f" — compared with `{'`, `'.join(candidates)}`" if candidates else "") + "\n")
    out.append("| benchmark | caches | median | ± MAD | 95% CI of the median | throughput | speed-up |")
    out.append("|---|---|---:|---:|---|---:|---:|")
    rank = {f: i for i, f in enumerate(candidates)}
    for r in sorted(rows, key=lambda r: (natural(r["value"]), rank.get(r["function"], len(rank)), r["function"])):
        name = r["function"] + (f" / {r['value']}" if r["value"] else "")
        speedup = ""
        if r["function"] not in rank:
            base_fn = pick_baseline(r["function"], candidates)
            b = by_key.get((base_fn, r["value"]))
            if b is not None:
                speedup = f"×{b['median'] / r['median']:.2f} vs {base_fn}"
        ci = f"{fmt_time(r['ci'][0])} – {fmt_time(r['ci'][1])}"
        caches = caches_of(group, r["function"])
        out.append(f"| {name} | {caches} | {fmt_time(r['median'])} | {fmt_time(r['mad'])} | {ci} | {throughput_text(r)} | {speedup} |")


def python_table(path, rows, out):
    with open(path, encoding="utf-8") as f:
        py = json.load(f)
    ours = {r["function"]: r for r in rows if r["group"] == "peers/trim_217k_to_16k"}
    out.append(
        f"\nSame conversation ({py['messages']} messages, {py['total_tokens']} tokens) trimmed to "
        f"{py['max_tokens']} tokens: LangChain keeps {py['kept_messages']} messages ({py['kept_tokens']} tokens), "
        f"{'the same as ctx' if py['same_as_ctx'] else 'NOT the same as ctx'}. "
        f"Python {py['python']}, langchain-core {py['langchain_core']}, tiktoken {py['tiktoken']}.\n"
    )
    out.append("| implementation | median | ± MAD | samples | ctx cold is faster by | ctx warm is faster by |")
    out.append("|---|---:|---:|---:|---:|---:|")
    for name, b in py["benchmarks"].items():
        med, mad = b["median_s"] * 1e9, b["mad_s"] * 1e9
        cold = ours.get("ctx_cold")
        warm = ours.get("ctx_warm")
        vs_cold = f"×{med / cold['median']:.1f}" if cold and name.startswith("langchain") else ""
        vs_warm = f"×{med / warm['median']:.0f}" if warm and name.startswith("langchain") else ""
        out.append(f"| {name} | {fmt_time(med)} | {fmt_time(mad)} | {len(b['samples_s'])} | {vs_cold} | {vs_warm} |")


def macro_table(path, out):
    with open(path, encoding="utf-8") as f:
        text = f.read()
    lines = [l.strip() for l in text.splitlines() if l.strip()]
    picked = [l for l in lines if re.search(r"(token checks|expansion|encoder|pipeline)", l) and "running" not in l]
    if not picked:
        out.append("\n(no measurement printed; see the log)")
        return
    out.append("\n```text")
    out.extend(picked)
    out.append("```")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("criterion")
    ap.add_argument("--python")
    ap.add_argument("--macro")
    ap.add_argument("--machine", default="")
    args = ap.parse_args()

    rows = load_criterion(args.criterion) if os.path.isdir(args.criterion) else []
    groups = {}
    for r in rows:
        groups.setdefault(r["group"], []).append(r)
    out = []
    if args.machine:
        out.append(args.machine)
    claimed = set()
    for prefix, title, goal in SECTIONS:
        names = sorted(g for g in groups if g.startswith(prefix) and g not in claimed)
        has_python = prefix == "peers/" and args.python and os.path.exists(args.python)
        if not names and not has_python:
            continue
        out.append(f"\n### {title}\n\nGoal: {goal}.")
        for g in names:
            claimed.add(g)
            group_table(g, groups[g], out)
        if has_python:
            python_table(args.python, rows, out)
    rest = sorted(g for g in groups if g not in claimed)
    if rest:
        out.append("\n### Other benchmarks")
        for g in rest:
            group_table(g, groups[g], out)
    if args.macro and os.path.exists(args.macro):
        out.append("\n### `pipeline!` expansion of a 40-step pipeline (ctx-macros measurement harness)")
        out.append("\nGoal: expansion, token checks included, is a small part of a crate's build.")
        macro_table(args.macro, out)
    if not rows:
        out.append("\nno criterion results found under " + args.criterion)
    print("\n".join(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
