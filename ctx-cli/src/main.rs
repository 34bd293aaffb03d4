//! `ctx`: check, explain, draw and run pipelines kept in YAML files (the package `ctx-llm-cli`).
//!
//! Install it with `cargo install --path ctx-cli` from a clone of the repository (or, once
//! published, `cargo install ctx-llm-cli`); from the workspace, `cargo run -p ctx-llm-cli -- …`.
//!
//! ```text
//! ctx check <files or dirs>… [--format text|json]   every problem at file:line:column; exit 1 on any
//! ctx explain <file> [--format text|json]           the budget contract of each model step, and
//!                                                   the worst-case tokens and cost of a run
//! ctx explain <CODE>                                what an error code means and how to fix it
//! ctx graph <file> [--dot]                          the step graph as Mermaid (or DOT)
//! ctx export <file>                                 the pipeline as one YAML file
//! ctx run <file> [--docs <dir>] [--var name=value]… -- "question"
//!                                                   a run with the offline model, or CTX_BASE_URL
//! ```
//!
//! A directory is searched for `*.yaml` / `*.yml`; a file another checked file `extends` is checked
//! through that file only (a base is usually not a whole pipeline on its own).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use annotate_snippets::{AnnotationKind, Group, Level, Origin, Renderer, Snippet};
use clap::{Parser, Subcommand, ValueEnum};
use ctx::codes::Code;
use ctx::config::LimitsPolicy;
use ctx::llm::ChatModelDyn;
use ctx::llm::offline::OfflineModel;
use ctx::pipeline::yaml::{LoadedFile, PipelineFile, YamlIssue, to_yaml};
use ctx::pipeline::{LoadOptions, LoadedPipeline, StepDetail, StepEnv, ValidateOptions, to_dot, to_mermaid};
use ctx::retrieve::{Bm25Index, ChunkOptions, IndexOptions};
use ctx::{ErrorCode, PipelineState};

#[derive(Parser)]
#[command(name = "ctx", version, about = "Check, explain, draw and run ctx pipelines kept in YAML files")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Loads every pipeline with all of ctx's rules (the budget contract with the real tokenizer
    /// included) and reports each problem at its file, line and column. Exit 1 on any problem.
    /// Warnings (each limit `auto_clamp` lowers, each variable a run may read unset) are printed
    /// too and do not fail the check. `PIPELINE_LIMITS_POLICY` is honoured as the service does.
    Check {
        /// Pipeline files, or directories searched for `*.yaml` and `*.yml`.
        #[arg(required = true)]
        paths: Vec<PathBuf>,
        /// `text` (rendered like rustc's diagnostics) or `json` (one array, for CI).
        #[arg(long, value_enum, default_value_t = Format::Text)]
        format: Format,
    },
    /// Prints the budget contract of each `call_model` and `agent` step of a pipeline file, or,
    /// given an error code (`ctx explain UNKNOWN_STEP_TARGET`), what the code means and how to
    /// fix it.
    Explain {
        /// The pipeline file, or an error code (capitals and `_`, not the name of a file).
        target: PathBuf,
        /// Also write each step's worst-case request, drawn as a bar of the window, to this HTML
        /// file (self-contained: no script, nothing fetched).
        #[arg(long, value_name = "FILE")]
        html: Option<PathBuf>,
        /// `text` (tables) or `json` (the contract, the run bounds and the worst-case cost, one
        /// object).
        #[arg(long, value_enum, default_value_t = Format::Text)]
        format: Format,
    },
    /// Prints the step graph.
    Graph {
        /// The pipeline file.
        file: PathBuf,
        /// Graphviz DOT instead of Mermaid.
        #[arg(long)]
        dot: bool,
    },
    /// Writes the pipeline back as one YAML file (`extends` and prompt files resolved).
    Export {
        /// The pipeline file.
        file: PathBuf,
    },
    /// Runs the pipeline on a question: with `CTX_BASE_URL` (and `CTX_MODEL`, `OPENAI_API_KEY`)
    /// against that OpenAI-compatible server, else with the offline model.
    Run {
        /// The pipeline file.
        file: PathBuf,
        /// A directory indexed (in chunks) for `search_nodes` and `fetch_node_texts`.
        #[arg(long)]
        docs: Option<PathBuf>,
        /// Write the run's report to this HTML file: every model request's window part by part,
        /// what changed before it, and the steps it took (self-contained: no script, nothing fetched).
        #[arg(long, value_name = "FILE")]
        report: Option<PathBuf>,
        /// A variable the run starts with, as `name=value` (repeat for more): the value is read
        /// as JSON when it is JSON (`3`, `true`, `["a"]`, `"quoted"`), else as text.
        #[arg(long = "var", value_name = "NAME=VALUE", value_parser = parse_var)]
        vars: Vec<(String, serde_json::Value)>,
        /// The question.
        #[arg(last = true, required = true)]
        question: Vec<String>,
    },
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Format {
    Text,
    Json,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Check { paths, format } => check(&paths, format),
        Command::Explain { target, html, format } => match error_code(&target) {
            Some(code) => explain_code(code),
            None => load(&target).and_then(|f| explain(&f, html.as_deref(), format)),
        },
        Command::Graph { file, dot } => load(&file).map(|f| {
            let def = f.definition();
            println!("{}", if dot { to_dot(def) } else { to_mermaid(def) });
            ExitCode::SUCCESS
        }),
        Command::Export { file } => load(&file).map(|f| {
            print!("{}", to_yaml(f.definition()));
            ExitCode::SUCCESS
        }),
        Command::Run { file, docs, report, vars, question } => {
            run(&file, docs.as_deref(), vars, &question.join(" "), report.as_deref())
        }
    };
    result.unwrap_or_else(|message| {
        eprintln!("error: {message}");
        ExitCode::from(2)
    })
}

