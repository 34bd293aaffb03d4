#!/usr/bin/env python3
"""What a user waits for before ctx first runs (issue 39), each from a warm registry and an empty
target directory, timed in wall and CPU seconds (user + system of every process cargo starts):

    scripts/first-build.py crate [--rev REV ...] [--rounds N] [--features-rounds N] [--features a,b] [--timings]
    scripts/first-build.py example [--rev REV ...] [--rounds N] [--timings]
    scripts/first-build.py install [--rev REV ...] [--rounds N]

- `crate`: a fresh crate written as a user writes it from the README (`ctx-llm` by path with
  `bm25`, `tokio` with `macros` and `rt-multi-thread`, `main.rs` the README's own `pipeline!`
  example, taken from README.md), beside a fresh crate depending on tiktoken-rs alone (counting
  one text) and a fresh crate on tokio alone with the features the README's `#[tokio::main]`
  needs (what the README crate builds whatever ctx does), built in interleaved rounds with the
  dev profile cargo gives a user (`cargo build`: no `--release`, cargo's defaults, incremental on); with `--rev`, one README crate per source
  (as for `install`), all in the same interleaved rounds, and beside them the floor: a fresh crate
  on the README crate's other dependencies without ctx (the same crates.io crates and features,
  checked against `cargo tree` of the last source's README crate, each used; `FLOOR_DEPS`), so
  the table shows what ctx's own crates add; then the README crate with each feature
  added to `bm25` (on the last `--rev`), and each feature's seconds over that crate's median.
- `example`: `cargo run --example rag_pipeline -- "How is the invoice total computed?"`, as the
  README says, for each `--rev` (as for `install`), in interleaved rounds.
- `install`: `cargo install --path ctx-cli --locked` into a scratch root, for each `--rev` (a
  commit, or `.` for this checkout as it is, uncommitted changes included; default `.`), in
  interleaved rounds; then the installed binaries' `ctx explain` on the example pipelines
  (start-up, the vocabulary's load and the counts of every prompt), interleaved.

Every build runs with `--offline` (the registry is warm: nothing is fetched, which is what
"warm" means), the workspace's Cargo.lock (copied into the fresh crates, so every crate resolves
to the versions the workspace is tested with), a new empty target directory and an empty
`pipeline!` count cache (`XDG_CACHE_HOME` pointed at a new directory), and without the
environment's cargo settings (`CARGO_INCREMENTAL`, `CARGO_PROFILE_*`, `CARGO_BUILD_*`,
`RUSTFLAGS`): a user's defaults. The tiktoken-rs crate needs tiktoken-rs in the registry cache
(`cargo fetch` in this workspace: it is a dev-dependency).

Prints Markdown tables (medians; every run listed) with the date, the machine and the load
average before and after, and appends them to `--out` (default
`$CARGO_TARGET_DIR/ctx-bench/first-build.md`). A measurement, never a test: nothing here fails on
time.
"""

import argparse
import os
import platform
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FEATURES = ["openai", "anthropic", "hf", "yaml", "mcp", "rig", "restate", "otel"]
QUESTION = "How is the invoice total computed?"

# The README crate's other dependencies, without ctx (the "floor" row of `crate`): a fresh crate
# on exactly the crates.io crates, with the features, that the README crate builds, each used as
# ctx uses it, so that the table shows what ctx's own crates add. `floor_check` compares the two
# crates' `cargo tree` and stops when they differ (a dependency of ctx added, removed or given
# another feature), so the row cannot silently drift from the crate it is the floor of. The
# proc-macro side is a small proc-macro crate of its own, as `ctx-macros` is: syn, quote and
# proc-macro2 with ctx-macros' features, and on the host the crates ctx-spec and ctx-tokens give
# the macro (shared with the program's, as cargo shares ctx-spec's).
# What ctx-spec and ctx-tokens build on, on both sides: the program's and the macro's.
# tokio as the README crate depends on it (its `main` is `#[tokio::main]`).
TOKIO_DEPS = 'tokio = { version = "1", features = ["macros", "rt-multi-thread"] }'

