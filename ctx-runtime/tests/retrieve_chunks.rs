//! A folder index that chunks: markdown sections, code items and text windows are the nodes,
//! each no larger than the chunk size, with the file and line range they come from.

#![cfg(feature = "bm25")]

use std::fs;

use ctx_runtime::ErrorCode;
use ctx_runtime::retrieve::{Bm25Index, ChunkKind, ChunkOptions, IndexOptions};
use ctx_runtime::tokens::{Encoding, TokenCounter};

fn sample() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    let root = dir.path();
    let guide = format!(
        "# Guide\nWelcome.\n\n## Refunds\nRefunds are paid back within five business days.\n\n## Shipping\n{}",
        "Parcels ship from the central warehouse every weekday morning.\n\n".repeat(20)
    );
    fs::write(root.join("guide.md"), guide).expect("write");
    fs::write(
        root.join("money.rs"),
        "/// Cents.\npub struct Money(i64);\n\nimpl Money {\n    pub fn add(self, o: Money) -> Money { Money(self.0 + o.0) }\n}\n\npub fn refund(m: Money) -> Money { m }\n",
    )
    .expect("write");
    fs::write(root.join("notes.txt"), "Remember the invoice totals. ".repeat(60)).expect("write");
    dir
}

#[test]
fn a_chunk_size_makes_every_node_fit_it() {
    let dir = sample();
    let options = IndexOptions {
        chunking: Some(ChunkOptions::new(64).with_encoding(Encoding::Cl100kBase)),
        ..IndexOptions::default()
    };
    let index = Bm25Index::from_dir(dir.path(), &options).expect("index");
    let counter = TokenCounter::for_encoding(Encoding::Cl100kBase);
    for id in index.ids() {
        let n = counter.count(index.text(id).expect("text")).expect("count");
        assert!(n <= 64, "{id}: {n}");
    }
    let ids: Vec<&str> = index.ids().collect();
    assert!(ids.contains(&"guide.md#refunds") && ids.contains(&"guide.md#shipping/part-2"), "{ids:?}");
    assert!(ids.iter().any(|id| id.starts_with("notes.txt#chunk-2")), "{ids:?}");
    let hits = index.search("when are refunds paid back", 1);
    assert_eq!(hits[0].id, "guide.md#refunds");
    let node = index.node_text("guide.md#refunds").expect("node");
    assert_eq!(node.path.as_deref(), Some("guide.md"));
    assert_eq!((node.metadata["start_line"].as_u64(), node.metadata["end_line"].as_u64()), (Some(4), Some(6)));
    assert_eq!(node.metadata["title"], "Guide > Refunds");
    // Without a chunk size the index keeps one node per file, as before.
    let whole = Bm25Index::from_dir(dir.path(), &IndexOptions::default()).expect("index");
    assert_eq!(whole.ids().collect::<Vec<_>>(), ["guide.md", "money.rs", "notes.txt"]);
}

#[test]
fn kinds_can_be_overridden_and_bad_sizes_are_typed_errors() {
    let dir = sample();
    let options = IndexOptions {
        chunking: Some(ChunkOptions::new(40).with_overlap(0).with_kind("md", ChunkKind::Text)),
        ..IndexOptions::default()
    };
    let index = Bm25Index::from_dir(dir.path(), &options).expect("index");
    assert!(index.ids().any(|id| id == "guide.md#chunk-1"));
    let bad = IndexOptions { chunking: Some(ChunkOptions::new(2)), ..IndexOptions::default() };
    let err = Bm25Index::from_dir(dir.path(), &bad).expect_err("too small");
    assert_eq!(err.code(), "RETRIEVE_CHUNK");
    assert!(err.to_string().contains("below the minimum"), "{err}");
}
