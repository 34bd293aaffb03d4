//! Token counts kept between compiler runs.
//!
//! Every `cargo check` runs the macro in a new compiler process, and the macro's dependencies are
//! built unoptimised, as cargo builds every proc macro in a dev profile: loading an OpenAI
//! vocabulary there takes tens of milliseconds (a few hundred while ctx read bpe-openai's
//! tables), most of the macro's time in the edit-check loop, even when no prompt changed. So the counts of the shared counters are saved in a file
//! per encoding and ctx version and read back by the next compiler run: a prompt, frame or
//! template counted once is never tokenized again, and when nothing that is counted changed, the
//! vocabulary is not loaded at all. A count is the real tokenizer's, keyed by a 128-bit hash of
//! the vocabulary and the exact text ([`CountCache`](ctx_spec::tokens::CountCache)); the file
//! holds keys and counts, never the texts.
//!
//! Where: `CTX_MACRO_COUNT_CACHE` (a directory, or `off`), else `$XDG_CACHE_HOME/ctx`, else
//! `$HOME/.cache/ctx`. Any failure to read or write it only costs the time it would have saved.

use std::path::{Path, PathBuf};
use std::sync::Once;

use ctx_spec::tokens::{Encoding, TokenCounter};

/// The encodings whose process-wide counters the macro's checks use.
const ENCODINGS: [Encoding; 2] = [Encoding::Cl100kBase, Encoding::O200kBase];

/// The directory of the saved counts, or `None` when the cache is off or no home is known.
fn dir() -> Option<PathBuf> {
    match std::env::var_os("CTX_MACRO_COUNT_CACHE") {
        Some(v) if v == "off" => None,
        Some(v) if !v.is_empty() => Some(PathBuf::from(v)),
        _ => {
            std::env::var_os("XDG_CACHE_HOME").filter(|v| !v.is_empty()).map(|v| PathBuf::from(v).join("ctx")).or_else(
                || std::env::var_os("HOME").filter(|v| !v.is_empty()).map(|h| PathBuf::from(h).join(".cache/ctx")),
            )
        }
    }
}

/// The file of `encoding`'s counts in `dir`: one per ctx version, so counts of another release's
/// tokenizer are never read.
fn file(dir: &Path, encoding: Encoding) -> PathBuf {
    dir.join(format!("macro-counts-{}-{}.bin", env!("CARGO_PKG_VERSION"), encoding.name()))
}

/// The counts each shared counter had computed (its misses) when last saved or loaded.
fn misses() -> [u64; 2] {
    ENCODINGS.map(|e| TokenCounter::for_encoding(e).cache_stats().misses)
}

/// What [`before_expansion`] saw, for [`after_expansion`] to tell whether anything was counted.
pub(crate) struct Seen([u64; 2]);

/// Reads the saved counts into the shared counters, once per compiler process.
pub(crate) fn before_expansion() -> Seen {
    static LOADED: Once = Once::new();
    LOADED.call_once(|| {
        if let Some(dir) = dir() {
            load_from(&dir);
        }
    });
    Seen(misses())
}

/// Saves the shared counters' counts when this expansion counted a text not counted before.
pub(crate) fn after_expansion(seen: Seen) {
    if misses() != seen.0
        && let Some(dir) = dir()
    {
        save_to(&dir);
    }
}

fn load_from(dir: &Path) {
    for encoding in ENCODINGS {
        if let Ok(bytes) = std::fs::read(file(dir, encoding)) {
            TokenCounter::for_encoding(encoding).cache().read_bytes(&bytes);
        }
    }
}

/// Writes each encoding's counts, merged with what another compiler process saved meanwhile,
/// through a file of this process renamed into place, so a reader never sees half a file.
fn save_to(dir: &Path) {
    if std::fs::create_dir_all(dir).is_err() {
        return;
    }
    for encoding in ENCODINGS {
        let cache = TokenCounter::for_encoding(encoding).cache().clone();
        if cache.is_empty() {
            continue;
        }
        let path = file(dir, encoding);
        if let Ok(bytes) = std::fs::read(&path) {
            cache.read_bytes(&bytes);
        }
        let temporary = path.with_extension(format!("{}.tmp", std::process::id()));
        if std::fs::write(&temporary, cache.to_bytes()).is_err() || std::fs::rename(&temporary, &path).is_err() {
            let _ = std::fs::remove_file(&temporary);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_saved_by_one_process_are_read_by_the_next() {
        let dir = std::env::temp_dir().join(format!("ctx-macro-counts-{}", std::process::id()));
        let text = "You are a code-review assistant; cite the file of every claim. (counts.rs test)";
        let counter = TokenCounter::for_encoding(Encoding::Cl100kBase);
        let counted = counter.count(text).expect("counts");
        save_to(&dir);

        // The next process: a fresh cache, filled from the file, answers without tokenizing.
        let saved = std::fs::read(file(&dir, Encoding::Cl100kBase)).expect("saved");
        let next = ctx_spec::tokens::CountCache::new(1_024);
        assert!(next.read_bytes(&saved) >= 1);
        assert_eq!(next.get(next.key(counter.backend_id(), text)), Some(counted));
        // A file of another format adds nothing.
        assert_eq!(next.read_bytes(b"not a count cache"), 0);
        std::fs::remove_dir_all(&dir).expect("cleaned up");
    }
}