SPEC_DEPS = """serde = { version = "1", features = ["derive"] }
serde_json = { version = "1", features = ["float_roundtrip", "preserve_order"] }
thiserror = "2"
tracing = { version = "0.1", default-features = false, features = ["std"] }
quick_cache = { version = "0.7", default-features = false, features = ["custom-hasher"] }
xxhash-rust = { version = "0.8", features = ["xxh3"] }
miniz_oxide = { version = "0.9", default-features = false, features = ["with-alloc"] }
strsim = "0.11"
"""

FLOOR_DEPS = (
    TOKIO_DEPS
    + "\n"
    + SPEC_DEPS
    + """bm25 = { version = "2.3", default-features = false }
rust-stemmers = "1.2"
stop-words = { version = "0.9", default-features = false, features = ["nltk"] }
deunicode = "1.6"
unicode-segmentation = "1.12"
floor_macros = { path = "macros" }"""
)

FLOOR_MACRO_DEPS = (
    """syn = { version = "3", default-features = false, features = ["parsing", "printing", "proc-macro", "derive", "clone-impls", "extra-traits"] }
quote = "1"
proc-macro2 = { version = "1", features = ["span-locations"] }
"""
    + SPEC_DEPS
)

# A function-like macro parsed with syn and expanded with quote, which checks its text at compile
# time with the crates ctx-spec and ctx-tokens check prompts with (a hash, a cache, the
# decompression, the closest name), as `pipeline!` does.
FLOOR_MACRO_LIB = r"""use proc_macro::TokenStream;
use quote::quote;
use syn::parse::{Parse, ParseStream};
use syn::{Ident, LitStr, Token};

struct Constant {
    name: Ident,
    text: LitStr,
}

impl Parse for Constant {
    fn parse(input: ParseStream<'_>) -> syn::Result<Self> {
        let name = input.parse()?;
        input.parse::<Token![=]>()?;
        Ok(Constant { name, text: input.parse()? })
    }
}

#[derive(Debug, thiserror::Error)]
enum Invalid {
    #[error("`{0}` has no letters")]
    NoLetters(String),
}

#[derive(serde::Serialize)]
struct Checked<'a> {
    text: &'a str,
    letters: usize,
    hash: u64,
    nearest: f64,
}

fn check(text: &str) -> Result<String, Invalid> {
    let letters = text.chars().filter(|c| c.is_alphabetic()).count();
    if letters == 0 {
        return Err(Invalid::NoLetters(text.to_owned()));
    }
    let cache = quick_cache::sync::Cache::<u64, usize>::new(4);
    let hash = xxhash_rust::xxh3::xxh3_64(text.as_bytes());
    cache.insert(hash, text.len());
    let packed = miniz_oxide::deflate::compress_to_vec_zlib(text.as_bytes(), 6);
    let unpacked = miniz_oxide::inflate::decompress_to_vec_zlib(&packed).unwrap_or_default();
    tracing::debug!(target: "floor", bytes = unpacked.len(), "checked");
    let nearest = strsim::jaro_winkler(text, "What does the budget contract check?");
    Ok(serde_json::to_string(&Checked { text, letters, hash, nearest }).unwrap_or_default())
}

#[proc_macro]
pub fn constant(input: TokenStream) -> TokenStream {
    let Constant { name, text } = syn::parse_macro_input!(input as Constant);
    let at = proc_macro2::Span::call_site().start();
    match check(&text.value()) {
        Ok(json) => {
            let line = at.line;
            quote! { pub const #name: (&str, &str, usize) = (#text, #json, #line); }.into()
        }
        Err(e) => syn::Error::new(text.span(), e.to_string()).to_compile_error().into(),
    }
}
"""

