//! Start-up and peak memory of a fresh process that counts with one OpenAI encoding: ctx's
//! `TokenCounter` beside bpe-openai's `Tokenizer::count` (the library ctx counted with until it
//! read the vocabularies itself).
//!
//! The bench starts itself again as a child for every measurement (`--child WHO ENCODING WHAT`),
//! so each figure is a whole process: loading the vocabulary, building what counting needs, the
//! count, exiting. WHO is `ctx`, `bpe-openai`, or `none` (the same process counting nothing: the
//! floor every process pays); WHAT is `hello` ("hello world") or `1mb` (the token corpus repeated
//! to 1 MB, read before the clock matters to either). Each child's CPU time (user + system) and
//! peak RSS come from the kernel (`wait4`'s `rusage`), wall time from the parent. Rounds
//! alternate the contenders (`CTX_STARTUP_ROUNDS`, 9), so load on the machine falls on all alike;
//! the table gives medians and goes to stderr and `$CTX_BENCH_OUT/startup.md`.
//!
//! `cargo bench -p ctx-llm --bench startup`

use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

use ctx::tokens::{Encoding, TokenCounter};

#[path = "../../ctx-tokens/tests/corpus/mod.rs"]
mod corpus;

const WHO: [&str; 3] = ["none", "ctx", "bpe-openai"];

/// The text a child counts.
fn text(what: &str) -> String {
    match what {
        "hello" => "hello world".to_owned(),
        _ => {
            let corpus: String = corpus::corpus_files().into_iter().map(|(_, text)| text).collect();
            let mut text = String::with_capacity(1 << 20);
            while text.len() < 1 << 20 {
                text.push_str(&corpus);
            }
            text
        }
    }
}

fn child(who: &str, encoding: &str, what: &str) {
    let text = text(what);
    let n = match (who, encoding) {
        ("ctx", "cl100k") => TokenCounter::for_encoding(Encoding::Cl100kBase).count(&text).expect("count"),
        ("ctx", _) => TokenCounter::for_encoding(Encoding::O200kBase).count(&text).expect("count"),
        ("bpe-openai", "cl100k") => bpe_openai::cl100k_base().count(&text),
        ("bpe-openai", _) => bpe_openai::o200k_base().count(&text),
        _ => text.len(),
    };
    std::hint::black_box(n);
    println!("{n}");
}

/// One child's CPU time, peak RSS (bytes), wall time and output.
struct Measure {
    cpu: Duration,
    rss: u64,
    wall: Duration,
    out: String,
}

#[expect(clippy::zombie_processes, reason = "the child is waited for by `wait4`, which also reports its rusage")]
fn measure(who: &str, encoding: &str, what: &str) -> Measure {
    let exe = std::env::current_exe().expect("own path");
    let start = Instant::now();
    let child = Command::new(exe)
        .args(["--child", who, encoding, what])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("start a child");
    let pid = child.id() as libc::pid_t;
    let mut stdout = child.stdout.expect("stdout");
    let mut out = String::new();
    std::io::Read::read_to_string(&mut stdout, &mut out).expect("child output");
    let mut status = 0;
    // SAFETY: an all-zero rusage is a valid value for the kernel to fill.
    #[allow(unsafe_code)]
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `pid` is our own child, not yet waited for; both out-pointers are valid.
    #[allow(unsafe_code)]
    let rc = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    let wall = start.elapsed();
    assert!(rc == pid && libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0, "{who} {encoding} {what} failed");
    let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    Measure {
        cpu: tv(usage.ru_utime) + tv(usage.ru_stime),
        rss: usage.ru_maxrss as u64 * 1024,
        wall,
        out: out.trim().to_owned(),
    }
}

fn median<T: Ord + Copy>(mut xs: Vec<T>) -> T {
    xs.sort_unstable();
    xs[xs.len() / 2]
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let [_, flag, who, encoding, what] = args.as_slice()
        && flag == "--child"
    {
        return child(who, encoding, what);
    }
    let rounds: usize = std::env::var("CTX_STARTUP_ROUNDS").ok().and_then(|r| r.parse().ok()).unwrap_or(9);
    let mut report = format!(
        "Fresh processes, {rounds} rounds alternating the contenders; medians of CPU time (user + system), \
         wall time and peak RSS:\n\n\
         | encoding | text | process | CPU | wall | peak RSS |\n|---|---|---|---:|---:|---:|\n"
    );
    for encoding in ["cl100k", "o200k"] {
        for what in ["hello", "1mb"] {
            let mut all: [Vec<Measure>; 3] = Default::default();
            for round in 0..rounds {
                for k in 0..WHO.len() {
                    let which = (k + round) % WHO.len();
                    all[which].push(measure(WHO[which], encoding, what));
                }
            }
            // Exactness: ctx and bpe-openai counted the same.
            assert_eq!(all[1][0].out, all[2][0].out, "{encoding} {what}: ctx and bpe-openai disagree");
            for (who, runs) in WHO.iter().zip(all) {
                let cpu = median(runs.iter().map(|m| m.cpu).collect());
                let wall = median(runs.iter().map(|m| m.wall).collect());
                let rss = median(runs.iter().map(|m| m.rss).collect());
                report.push_str(&format!(
                    "| {encoding} | {} | {who} | {:.1} ms | {:.1} ms | {:.1} MiB |\n",
                    if what == "hello" { "\"hello world\"" } else { "1 MB" },
                    cpu.as_secs_f64() * 1e3,
                    wall.as_secs_f64() * 1e3,
                    rss as f64 / f64::from(1 << 20),
                ));
            }
        }
    }
    eprintln!("{report}");
    let out =
        PathBuf::from(std::env::var("CTX_BENCH_OUT").unwrap_or_else(|_| std::env::temp_dir().display().to_string()));
    let _ = std::fs::create_dir_all(&out);
    let _ = std::fs::write(out.join("startup.md"), &report);
}
