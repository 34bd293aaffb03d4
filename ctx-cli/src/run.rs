//! `ctx run`: a pipeline file asked one question, or several as one conversation, with a client
//! per model (see [`crate::models`]) and, with `--docs`, a directory indexed as
//! `Bm25Index::from_dir(dir, &IndexOptions::default())` indexes it from Rust.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use annotate_snippets::Level;
use ctx::ErrorCode;
use ctx::llm::ChatModelDyn;
use ctx::pipeline::{LoadOptions, LoadedPipeline, StepDetail, StepEnv, StepReport};
use ctx::retrieve::{Bm25Index, ChunkOptions, IndexOptions};

use crate::io::{load, write_html};
use crate::render::{render, render_as};
use crate::{models, runnable};

/// What `ctx run` was asked.
pub(crate) struct RunArgs {
    pub(crate) file: PathBuf,
    pub(crate) docs: Option<PathBuf>,
    pub(crate) chunk_tokens: Option<usize>,
    pub(crate) report: Option<PathBuf>,
    pub(crate) vars: Vec<(String, serde_json::Value)>,
    pub(crate) questions: Vec<String>,
    pub(crate) offline: bool,
}

/// `--var name=value`: the value as JSON when it parses, else as text (so `--var tone=formal`
/// needs no quotes).
pub(crate) fn parse_var(arg: &str) -> Result<(String, serde_json::Value), String> {
    let (name, value) = arg.split_once('=').ok_or_else(|| format!("`{arg}` is not `name=value`"))?;
    if name.is_empty() {
        return Err(format!("`{arg}` has no variable name before `=`"));
    }
    let value = serde_json::from_str(value).unwrap_or_else(|_| serde_json::Value::String(value.to_owned()));
    Ok((name.to_owned(), value))
}

/// The index of `--docs`: the options a Rust program starts from (`IndexOptions::default()`,
/// one node per file), chunked only when `--chunk-tokens` asks, so that a pipeline answers the
/// same from the command line as from Rust.
fn index(dir: &Path, chunk_tokens: Option<usize>) -> Result<Bm25Index, String> {
    let options = IndexOptions::default().chunking(chunk_tokens.map(ChunkOptions::new));
    let index = Bm25Index::from_dir(dir, &options).map_err(|e| format!("{} [{}]", e, e.code()))?;
    for skipped in index.skipped() {
        eprintln!("skipped {skipped}");
    }
    Ok(index)
}

pub(crate) fn run(args: RunArgs) -> Result<ExitCode, String> {
    let file = &args.file;
    let loaded = load(file)?;
    // Refused before any request: a step with no backend here would fail the run after the
    // earlier steps' requests were sent and paid for.
    let unrunnable = runnable::unrunnable_steps(&loaded);
    if !unrunnable.is_empty() {
        render_as(&unrunnable, Level::ERROR);
        return Err(format!("{} cannot run from the command line", file.display()));
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start a runtime: {e}"))?;
    // The agent steps' MCP servers start first: their tools are checked when the pipeline loads.
    let tools = runtime.block_on(crate::mcp::connect(&loaded))?;
    let options = crate::mcp::load_options(tools.as_ref(), LoadOptions::from_env());
    let pipeline = LoadedPipeline::load_file(&loaded, options).map_err(|e| {
        render(e.issues());
        format!("{} cannot be loaded", file.display())
    })?;
    let index = args.docs.as_deref().map(|dir| index(dir, args.chunk_tokens)).transpose()?;
    let clients = models::clients(&pipeline, args.offline, |name| std::env::var(name).ok())?;
    for (name, client) in used_models(&pipeline, &clients) {
        eprintln!("[model {name}: {}]", client.describe());
    }
    let named: Vec<(&str, &dyn ChatModelDyn)> = clients.named.iter().map(|(n, c)| (n.as_str(), c.as_dyn())).collect();
    let sink = |t: ctx::pipeline::Token<'_>| {
        use std::io::Write as _;
        out!("{}", t.text);
        let _ = std::io::stdout().flush();
    };
    let mut env = StepEnv::builder().model(clients.default.as_dyn()).models(&named).tokens(&sink);
    if let Some(index) = &index {
        env = env.search(index).store(index);
    }
    if let Some(tools) = &tools {
        env = env.tools(tools);
    }
    // Several questions are one conversation, asked in order: the history, the variables and
    // (with `carry_context`) the context carry from one to the next.
    let mut chat = pipeline.conversation();
    for (name, value) in args.vars {
        chat.set_variable(name, value);
    }
    let several = args.questions.len() > 1;
    let mut all = Vec::new();
    let mut failed = None;
    for (n, question) in args.questions.iter().enumerate() {
        if several {
            outln!("== Question {}: {question}", n + 1);
        }
        match runtime.block_on(chat.ask(question.as_str(), &env)) {
            Ok(answer) => {
                outln!();
                print_steps(&answer.reports);
                all.extend(answer.reports);
            }
            Err(e) => {
                failed = Some(format!("{e} [{}]", e.code()));
                break;
            }
        }
    }
    // The servers stop whether the conversation ended or failed.
    runtime.block_on(crate::mcp::close(tools));
    if let Some(error) = failed {
        return Err(error);
    }
    if let Some(path) = &args.report {
        write_html(path, &chat.pipeline().report(&all).to_html())?;
    }
    Ok(ExitCode::SUCCESS)
}

/// The models some model step uses, each with its client: `default` for the default model.
fn used_models<'c>(pipeline: &LoadedPipeline, clients: &'c models::Clients) -> Vec<(String, &'c models::Client)> {
    let mut used: Vec<(String, &models::Client)> = Vec::new();
    for step in &pipeline.definition().steps {
        if step.kind.model_request().is_none() {
            continue;
        }
        let (name, client) = match pipeline.step_model(&step.id).name {
            Some(name) => match clients.named.iter().find(|(n, _)| n == name) {
                Some((n, c)) => (n.clone(), c),
                None => continue,
            },
            None => ("default".to_owned(), &clients.default),
        };
        if !used.iter().any(|(n, _)| *n == name) {
            used.push((name, client));
        }
    }
    used
}

/// One line per step on standard error: its kind, id, transition and what it did.
fn print_steps(reports: &[StepReport]) {
    for r in reports {
        let detail = match &r.detail {
            // The output limit is reserved in the window; what is billed is what was generated.
            StepDetail::CallModel(c) => format!(
                " prompt {} + output {} reserved{}{}",
                c.request.prompt_tokens,
                c.request.max_output_tokens,
                c.request.usage.map(|u| format!(", {} generated", u.completion_tokens)).unwrap_or_default(),
                c.request.spend.map(|s| format!(", {}", ctx::contract::usd(s.nano_usd))).unwrap_or_default()
            ),
            StepDetail::Agent(a) => format!(" {} requests, {} tool calls", a.requests.len(), a.tool_calls.len()),
            StepDetail::FetchNodeTexts(f) => format!(" {} of {} evidence tokens", f.tokens, f.budget),
            _ => String::new(),
        };
        eprintln!("[{} {} → {}{detail}]", r.kind, r.step_id, r.transition_key);
    }
}
