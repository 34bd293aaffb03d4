//! `ctx run` runs what `ctx check` accepts, as a user runs it: a file with two named models
//! (offline, each against its own scripted server, or both against the shared one), several
//! questions as one conversation, `--docs` indexed as a Rust program indexes it, and a step the
//! command line has no backend for refused before any request.

mod support;

use ctx::pipeline::yaml::PipelineFile;
use ctx::pipeline::{LoadOptions, LoadedPipeline, StepEnv};
use ctx::retrieve::{Bm25Index, ChunkOptions, IndexOptions};
use support::{Server, ctx, root, scratch, text};

/// A summarise step on a small model, an answer step on a strong one.
const TWO_MODELS: &str = "name: Tiered
models:
  small: { model: gpt-4o-mini, context_window: 4096, max_tokens: 200, encoding: cl100k_base }
  strong: { model: gpt-4o, context_window: 16384, max_tokens: 512 }
settings: { max_context_tokens: 2000 }
prompts:
  summarise: \"Rewrite the question in one short line.\"
  answer: \"Answer the question in one paragraph.\"
steps:
- { id: summarise, action: call_model, prompt_key: summarise, model: small, next: answer }
- { id: answer, action: call_model, prompt_key: answer, model: strong, next: end }
";

fn write(dir: &std::path::Path, name: &str, yaml: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, yaml).expect("write");
    path.to_str().expect("a UTF-8 path").to_owned()
}

/// The system prompt of a request body.
fn system(body: &serde_json::Value) -> &str {
    body["messages"][0]["content"].as_str().unwrap_or_default()
}

