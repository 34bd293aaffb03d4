//! `pipeline!` reading a YAML pipeline file while compiling: the same definition the runtime's
//! loader reads, the same typed API as a pipeline written inline, and a run.

use ctx::definition::{ModelSource, PipelineDef};
use ctx::llm::offline::OfflineModel;
use ctx::pipeline::StepMachine;
use ctx::pipeline::yaml::PipelineFile;
use ctx::retrieve::{Bm25Index, ChunkOptions, IndexOptions};

ctx::pipeline! {
    /// The specification's minimal `manage_context_budget` pipeline, kept in a file.
    pub pipeline Minimal { file: "../examples/pipelines/minimal.yaml" }
}

// The short form: the type is named after the file's `name` (`CompactionLoop`).
ctx::pipeline!(file = "../examples/pipelines/compaction_loop.yaml");

/// The runtime's reading of `path`, as the macro embeds it: named after the Rust type, the
/// `config.json` path relative to the crate.
fn loaded(path: &str, name: &str) -> PipelineDef {
    let root = env!("CARGO_MANIFEST_DIR");
    let file = PipelineFile::load(format!("{root}/{path}")).unwrap_or_else(|e| panic!("{e}"));
    let mut def = file.into_definition();
    def.name = name.to_owned();
    if let ModelSource::ConfigFile(config) = &mut def.model {
        *config = config.strip_prefix(&format!("{root}/")).unwrap_or(config).to_owned();
    }
    def
}

#[test]
fn the_macro_embeds_what_the_loader_reads() {
    assert_eq!(MinimalStep::definition(), loaded("../examples/pipelines/minimal.yaml", "Minimal"));
    assert_eq!(
        CompactionLoopStep::definition(),
        loaded("../examples/pipelines/compaction_loop.yaml", "CompactionLoop")
    );
    assert_eq!(MinimalStep::definition().model, ModelSource::ConfigFile("../examples/pipelines/config.json".into()));
}

#[test]
fn the_typed_api_is_the_inline_one() {
    let ids: Vec<&str> = MinimalStep::ALL.iter().map(|s| s.id()).collect();
    assert_eq!(
        ids,
        [
            "search",
            "fetch",
            "manage_budget",
            "call_summarize_context",
            "set_context_from_summary",
            "call_model_answer",
            "end"
        ]
    );
    assert_eq!(MinimalStep::FIRST, MinimalStep::Search);
    assert_eq!(MinimalStep::from_id("manage_budget"), Some(MinimalStep::ManageBudget));
    assert!(Minimal::MERMAID.contains("manage_budget"));
    assert_eq!(<MinimalStep as StepMachine>::NAME, "Minimal");
}

#[tokio::test]
async fn a_file_pipeline_runs_with_its_typed_environment() {
    // `config.json` is read when the pipeline is loaded, relative to the working directory:
    // the crate's root under `cargo test`.
    let pipeline = Minimal::new().unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(pipeline.pipeline().context_window(), 9600);
    let index = Bm25Index::from_dir(
        "../examples/docs_support/docs",
        &IndexOptions::default().chunking(Some(ChunkOptions::new(300))),
    )
    .unwrap();
    let model = OfflineModel::new(pipeline.pipeline().counter().clone());
    let env = MinimalEnv { search: &index, store: &index, model: &model };
    let mut chat = pipeline.conversation();
    let answer = chat.ask("How do I rotate an API key?", &env).await.unwrap_or_else(|e| panic!("{e}"));
    assert!(!answer.text.is_empty());
    let ran: Vec<&str> = answer.reports.iter().map(|r| r.step_id.as_str()).collect();
    assert_eq!(ran.first(), Some(&"search"));
    assert_eq!(ran.last(), Some(&"call_model_answer"));
}