/// The options a service loads with (`LoadOptions::from_env`): the `PIPELINE_LIMITS_POLICY`
/// of this process wins over the file's policy, so a check passes or fails, and clamps, as the
/// service will.
fn validate_options() -> ValidateOptions {
    ValidateOptions::default().env_limits_policy(LimitsPolicy::env_value())
}

/// A file loaded for a command that needs it whole: its problems are printed and end the command.
fn load(file: &Path) -> Result<LoadedFile, String> {
    PipelineFile::load_with(file, &validate_options()).map_err(|e| {
        render(e.issues());
        format!("{} has {} problem(s)", file.display(), e.issues().len())
    })
}

fn check(paths: &[PathBuf], format: Format) -> Result<ExitCode, String> {
    let mut files = Vec::new();
    for path in paths {
        collect(path, &mut files)?;
    }
    if files.is_empty() {
        return Err("no `*.yaml` or `*.yml` file found".into());
    }
    let opts = validate_options();
    let results: Vec<(PathBuf, Result<LoadedFile, Vec<YamlIssue>>)> = files
        .into_iter()
        .map(|f| {
            let result = PipelineFile::load_with(&f, &opts).map_err(|e| e.issues().to_vec());
            (f, result)
        })
        .collect();
    // A file that another one extends is checked through it.
    let bases: BTreeSet<PathBuf> = results
        .iter()
        .filter_map(|(_, r)| r.as_ref().ok())
        .flat_map(|loaded| loaded.files().iter().skip(1).filter_map(|f| f.canonicalize().ok()))
        .collect();
    let mut issues = Vec::new();
    // What may fail a run of a file that passes (a variable read where some path has not set
    // it), and what `auto_clamp` lowers: the specification says every clamp is a warning with the
    // values before and after and the reason, so a check shows each one.
    let mut warnings = Vec::new();
    let mut checked = 0;
    for (file, result) in results {
        if file.canonicalize().is_ok_and(|c| bases.contains(&c)) {
            continue;
        }
        checked += 1;
        match result {
            Ok(loaded) => {
                warnings.extend(loaded.warnings());
                warnings.extend(loaded.clamps().iter().map(|c| loaded.clamp_warning(c)));
            }
            Err(found) => issues.extend(found),
        }
    }
    match format {
        Format::Text => {
            render(&issues);
            render_as(&warnings, Level::WARNING);
            let files_word = if checked == 1 { "file" } else { "files" };
            let warned = match warnings.len() {
                0 => String::new(),
                n => format!(", {n} warning(s)"),
            };
            if issues.is_empty() {
                println!("{checked} pipeline {files_word} checked: no problem{warned}");
            } else {
                println!("{checked} pipeline {files_word} checked: {} problem(s){warned}", issues.len());
            }
        }
        Format::Json => {
            let entry = |i: &YamlIssue, level: &str| {
                serde_json::json!({
                    "file": i.file.display().to_string(), "line": i.line, "column": i.column, "level": level,
                    "code": i.code, "message": i.message, "help": i.help,
                })
            };
            let json: Vec<serde_json::Value> =
                issues.iter().map(|i| entry(i, "error")).chain(warnings.iter().map(|w| entry(w, "warning"))).collect();
            println!("{}", serde_json::Value::Array(json));
        }
    }
    Ok(if issues.is_empty() { ExitCode::SUCCESS } else { ExitCode::FAILURE })
}