# The program: the README's shape (a tokio main, BM25 over a few documents with the English words
# ctx's tokenizer makes) with every other crate used as ctx's runtime uses it.
FLOOR_MAIN = r"""use std::collections::HashSet;

use bm25::{EmbedderBuilder, Scorer, Tokenizer};
use rust_stemmers::{Algorithm, Stemmer};
use serde::{Deserialize, Serialize};
use unicode_segmentation::UnicodeSegmentation;

floor_macros::constant!(QUESTION = "What does the budget contract check?");

#[derive(Debug, thiserror::Error)]
enum FloorError {
    #[error("no document matches {0:?}")]
    NoMatch(String),
    #[error("json: {0}")]
    Json(#[from] serde_json::Error),
    #[error("task: {0}")]
    Task(#[from] tokio::task::JoinError),
}

#[derive(Debug, Serialize, Deserialize)]
struct Answer {
    question: String,
    document: usize,
    hash: u64,
    distance: usize,
    inflated: usize,
    classes: usize,
}

struct Words {
    stop: HashSet<String>,
    stemmer: Stemmer,
}

impl Tokenizer for Words {
    fn tokenize(&self, text: &str) -> Vec<String> {
        let folded = deunicode::deunicode_with_tofu_cow(text, "[?]").to_lowercase();
        folded.unicode_words().filter(|w| !self.stop.contains(*w)).map(|w| self.stemmer.stem(w).into_owned()).collect()
    }
}

#[tokio::main]
async fn main() -> Result<(), FloorError> {
    let question = std::env::args().nth(1).unwrap_or_else(|| QUESTION.0.to_owned());
    tracing::info!(target: "floor", checked = QUESTION.1, "start");
    let docs = ["The budget contract checks every request before it is sent.", "Tokens are counted exactly."];
    let stop = stop_words::get(stop_words::LANGUAGE::English).iter().map(|w| (*w).to_owned()).collect();
    let words = Words { stop, stemmer: Stemmer::create(Algorithm::English) };
    let embedder = EmbedderBuilder::<u32, Words>::with_tokenizer_and_fit_to_corpus(words, &docs).build();
    let mut scorer = Scorer::<usize, u32>::new();
    for (i, doc) in docs.iter().enumerate() {
        scorer.upsert(&i, embedder.embed(doc));
    }
    let document = scorer.matches(&embedder.embed(&question)).first().map(|m| m.id).ok_or_else(|| FloorError::NoMatch(question.clone()))?;
    let text = docs[document];
    let cache = quick_cache::sync::Cache::<u64, usize>::new(16);
    let hash = xxhash_rust::xxh3::xxh3_64(text.as_bytes());
    cache.insert(hash, document);
    let packed = miniz_oxide::deflate::compress_to_vec_zlib(text.as_bytes(), 6);
    let inflated = miniz_oxide::inflate::decompress_to_vec_zlib(&packed).map(|v| v.len()).unwrap_or(0);
    let classes = question.unicode_words().count();
    let distance = strsim::levenshtein(&question, text);
    let answer = tokio::spawn(async move { Answer { question, document, hash, distance, inflated, classes } }).await?;
    let json = serde_json::to_string(&answer)?;
    let again: Answer = serde_json::from_str(&json)?;
    println!("{json} {}", again.document);
    Ok(())
}
"""

TIKTOKEN_MAIN = """fn main() {
    let bpe = tiktoken_rs::cl100k_base().expect("cl100k_base");
    let text = std::env::args().nth(1).unwrap_or_else(|| "How many tokens is this?".to_owned());
    println!("{}", bpe.encode_ordinary(&text).len());
}
"""


TOKIO_MAIN = r"""#[tokio::main]
async fn main() {
    let handle = tokio::spawn(async { std::env::args().count() });
    println!("{}", handle.await.expect("the task ran"));
}
"""


def user_env(scratch: Path) -> dict:
    """The environment without this machine's cargo settings, and an empty count cache."""
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("CARGO_INCREMENTAL", "CARGO_TARGET_DIR", "RUSTFLAGS", "RUSTC_WRAPPER", "CARGO_ENCODED_RUSTFLAGS")
        and not k.startswith(("CARGO_PROFILE_", "CARGO_BUILD_"))
    }
    cache = Path(tempfile.mkdtemp(prefix="xdg-", dir=scratch))
    env["XDG_CACHE_HOME"] = str(cache)
    env.pop("CTX_MACRO_COUNT_CACHE", None)
    return env


def timed(cmd: list, cwd: Path, env: dict) -> dict:
    """Runs `cmd`; its wall seconds, CPU seconds of every descendant, and crates compiled."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    out = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if out.returncode != 0:
        sys.exit(f"{' '.join(map(str, cmd))} failed in {cwd}:\n{out.stderr[-4000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    units = len(re.findall(r"^\s*Compiling ", out.stderr, re.M))
    return {"wall": wall, "cpu": cpu, "units": units}


def readme_example() -> str:
    """The README's `pipeline!` example (the first Rust block of "One pipeline")."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text[text.index("## One pipeline"):]
    return re.search(r"```rust\n(.*?)```", section, re.S).group(1)


