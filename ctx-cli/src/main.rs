//! `ctx`: check, explain, draw and run pipelines kept in YAML files (the package `ctx-llm-cli`).
//!
//! Install it with `cargo install --locked --path ctx-cli` from a clone of the repository (or, once
//! published, `cargo install --locked ctx-llm-cli`); from the workspace, `cargo run -p ctx-llm-cli -- …`.
//!
//! ```text
//! ctx check <files or dirs>… [--format text|json]   every problem at file:line:column; exit 1 on any
//! ctx explain <file> [--format text|json]           the budget contract of each model step, and
//!                                                   the worst-case tokens and cost of a run
//! ctx explain <CODE>                                what an error code means and how to fix it
//! ctx graph <file> [--dot]                          the step graph as Mermaid (or DOT)
//! ctx export <file>                                 the pipeline as one YAML file
//! ctx run <file> [--docs <dir>] [--var name=value]… -- "question"…
//!                                                   a run (several questions: one conversation)
//!                                                   with a client per model: offline, or the
//!                                                   servers of CTX_BASE_URL / CTX_MODEL_<NAME>_…
//! ctx schema [pipeline|config]                      the JSON Schema editors validate the files with
//! ```
//!
//! Diagnostics are coloured only on a terminal without `NO_COLOR`, unless `--color` says.
//!
//! A directory is searched for `*.yaml` / `*.yml`; a file another checked file `extends` is checked
//! through that file only (a base is usually not a whole pipeline on its own).

/// `print!` through [`io::write_out`]: no panic when the reader of the output went away.
macro_rules! out {
    ($($arg:tt)*) => {
        $crate::io::write_out(format_args!($($arg)*))
    };
}

/// `println!` through [`io::write_out`].
macro_rules! outln {
    () => {
        $crate::io::write_out(format_args!("\n"))
    };
    ($($arg:tt)*) => {
        $crate::io::write_out(format_args!("{}\n", format_args!($($arg)*)))
    };
}

mod check;
mod explain;
mod io;
mod mcp;
mod models;
mod render;
mod run;
mod runnable;
mod schema;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use ctx::definition::{to_dot, to_mermaid};
use ctx::pipeline::yaml::to_yaml;

use io::{Format, load};
use render::Color;
use run::{RunArgs, parse_var};

#[derive(Parser)]
#[command(name = "ctx", version, about = "Check, explain, draw and run ctx pipelines kept in YAML files")]
struct Cli {
    #[command(subcommand)]
    command: Command,
    /// Colour the diagnostics: `auto` (on a terminal, unless `NO_COLOR` is set), `always` or
    /// `never`.
    #[arg(long, global = true, value_enum, default_value_t = Color::Auto)]
    color: Color,
}

#[derive(Subcommand)]
enum Command {
    /// Loads every pipeline with all of ctx's rules (the budget contract with the real tokenizer
    /// included) and reports each problem at its file, line and column. Exit 1 on any problem.
    /// Warnings (each limit `auto_clamp` lowers, each variable a run may read unset, each step
    /// `ctx run` has no backend for) are printed too and do not fail the check. `PIPELINE_LIMITS_POLICY` is honoured as the service does.
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
    /// Runs the pipeline on a question, or on several as one conversation (in order, the history
    /// and variables carried). Each model has its own client: the default model the
    /// OpenAI-compatible server at `CTX_BASE_URL` (with `CTX_MODEL`, `OPENAI_API_KEY`), a named
    /// model `NAME` the one at `CTX_MODEL_<NAME>_BASE_URL` (with `CTX_MODEL_<NAME>_MODEL` and
    /// `CTX_MODEL_<NAME>_API_KEY`), else `CTX_BASE_URL`'s; `CTX_API=responses` (or
    /// `CTX_MODEL_<NAME>_API`) speaks OpenAI's Responses API instead of chat completions; a model
    /// with no server, or every model with `--offline`, answers with the offline extractive model.
    Run {
        /// The pipeline file.
        file: PathBuf,
        /// A directory indexed with BM25 for `search_nodes` and `fetch_node_texts`, one node per
        /// file, as `Bm25Index::from_dir(dir, &IndexOptions::default())` indexes it.
        #[arg(long)]
        docs: Option<PathBuf>,
        /// Index `--docs` in chunks of at most this many tokens instead of whole files, as
        /// `IndexOptions::default().chunking(Some(ChunkOptions::new(N)))` does.
        #[arg(long, value_name = "N", requires = "docs")]
        chunk_tokens: Option<usize>,
        /// Every model answers offline, even with `CTX_BASE_URL` or `CTX_MODEL_<NAME>_BASE_URL` set.
        #[arg(long)]
        offline: bool,
        /// Write the run's report to this HTML file: every model request's window part by part,
        /// what changed before it, and the steps it took (self-contained: no script, nothing fetched).
        #[arg(long, value_name = "FILE")]
        report: Option<PathBuf>,
        /// A variable the run starts with, as `name=value` (repeat for more): the value is read
        /// as JSON when it is JSON (`3`, `true`, `["a"]`, `"quoted"`), else as text.
        #[arg(long = "var", value_name = "NAME=VALUE", value_parser = parse_var)]
        vars: Vec<(String, serde_json::Value)>,
        /// The question, or several (each quoted) asked one after the other as one conversation.
        #[arg(last = true, required = true, value_name = "QUESTION")]
        questions: Vec<String>,
    },
    /// Prints the JSON Schema (draft-07) of pipeline files, or of `config.json`, for editors
    /// that validate YAML (`# yaml-language-server: $schema=…`); generated from the decoder's
    /// own tables, the same text as the repository's `schema/*.schema.json`.
    Schema {
        /// Which file's schema.
        #[arg(value_enum, default_value_t = schema::SchemaOf::Pipeline)]
        of: schema::SchemaOf,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    render::use_color(cli.color);
    let result = match cli.command {
        Command::Check { paths, format } => check::check(&paths, format),
        Command::Explain { target, html, format } => match explain::error_code(&target) {
            Some(code) => explain::explain_code(code),
            None => load(&target).and_then(|f| explain::explain(&f, html.as_deref(), format)),
        },
        Command::Graph { file, dot } => load(&file).map(|f| {
            let def = f.definition();
            outln!("{}", if dot { to_dot(def) } else { to_mermaid(def) });
            ExitCode::SUCCESS
        }),
        Command::Export { file } => load(&file).map(|f| {
            out!("{}", to_yaml(f.definition()));
            ExitCode::SUCCESS
        }),
        Command::Run { file, docs, chunk_tokens, offline, report, vars, questions } => {
            run::run(RunArgs { file, docs, chunk_tokens, report, vars, questions, offline })
        }
        Command::Schema { of } => schema::print(of),
    };
    let code = result.unwrap_or_else(|message| {
        eprintln!("error: {message}");
        ExitCode::from(2)
    });
    if io::stdout_failed() { ExitCode::from(2) } else { code }
}
