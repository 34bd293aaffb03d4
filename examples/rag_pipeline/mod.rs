//! The logic of `examples/rag_pipeline.rs`, kept apart from `main` so that `ctx-tests/tests/rag_pipeline.rs`
//! runs exactly what the example runs.
//!
//! [`Demo`] indexes the sample code base with BM25 ([`Bm25Index`]), loads the
//! [`CodebaseQa`](pipeline::CodebaseQa) pipeline, and runs questions through its typed state
//! machine one step at a time, measuring the context around every step for the
//! [`BudgetTrace`](trace::BudgetTrace), with what each question cost per model
//! ([`CostPlan`](cost::CostPlan)). The model is the offline extractive one unless
//! `CTX_BASE_URL` is set ([`choose_model`], feature `openai`), or `CTX_LLAMA_BASE_URL` names a
//! local llama-cpp-python server (`Demo::with_local_model`, feature `llama`: its window and its
//! own tokenizer). The one client serves both of the pipeline's models (`small` for `summarize`,
//! `strong` for `answer`); a service would give each its own. Without the feature a variable
//! needs, the run stops and says which `--features` to add: it never falls back silently.

pub mod cost;
pub mod pipeline;
pub mod trace;

use std::path::{Path, PathBuf};

#[cfg(feature = "llama")]
use ctx::llm::llama_cpp::LocalModel;
use ctx::llm::offline::OfflineModel;
#[cfg(feature = "openai")]
use ctx::llm::openai::{OpenAiClient, OpenAiConfig};
use ctx::llm::{ChatModel, ChatModelDyn};
use ctx::pipeline::{LoadOptions, PipelineError};
use ctx::retrieve::{Bm25Index, IndexOptions};
use ctx::state::render_context_blocks;
use ctx::{CtxError, PipelineState, TokenCounter};

use cost::CostPlan;
use pipeline::{CodebaseQa, CodebaseQaEnv, CodebaseQaStep, NextBatch};
use trace::{BudgetTrace, StepTrace, TurnTrace};

/// The code base shipped with the repository, `examples/codebase`. This module is compiled by the
/// example (its manifest is the workspace's) and by the suites of `ctx-tests/` (one folder down),
/// so the folder is looked up from the compiling crate's manifest upwards.
pub fn codebase_dir() -> PathBuf {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    manifest
        .ancestors()
        .map(|dir| dir.join("examples/codebase"))
        .find(|dir| dir.is_dir())
        .unwrap_or_else(|| manifest.join("examples/codebase"))
}

/// The variable naming an OpenAI-compatible server (`ctx::llm::openai::ENV_BASE_URL`; the
/// example also reads it without feature `openai`, to say that the feature is needed).
pub const ENV_BASE_URL: &str = "CTX_BASE_URL";

/// The example's errors: ctx's own, or one that names a feature the build left out.
pub type BoxError = Box<dyn std::error::Error>;

/// The question asked when none is given.
pub const SAMPLE_QUESTION: &str = "How is the invoice total computed?";

/// The usage line.
pub const USAGE: &str = "usage: cargo run --example rag_pipeline -- [--offline] [--mermaid] [QUESTION]...

Answers each QUESTION (default: \"How is the invoice total computed?\") about the invoicing code
base in examples/codebase/, as one conversation, and prints a budget trace of every step and
what each question cost per model, beside its worst case proven when compiled.

  --mermaid   print the pipeline's Mermaid diagram and exit
  --offline   use the offline extractive model even when CTX_BASE_URL is set

Built with `--features openai` and with CTX_BASE_URL (and CTX_MODEL, and OPENAI_API_KEY if the
server wants one) set, the answers come from that OpenAI-compatible server: OpenAI, Ollama, vLLM,
llama.cpp's llama-server (the one model serves the pipeline's small and strong models).

Built with `--features llama` and with CTX_LLAMA_BASE_URL set
(`eval \"$(scripts/llama-server.sh env)\"`), they come from the local llama-cpp-python server,
counted with its own tokenizer in its own context window; this 8k pipeline needs the server
started with CTX_LLAMA_N_CTX=8192.";

/// What the command line asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Args {
    /// The questions, in order (the sample question when none is given).
    pub questions: Vec<String>,
    /// Print the Mermaid diagram instead of running.
    pub mermaid: bool,
    /// Use the offline model even when a server is configured.
    pub offline: bool,
    /// Print the usage and exit.
    pub help: bool,
}

