//! Counting one long text on several threads, exactly, on the cores that are free when the count
//! starts.
//!
//! A text's count is the sum of its pieces' counts (`pieces.rs`), so it can be counted in parts
//! that each start where a piece starts. Where pieces start is only known by splitting from the
//! beginning, so each thread splits from a guessed boundary (a likely piece start near an even
//! cut), and its result is used only from the first piece start its split shares with the split
//! coming from the start: the pieces after a true boundary depend only on the text after it, so
//! the sum is exact whatever the guesses and whatever the number of threads
//! ([`count_parallel`], [`count_at_cuts`]).
//!
//! How many threads ([`Threads`]): a second thread only pays when a second core is free to run
//! it. On a busy machine a woken thread waits behind the work already on the other cores, and the
//! count ends no sooner (BENCHMARKS.md, "Issue 39": two threads against one under four builds,
//! ×0.98–1.03). So by default the number is chosen when a count starts, from the cores free at
//! that moment ([`free_cores`]), and never more than one per [`MIN_BYTES_PER_THREAD`] of text.
//! A service that knows its machine pins it ([`THREADS_ENV`], `BpeBackend::with_threads`).

use std::num::NonZeroUsize;
use std::sync::OnceLock;

use super::pieces::{PieceCache, PieceCounter, PieceVocab};

/// Texts at least this long may be counted on several threads (when a second core is free, or
/// as [`THREADS_ENV`] and [`BpeBackend::with_threads`](super::BpeBackend::with_threads) set).
/// Below it, starting threads and the split repeated at each seam cost more than a free core
/// saves; `tokens/parallel` in `benches/tokens.rs` measures one thread against several from
/// 64 KB to 4 MB.
pub const PARALLEL_MIN_BYTES: usize = 256 * 1024;

/// The environment variable that sets how many threads a [`BpeBackend`](super::BpeBackend)
/// counts a long text on, unless the code sets it with
/// [`BpeBackend::with_threads`](super::BpeBackend::with_threads): a positive integer is the most
/// threads a count starts (1: never more than the calling thread), whatever the machine is doing;
/// `auto` or `0` (the default, as when unset) chooses at each count by the cores free then. It is
/// read once per process, at the first count; any other value makes such a backend's counts
/// (`count`, `count_up_to`, `count_appended`) fail with
/// [`TokenError::Backend`](super::TokenError::Backend), naming the variable and the value.
pub const THREADS_ENV: &str = "CTX_TOKENS_THREADS";

/// The least text a thread is started for: a thread per 128 KiB at most. Two threads on 300 KB
/// counted ×1.8 faster than one on an idle machine (BENCHMARKS.md), so half the threshold is
/// still worth a free core.
pub(crate) const MIN_BYTES_PER_THREAD: usize = PARALLEL_MIN_BYTES / 2;

/// The most threads one count starts.
const MAX_THREADS: usize = 64;

/// Where the load cannot be read (not Linux), the cores this process may use, at most this many.
const FALLBACK_MAX: usize = 8;

/// How many threads a long text is counted on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Threads {
    /// As [`THREADS_ENV`] says, [`Threads::Free`] when it is unset: `BpeBackend::new`'s.
    FromEnv,
    /// As many as there are cores free when the count starts.
    Free,
    /// At most this many, whatever the machine is doing.
    AtMost(NonZeroUsize),
}

impl Threads {
    /// `BpeBackend::with_threads`'s argument: 0 chooses by the free cores, `n` is at most `n`.
    pub(crate) fn from_count(n: usize) -> Self {
        NonZeroUsize::new(n).map_or(Threads::Free, Threads::AtMost)
    }

    /// The threads a text of `bytes` bytes is counted on if its count starts now; the reason
    /// when [`THREADS_ENV`] holds no setting.
    pub(crate) fn for_text(self, bytes: usize) -> Result<usize, String> {
        let setting = match self {
            // Checked on every count, long or short, so that a wrong value is never ignored.
            Threads::FromEnv => env_setting()?,
            other => other,
        };
        if bytes < PARALLEL_MIN_BYTES {
            return Ok(1);
        }
        let wanted = match setting {
            Threads::AtMost(n) => n.get(),
            Threads::Free | Threads::FromEnv => free_cores(),
        };
        Ok(wanted.min(bytes / MIN_BYTES_PER_THREAD).clamp(1, MAX_THREADS))
    }
}

