//! [`PipelineCache`]: pipeline files loaded and checked once, then again only when a file they
//! were made from changed (`budget_contract.md`, "Cache / performance": the fingerprint covers
//! the pipeline YAML, every `extends` file and the prompt files; the `config.json` too, since
//! the contract reads the model's limits from it).

use std::collections::HashMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use quick_cache::sync::Cache;

use super::error::PipelineFileError;
use super::pipeline_file::{LoadedFile, PipelineFile};
use super::sources::SourceFile;
use crate::contract::{ContractCacheStats, Fingerprint, FingerprintBuilder};
use crate::pipeline::validate::ValidateOptions;

/// The outcome of loading one pipeline file.
type Outcome = Result<Arc<LoadedFile>, PipelineFileError>;

/// Pipeline files by the fingerprint of every file they were read from, with the options they
/// were checked with. Thread-safe and bounded.
///
/// [`Self::load`] first re-reads the files the path's previous load read and hashes them (no
/// parsing, no token counting): when every one holds the same bytes — or the same bytes as any
/// earlier load still cached, such as an edit that was reverted — the earlier outcome is
/// returned. Otherwise the file is loaded and checked again ([`PipelineFile::load_with`]: the
/// YAML decoded, every rule, the budget contract with the real tokenizer). Failed loads are kept
/// too: the same files fail the same way.
///
/// ```
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// use ctx::pipeline::yaml::PipelineCache;
///
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("qa.yaml");
/// std::fs::write(&path, "model: { context_window: 8192, max_tokens: 512, encoding: cl100k_base }
/// settings: { max_context_tokens: 4000 }
/// prompts: { answer: \"Answer from the context.\" }
/// steps:
///   - { id: answer, action: call_model, prompt_key: answer, max_output_tokens: 256, next: end }
/// ")?;
/// let cache = PipelineCache::default();
/// let first = cache.load(&path)?;
/// let again = cache.load(&path)?; // nothing changed: the files are hashed, not checked
/// assert!(std::sync::Arc::ptr_eq(&first, &again));
/// assert_eq!((cache.stats().misses, cache.stats().hits), (1, 1));
/// # Ok(()) }
/// ```
pub struct PipelineCache {
    /// The files each path's latest load read, in order.
    latest: Mutex<HashMap<PathBuf, Vec<SourceFile>>>,
    outcomes: Cache<Fingerprint, Outcome>,
    options: ValidateOptions,
    hits: AtomicU64,
    misses: AtomicU64,
}

impl fmt::Debug for PipelineCache {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PipelineCache").field("len", &self.outcomes.len()).field("stats", &self.stats()).finish()
    }
}

impl Default for PipelineCache {
    fn default() -> Self {
        Self::new(Self::DEFAULT_ENTRIES, ValidateOptions::default())
    }
}

impl PipelineCache {
    /// Outcomes kept by [`PipelineCache::default`] (pipeline files × versions of them).
    pub const DEFAULT_ENTRIES: usize = 256;

    /// A cache of at most `entries` outcomes, checking with `options`.
    pub fn new(entries: usize, options: ValidateOptions) -> Self {
        PipelineCache {
            latest: Mutex::new(HashMap::new()),
            outcomes: Cache::new(entries.max(1)),
            options,
            hits: AtomicU64::new(0),
            misses: AtomicU64::new(0),
        }
    }

    /// The pipeline file at `path`, loaded and checked, or every problem found — from the cache
    /// when no file it was made from changed since a load of the same contents.
    pub fn load(&self, path: impl AsRef<Path>) -> Result<Arc<LoadedFile>, PipelineFileError> {
        let path = path.as_ref();
        let previous = self.latest.lock().unwrap_or_else(PoisonError::into_inner).get(path).cloned();
        if let Some(files) = previous {
            // Equal bytes at equal paths make an equal load: which files are read follows from
            // the contents of those read before them.
            let now: Vec<SourceFile> = files.into_iter().map(SourceFile::reread).collect();
            if let Some(found) = self.outcomes.get(&self.fingerprint(path, &now)) {
                self.hits.fetch_add(1, Ordering::Relaxed);
                return found;
            }
        }
        self.misses.fetch_add(1, Ordering::Relaxed);
        let outcome: Outcome = PipelineFile::load_with(path, &self.options).map(Arc::new);
        let sources = match &outcome {
            Ok(file) => file.sources(),
            Err(e) => e.sources(),
        }
        .to_vec();
        // Digests of the bytes the load itself used, so an edit made during the load is seen as
        // a change at the next call.
        self.outcomes.insert(self.fingerprint(path, &sources), outcome.clone());
        self.latest.lock().unwrap_or_else(PoisonError::into_inner).insert(path.to_owned(), sources);
        outcome
    }

    /// Loads answered from the cache (`hits`) and loads that read and checked the files
    /// (`misses`), since creation.
    pub fn stats(&self) -> ContractCacheStats {
        ContractCacheStats { hits: self.hits.load(Ordering::Relaxed), misses: self.misses.load(Ordering::Relaxed) }
    }

    fn fingerprint(&self, path: &Path, sources: &[SourceFile]) -> Fingerprint {
        let mut b = FingerprintBuilder::new()
            .option("path", &path.to_string_lossy())
            .option("check_tokens", if self.options.check_tokens { "1" } else { "0" })
            .option("env_limits_policy", self.options.env_limits_policy.as_deref().unwrap_or("\u{0}"));
        for s in sources {
            let digest = s.digest.map_or_else(|| "absent".to_owned(), |d| format!("{d:032x}"));
            b = b.source_file(&s.path.to_string_lossy(), digest.as_bytes());
        }
        b.finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unreadable_file_is_cached_until_it_appears() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("p.yaml");
        let cache = PipelineCache::default();
        assert!(cache.load(&path).is_err());
        assert!(cache.load(&path).is_err());
        assert_eq!((cache.stats().misses, cache.stats().hits), (1, 1));
        std::fs::write(
            &path,
            "model: { context_window: 8192, max_tokens: 512, encoding: cl100k_base }\n\
             settings: { max_context_tokens: 4000 }\n\
             prompts: { a: \"Answer.\" }\n\
             steps:\n  - { id: a, action: call_model, prompt_key: a, max_output_tokens: 64, next: end }\n",
        )
        .unwrap();
        if let Err(e) = cache.load(&path) {
            panic!("{e}");
        }
        assert_eq!(cache.stats().misses, 2);
    }
}
