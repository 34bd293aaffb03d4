//! The README's first pipeline, `search → fetch → answer`, run as written over a folder of
//! documents that holds the answer: the answer quotes the documents. The pipeline below is the
//! README's character for character (`the_pipeline_is_the_readmes` reads README.md), and the
//! run follows the README's `main` (the index, the model, the environment and the question, read
//! from README.md too), with a temporary folder in place of `docs/`.

use std::fs;
use std::path::Path;

use ctx::llm::offline::OfflineModel;
use ctx::pipeline::StepDetail;
use ctx::report::RunReport;
use ctx::retrieve::{Bm25Index, IndexOptions};
use ctx::{CtxError, PipelineState};

ctx::pipeline! {
    /// Answers questions from the documents in `docs/`.
    pub pipeline Qa {
        model { context_window: 16_384, max_tokens: 1_024, encoding: cl100k_base }
        settings { max_context_tokens: 9_000, max_history_tokens: 2_000, budget_safety_margin_tokens: 128 }
        prompts { answer: "Answer the question from the context." }
        steps {
            search: search_nodes { top_k: 20, next: fetch },
            fetch: fetch_node_texts { evidence_tokens: 3_000, next: answer },
            answer: call_model { prompt_key: answer, max_output_tokens: 4_000, use_history: true, next: end },
        }
    }
}

/// The README's first ```rust block.
fn readme_example() -> String {
    let readme =
        fs::read_to_string(Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/..")).join("README.md")).expect("README.md");
    let start = readme.find("```rust\n").expect("a rust block in README.md") + "```rust\n".len();
    let end = start + readme[start..].find("\n```").expect("the block closes");
    readme[start..end].to_owned()
}

/// The `ctx::pipeline! { … }` invocation of `source`: from its first line to the first line
/// that closes it at the left margin.
fn pipeline_invocation(source: &str) -> String {
    let start = source.find("ctx::pipeline! {\n").expect("a pipeline! invocation");
    let end = start + source[start..].find("\n}\n").expect("the invocation closes") + "\n}".len();
    source[start..end].to_owned()
}

/// The question the README's `main` asks.
fn readme_question(example: &str) -> String {
    let call = "PipelineState::new(\"";
    let start = example.find(call).expect("the question") + call.len();
    example[start..].split('"').next().expect("a closing quote").to_owned()
}

#[test]
fn the_pipeline_is_the_readmes() {
    let example = readme_example();
    assert_eq!(pipeline_invocation(include_str!("readme_pipeline.rs")), pipeline_invocation(&example));
    // The run below builds what the README's `main` builds.
    for line in [
        "let qa = Qa::new()?;",
        "let docs = Bm25Index::from_dir(\"docs\", &IndexOptions::default())?;",
        "let model = OfflineModel::default();",
        "let env = QaEnv { search: &docs, store: &docs, model: &model };",
        "qa.run(PipelineState::new(",
        "println!(\"{}\", state.last_model_response.unwrap_or_default());",
    ] {
        assert!(example.contains(line), "README.md's first example no longer has `{line}`");
    }
}

/// A documents folder whose one document about the contract holds the answer, among others.
const DOCS: [(&str, &str); 3] = [
    (
        "budget_contract.md",
        "# The budget contract\n\nThe budget contract checks that the fixed prompt, the history budget, the context \
         budget, the output limit and the safety margin together fit the model's context window.\n",
    ),
    ("deploy.md", "# Deploying\n\nShip the binary with its configuration file and restart the service.\n"),
    ("colours.md", "# Colours\n\nThe report draws system prompts in blue and tool results in orange.\n"),
];

#[tokio::test]
async fn the_readme_pipeline_answers_from_its_documents() -> Result<(), CtxError> {
    let dir = tempfile::tempdir().expect("a temporary folder");
    for (name, text) in DOCS {
        fs::write(dir.path().join(name), text).expect("write a document");
    }
    let question = readme_question(&readme_example());
    assert_eq!(question, "What does the budget contract check?");

    // The README's `main`, with the temporary folder as `docs`.
    let qa = Qa::new()?;
    let docs = Bm25Index::from_dir(dir.path(), &IndexOptions::default())?;
    let model = OfflineModel::default();
    let env = QaEnv { search: &docs, store: &docs, model: &model };
    let (state, reports) = qa.run(PipelineState::new(&question), &env).await?;
    let answer = state.last_model_response.unwrap_or_default();

    // The answer quotes the document that holds it.
    assert!(!answer.contains("no line of the context shares a term"), "{answer}");
    assert!(answer.contains("[budget_contract.md]"), "{answer}");
    assert!(answer.contains("the fixed prompt, the history budget, the context budget, the output limit"), "{answer}");

    // The answer step appended what was fetched, and its report says so.
    let fetched = match &reports[1].detail {
        StepDetail::FetchNodeTexts(f) => f.fetched.clone(),
        other => panic!("{other:?}"),
    };
    assert!(fetched.iter().any(|id| id == "budget_contract.md"), "{fetched:?}");
    let StepDetail::CallModel(call) = &reports[2].detail else { panic!("{:?}", reports[2].detail) };
    let evidence = call.evidence.as_ref().expect("the answer step appended the fetched texts");
    assert_eq!(evidence.step_id, "answer");
    assert_eq!(evidence.nodes.iter().map(|n| n.id.clone()).collect::<Vec<_>>(), fetched);
    assert!(state.node_texts.is_empty());
    assert_eq!(state.context_blocks.len(), fetched.len());
    let run = RunReport::new(qa.pipeline(), &reports);
    let added = run.requests[0].changes.iter().find(|c| c.by.starts_with("answer, fetched texts")).expect("a change");
    assert!(added.what.starts_with(&format!("{} node(s) to the context", fetched.len())), "{}", added.what);
    assert!(run.steps[2].summary.contains("fetched node(s) appended to the context"), "{}", run.steps[2].summary);
    Ok(())
}