/// `path` itself, or the YAML files below it, sorted.
fn collect(path: &Path, out: &mut Vec<PathBuf>) -> Result<(), String> {
    if path.is_file() {
        out.push(path.to_owned());
        return Ok(());
    }
    let entries = std::fs::read_dir(path).map_err(|e| format!("cannot read `{}`: {e}", path.display()))?;
    let mut found: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    found.sort();
    for entry in found {
        if entry.is_dir() {
            collect(&entry, out)?;
        } else if entry.extension().is_some_and(|e| e == "yaml" || e == "yml") {
            out.push(entry);
        }
    }
    Ok(())
}

/// Prints each issue like rustc: the message and code, the source line with a caret under the
/// value, and the help.
fn render(issues: &[YamlIssue]) {
    render_as(issues, Level::ERROR);
}

/// [`render`] at `level` (errors, or the warnings of `auto_clamp`).
fn render_as(issues: &[YamlIssue], level: Level<'_>) {
    let renderer = if std::env::var_os("NO_COLOR").is_some() { Renderer::plain() } else { Renderer::styled() };
    for issue in issues {
        let source = std::fs::read_to_string(&issue.file).unwrap_or_default();
        let path = issue.file.display().to_string();
        let title = level.clone().primary_title(issue.message.as_str()).id(issue.code.as_str());
        let group = match value_span(&source, issue.line, issue.column) {
            Some(span) => title.element(
                Snippet::source(source.as_str())
                    .line_start(1)
                    .path(path.as_str())
                    .fold(true)
                    .annotation(AnnotationKind::Primary.span(span)),
            ),
            // A problem of the whole file (it cannot be read) has no line: no `:0:0`.
            None if issue.line == 0 => title.element(Origin::path(path.as_str())),
            None => title.element(Origin::path(path.as_str()).line(issue.line).char_column(issue.column)),
        };
        let mut report = vec![group];
        if let Some(help) = &issue.help {
            report.push(Group::with_title(Level::HELP.secondary_title(help.as_str())));
        }
        eprintln!("{}\n", renderer.render(&report));
    }
}

/// The byte range of the value at 1-based `line`, `column`: up to the end of the line, less a
/// trailing comment and spaces. `None` when the position is not in `source`.
fn value_span(source: &str, line: usize, column: usize) -> Option<std::ops::Range<usize>> {
    let start_of_line: usize = source.split_inclusive('\n').take(line.checked_sub(1)?).map(str::len).sum();
    let text = source.get(start_of_line..)?.split('\n').next()?;
    let offset: usize = text.chars().take(column.checked_sub(1)?).map(char::len_utf8).sum();
    let rest = text.get(offset..)?;
    let value = rest.split(" #").next().unwrap_or(rest).trim_end();
    let len = value.len().max(1).min(rest.len().max(1));
    let start = start_of_line + offset;
    (start + len <= source.len() || rest.is_empty()).then(|| start..(start + len).min(source.len()))
}

/// `target` when it is written like an error code (capitals, digits and `_`) and is not a file.
fn error_code(target: &Path) -> Option<&str> {
    let text = target.to_str()?;
    let code_like = text.starts_with(|c: char| c.is_ascii_uppercase())
        && text.bytes().all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_');
    (code_like && !target.exists()).then_some(text)
}

