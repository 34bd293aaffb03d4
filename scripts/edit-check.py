#!/usr/bin/env python3
"""The edit-check loop a user of `pipeline!` waits on (issue 29): `cargo check` after touching
`main.rs`, in a crate with one 10-step pipeline, one with a 40-step pipeline, and the same crate
without the macro, measured in interleaved rounds in one run.

    scripts/edit-check.py [--rounds N] [--dir DIR] [--keep]

The three crates live in a scratch workspace (DIR, default a temporary directory) with one target
directory, depend on this checkout's `ctx` by path, and are checked once to warm the build before
the rounds. Each round touches each crate's `main.rs` and times its `cargo check` (wall and the
children's CPU), in a new order every round so that a slow moment of a shared machine falls on
each crate alike. The table gives the median of each and the median extra over the plain crate;
the goal is at most +0.10 s (10 steps) and +0.25 s (40 steps).

A measurement, never a test: nothing here fails on time.
"""

import argparse
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

PROMPT = (
    "You are a code-review assistant. Read the context, quote identifiers and SQL verbatim, cite "
    "the file of every claim, and say plainly when the context does not hold the answer. "
)

PLAIN_BODY = """
fn main() {
    let question = std::env::args().nth(1).unwrap_or_default();
    let state = ctx::PipelineState::new(question);
    println!("{}", state.user_question_en);
}
"""


def pipeline(blocks: int, tail: int) -> str:
    """`blocks` chained search -> fetch -> manage -> call_model blocks, then `tail` call_model
    steps: 4 * blocks + tail steps, each call_model with its own literal prompt (so its contract
    is checked with the real tokenizer while compiling)."""
    prompts, steps = [], []
    names = [f"b{b}" for b in range(blocks)] + [f"t{t}" for t in range(tail)]
    for i, name in enumerate(names):
        nxt = "end" if i == len(names) - 1 else (f"search_{names[i + 1]}" if names[i + 1].startswith("b") else f"answer_{names[i + 1]}")
        prompts.append(f'            prompt_{name}: "{PROMPT * 3}",')
        answer = (
            f"            answer_{name}: call_model {{ prompt_key: prompt_{name}, max_output_tokens: 500, "
            f'user_parts: [ context_blocks => "### Context:\\n{{}}\\n\\n", user_question_en => "### User:\\n{{}}\\n\\n" ], '
            f"next: {nxt} }},"
        )
        if name.startswith("b"):
            steps += [
                f"            search_{name}: search_nodes {{ top_k: 10, next: fetch_{name} }},",
                f"            fetch_{name}: fetch_node_texts {{ evidence_tokens: 2_000, next: manage_{name} }},",
                f"            manage_{name}: manage_context_budget {{ compact_code: [ {{ language: sql, policy: threshold, threshold: 0.4 }} ], on_ok: answer_{name}, on_over: answer_{name} }},",
            ]
        steps.append(answer)
    return (
        "ctx::pipeline! {\n"
        "    pub pipeline Measured {\n"
        "        model { context_window: 16_384, max_tokens: 1_024, encoding: cl100k_base }\n"
        "        settings { max_context_tokens: 6_000, budget_safety_margin_tokens: 128 }\n"
        "        prompts {\n" + "\n".join(prompts) + "\n        }\n"
        "        steps {\n" + "\n".join(steps) + "\n        }\n"
        "    }\n"
        "}\n"
    )


CRATES = {
    "plain": "",
    "ten_steps": pipeline(2, 2),
    "forty_steps": pipeline(10, 0),
}


def write_workspace(dir: Path) -> None:
    members = ", ".join(f'"{name}"' for name in CRATES)
    (dir / "Cargo.toml").write_text(f'[workspace]\nmembers = [{members}]\nresolver = "2"\n')
    for name, macro in CRATES.items():
        src = dir / name / "src"
        src.mkdir(parents=True, exist_ok=True)
        (dir / name / "Cargo.toml").write_text(
            f'[package]\nname = "{name}"\nversion = "0.0.0"\nedition = "2024"\npublish = false\n\n'
            f'[dependencies]\nctx-llm = {{ path = "{ROOT}" }}\n'
        )
        (src / "main.rs").write_text("#![allow(dead_code)]\n" + macro + PLAIN_BODY)


def check(dir: Path, name: str, env: dict) -> tuple[float, float]:
    """Touches `name`'s main.rs and times its `cargo check`: (wall, CPU of the children) seconds."""
    main = dir / name / "src" / "main.rs"
    os.utime(main, None)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    out = subprocess.run(
        ["cargo", "check", "-q", "-p", name], cwd=dir, env=env, capture_output=True, text=True
    )
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if out.returncode != 0:
        sys.exit(f"cargo check -p {name} failed:\n{out.stderr}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def main() -> None:
    args = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    args.add_argument("--rounds", type=int, default=7)
    args.add_argument("--dir", type=Path)
    args.add_argument("--keep", action="store_true", help="keep the scratch workspace")
    opts = args.parse_args()
    dir = opts.dir or Path(tempfile.mkdtemp(prefix="ctx-edit-check-"))
    dir.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, CARGO_TARGET_DIR=str(dir / "target"))
    try:
        write_workspace(dir)
        print(f"warming {dir} (first build of ctx for check)…", file=sys.stderr)
        warm = subprocess.run(["cargo", "check", "-q", "--workspace"], cwd=dir, env=env)
        if warm.returncode != 0:
            sys.exit("the warm-up build failed")
        for name in CRATES:  # each crate once more, so every round is an edit after a check
            check(dir, name, env)
        walls = {name: [] for name in CRATES}
        cpus = {name: [] for name in CRATES}
        rng = random.Random(29)
        for r in range(opts.rounds):
            order = list(CRATES)
            rng.shuffle(order)
            for name in order:
                wall, cpu = check(dir, name, env)
                walls[name].append(wall)
                cpus[name].append(cpu)
            print(f"round {r + 1}/{opts.rounds}: " + ", ".join(f"{n} {walls[n][-1]:.2f}s" for n in CRATES), file=sys.stderr)
        load = os.getloadavg()[0]
        print(f"\nedit-check loop, {opts.rounds} interleaved rounds, {os.cpu_count()} cores, load {load:.1f}")
        print("| crate | steps | median wall | median CPU | extra wall over plain | extra CPU over plain |")
        print("|---|---|---|---|---|---|")
        for name, steps in (("plain", 0), ("ten_steps", 10), ("forty_steps", 40)):
            w, c = statistics.median(walls[name]), statistics.median(cpus[name])
            # The extra is the median of the per-round differences, which a slow round moves less.
            dw = statistics.median(a - b for a, b in zip(walls[name], walls["plain"]))
            dc = statistics.median(a - b for a, b in zip(cpus[name], cpus["plain"]))
            extra = "" if name == "plain" else f"+{dw:.3f} s"
            extra_c = "" if name == "plain" else f"+{dc:.3f} s"
            print(f"| {name} | {steps} | {w:.3f} s | {c:.3f} s | {extra} | {extra_c} |")
    finally:
        if not opts.keep and opts.dir is None:
            shutil.rmtree(dir, ignore_errors=True)


if __name__ == "__main__":
    main()