/// [`THREADS_ENV`] as read once in this process.
fn env_setting() -> Result<Threads, String> {
    static SETTING: OnceLock<Result<Threads, String>> = OnceLock::new();
    SETTING
        .get_or_init(|| match std::env::var_os(THREADS_ENV) {
            None => Ok(Threads::Free),
            Some(value) => parse_setting(&value.to_string_lossy()),
        })
        .clone()
}

/// A value of [`THREADS_ENV`].
fn parse_setting(value: &str) -> Result<Threads, String> {
    match value.trim() {
        "" | "auto" | "0" => Ok(Threads::Free),
        n => n.parse::<usize>().map(Threads::from_count).map_err(|_| {
            format!(
                "{THREADS_ENV}=`{value}` is not a number of threads: expected a positive integer (the most threads \
                 a count starts), or `auto` or 0 (the cores free at each count)"
            )
        }),
    }
}

/// The cores free for this count now, the calling thread's own included: at least 1, at most
/// the cores this process may use (its CPU affinity and cgroup quota, which
/// `available_parallelism` reads; read once per process).
///
/// On Linux, the machine's online CPUs less the threads the kernel has runnable at this moment
/// besides the caller (`/proc/loadavg`'s fourth field: every runnable thread of every process,
/// whatever its priority); one read of a short file, a few microseconds. It is a snapshot: a
/// core that frees up a millisecond later is not used, one taken a millisecond later is shared.
/// Elsewhere, the cores this process may use, at most 8.
pub(crate) fn free_cores() -> usize {
    let allowed = allowed_cores();
    if allowed == 1 {
        return 1;
    }
    #[cfg(target_os = "linux")]
    if let Some(runnable) = runnable_now() {
        return free_of(online_cpus(), runnable, allowed);
    }
    allowed.min(FALLBACK_MAX)
}

/// The cores this process may use, read once.
fn allowed_cores() -> usize {
    static ALLOWED: OnceLock<usize> = OnceLock::new();
    *ALLOWED.get_or_init(|| std::thread::available_parallelism().map_or(1, NonZeroUsize::get))
}

/// Free cores of `online` CPUs when `runnable` threads (the caller among them) are runnable, for
/// a process that may use `allowed` cores.
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
fn free_of(online: usize, runnable: usize, allowed: usize) -> usize {
    online.saturating_sub(runnable.saturating_sub(1)).clamp(1, allowed.max(1))
}

/// The runnable threads of `/proc/loadavg`'s text (`0.52 0.41 0.30 3/114 32038`: 3).
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
fn runnable_in(loadavg: &str) -> Option<usize> {
    loadavg.split_ascii_whitespace().nth(3)?.split_once('/')?.0.parse().ok()
}

/// The number of CPUs in a kernel CPU list (`0-3,6,8-9`: 7).
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
fn cpus_in_list(list: &str) -> Option<usize> {
    list.trim().split(',').try_fold(0usize, |sum, part| {
        let n = match part.split_once('-') {
            Some((a, b)) => b.parse::<usize>().ok()?.checked_sub(a.parse().ok()?)? + 1,
            None => part.parse::<usize>().map(|_| 1).ok()?,
        };
        sum.checked_add(n)
    })
}

/// The threads runnable on the machine now, the caller included.
#[cfg(target_os = "linux")]
fn runnable_now() -> Option<usize> {
    use std::io::Read;
    // A stack buffer and one read: the file is under 100 bytes, and the kernel writes it whole.
    let mut buf = [0u8; 128];
    let n = std::fs::File::open("/proc/loadavg").ok()?.read(&mut buf).ok()?;
    runnable_in(std::str::from_utf8(&buf[..n]).ok()?)
}

/// The machine's online CPUs (what `/proc/loadavg`'s runnable threads run on), read once; the
/// cores this process may use when the list cannot be read.
#[cfg(target_os = "linux")]
fn online_cpus() -> usize {
    static ONLINE: OnceLock<usize> = OnceLock::new();
    *ONLINE.get_or_init(|| {
        std::fs::read_to_string("/sys/devices/system/cpu/online")
            .ok()
            .and_then(|list| cpus_in_list(&list))
            .filter(|&n| n > 0)
            .unwrap_or_else(allowed_cores)
    })
}

/// Pieces each thread remembers from its start, to find where its split meets the previous one.
/// A handful in the unit tests, so that splits which meet later than that (the rest counted from
/// the true boundary) are exercised too: the count is exact with any window.
const SEAM_WINDOW: usize = if cfg!(test) { 4 } else { 512 };

/// How far past an even cut a thread looks for a likely piece start.
const SEAM_SEARCH: usize = 64 * 1024;

