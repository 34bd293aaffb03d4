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
    let options = IndexOptions::default().chunking(Some(ChunkOptions::new(64).with_encoding(Encoding::Cl100kBase)));
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
    let options =
        IndexOptions::default().chunking(Some(ChunkOptions::new(40).with_overlap(0).with_kind("md", ChunkKind::Text)));
    let index = Bm25Index::from_dir(dir.path(), &options).expect("index");
    assert!(index.ids().any(|id| id == "guide.md#chunk-1"));
    let bad = IndexOptions::default().chunking(Some(ChunkOptions::new(2)));
    let err = Bm25Index::from_dir(dir.path(), &bad).expect_err("too small");
    assert_eq!(err.code(), "RETRIEVE_CHUNK");
    assert!(err.to_string().contains("below the minimum"), "{err}");
}

/// search → fetch over a whole-file index: a file larger than the evidence budget is cut to it
/// and reported, not dropped.
#[tokio::test]
async fn fetch_truncates_a_file_larger_than_the_evidence_budget_and_says_so() {
    use ctx_runtime::pipeline::{
        FetchSpec, ModelSource, ModelSpec, PipelineDef, SearchNodesSpec, SettingsSpec, StepDef, StepKind,
    };
    use ctx_runtime::pipeline::{LoadOptions, LoadedPipeline, StepDetail, StepEnv, TRUNCATED_METADATA_KEY};
    use ctx_runtime::state::PipelineState;

    let dir = sample();
    let index = Bm25Index::from_dir(dir.path(), &IndexOptions::default()).expect("index");
    let def = PipelineDef::new("Fetch")
        .model(ModelSource::Inline(
            ModelSpec::default().context_window(Some(8_192)).max_tokens(Some(512)).encoding(Some("cl100k_base".into())),
        ))
        .settings(SettingsSpec::default().max_context_tokens(Some(4_000)))
        .steps(vec![
            StepDef::new("search", StepKind::SearchNodes(SearchNodesSpec::new(1, "fetch"))),
            StepDef::new("fetch", StepKind::FetchNodeTexts(FetchSpec::new(100, "end"))),
        ]);
    let p = LoadedPipeline::load(def, LoadOptions::new()).expect("loads");
    let env = StepEnv::builder().search(&index).store(&index).build();
    let (state, reports) = p.run(PipelineState::new("where do parcels ship from"), &env).await.expect("runs");
    let StepDetail::FetchNodeTexts(report) = &reports[1].detail else { panic!("{:?}", reports[1]) };
    assert_eq!(report.fetched, ["guide.md"]);
    let [cut] = report.truncated.as_slice() else { panic!("{report:?}") };
    assert!(cut.original_tokens > 100 && cut.kept_tokens <= 100, "{cut:?}");
    let counter = TokenCounter::for_encoding(Encoding::Cl100kBase);
    assert_eq!(counter.count(&state.node_texts[0].text).unwrap(), cut.kept_tokens);
    assert!(state.node_texts[0].metadata.contains_key(TRUNCATED_METADATA_KEY));
}
