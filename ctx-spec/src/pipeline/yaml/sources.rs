//! The files a pipeline is made from, each with a digest of the exact bytes the loader read.
//!
//! Whatever depends on a pipeline file — the [`PipelineCache`](super::PipelineCache), the
//! `pipeline!` macro's file form, a service that reloads pipelines — needs to know when to read
//! it again. The digest is taken of the bytes the decoder used, not of a second read, so a file
//! edited while it was being loaded can never leave a stale result filed under its new contents.

use std::io::Read;
use std::path::{Path, PathBuf};

use xxhash_rust::xxh3::xxh3_128;

/// The largest file read (a pipeline file, a base, a prompt, a `config.json`): 8 MiB.
pub(crate) const MAX_FILE_BYTES: u64 = 8 << 20;

/// One file read while loading a pipeline: where, and what it held.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub struct SourceFile {
    /// The path as the loader opened it (the top file's path joined with relative references).
    pub path: PathBuf,
    /// XXH3-128 of the bytes read; `None` when the file could not be read (a missing `extends`
    /// file: its appearance is a change too).
    pub digest: Option<u128>,
}

impl SourceFile {
    /// Whether the file still holds what was read (or is still unreadable).
    pub fn is_current(&self) -> bool {
        digest_of(&self.path) == self.digest
    }

    /// The same path with the digest of what it holds now.
    pub(crate) fn reread(self) -> SourceFile {
        let digest = digest_of(&self.path);
        SourceFile { path: self.path, digest }
    }
}

/// The files read so far, in the order read (a file read twice is listed once).
#[derive(Debug, Clone, Default)]
pub(crate) struct Sources(Vec<SourceFile>);

/// A file that is not UTF-8, with where its first bad byte is (1-based, the column in
/// characters of the valid text before it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct NotUtf8 {
    pub line: usize,
    pub column: usize,
}

impl std::fmt::Display for NotUtf8 {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "not UTF-8 text: the byte at line {}, column {} is not UTF-8", self.line, self.column)
    }
}

impl std::error::Error for NotUtf8 {}

impl NotUtf8 {
    /// The position in `error`, when it is about a file that is not UTF-8.
    pub(crate) fn of(error: &std::io::Error) -> Option<NotUtf8> {
        error.get_ref().and_then(|inner| inner.downcast_ref::<NotUtf8>()).copied()
    }
}

impl Sources {
    /// The text of `path`, recording what was read. Refused past [`MAX_FILE_BYTES`] (so a path to
    /// an endless device file cannot exhaust memory) and when it is not UTF-8.
    pub(crate) fn read(&mut self, path: &Path) -> std::io::Result<String> {
        let bytes = read_bytes(path);
        self.push(path, bytes.as_ref().ok().map(|b| xxh3_128(b)));
        let bytes = bytes?;
        String::from_utf8(bytes).map_err(|e| {
            let valid = &e.as_bytes()[..e.utf8_error().valid_up_to()];
            // The prefix is valid UTF-8 by definition of `valid_up_to`.
            let text = std::str::from_utf8(valid).unwrap_or_default();
            let line = 1 + text.matches('\n').count();
            let column = 1 + text.rsplit('\n').next().unwrap_or_default().chars().count();
            std::io::Error::new(std::io::ErrorKind::InvalidData, NotUtf8 { line, column })
        })
    }

    /// Records `text` as the contents of `path` (a file whose text the caller read or supplied).
    pub(crate) fn record(&mut self, path: &Path, text: &str) {
        self.push(path, Some(xxh3_128(text.as_bytes())));
    }

    fn push(&mut self, path: &Path, digest: Option<u128>) {
        if !self.0.iter().any(|s| s.path == path && s.digest == digest) {
            self.0.push(SourceFile { path: path.to_owned(), digest });
        }
    }

    /// Appends `other`'s files after this one's.
    pub(crate) fn append(&mut self, other: Sources) {
        for s in other.0 {
            self.push(&s.path, s.digest);
        }
    }

    pub(crate) fn into_vec(self) -> Vec<SourceFile> {
        self.0
    }
}

fn digest_of(path: &Path) -> Option<u128> {
    read_bytes(path).ok().map(|bytes| xxh3_128(&bytes))
}

fn read_bytes(path: &Path) -> std::io::Result<Vec<u8>> {
    let mut bytes = Vec::new();
    std::fs::File::open(path)?.take(MAX_FILE_BYTES + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(std::io::Error::other(format!("larger than {MAX_FILE_BYTES} bytes")));
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_is_current_until_its_bytes_change() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("p.yaml");
        std::fs::write(&path, "name: a\n").unwrap();
        let mut sources = Sources::default();
        assert_eq!(sources.read(&path).unwrap(), "name: a\n");
        let missing = dir.path().join("base.yaml");
        assert!(sources.read(&missing).is_err());
        let [read, absent] = sources.into_vec().try_into().unwrap();
        assert!(read.is_current() && absent.is_current());
        std::fs::write(&path, "name: b\n").unwrap();
        std::fs::write(&missing, "steps: []\n").unwrap();
        assert!(!read.is_current() && !absent.is_current());
    }

    #[test]
    fn non_utf8_is_refused_but_recorded() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("p.yaml");
        std::fs::write(&path, [0xff, 0xfe, b'a']).unwrap();
        let mut sources = Sources::default();
        assert_eq!(sources.read(&path).unwrap_err().kind(), std::io::ErrorKind::InvalidData);
        assert!(sources.into_vec()[0].digest.is_some());
        // Where the first bad byte is: line 2, after `é:` (two characters, three bytes).
        std::fs::write(&path, b"a: 1\n\xc3\xa9:\xff\n").unwrap();
        let e = Sources::default().read(&path).unwrap_err();
        assert_eq!(NotUtf8::of(&e), Some(NotUtf8 { line: 2, column: 3 }), "{e}");
    }
}