/// `ctx explain CODE`, as `rustc --explain`: the code's area and explanation.
fn explain_code(text: &str) -> Result<ExitCode, String> {
    let Some(code) = Code::parse(text) else {
        let near = Code::suggest(text).map(Code::as_str);
        return Err(match near {
            Some(near) => format!("unknown error code `{text}`; did you mean `{near}`?"),
            None => format!("unknown error code `{text}`"),
        });
    };
    println!("{code} ({} area)\n\n{}", code.area(), code.explanation());
    Ok(ExitCode::SUCCESS)
}

fn explain(file: &LoadedFile, html: Option<&Path>, format: Format) -> Result<ExitCode, String> {
    let pipeline = match LoadedPipeline::load_file(file, LoadOptions::from_env()) {
        Ok(p) => p,
        Err(e) => {
            render(e.issues());
            return Ok(ExitCode::FAILURE);
        }
    };
    if let Some(path) = html {
        let page = ctx::report::contract_to_html(pipeline.name(), pipeline.contract_report());
        // The cost table goes at the end of the contract's page.
        let page = match pipeline.cost_bound() {
            Some(bound) => page.replacen("</body>", &format!("{}</body>", cost_html(bound)), 1),
            None => page,
        };
        write_html(path, &page)?;
    }
    let report = pipeline.contract_report();
    if format == Format::Json {
        let cap = pipeline.spend_caps().per_run_nano_usd;
        let json = serde_json::json!({
            "pipeline": pipeline.name(),
            "context_window": pipeline.context_window(),
            "counting": report.counting.to_string(),
            "contract": report,
            "step_bound": pipeline.step_bound(),
            "model_request_bound": pipeline.model_request_bound(),
            "cost": pipeline.cost_bound().map(cost_json),
            "max_cost_per_run_nano_usd": cap,
        });
        println!("{json:#}");
        return Ok(ExitCode::SUCCESS);
    }
    // The clamps the load made, located in the file, before the table that shows their result.
    let mut warnings = file.warnings();
    warnings.extend(report.clamps.iter().map(|c| file.clamp_warning(c)));
    render_as(&warnings, Level::WARNING);
    println!("{} — context window {}", pipeline.name(), pipeline.context_window());
    // An estimate (a Claude model counted with a declared tokenizer) must never read as a count.
    println!("prompt counts: {}", report.counting);
    // With named models each step says which one its window and counts are of.
    let named = !pipeline.named_models().is_empty();
    if named {
        for m in pipeline.named_models() {
            let name = m.config.model.as_deref().map(|n| format!(" ({n})")).unwrap_or_default();
            println!(
                "model `{}`{name}: context window {}, {}",
                m.name,
                m.config.context_window,
                m.config.encoding.name()
            );
        }
    }
    let model_column = if named { " model |" } else { "" };
    let model_rule = if named { "---|" } else { "" };
    println!(
        "| step |{model_column} fixed prompt | tool schemas | history | context | output | margin | total | window |\n|---|{model_rule}---|---|---|---|---|---|---|---|"
    );
    for s in &report.steps {
        let model = if named { format!(" {} |", s.model.as_deref().unwrap_or("default")) } else { String::new() };
        let total = s.fixed_prompt_tokens
            + s.tool_schema_tokens
            + s.history_tokens
            + s.context_tokens
            + s.output_tokens
            + s.safety_margin_tokens;
        println!(
            "| {} |{model} {} | {} | {} | {} | {} | {} | {} | {} |",
            s.step_id,
            s.fixed_prompt_tokens,
            s.tool_schema_tokens,
            s.history_tokens,
            s.context_tokens,
            s.output_tokens,
            s.safety_margin_tokens,
            total,
            s.context_window
        );
    }
    println!("at most {} steps and {} model requests per run", pipeline.step_bound(), pipeline.model_request_bound());
    print_cost(&pipeline);
    Ok(ExitCode::SUCCESS)
}