impl Args {
    /// Parses the arguments after the program name; an unknown `--flag` is an error naming it.
    pub fn parse(args: impl IntoIterator<Item = String>) -> Result<Args, String> {
        let mut parsed = Args { questions: Vec::new(), mermaid: false, offline: false, help: false };
        let mut only_questions = false;
        for arg in args {
            match arg.as_str() {
                _ if only_questions => parsed.questions.push(arg),
                "--" => only_questions = true,
                "--mermaid" => parsed.mermaid = true,
                "--offline" => parsed.offline = true,
                "-h" | "--help" => parsed.help = true,
                flag if flag.starts_with('-') && flag.len() > 1 => {
                    return Err(format!("unknown option `{flag}` (questions starting with `-` go after `--`)"));
                }
                _ => parsed.questions.push(arg),
            }
        }
        if parsed.questions.iter().any(|q| q.trim().is_empty()) {
            return Err("a question is empty".to_owned());
        }
        if parsed.questions.is_empty() {
            parsed.questions.push(SAMPLE_QUESTION.to_owned());
        }
        Ok(parsed)
    }
}

/// The model a run talks to.
#[derive(Debug)]
pub enum Model {
    /// The offline extractive model (no network).
    Offline(OfflineModel),
    /// An OpenAI-compatible server.
    #[cfg(feature = "openai")]
    Server(OpenAiClient),
}

impl Model {
    /// The model as the pipeline uses it.
    pub fn as_chat_model(&self) -> &dyn ChatModelDyn {
        match self {
            Model::Offline(m) => m,
            #[cfg(feature = "openai")]
            Model::Server(c) => c,
        }
    }

    /// A short description for the trace.
    pub fn describe(&self) -> String {
        match self {
            Model::Offline(m) => format!("{}, offline", m.model_name()),
            #[cfg(feature = "openai")]
            Model::Server(c) => format!("{} at {}", c.model_name(), c.endpoint()),
        }
    }
}

/// The offline model counting with `counter` (the pipeline's), unless `offline` is false and the
/// variable `CTX_BASE_URL` is set and not blank, in which case a client configured from the
/// variables `lookup` reads (`OpenAiConfig::from_lookup`; `std::env::var` in the example), or,
/// built without feature `openai`, an error saying to add it.
pub fn choose_model(
    offline: bool,
    lookup: impl Fn(&str) -> Option<String>,
    counter: &TokenCounter,
) -> Result<Model, BoxError> {
    if offline || lookup(ENV_BASE_URL).is_none_or(|url| url.trim().is_empty()) {
        return Ok(Model::Offline(OfflineModel::new(counter.clone())));
    }
    server(lookup)
}

#[cfg(feature = "openai")]
fn server(lookup: impl Fn(&str) -> Option<String>) -> Result<Model, BoxError> {
    Ok(Model::Server(OpenAiClient::new(OpenAiConfig::from_lookup(lookup)?)?))
}

#[cfg(not(feature = "openai"))]
fn server(_: impl Fn(&str) -> Option<String>) -> Result<Model, BoxError> {
    Err(needs_feature(ENV_BASE_URL, "openai"))
}

/// The error for a variable `name` that asks for what only `feature` builds (compiled where a
/// feature is off: `ctx-tests` builds every feature).
#[cfg(not(all(feature = "openai", feature = "llama")))]
pub fn needs_feature(name: &str, feature: &str) -> BoxError {
    format!(
        "{name} is set, but this build has no `{feature}` feature: run \
         `cargo run --features {feature} --example rag_pipeline -- …` (or pass `--offline`)"
    )
    .into()
}

/// The shortest complete use of the pipeline, shown in the guide (`docs/tour.md`): one question,
/// the offline model, no trace.
#[allow(
    dead_code,
    reason = "the guide's worked example and ctx-tests/tests/rag_pipeline.rs call it; `main` traces instead"
)]
pub async fn answer_once(question: &str) -> Result<String, CtxError> {
    let qa = CodebaseQa::new()?;
    let index = Bm25Index::from_dir(codebase_dir(), &IndexOptions::default())?;
    let model = OfflineModel::default();
    // One field per model the pipeline declares; the same client may serve both.
    let env =
        CodebaseQaEnv { search: &index, store: &index, model_small: &model, model_strong: &model, custom: &NextBatch };
    let (state, _reports) = qa.run(PipelineState::new(question), &env).await?;
    Ok(state.last_model_response.unwrap_or_default())
}

/// The code base, the pipeline and its custom step.
pub struct Demo {
    qa: CodebaseQa,
    index: Bm25Index,
    next_batch: NextBatch,
}