def write_crate(dir: Path, name: str, deps: str, main: str, lock_from: Path = ROOT) -> None:
    (dir / "src").mkdir(parents=True, exist_ok=True)
    (dir / "Cargo.toml").write_text(
        f'[package]\nname = "{name}"\nversion = "0.1.0"\nedition = "2024"\npublish = false\n\n'
        f"[dependencies]\n{deps}\n"
    )
    (dir / "src" / "main.rs").write_text(main)
    shutil.copy(lock_from / "Cargo.lock", dir / "Cargo.lock")


def write_floor(dir: Path, lock_from: Path) -> None:
    """The floor crate: a program and its proc-macro crate (`macros/`), see `FLOOR_DEPS`."""
    write_crate(dir, "floor_crate", FLOOR_DEPS, FLOOR_MAIN, lock_from)
    macros = dir / "macros"
    (macros / "src").mkdir(parents=True, exist_ok=True)
    (macros / "Cargo.toml").write_text(
        '[package]\nname = "floor_macros"\nversion = "0.1.0"\nedition = "2024"\npublish = false\n\n'
        f"[lib]\nproc-macro = true\n\n[dependencies]\n{FLOOR_MACRO_DEPS}\n"
    )
    (macros / "src" / "lib.rs").write_text(FLOOR_MACRO_LIB)


def registry_units(crate: Path, env: dict) -> set:
    """Every crates.io package of `crate`'s build with its features, as `cargo tree` resolves them
    (host and target sides, normal and build dependencies); path packages (ctx's, the fresh
    crates') left out."""
    out = subprocess.run(
        ["cargo", "tree", "--offline", "-e", "normal,build", "--prefix", "none", "--format", "{p}|{f}"],
        cwd=crate, env=env, capture_output=True, text=True,
    )
    if out.returncode != 0:
        sys.exit(f"cargo tree failed in {crate}:\n{out.stderr[-4000:]}")
    units = set()
    for line in out.stdout.splitlines():
        line = line.removesuffix(" (*)").strip()
        if not line or "|" not in line:
            continue
        package, features = line.split("|", 1)
        if "(/" in package:
            continue
        units.add((package.replace(" (proc-macro)", "").strip(), features.strip()))
    return units


def floor_check(readme: Path, floor: Path, scratch: Path) -> None:
    """Stops unless the floor crate builds exactly the README crate's crates.io packages."""
    env = user_env(scratch)
    want, have = registry_units(readme, env), registry_units(floor, env)
    shutil.rmtree(env["XDG_CACHE_HOME"], ignore_errors=True)
    if want != have:
        missing = "\n".join(f"  {p} [{f}]" for p, f in sorted(want - have)) or "  none"
        extra = "\n".join(f"  {p} [{f}]" for p, f in sorted(have - want)) or "  none"
        sys.exit(
            "the floor crate's dependencies differ from the README crate's non-ctx ones "
            f"(update FLOOR_DEPS in {__file__}):\nonly in the README crate:\n{missing}\nonly in the floor crate:\n{extra}"
        )


def ctx_deps(features: list, source: Path = ROOT) -> str:
    listed = ", ".join(f'"{f}"' for f in features)
    return (
        f'ctx-llm = {{ path = "{source}", features = [{listed}] }}\n' + TOKIO_DEPS
    )


def build_fresh(scratch: Path, crate: Path, timings: Path | None = None) -> dict:
    """`cargo build` of `crate` into a new target directory, removed afterwards; with `timings`,
    cargo's `--timings` report is kept at that path."""
    target = Path(tempfile.mkdtemp(prefix="target-", dir=scratch))
    env = user_env(scratch)
    env["CARGO_TARGET_DIR"] = str(target)
    try:
        r = timed(["cargo", "build", "--offline"] + (["--timings"] if timings else []), crate, env)
        if timings:
            for html in (target / "cargo-timings").glob("cargo-timing-*.html"):
                shutil.copy(html, timings)
        return r
    finally:
        shutil.rmtree(target, ignore_errors=True)
        shutil.rmtree(env["XDG_CACHE_HOME"], ignore_errors=True)