/// The worst-case tokens and cost of a run, step by step (`ctx explain`).
fn print_cost(pipeline: &LoadedPipeline) {
    use ctx::contract::usd;
    let Some(bound) = pipeline.cost_bound() else {
        println!("worst-case cost: a model has no price (give it a `price` block to bound what a run costs)");
        return;
    };
    if pipeline.named_models().is_empty() {
        println!(
            "\nworst-case cost per run, at {}/M input and {}/M output tokens:",
            usd(ctx::contract::nano_usd(bound.price.worst_input())),
            usd(ctx::contract::nano_usd(bound.price.output))
        );
        println!(
            "| step | runs | requests per run | input tokens per request | output tokens per request | per request | cost |\n|---|---|---|---|---|---|---|"
        );
        for s in &bound.steps {
            println!("| {} | {} |", s.step_id, cost_cells(s).join(" | "));
        }
    } else {
        // Each step at its own model's price.
        println!("\nworst-case cost per run, each step at its model's price:");
        println!(
            "| step | model | input $/M | output $/M | runs | requests per run | input tokens per request | output tokens per request | per request | cost |\n|---|---|---|---|---|---|---|---|---|---|"
        );
        for s in &bound.steps {
            println!(
                "| {} | {} | {} | {} | {} |",
                s.step_id,
                s.model.as_deref().unwrap_or("default"),
                usd(ctx::contract::nano_usd(s.price.worst_input())),
                usd(ctx::contract::nano_usd(s.price.output)),
                cost_cells(s).join(" | ")
            );
        }
    }
    let (input, output) = bound.steps.iter().fold((0u64, 0u64), |(i, o), s| {
        let n = s.requests();
        (
            i.saturating_add(n.saturating_mul(s.input_tokens as u64)),
            o.saturating_add(n.saturating_mul(s.output_tokens as u64)),
        )
    });
    let exact = if bound.exact { "" } else { " (an upper bound: the loop limits are too large for the exact one)" };
    println!(
        "at most {} per run{exact}: {} model requests, {input} input and {output} output tokens",
        usd(bound.nano_usd),
        bound.requests
    );
    if let Some(cap) = pipeline.spend_caps().per_run_nano_usd {
        println!("max_cost_per_run {}: {} left at worst", usd(cap), usd(cap.saturating_sub(bound.nano_usd)));
    }
}

/// A step's cells of the worst-case cost table after its id: runs, requests per run, input and
/// output tokens per request, cost per request, cost of its runs.
fn cost_cells(s: &ctx::contract::StepCost) -> [String; 6] {
    use ctx::contract::usd;
    [
        s.runs.to_string(),
        s.requests_per_run.to_string(),
        s.input_tokens.to_string(),
        s.output_tokens.to_string(),
        usd(s.request_nano_usd),
        usd(s.nano_usd),
    ]
}

/// The worst-case cost as an HTML section: the same table as the text, every value escaped.
fn cost_html(bound: &ctx::contract::CostBound) -> String {
    use ctx::contract::usd;
    let escape = |text: &str| {
        text.replace('&', "&amp;")
            .replace('<', "&lt;")
            .replace('>', "&gt;")
            .replace('"', "&quot;")
            .replace('\'', "&#39;")
    };
    let mut html = format!(
        "<h2>Worst-case cost of a run</h2>\n<p class=\"meta\">at {}/M input and {}/M output tokens: at most {} per run, {} model requests{}.</p>\n<table>\n<tr><th>step</th><th class=\"n\">runs</th><th class=\"n\">requests per run</th><th class=\"n\">input tokens</th><th class=\"n\">output tokens</th><th class=\"n\">per request</th><th class=\"n\">cost</th></tr>\n",
        usd(ctx::contract::nano_usd(bound.price.worst_input())),
        usd(ctx::contract::nano_usd(bound.price.output)),
        usd(bound.nano_usd),
        bound.requests,
        if bound.exact { "" } else { " (an upper bound)" },
    );
    for s in &bound.steps {
        let cells: String = cost_cells(s).iter().map(|c| format!("<td class=\"n\">{c}</td>")).collect();
        // A step on a named model says so, with that model's rates.
        let model = s.model.as_ref().map(|m| {
            format!(
                " <small>on model <code>{}</code> at {}/M input, {}/M output</small>",
                escape(m),
                usd(ctx::contract::nano_usd(s.price.worst_input())),
                usd(ctx::contract::nano_usd(s.price.output))
            )
        });
        html.push_str(&format!(
            "<tr><td><code>{}</code>{}</td>{cells}</tr>\n",
            escape(&s.step_id),
            model.unwrap_or_default()
        ));
    }
    html.push_str("</table>\n");
    html
}

