//! The token-counting corpus of `tests/data/tokens` (prose, Rust, C#, SQL, JSON, logs,
//! multilingual text, emoji, whitespace), read the same way by the unit tests, integration tests
//! and benches that use it: each includes this file as a module.

use std::path::PathBuf;

/// The corpus files as `(file name, text)`, sorted by name; the script that generated some of
/// them and `.gitattributes` are not part of it.
pub fn corpus_files() -> Vec<(String, String)> {
    // The data lives beside this file in ctx-tokens, whose unit and integration tests read it
    // from there; ctx-runtime's tests read it as a sibling, the facade's benches from the
    // workspace root.
    let manifest = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let dir = [
        manifest.join("tests/data/tokens"),
        manifest.join("../ctx-tokens/tests/data/tokens"),
        manifest.join("ctx-tokens/tests/data/tokens"),
    ]
    .into_iter()
    .find(|d| d.is_dir())
    .unwrap_or_else(|| manifest.join("tests/data/tokens"));
    let mut files: Vec<(String, String)> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x != "py") && p.file_name().is_some_and(|n| n != ".gitattributes"))
        .map(|p| {
            let text = std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
            (p.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default(), text)
        })
        .collect();
    files.sort();
    files
}