def load() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def header(title: str) -> list:
    cpu = ""
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            cpu = line.split(":", 1)[1].strip()
            break
    rustc = subprocess.run(["rustc", "--version"], capture_output=True, text=True).stdout.strip()
    now = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    return [
        f"\n### {title}\n",
        f"{now}, {cpu}, {os.cpu_count()} cores, {platform.system()} {platform.machine()}, {rustc}; "
        f"load average (1, 5, 15 min) before: {load()}.\n",
    ]


def med(runs: list, key: str) -> float:
    return statistics.median(r[key] for r in runs)


def listing(runs: list) -> str:
    return ", ".join(f"{r['wall']:.1f}" for r in runs)


def crate_cmd(args, scratch: Path) -> list:
    revs = args.rev or ["."]
    sources = {rev: source_of(rev, scratch) for rev in revs}
    # The README example of this checkout for every source, so that only the library differs.
    dirs = {"peer": scratch / "tiktoken_crate", "tokio": scratch / "tokio_crate"}
    write_crate(dirs["peer"], "tiktoken_crate", 'tiktoken-rs = "0.12.1"', TIKTOKEN_MAIN)
    # What the README crate builds whatever ctx does: tokio with the macros its `main` uses.
    write_crate(dirs["tokio"], "tokio_crate", TOKIO_DEPS, TOKIO_MAIN)
    for i, rev in enumerate(revs):
        dirs[rev] = scratch / f"readme_crate_{i}"
        write_crate(dirs[rev], "readme_crate", ctx_deps(["bm25"], sources[rev]), readme_example(), sources[rev])
    # The floor: the last source's README crate's other dependencies, without ctx.
    dirs["floor"] = scratch / "floor_crate"
    write_floor(dirs["floor"], sources[revs[-1]])
    floor_check(dirs[revs[-1]], dirs["floor"], scratch)
    out = header("A user's first build: the README's crate beside tiktoken-rs alone")
    runs = {which: [] for which in dirs}
    for round in range(args.rounds):
        order = ["peer", "tokio", "floor"] + revs if round % 2 == 0 else list(reversed(revs)) + ["floor", "tokio", "peer"]
        for which in order:
            name = which if which in ("peer", "tokio", "floor") else "ctx-" + ("this" if which == "." else which)
            keep = Path(args.out).parent / f"first-build-{name}-{round + 1}.html" if args.timings else None
            r = build_fresh(scratch, dirs[which], keep)
            runs[which].append(r)
            print(f"round {round + 1}: {name} {r['wall']:.1f} s wall, {r['cpu']:.1f} s CPU, {r['units']} crates", file=sys.stderr)
    p, tk, fl = runs["peer"], runs["tokio"], runs["floor"]
    floor_label = "" if len(revs) == 1 else f" of `{revs[-1]}`" if revs[-1] != "." else " of this checkout"
    out += [
        f"`cargo build --offline` (dev profile, cargo's defaults) of a fresh crate, empty target, {args.rounds} "
        f"interleaved rounds, medians (every run's wall seconds in brackets):\n",
        "| crate | wall | CPU (user + system) | crates compiled | ratio to tiktoken-rs, wall | CPU |",
        "|---|---:|---:|---:|---:|---:|",
        f"| tiktoken-rs 0.12.1 alone, one `encode_ordinary` | {med(p, 'wall'):.1f} s [{listing(p)}] | {med(p, 'cpu'):.1f} s | {p[0]['units']} | | |",
        f"| tokio alone, with the `macros` and `rt-multi-thread` the README's `#[tokio::main]` needs | {med(tk, 'wall'):.1f} s "
        f"[{listing(tk)}] | {med(tk, 'cpu'):.1f} s | {tk[0]['units']} | ×{med(tk, 'wall') / med(p, 'wall'):.2f} | "
        f"×{med(tk, 'cpu') / med(p, 'cpu'):.2f} |",
        f"| the README crate's other dependencies{floor_label}, without ctx (the same crates.io crates and features, "
        f"each used; a proc-macro crate on syn) | {med(fl, 'wall'):.1f} s [{listing(fl)}] | {med(fl, 'cpu'):.1f} s "
        f"| {fl[0]['units']} | ×{med(fl, 'wall') / med(p, 'wall'):.2f} | ×{med(fl, 'cpu') / med(p, 'cpu'):.2f} |",
    ]
    for rev in revs:
        c = runs[rev]
        label = "" if rev == "." and len(revs) == 1 else (" (this checkout)" if rev == "." else f" (`{rev}`)")
        out.append(
            f"| the README's crate{label}: ctx-llm (`bm25`), tokio, its `pipeline!` | {med(c, 'wall'):.1f} s [{listing(c)}] "
            f"| {med(c, 'cpu'):.1f} s | {c[0]['units']} | ×{med(c, 'wall') / med(p, 'wall'):.2f} | ×{med(c, 'cpu') / med(p, 'cpu'):.2f} |"
        )
    c = runs[revs[-1]]
    features = [f for f in args.features.split(",") if f] if args.features else []
    if features and args.features_rounds > 0:
        base_wall, base_cpu = med(c, "wall"), med(c, "cpu")
        out += [
            f"\nEach feature added to `bm25` in the same crate, {args.features_rounds} build(s) each, beside the "
            "README crate's medians above:\n",
            "| features | wall | added wall | CPU | added CPU | crates compiled |",
            "|---|---:|---:|---:|---:|---:|",
        ]
        source = sources[revs[-1]]
        for f in features:
            dir = scratch / f"with_{f}"
            write_crate(dir, f"with_{f}", ctx_deps(["bm25", f], source), readme_example(), source)
            keep = Path(args.out).parent / f"first-build-{f}.html" if args.timings else None
            fr = [build_fresh(scratch, dir, keep) for _ in range(args.features_rounds)]
            print(f"feature {f}: {listing(fr)} s wall", file=sys.stderr)
            out.append(
                f"| `bm25`, `{f}` | {med(fr, 'wall'):.1f} s | {med(fr, 'wall') - base_wall:+.1f} s | "
                f"{med(fr, 'cpu'):.1f} s | {med(fr, 'cpu') - base_cpu:+.1f} s | {fr[0]['units']} |"
            )
    out.append(f"\nLoad average after: {load()}.")
    return out