impl Demo {
    /// Indexes the files under `codebase` and loads the pipeline with `options`
    /// (`LoadOptions::from_env()` in the example, so `PIPELINE_LIMITS_POLICY` applies).
    pub fn new(codebase: impl AsRef<Path>, options: LoadOptions) -> Result<Demo, CtxError> {
        let index = Bm25Index::from_dir(codebase, &IndexOptions::default())?;
        let qa = CodebaseQa::load(options)?;
        Ok(Demo { qa, index, next_batch: NextBatch })
    }

    /// [`Self::new`] for a locally served model: the pipeline is loaded with the server's
    /// context window and counts every prompt with the server's tokenizer and chat template.
    #[cfg(feature = "llama")]
    #[allow(
        dead_code,
        reason = "the example's `main` and ctx-tests/tests/llama_demo.rs call it; ctx-tests/tests/rag_pipeline.rs does not"
    )]
    pub fn with_local_model(
        codebase: impl AsRef<Path>,
        local: &LocalModel,
        options: LoadOptions,
    ) -> Result<Demo, CtxError> {
        let index = Bm25Index::from_dir(codebase, &IndexOptions::default())?;
        let qa = CodebaseQa::from_loaded(local.load(CodebaseQa::definition(), options)?)?;
        Ok(Demo { qa, index, next_batch: NextBatch })
    }

    /// The loaded pipeline.
    pub fn pipeline(&self) -> &CodebaseQa {
        &self.qa
    }

    /// The index of the code base.
    pub fn index(&self) -> &Bm25Index {
        &self.index
    }

    /// The environment a run needs: the index as search and store, `model` for both declared
    /// models (one client serves the small and the strong one), the custom step.
    pub fn env<'a>(&'a self, model: &'a dyn ChatModelDyn) -> CodebaseQaEnv<'a> {
        CodebaseQaEnv {
            search: &self.index,
            store: &self.index,
            model_small: model,
            model_strong: model,
            custom: &self.next_batch,
        }
    }

    /// Asks `questions` in order as one conversation (each answer joins the history, and the
    /// context read for one question stays for the next) and returns the trace.
    pub async fn conversation(&self, questions: &[String], model: &dyn ChatModelDyn) -> Result<BudgetTrace, CtxError> {
        let loaded = self.qa.pipeline();
        let report = loaded.contract_report();
        let mut trace = BudgetTrace {
            pipeline: CodebaseQa::NAME.to_owned(),
            model: model.model_name().to_owned(),
            context_window: loaded.context_window(),
            max_context_tokens: loaded.max_context_tokens(),
            policy: report.policy.to_string(),
            contract: report.steps.clone(),
            clamps: report.clamps.clone(),
            // Against the answering model: what the same run costs with the summariser on it.
            cost: CostPlan::new(loaded, "answer"),
            turns: Vec::new(),
        };
        let mut state = PipelineState::default();
        for question in questions {
            state.user_question = question.clone();
            state.user_question_en = question.clone();
            trace.turns.push(self.ask(&mut state, model).await?);
        }
        Ok(trace)
    }

    /// Runs the question in `state` from the first step to `End`, one typed step at a time.
    /// Loop counts start at zero; history and context carry over from earlier questions.
    pub async fn ask(&self, state: &mut PipelineState, model: &dyn ChatModelDyn) -> Result<TurnTrace, CtxError> {
        let env = self.env(model);
        let loaded = self.qa.pipeline();
        let counter = loaded.counter();
        state.loop_counts.clear();
        state.last_model_response = None;
        let mut turn = TurnTrace { question: state.user_question.clone(), steps: Vec::new(), answer: String::new() };
        let mut at = CodebaseQaStep::FIRST;
        let mut context_before = counter.count(&render_context_blocks(&state.context_blocks))?;
        while at != CodebaseQaStep::End {
            // The driver proves this bound from the loop guards; it is checked, never assumed.
            if turn.steps.len() as u64 >= loaded.step_bound() {
                let bound = loaded.step_bound();
                return Err(PipelineError::StepBoundExceeded { pipeline: CodebaseQa::NAME.to_owned(), bound }.into());
            }
            let (next, report) = self.qa.step_with_report(at, state, &env).await?;
            let context_after = counter.count(&render_context_blocks(&state.context_blocks))?;
            if let Some(report) = report {
                turn.steps.push(StepTrace {
                    step_id: report.step_id,
                    transition: report.transition_key,
                    next: next.id().to_owned(),
                    context_before,
                    context_after,
                    hits_left: state.search_results.len(),
                    detail: report.detail,
                });
            }
            context_before = context_after;
            at = next;
        }
        turn.answer = state.last_model_response.clone().unwrap_or_default();
        Ok(turn)
    }
}