/// A position at or after `from` where a piece very likely starts: a space between a non-space
/// and an ASCII letter (` word`), or the start of a line that begins with a letter or digit.
/// `None` when there is none within [`SEAM_SEARCH`] bytes. Always a character boundary (an
/// ASCII byte, or just after one).
fn likely_boundary(text: &str, from: usize) -> Option<usize> {
    let bytes = text.as_bytes();
    let end = from.saturating_add(SEAM_SEARCH).min(bytes.len().saturating_sub(1));
    (from.max(1)..end).find_map(|i| {
        let (prev, here, next) = (bytes[i - 1], bytes[i], bytes[i + 1]);
        if here == b' ' && !prev.is_ascii_whitespace() && next.is_ascii_alphabetic() {
            Some(i)
        } else if here == b'\n' && next.is_ascii_alphanumeric() {
            Some(i + 1)
        } else {
            None
        }
    })
}

/// What one thread counted from its guessed start.
struct Run {
    /// The first pieces' starts, with the tokens counted before each.
    starts: Vec<(usize, usize)>,
    /// Tokens from the guessed start to `end`.
    tokens: usize,
    /// The start of the first piece at or after the next thread's guess (or the text's end).
    end: usize,
}

fn run<V: PieceVocab + ?Sized>(vocab: &V, cache: &PieceCache, text: &str, start: usize, stop: usize) -> Run {
    let mut counter = PieceCounter::new(vocab, cache, stop - start);
    let mut at = start;
    let mut out = Run { starts: Vec::new(), tokens: 0, end: text.len() };
    for piece in vocab.split(&text[start..]) {
        if at >= stop {
            out.end = at;
            break;
        }
        if out.starts.len() < SEAM_WINDOW {
            out.starts.push((at, out.tokens));
        }
        out.tokens += counter.piece(piece);
        at += piece.len();
    }
    out
}

/// The exact count of `text` on up to `threads` threads, cut at likely piece starts near even
/// cuts (one thread when the text offers no place to cut). The caller decides whether the text
/// is long enough to be worth it ([`Threads::for_text`]).
pub(crate) fn count_parallel<V: PieceVocab + Sync + ?Sized>(
    vocab: &V,
    cache: &PieceCache,
    text: &str,
    threads: usize,
) -> usize {
    let threads = threads.clamp(1, MAX_THREADS);
    let mut cuts = Vec::with_capacity(threads - 1);
    for k in 1..threads {
        let even = text.len() / threads * k;
        if let Some(cut) = likely_boundary(text, even.max(cuts.last().map_or(0, |c| c + 1))) {
            cuts.push(cut);
        }
    }
    count_at_cuts(vocab, cache, text, &cuts)
}

/// The exact count of `text`, split again from each of `cuts` (ascending character boundaries
/// inside the text, true piece starts or not) on a thread of its own.
fn count_at_cuts<V: PieceVocab + Sync + ?Sized>(vocab: &V, cache: &PieceCache, text: &str, cuts: &[usize]) -> usize {
    if cuts.is_empty() {
        return PieceCounter::new(vocab, cache, text.len()).count(text);
    }
    let stops: Vec<usize> = cuts.iter().copied().chain([text.len()]).collect();
    let runs: Vec<Run> = std::thread::scope(|scope| {
        let handles: Vec<_> = cuts
            .iter()
            .zip(&stops[1..])
            .map(|(&start, &stop)| scope.spawn(move || run(vocab, cache, text, start, stop)))
            .collect();
        let first = run(vocab, cache, text, 0, stops[0]);
        // A panic in a thread is the tokenizer's: re-raise it where the backend catches it.
        std::iter::once(first)
            .chain(handles.into_iter().map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p))))
            .collect()
    });
    // `pos` is always a true piece start: the end of a run whose split is the true one.
    let (mut pos, mut total) = (runs[0].end, runs[0].tokens);
    for run in &runs[1..] {
        if pos >= run.end {
            continue; // the previous run's last piece swallowed this whole range
        }
        match run.starts.binary_search_by_key(&pos, |&(at, _)| at) {
            Ok(i) => {
                total += run.tokens - run.starts[i].1;
                pos = run.end;
            }
            // The splits never met within the window: count the rest from the true boundary.
            Err(_) => return total + PieceCounter::new(vocab, cache, text.len() - pos).count(&text[pos..]),
        }
    }
    total
}

#[cfg(test)]
#[path = "parallel/tests.rs"]
mod tests;