def example_cmd(args, scratch: Path) -> list:
    revs = args.rev or ["."]
    sources = {rev: source_of(rev, scratch) for rev in revs}
    out = header("The README's example from an empty target")
    runs = {rev: [] for rev in revs}
    for round in range(args.rounds):
        for rev in revs if round % 2 == 0 else list(reversed(revs)):
            target = Path(tempfile.mkdtemp(prefix="target-", dir=scratch))
            env = user_env(scratch)
            env["CARGO_TARGET_DIR"] = str(target)
            cmd = ["cargo", "run", "--offline", "--example", "rag_pipeline"]
            if args.timings:
                cmd.insert(2, "--timings")
            r = timed(cmd + ["--", QUESTION], sources[rev], env)
            if args.timings:
                name = "this" if rev == "." else rev
                for html in (target / "cargo-timings").glob("cargo-timing-*.html"):
                    shutil.copy(html, Path(args.out).parent / f"rag_pipeline-{name}-{round + 1}.html")
            shutil.rmtree(target, ignore_errors=True)
            runs[rev].append(r)
            print(f"round {round + 1}: {rev} {r['wall']:.1f} s wall, {r['cpu']:.1f} s CPU, {r['units']} crates", file=sys.stderr)
    out += [
        f"`cargo run --offline --example rag_pipeline -- \"{QUESTION}\"` in the workspace (its dev profile), "
        f"empty target directory, build and run, {args.rounds} interleaved round(s):\n",
        "| source | wall (median) | every run | CPU (user + system) | crates compiled |",
        "|---|---:|---|---:|---:|",
    ]
    for rev in revs:
        rs = runs[rev]
        label = "this checkout" if rev == "." else f"`{rev}`"
        out.append(f"| {label} | {med(rs, 'wall'):.1f} s | {listing(rs)} s | {med(rs, 'cpu'):.1f} s | {rs[0]['units']} |")
    out.append(f"\nLoad average after: {load()}.")
    return out


def source_of(rev: str, scratch: Path) -> Path:
    if rev == ".":
        return ROOT
    dir = scratch / f"src-{rev}"
    dir.mkdir()
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", rev], capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(dir)], input=archive, check=True)
    return dir