#[test]
fn a_file_with_two_models_runs_offline_and_each_model_against_its_own_server() {
    let dir = scratch("two-models");
    let file = write(&dir, "tiered.yaml", TWO_MODELS);
    let question = "Which of our services run on Kubernetes?";

    // Offline: each model answered by the offline model, with its own counter.
    let out = ctx(&["run", &file, "--", question], &[]);
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "{stdout}{stderr}");
    assert!(stderr.contains("[model small: offline]") && stderr.contains("[model strong: offline]"), "{stderr}");
    assert!(
        stderr.contains("[call_model summarise → next") && stderr.contains("[call_model answer → next"),
        "{stderr}"
    );

    // Each model at its own server: each step's request reaches its model's server, named as
    // the model declares it, within that model's output limit.
    let (small, strong) = (Server::start("Services on Kubernetes?"), Server::start("The API and the workers."));
    let out = ctx(
        &["run", &file, "--", question],
        &[("CTX_MODEL_SMALL_BASE_URL", &small.url), ("CTX_MODEL_STRONG_BASE_URL", &strong.url)],
    );
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "{stdout}{stderr}");
    let (to_small, to_strong) = (small.bodies(), strong.bodies());
    assert_eq!((to_small.len(), to_strong.len()), (1, 1), "{stderr}");
    assert_eq!(to_small[0]["model"], "gpt-4o-mini");
    assert!(system(&to_small[0]).starts_with("Rewrite"), "{}", to_small[0]);
    assert!(to_small[0]["max_tokens"].as_u64().is_some_and(|n| n <= 200), "{}", to_small[0]);
    assert_eq!(to_strong[0]["model"], "gpt-4o");
    assert!(system(&to_strong[0]).starts_with("Answer"), "{}", to_strong[0]);
    assert!(to_strong[0]["max_tokens"].as_u64().is_some_and(|n| n > 200 && n <= 512), "{}", to_strong[0]);
    assert!(stdout.contains("The API and the workers."), "{stdout}");
    assert!(stderr.contains(&format!("[model small: gpt-4o-mini at {}]", small.url)), "{stderr}");

    // Both at the shared `CTX_BASE_URL`, each sending its own model name (or the one its
    // variable gives), the key of its own variable, else `OPENAI_API_KEY`.
    let shared = Server::start("Shared reply.");
    let out = ctx(
        &["run", &file, "--", question],
        &[("CTX_BASE_URL", &shared.url), ("CTX_MODEL_STRONG_MODEL", "strong-served"), ("OPENAI_API_KEY", "sk-x")],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let models: Vec<serde_json::Value> = shared.bodies().iter().map(|b| b["model"].clone()).collect();
    assert_eq!(models, ["gpt-4o-mini", "strong-served"]);

    // `--offline` sends nothing, whatever the environment says.
    let unused = Server::start("unused");
    let out = ctx(
        &["run", "--offline", &file, "--", question],
        &[("CTX_BASE_URL", &unused.url), ("CTX_MODEL_SMALL_BASE_URL", &unused.url)],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(unused.bodies().is_empty());
}

#[test]
fn a_named_model_without_a_name_to_send_is_an_error_naming_its_variable() {
    let dir = scratch("unnamed-model");
    let yaml = TWO_MODELS.replace("{ model: gpt-4o-mini, context_window", "{ context_window");
    let file = write(&dir, "unnamed.yaml", &yaml);
    let server = Server::start("unused");
    let out = ctx(&["run", &file, "--", "q"], &[("CTX_BASE_URL", &server.url)]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = text(&out.stderr);
    assert!(stderr.contains("model `small`") && stderr.contains("`CTX_MODEL_SMALL_MODEL`"), "{stderr}");
    assert!(server.bodies().is_empty());
}

#[test]
fn a_model_speaks_the_responses_api_when_its_variable_says_so() {
    let dir = scratch("responses-api");
    let file = write(&dir, "tiered.yaml", TWO_MODELS);
    let shared = Server::start("From the Responses API.");
    let out = ctx(
        &["run", &file, "--", "Which services run on VMs?"],
        &[("CTX_BASE_URL", &shared.url), ("CTX_MODEL_STRONG_API", "responses")],
    );
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "{stdout}{stderr}");
    let bodies = shared.bodies();
    assert_eq!(bodies.len(), 2, "{stderr}");
    // The small model keeps chat completions; the strong one sends `input` items.
    assert!(bodies[0].get("messages").is_some() && bodies[0].get("input").is_none(), "{}", bodies[0]);
    assert_eq!(bodies[1]["model"], "gpt-4o");
    assert!(bodies[1]["input"][0]["content"].as_str().is_some_and(|s| s.starts_with("Answer")), "{}", bodies[1]);
    assert!(bodies[1]["max_output_tokens"].as_u64().is_some_and(|n| n > 200 && n <= 512), "{}", bodies[1]);
    assert!(stdout.contains("From the Responses API."), "{stdout}");
    assert!(stderr.contains("(Responses API)]"), "{stderr}");

    // `CTX_API` is every model's default; a value that names no API is refused before sending.
    let out = ctx(&["run", &file, "--", "q"], &[("CTX_BASE_URL", &shared.url), ("CTX_API", "completions")]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("`CTX_API` is `completions`"), "{}", text(&out.stderr));
    assert_eq!(shared.bodies().len(), 2);
}

/// Issue 37 item 15: `-- "q1" "q2"` is a two-question conversation, as the tour shows it.
#[test]
fn several_questions_are_one_conversation_asked_in_order() {
    let dir = scratch("conversation");
    let yaml = "name: Chat
model: { model: gpt-4o, context_window: 8192, max_tokens: 256 }
settings: { max_context_tokens: 1000, max_history_tokens: 1000 }
prompts: { answer: \"Answer the question.\" }
steps:
- { id: answer, action: call_model, prompt_key: answer, use_history: true, next: end }
";
    let file = write(&dir, "chat.yaml", yaml);
    let server = Server::start("Rotate them in the console.");
    let out =
        ctx(&["run", &file, "--", "How do I rotate the keys?", "And the old ones?"], &[("CTX_BASE_URL", &server.url)]);
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{stdout}{}", text(&out.stderr));
    let bodies = server.bodies();
    assert_eq!(bodies.len(), 2, "one run per question: {bodies:?}");
    // The second request carries the first question and its answer as history.
    let messages: Vec<(String, String)> = bodies[1]["messages"]
        .as_array()
        .expect("messages")
        .iter()
        .map(|m| {
            (m["role"].as_str().unwrap_or_default().to_owned(), m["content"].as_str().unwrap_or_default().to_owned())
        })
        .collect();
    let said = |role: &str, what: &str| messages.iter().any(|(r, c)| r == role && c.contains(what));
    assert!(
        said("user", "How do I rotate the keys?") && said("assistant", "Rotate them in the console."),
        "{messages:?}"
    );
    assert!(said("user", "And the old ones?") && !said("user", "keys? And the old"), "{messages:?}");
    let first = stdout.find("== Question 1: How do I rotate the keys?").expect("the first question");
    let second = stdout.find("== Question 2: And the old ones?").expect("the second question");
    assert!(first < second, "{stdout}");
}

/// Issue 37 item 12: `ctx run --docs` indexes the folder as `IndexOptions::default()` does, so
/// a pipeline answers the same from the command line as from Rust; `--chunk-tokens` chunks as
/// `ChunkOptions::new` does.
#[test]
fn docs_are_indexed_as_a_rust_program_indexes_them() {
    let file = "examples/pipelines/minimal.yaml";
    let docs = "examples/docs_support/docs";
    let question = "How do I rotate an API key?";
    let rust_answer = |options: IndexOptions| -> String {
        let loaded = PipelineFile::load(root().join(file)).expect("the example");
        let pipeline = LoadedPipeline::load_file(&loaded, LoadOptions::default()).expect("loads");
        let index = Bm25Index::from_dir(root().join(docs), &options).expect("indexed");
        let model = ctx::llm::offline::OfflineModel::new(pipeline.counter().clone());
        let env = StepEnv::builder().model(&model).search(&index).store(&index);
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("a runtime");
        let (state, _) = runtime.block_on(pipeline.run(ctx::PipelineState::new(question), &env)).expect("runs");
        state.last_model_response.unwrap_or_default()
    };
    let cli_answer = |extra: &[&str]| -> String {
        let mut args = vec!["run", file, "--docs", docs];
        args.extend_from_slice(extra);
        args.extend(["--", question]);
        let out = ctx(&args, &[]);
        assert!(out.status.success(), "{}", text(&out.stderr));
        text(&out.stdout).trim_end().to_owned()
    };
    let whole = rust_answer(IndexOptions::default());
    let chunked = rust_answer(IndexOptions::default().chunking(Some(ChunkOptions::new(120))));
    assert_ne!(whole, chunked, "the two indexes must answer differently for this test to tell them apart");
    assert_eq!(cli_answer(&[]), whole.trim_end());
    assert_eq!(cli_answer(&["--chunk-tokens", "120"]), chunked.trim_end());
}

/// An answer on the default model, then an agent step: valid for a Rust caller, which gives the
/// tools; the command line has no tool source.
const WITH_AGENT: &str = "name: Agentic
model: { model: gpt-4o, context_window: 8192, max_tokens: 256 }
settings: { max_context_tokens: 1000 }
prompts:
  draft: \"Draft an answer.\"
  answer: \"Answer with the tools.\"
steps:
- { id: draft, action: call_model, prompt_key: draft, next: answer }
- id: answer
  action: agent
  prompt_key: answer
  tools:
  - { name: lookup, description: \"Looks a word up.\", parameters: { type: object, properties: { q: { type: string } } } }
  max_tool_calls: 2
  next: end
";

#[test]
fn a_step_the_command_line_cannot_run_is_refused_before_any_request() {
    let dir = scratch("agent-run");
    let file = write(&dir, "agentic.yaml", WITH_AGENT);
    let server = Server::start("A draft.");
    let out = ctx(&["run", &file, "--", "q"], &[("CTX_BASE_URL", &server.url)]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = text(&out.stderr);
    assert!(stderr.contains("error[PIPELINE_NEEDS_RUST_BACKEND]"), "{stderr}");
    assert!(stderr.contains("step `answer` is an `agent` step"), "{stderr}");
    assert!(stderr.contains(&format!("{file}:13:")), "at the step's tools: {stderr}");
    assert!(server.bodies().is_empty(), "the draft step's request was sent: {:?}", server.bodies());
}