/// The cost bound as JSON, with the dollars written out next to the billionths.
fn cost_json(bound: &ctx::contract::CostBound) -> serde_json::Value {
    let mut json = serde_json::to_value(bound).unwrap_or_default();
    json["usd"] = serde_json::json!(bound.usd());
    json
}

/// Writes a report page, naming the file when it cannot.
fn write_html(path: &Path, html: &str) -> Result<(), String> {
    std::fs::write(path, html).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    eprintln!("wrote {}", path.display());
    Ok(())
}

/// `--var name=value`: the value as JSON when it parses, else as text (so `--var tone=formal`
/// needs no quotes).
fn parse_var(arg: &str) -> Result<(String, serde_json::Value), String> {
    let (name, value) = arg.split_once('=').ok_or_else(|| format!("`{arg}` is not `name=value`"))?;
    if name.is_empty() {
        return Err(format!("`{arg}` has no variable name before `=`"));
    }
    let value = serde_json::from_str(value).unwrap_or_else(|_| serde_json::Value::String(value.to_owned()));
    Ok((name.to_owned(), value))
}

fn run(
    file: &Path,
    docs: Option<&Path>,
    vars: Vec<(String, serde_json::Value)>,
    question: &str,
    report: Option<&Path>,
) -> Result<ExitCode, String> {
    let loaded = load(file)?;
    let pipeline = LoadedPipeline::load_file(&loaded, LoadOptions::from_env()).map_err(|e| {
        render(e.issues());
        format!("{} cannot be loaded", file.display())
    })?;
    let index = match docs {
        Some(dir) => Some(
            Bm25Index::from_dir(dir, &IndexOptions::default().chunking(Some(ChunkOptions::new(400))))
                .map_err(|e| format!("{} [{}]", e, e.code()))?,
        ),
        None => None,
    };
    for skipped in index.iter().flat_map(|i| i.skipped()) {
        eprintln!("skipped {skipped}");
    }
    let offline = OfflineModel::new(pipeline.counter().clone());
    let remote = match std::env::var("CTX_BASE_URL") {
        Ok(url) => {
            let model = std::env::var("CTX_MODEL").unwrap_or_else(|_| "default".into());
            let mut config = ctx::llm::openai::OpenAiConfig::new(url, model);
            if let Ok(key) = std::env::var("OPENAI_API_KEY") {
                config = config.with_api_key(key);
            }
            Some(ctx::llm::openai::OpenAiClient::new(config).map_err(|e| e.to_string())?)
        }
        Err(_) => None,
    };
    let model: &dyn ChatModelDyn = match &remote {
        Some(client) => client,
        None => &offline,
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start a runtime: {e}"))?;
    let sink = |t: ctx::pipeline::Token<'_>| {
        use std::io::Write as _;
        print!("{}", t.text);
        let _ = std::io::stdout().flush();
    };
    let mut env = StepEnv::builder().model(model).tokens(&sink);
    if let Some(index) = &index {
        env = env.search(index).store(index);
    }
    let mut state = PipelineState::new(question);
    state.variables.extend(vars);
    let (_, reports) = runtime.block_on(pipeline.run(state, &env)).map_err(|e| format!("{e} [{}]", e.code()))?;
    println!();
    for r in &reports {
        let detail = match &r.detail {
            StepDetail::CallModel(c) => format!(
                " prompt {} + output {}{}",
                c.prompt_tokens,
                c.max_output_tokens,
                c.spend.map(|s| format!(", {}", ctx::contract::usd(s.nano_usd))).unwrap_or_default()
            ),
            StepDetail::Agent(a) => format!(" {} requests, {} tool calls", a.requests.len(), a.tool_calls.len()),
            StepDetail::FetchNodeTexts(f) => format!(" {} of {} evidence tokens", f.tokens, f.budget),
            _ => String::new(),
        };
        eprintln!("[{} {} → {}{detail}]", r.kind, r.step_id, r.transition_key);
    }
    if let Some(path) = report {
        write_html(path, &pipeline.report(&reports).to_html())?;
    }
    Ok(ExitCode::SUCCESS)
}