def install_cmd(args, scratch: Path) -> list:
    revs = args.rev or ["."]
    sources = {rev: source_of(rev, scratch) for rev in revs}
    roots = {rev: scratch / f"root-{i}" for i, rev in enumerate(revs)}
    runs = {rev: [] for rev in revs}
    out = header("`cargo install --path ctx-cli` from an empty target")
    for round in range(args.rounds):
        order = revs if round % 2 == 0 else list(reversed(revs))
        for rev in order:
            target = Path(tempfile.mkdtemp(prefix="target-", dir=scratch))
            env = user_env(scratch)
            cmd = ["cargo", "install", "--offline", "--locked", "--path", "ctx-cli", "--root", str(roots[rev]),
                   "--target-dir", str(target), "--force"]
            r = timed(cmd, sources[rev], env)
            shutil.rmtree(target, ignore_errors=True)
            runs[rev].append(r)
            print(f"round {round + 1}: {rev} {r['wall']:.1f} s wall, {r['cpu']:.1f} s CPU, {r['units']} crates", file=sys.stderr)
    out += [
        f"`cargo install --offline --locked --path ctx-cli --root R --target-dir T` (T new and empty), "
        f"{args.rounds} interleaved round(s):\n",
        "| source | wall (median) | every run | CPU (user + system) | crates compiled |",
        "|---|---:|---|---:|---:|",
    ]
    for rev in revs:
        rs = runs[rev]
        label = "this checkout" if rev == "." else f"`{rev}`"
        out.append(f"| {label} | {med(rs, 'wall'):.1f} s | {listing(rs)} s | {med(rs, 'cpu'):.1f} s | {rs[0]['units']} |")
    # The installed binaries at work: `ctx explain` counts every prompt of a pipeline file with the
    # real tokenizer, after loading the vocabulary (what a user waits for at each call).
    pipelines = sorted((ROOT / "examples" / "pipelines").glob("*.yaml"))
    times = {rev: [] for rev in revs}
    codes = {rev: set() for rev in revs}
    for i in range(args.explain_rounds):
        for rev in revs if i % 2 == 0 else list(reversed(revs)):
            for p in pipelines:
                start = time.perf_counter()
                done = subprocess.run([str(roots[rev] / "bin" / "ctx"), "explain", str(p)], capture_output=True)
                times[rev].append((p.name, time.perf_counter() - start))
                codes[rev].add(done.returncode)
    out += [
        f"\nThe installed `ctx explain FILE` on each of `examples/pipelines/*.yaml` ({len(pipelines)} files), "
        f"{args.explain_rounds} interleaved rounds, median wall per call (a fresh process: the vocabulary's load "
        "and the count of every prompt):\n",
        "| source | " + " | ".join(p.name for p in pipelines) + " |",
        "|---|" + "---:|" * len(pipelines),
    ]
    for rev in revs:
        label = "this checkout" if rev == "." else f"`{rev}`"
        cells = [f"{statistics.median(t for n, t in times[rev] if n == p.name) * 1e3:.1f} ms" for p in pipelines]
        out.append(f"| {label} | " + " | ".join(cells) + " |")
    out.append("\nExit codes of `ctx explain`: " + "; ".join(f"{rev}: {sorted(c)}" for rev, c in codes.items()) + ".")
    out.append(f"\nLoad average after: {load()}.")
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("what", choices=["crate", "example", "install"])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--features", default=",".join(FEATURES), help="for `crate`: features to add one by one")
    ap.add_argument("--features-rounds", type=int, default=1)
    ap.add_argument("--timings", action="store_true", help="keep cargo's --timings report of each build beside --out")
    ap.add_argument("--rev", action="append", help="a commit, or `.` for this checkout (repeatable)")
    ap.add_argument("--explain-rounds", type=int, default=10)
    target = Path(os.environ.get("CARGO_TARGET_DIR") or ROOT / "target")
    ap.add_argument("--out", default=str(target / "ctx-bench" / "first-build.md"))
    ap.add_argument("--keep", action="store_true", help="keep the scratch directory")
    args = ap.parse_args()
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix="ctx-first-build-"))
    try:
        out = {"crate": crate_cmd, "example": example_cmd, "install": install_cmd}[args.what](args, scratch)
    finally:
        if not args.keep:
            shutil.rmtree(scratch, ignore_errors=True)
    text = "\n".join(out) + "\n"
    print(text)
    with open(args.out, "a", encoding="utf-8") as f:
        f.write(text)


if __name__ == "__main__":
    main()
