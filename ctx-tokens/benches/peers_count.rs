//! Counting side by side with quicktok (C++, SIMD scanners; `pip install quicktok-v1`), the
//! fastest exact tokenizer published, and with Hugging Face `tokenizers` for the open models; with
//! ctx's own scanner alone beside them (the bound of a cold count). (A request of a million
//! tokens on one thread and on the cores free is `tokens/parallel` in `benches/tokens.rs`.)
//!
//! It lives beside the tokenizer (not in `ctx-tests`) so that `scripts/bench.sh` builds only
//! ctx-tokens and its references for it, not the test suite's servers and clients.
//!
//! It writes the token corpus (`tests/data/tokens`) as a JSON list, starts
//! `ctx-tests/benches/peers/count_quicktok.py` in the peers venv (`PEERS_PYTHON`, from
//! `ctx-tests/benches/peers/setup.sh`), and runs every contender once per round, in turn, for
//! `CTX_PEERS_ROUNDS` rounds (15): ctx cold (its piece cache emptied before each pass; ctx has no
//! other cache on this path), ctx warm (the pieces of the previous passes kept), ctx's scanner
//! alone (the pieces cut and counted, none merged or looked up: how fast a count could be at
//! most), quicktok, and `tokenizers` for the open models. Every time is the CPU time of the
//! counting thread (ctx's here, quicktok's measured by the Python side around its own call), so
//! other work on the machine does not count, and the rounds spread what load does to caches over
//! every contender alike. Each contender counts the whole corpus as one text on one thread.
//!
//! Before timing, every text is counted by each: ctx's counts must equal `tokenizers`' (the
//! bench stops otherwise); quicktok's differences are reported (its `llama3` is Meta's rank file,
//! where ctx and llama.cpp use the GGUF's merge list).
//!
//! Open models need `CTX_VOCAB_DIR` (`scripts/model-fixtures.sh`): the Llama 3, Qwen 2 and
//! StarCoder vocabularies of llama.cpp's fixtures (Qwen 2.5 and 3 share Qwen 2's vocabulary and
//! pattern), and `CTX_LLAMA_GGUF` (`scripts/llama-server.sh`) for SmolLM2's; quicktok has no
//! StarCoder or SmolLM2 vocabulary, so those rows compare with `tokenizers` only.
//! `CTX_PEERS_PROFILE=Llama` runs only ctx's cold counts of the matching rows (for `perf`).
//! The tables go to stderr and `$CTX_BENCH_OUT/peers_count.md`.
//!
//! `cargo bench -p ctx-tokens --features hf --bench peers_count` (with `PEERS_PYTHON` set).

use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::Duration;

use ctx_tokens::{BpeBackend, Encoding, GgufMetadata, HfTokenizer, PieceCache, TokenizerBackend};

#[path = "../tests/corpus/mod.rs"]
mod corpus;

/// CPU time of the calling thread.
fn thread_cpu() -> Duration {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `ts` is a valid timespec for the call to fill.
    #[allow(unsafe_code)]
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    assert_eq!(rc, 0, "clock_gettime");
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

fn timed(f: impl FnOnce() -> usize) -> (usize, Duration) {
    let start = thread_cpu();
    let n = std::hint::black_box(f());
    (n, thread_cpu() - start)
}

/// The quicktok process.
struct Quicktok {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    version: String,
}

impl Quicktok {
    fn start(python: &str, texts: &std::path::Path, encodings: &[&str]) -> Quicktok {
        // The Python half stays with the other Python peers (their venv and requirements).
        let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../ctx-tests/benches/peers/count_quicktok.py");
        let mut child = Command::new(python)
            .arg(script)
            .arg(texts)
            .args(encodings)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("start count_quicktok.py");
        let stdin = child.stdin.take().expect("stdin");
        let stdout = BufReader::new(child.stdout.take().expect("stdout"));
        let mut peer = Quicktok { child, stdin, stdout, version: String::new() };
        let ready = peer.line();
        peer.version = ready.strip_prefix("ready ").unwrap_or_else(|| panic!("quicktok: {ready}")).to_owned();
        peer
    }

    fn line(&mut self) -> String {
        let mut line = String::new();
        self.stdout.read_line(&mut line).expect("read from quicktok");
        line.trim().to_owned()
    }

    fn ask(&mut self, command: &str, encoding: &str) -> String {
        writeln!(self.stdin, "{command} {encoding}").expect("write to quicktok");
        self.stdin.flush().expect("flush");
        self.line()
    }

    fn counts(&mut self, encoding: &str) -> Vec<usize> {
        serde_json::from_str(&self.ask("counts", encoding)).expect("quicktok counts")
    }

    fn time(&mut self, encoding: &str) -> (usize, Duration) {
        let reply = self.ask("time", encoding);
        let (n, ns) = reply.split_once(' ').expect("COUNT NANOS");
        (n.parse().expect("count"), Duration::from_nanos(ns.parse().expect("nanos")))
    }
}

impl Drop for Quicktok {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One vocabulary: ctx's counter, its piece cache, quicktok's name for it, and `tokenizers`
/// when ctx counts a model file.
struct Row {
    label: String,
    ctx: Box<dyn TokenizerBackend>,
    cache: Option<&'static PieceCache>,
    /// quicktok's name for the vocabulary, when it has it.
    quicktok: Option<&'static str>,
    tokenizers: Option<&'static HfTokenizer>,
    /// The OpenAI encoding, whose scanner alone is timed beside the count.
    encoding: Option<Encoding>,
}

fn model(path: &std::path::Path) -> &'static HfTokenizer {
    let meta = GgufMetadata::read(path).expect("vocabulary");
    let tokenizer = Box::leak(Box::new(HfTokenizer::from_gguf(&meta).expect("tokenizer")));
    assert!(tokenizer.counts_natively(), "{} must count natively", path.display());
    tokenizer
}

/// `CTX_PEERS_PROFILE=LABEL`: only ctx's cold count of the rows whose label starts with LABEL,
/// `rounds` × 10 times, for a profiler (`perf record`); no peer is started.
fn profile(rows: &[Row], only: &str, whole: &str, rounds: usize) {
    for row in rows.iter().filter(|r| r.label.starts_with(only)) {
        let mut times = Vec::new();
        for _ in 0..rounds * 10 {
            match (row.cache, row.tokenizers) {
                (Some(cache), _) => cache.clear(),
                (None, Some(hf)) => hf.piece_cache().expect("native").clear(),
                (None, None) => {}
            }
            times.push(timed(|| row.ctx.count(whole).expect("count")).1);
        }
        let cold = median(times);
        eprintln!("{}: cold {cold:.2?}, {:.1} MB/s", row.label, whole.len() as f64 / cold.as_secs_f64() / 1e6);
    }
}

fn median(mut xs: Vec<Duration>) -> Duration {
    xs.sort_unstable();
    xs[xs.len() / 2]
}

fn main() {
    let python = std::env::var("PEERS_PYTHON").ok().filter(|p| !p.is_empty());
    let Some(python) = python.or_else(|| std::env::var("CTX_PEERS_PROFILE").ok().map(|_| String::new())) else {
        eprintln!("skipped: PEERS_PYTHON is not set; run `eval \"$(ctx-tests/benches/peers/setup.sh)\"` first");
        return;
    };
    let rounds: usize = std::env::var("CTX_PEERS_ROUNDS").ok().and_then(|r| r.parse().ok()).unwrap_or(15);
    let out =
        PathBuf::from(std::env::var("CTX_BENCH_OUT").unwrap_or_else(|_| std::env::temp_dir().display().to_string()));
    std::fs::create_dir_all(&out).expect("output directory");
    let texts: Vec<String> = corpus::corpus_files().into_iter().map(|(_, text)| text).collect();
    let whole = texts.concat();
    let json = out.join("peers_corpus.json");
    std::fs::write(&json, serde_json::to_string(&texts).expect("json")).expect("write the corpus");

    let mut rows = Vec::new();
    for (encoding, name) in [(Encoding::Cl100kBase, "cl100k_base"), (Encoding::O200kBase, "o200k_base")] {
        let backend = BpeBackend::new(encoding).with_threads(1);
        rows.push(Row {
            label: name.to_owned(),
            cache: Some(backend.piece_cache()),
            ctx: Box::new(backend),
            quicktok: Some(name),
            tokenizers: None,
            encoding: Some(encoding),
        });
    }
    match std::env::var_os("CTX_VOCAB_DIR") {
        Some(dir) => {
            let dir = PathBuf::from(dir);
            for (vocab, label, name) in [
                ("ggml-vocab-llama-bpe.gguf", "Llama 3 (GGUF merge list)", Some("llama3")),
                ("ggml-vocab-qwen2.gguf", "Qwen 2 / 2.5 / 3 (GGUF)", Some("qwen3")),
                ("ggml-vocab-starcoder.gguf", "StarCoder (GGUF; digits, then GPT-2's)", None),
            ] {
                let tokenizer = model(&dir.join(vocab));
                rows.push(Row {
                    label: label.to_owned(),
                    ctx: Box::new(tokenizer.clone()),
                    cache: None,
                    quicktok: name,
                    tokenizers: Some(tokenizer),
                    encoding: None,
                });
            }
        }
        None => eprintln!("open models skipped: CTX_VOCAB_DIR is not set (scripts/model-fixtures.sh)"),
    }
    match std::env::var_os("CTX_LLAMA_GGUF") {
        Some(path) => rows.push({
            let tokenizer = model(std::path::Path::new(&path));
            Row {
                label: "SmolLM2 (GGUF; digits, then GPT-2's)".to_owned(),
                ctx: Box::new(tokenizer.clone()),
                cache: None,
                quicktok: None,
                tokenizers: Some(tokenizer),
                encoding: None,
            }
        }),
        None => eprintln!("SmolLM2 skipped: CTX_LLAMA_GGUF is not set (scripts/llama-server.sh)"),
    }
    if let Ok(only) = std::env::var("CTX_PEERS_PROFILE") {
        return profile(&rows, &only, &whole, rounds);
    }
    let names: Vec<&str> = rows.iter().filter_map(|r| r.quicktok).collect();
    let mut peer = Quicktok::start(&python, &json, &names);

    let mut report = format!(
        "Counting the {} KB corpus as one text on one thread, {rounds} interleaved rounds, medians of thread CPU \
         time (quicktok {}). ctx cold: its piece cache emptied before each pass (ctx has no other cache on \
         this path; the vocabulary and its index stay loaded, as quicktok's do); ctx warm: the pieces of the \
         earlier passes kept; scanner: ctx's pre-tokenizer alone, the pieces cut and counted, none merged or \
         looked up (the bound of a count; OpenAI encodings only):\n\n\
         | vocabulary | ctx cold | ctx warm | ctx scanner alone | quicktok | `tokenizers` | ctx cold MB/s | ×quicktok cold / warm | scanner share of cold | ×`tokenizers` cold | counts |\n\
         |---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|\n",
        whole.len() / 1000,
        peer.version
    );
    for row in &rows {
        // Exactness first: per text, against `tokenizers` (must agree) and quicktok (reported).
        let ours: Vec<usize> = texts.iter().map(|t| row.ctx.count(t).expect("count")).collect();
        if let Some(hf) = row.tokenizers {
            for (text, &n) in texts.iter().zip(&ours) {
                assert_eq!(n, hf.tokenizer().encode_fast(text.as_str(), false).expect("encode").len(), "{}", row.label);
            }
        }
        let counts = match row.quicktok {
            Some(name) => {
                let theirs = peer.counts(name);
                let differ = ours.iter().zip(&theirs).filter(|(a, b)| a != b).count();
                let diff: i64 = ours.iter().zip(&theirs).map(|(&a, &b)| a as i64 - b as i64).sum();
                if differ == 0 {
                    "equal on every text".to_owned()
                } else {
                    format!("quicktok differs on {differ} of {} texts ({diff:+} tokens ctx − quicktok)", texts.len())
                }
            }
            None => "ctx = `tokenizers` on every text (no quicktok vocabulary)".to_owned(),
        };
        let clear = || match (row.cache, row.tokenizers) {
            (Some(cache), _) => cache.clear(),
            (None, Some(hf)) => hf.piece_cache().expect("native").clear(),
            (None, None) => {}
        };
        let contenders: Vec<usize> = [0, 1]
            .into_iter()
            .chain(row.quicktok.map(|_| 2))
            .chain(row.tokenizers.map(|_| 3))
            .chain(row.encoding.map(|_| 4))
            .collect();
        let mut times: [Vec<Duration>; 5] = Default::default();
        for round in 0..rounds {
            for k in 0..contenders.len() {
                let which = contenders[(k + round) % contenders.len()];
                let (n, t) = match which {
                    0 => {
                        clear();
                        timed(|| row.ctx.count(&whole).expect("count"))
                    }
                    1 => timed(|| row.ctx.count(&whole).expect("count")),
                    2 => peer.time(row.quicktok.unwrap_or_default()),
                    3 => timed(|| {
                        row.tokenizers
                            .map_or(0, |hf| hf.tokenizer().encode_fast(whole.as_str(), false).expect("encode").len())
                    }),
                    _ => timed(|| row.encoding.map_or(0, |e| e.pieces(std::hint::black_box(&whole)).count())),
                };
                std::hint::black_box(n);
                times[which].push(t);
            }
        }
        let [cold, warm, quick, hf, scan] = times.map(|t| if t.is_empty() { Duration::ZERO } else { median(t) });
        let r = |x: Duration, y: Duration| x.as_secs_f64() / y.as_secs_f64();
        let hf_cells = if row.tokenizers.is_some() {
            (format!("{hf:.1?}"), format!("×{:.1}", r(hf, cold)))
        } else {
            ("—".to_owned(), "—".to_owned())
        };
        let (quick, quick_ratio) = match row.quicktok {
            Some(_) => (format!("{quick:.2?}"), format!("×{:.2} / ×{:.2}", r(quick, cold), r(quick, warm))),
            None => ("—".to_owned(), "—".to_owned()),
        };
        let (scan, scan_share) = match row.encoding {
            Some(_) => (format!("{scan:.2?}"), format!("{:.0}%", 100.0 * r(scan, cold))),
            None => ("—".to_owned(), "—".to_owned()),
        };
        report.push_str(&format!(
            "| {} | {cold:.2?} | {warm:.2?} | {scan} | {quick} | {} | {:.0} | {quick_ratio} | {scan_share} | {} | {counts} |\n",
            row.label,
            hf_cells.0,
            whole.len() as f64 / cold.as_secs_f64() / 1e6,
            hf_cells.1,
        ));
    }
    drop(peer);
    eprintln!("{report}");
    let _ = std::fs::write(out.join("peers_count.md"), &report);
}
