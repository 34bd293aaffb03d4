//! Pipelines kept in YAML files: `pub pipeline Qa { file: "pipelines/qa.yaml" }` (or
//! `pipeline!(file = "pipelines/qa.yaml")`, named after the file's `name`).
//!
//! The file is read while compiling by `ctx_spec`'s loader (`PipelineFile`, the one `ctx` uses), so it is
//! decoded, merged with its `extends` chain, and checked with exactly the rules — and the
//! messages — of `ctx check` and of `PipelineFile::load` at run time. Each problem becomes a
//! compile error under the path literal that names the YAML file, line and column, with the
//! offending source line. Every file read (the YAML, its bases, prompt files, `config.json`) is
//! named by an `include_bytes!` in the expansion, so cargo rebuilds the crate when one changes.

use std::path::{Path, PathBuf};

use proc_macro2::{Ident, Span, TokenStream};
use quote::quote;
use syn::LitStr;
use syn::parse::{Parse, ParseStream};

use crate::ast::{Item, Items, PipelineInput, Value};
use crate::ctxt::Ctxt;
use crate::ctxt::with_help;
use crate::lower::{Lowered, PromptCode};
use crate::spans::{SpanMap, SpanRange};
use crate::symbol::FILE;

/// `file = "path.yaml"` with an optional trailing comma: the whole invocation, the pipeline
/// named after the file's `name`.
///
/// ```text
/// short := `file` `=` STRING `,`?
/// ```
pub(crate) struct ShortForm {
    /// The path literal.
    pub path: LitStr,
}

impl ShortForm {
    /// Whether `input` starts like the short form (so that its own parse errors are the ones
    /// reported).
    pub(crate) fn peek(input: ParseStream<'_>) -> bool {
        input.peek(syn::Ident) && input.peek2(syn::Token![=]) && input.fork().parse::<Ident>().is_ok_and(|i| i == FILE)
    }
}

impl Parse for ShortForm {
    fn parse(input: ParseStream<'_>) -> syn::Result<Self> {
        input.parse::<Ident>()?;
        input.parse::<syn::Token![=]>()?;
        let path: LitStr = input.parse().map_err(|e| {
            syn::Error::new(e.span(), "expected the pipeline file's path, e.g. `file = \"pipelines/qa.yaml\"`")
        })?;
        if input.peek(syn::Token![,]) {
            input.parse::<syn::Token![,]>()?;
        }
        if !input.is_empty() {
            return Err(input.error(
                "unexpected tokens after the file's path: write `pipeline!(file = \"pipelines/qa.yaml\")`, \
                 or `pub pipeline Qa { file: \"pipelines/qa.yaml\" }` to choose the name and visibility",
            ));
        }
        Ok(ShortForm { path })
    }
}

/// The path literal of a `{ file: "…" }` body, reporting any other section beside it.
pub(crate) fn file_entry<'a>(cx: &Ctxt, body: &'a Items) -> Option<&'a LitStr> {
    let (key, value) = body.items.iter().find_map(|item| match item {
        Item::Entry { key, value, .. } if key == FILE => Some((key, value)),
        _ => None,
    })?;
    for item in &body.items {
        if let Item::Entry { key: other, .. } = item
            && other != FILE
        {
            cx.error_at(
                other.span(),
                with_help(
                    format!("`{other}` beside `file`: a pipeline read from a file declares everything in the file"),
                    format!("move `{other}` into the YAML file, or remove `file` and declare the pipeline here"),
                ),
            );
        }
    }
    match value {
        Value::Str(lit) => Some(lit),
        other => {
            cx.error_range(
                other.range(),
                with_help(format!("`{key}` takes the pipeline file's path"), "write `file: \"pipelines/qa.yaml\"`"),
            );
            None
        }
    }
}

/// One invocation: the short form, or a pipeline declared here (which may still name a file).
///
/// ```text
/// invocation := short | pipeline
/// ```
pub(crate) enum Invocation {
    /// `file = "…"`.
    Short(ShortForm),
    /// `pub pipeline Name { … }`.
    Full(PipelineInput),
}

impl Parse for Invocation {
    fn parse(input: ParseStream<'_>) -> syn::Result<Self> {
        if ShortForm::peek(input) { input.parse().map(Invocation::Short) } else { input.parse().map(Invocation::Full) }
    }
}

/// A pipeline read from its file: the lowered definition (a stub when the file cannot be
/// decoded; its problems are in the `Ctxt`) and the `include_bytes!` items that make cargo
/// track the files read.
pub(crate) struct FromFile {
    pub lowered: Lowered,
    pub tracking: TokenStream,
    /// The name the file gives the pipeline (`name`, else the file's stem), when it was read.
    pub file_name: Option<String>,
}

/// Reads, decodes and checks the file `lit` names, relative to the crate's root; every problem
/// goes to `cx` under `lit`. `rust_name` is the generated type's name (`None` for the short form,
/// which takes the file's).
pub(crate) fn read(cx: &Ctxt, lit: &LitStr, rust_name: Option<&Ident>) -> FromFile {
    let path = crate_root().join(lit.value());
    let span = lit.span();
    let empty = || stub_lowered(span, rust_name.map_or_else(String::new, ToString::to_string), None);
    #[cfg(not(feature = "yaml"))]
    {
        let _ = &path;
        cx.error_at(
            span,
            with_help(
                "reading a pipeline from a file needs the `yaml` feature of ctx",
                "enable it: `ctx = { version = \"…\", features = [\"yaml\"] }`",
            ),
        );
        FromFile { lowered: empty(), tracking: TokenStream::new(), file_name: None }
    }
    #[cfg(feature = "yaml")]
    {
        use ctx_spec::pipeline::ValidateOptions;
        use ctx_spec::pipeline::yaml::PipelineFile;

        let opts = ValidateOptions::default().check_tokens(true).env_limits_policy(None).base_dir(None);
        let (def, sources) = match PipelineFile::load_with(&path, &opts) {
            Ok(file) => {
                // As for a pipeline written in the macro (`valid.rs`): the reads before a set.
                for warning in file.warnings() {
                    if crate::valid::shown_at_compile_time(warning.code) {
                        cx.warn(span, warning.code.as_str(), render(&warning));
                    }
                }
                (Some(file.definition().clone()), file.sources().to_vec())
            }
            Err(e) => {
                // All at one span, so rustc keeps this order: the file's, top to bottom.
                let mut issues: Vec<_> = e.issues().iter().collect();
                issues.sort_by(|a, b| (&a.file, a.line, a.column).cmp(&(&b.file, b.line, b.column)));
                for issue in issues {
                    cx.error_at(span, render(issue));
                }
                // The definition as far as it decodes, so the generated API stays whole and the
                // user's code adds no error of its own.
                let def = std::fs::read_to_string(&path).ok().and_then(|t| PipelineFile::decode(&t, &path).ok());
                (def, e.sources().to_vec())
            }
        };
        let tracking = tracking(&sources);
        let Some(mut def) = def else {
            return FromFile { lowered: empty(), tracking, file_name: None };
        };
        let file_name = def.name.clone();
        if let Some(name) = rust_name {
            def.name = name.to_string();
        }
        // Files read again when the pipeline is loaded are named relative to
        // `LoadOptions::base_dir` (the working directory by default, the crate's root under
        // cargo): the build machine's absolute paths must not end up in the binary.
        let relative = |path: &mut String| {
            if let Ok(rest) = Path::new(path.as_str()).strip_prefix(crate_root()) {
                *path = rest.to_string_lossy().into_owned();
            }
        };
        match &mut def.model {
            ctx_spec::pipeline::ModelSource::ConfigFile(config) => relative(config),
            ctx_spec::pipeline::ModelSource::Inline(spec) => spec.tokenizer.iter_mut().for_each(relative),
        }
        // Names that become Rust items (step ids, outcomes, tools) are checked, and reported at the
        // path, by the expansion, as for a pipeline written in the macro.
        let lowered = stub_lowered(span, def.name.clone(), Some(def));
        FromFile { lowered, tracking, file_name: Some(file_name) }
    }
}

/// The crate being compiled: file paths are relative to it, like cargo's own paths.
fn crate_root() -> PathBuf {
    std::env::var_os("CARGO_MANIFEST_DIR").map(PathBuf::from).unwrap_or_default()
}

/// A [`Lowered`] for `def` whose every value points at the path literal.
fn stub_lowered(span: Span, name: String, def: Option<ctx_spec::pipeline::PipelineDef>) -> Lowered {
    let def = def.unwrap_or_else(|| {
        ctx_spec::pipeline::PipelineDef::new(name).model(ctx_spec::pipeline::ModelSource::ConfigFile(String::new()))
    });
    let prompts = def
        .prompts
        .iter()
        .map(|p| match &p.text {
            Some(text) => PromptCode::Literal(text.clone()),
            None => PromptCode::AtLoad,
        })
        .collect();
    let step_ids = def.steps.iter().map(|_| Ident::new("step", span)).collect();
    Lowered { def, spans: SpanMap::new(SpanRange::single(span)), step_ids, prompts, graph_complete: true }
}

/// `include_bytes!` of the model files a `model { tokenizer: … }` reads while compiling, so a
/// new tokenizer rebuilds the crate: a `tokenizer.json` and the `tokenizer_config.json` and
/// `chat_template.jinja` beside it. A GGUF is not named: `include_bytes!` would read gigabytes of
/// weights into the compiler; touch the invoking file after replacing one.
pub(crate) fn model_tracking(def: &ctx_spec::pipeline::PipelineDef) -> TokenStream {
    let ctx_spec::pipeline::ModelSource::Inline(spec) = &def.model else { return TokenStream::new() };
    let Some(written) = &spec.tokenizer else { return TokenStream::new() };
    if written.to_ascii_lowercase().ends_with(".gguf") {
        return TokenStream::new();
    }
    let path = crate_root().join(written);
    let dir = path.parent().map(Path::to_owned).unwrap_or_default();
    let files = [path, dir.join("tokenizer_config.json"), dir.join("chat_template.jinja")];
    let paths = files.iter().filter(|f| f.is_file()).map(|f| f.to_string_lossy().into_owned());
    quote!(#(const _: &[u8] = ::core::include_bytes!(#paths);)*)
}

/// `include_bytes!` of every file that was read, so that a change to one rebuilds the crate.
/// (A file that could not be read is not tracked: stable Rust offers no way to.)
#[cfg(feature = "yaml")]
fn tracking(sources: &[ctx_spec::pipeline::yaml::SourceFile]) -> TokenStream {
    let paths = sources.iter().filter(|s| s.digest.is_some()).map(|s| s.path.to_string_lossy().into_owned());
    quote!(#(const _: &[u8] = ::core::include_bytes!(#paths);)*)
}

/// One located problem as rustc-like text: `file:line:column: message`, the source line with a
/// caret under the column, then the help.
#[cfg(feature = "yaml")]
fn render(issue: &ctx_spec::pipeline::yaml::YamlIssue) -> String {
    let shown = issue.file.strip_prefix(crate_root()).unwrap_or(&issue.file).display().to_string();
    let mut text = if issue.line == 0 {
        format!("{shown}: {} [{}]", issue.message, issue.code)
    } else {
        format!("{shown}:{}:{}: {} [{}]", issue.line, issue.column, issue.message, issue.code)
    };
    let line = (issue.line > 0)
        .then(|| std::fs::read_to_string(&issue.file).ok())
        .flatten()
        .and_then(|t| t.lines().nth(issue.line - 1).map(str::to_owned));
    if let Some(line) = line {
        let number = issue.line.to_string();
        let pad = " ".repeat(number.len());
        let caret = " ".repeat(issue.column.saturating_sub(1));
        text.push_str(&format!("\n{pad} |\n{number} | {line}\n{pad} | {caret}^"));
    }
    match &issue.help {
        Some(help) => with_help(text, help),
        None => text,
    }
}

/// The pipeline input of the short form, named after the file.
pub(crate) fn short_input(name: &str, span: Span) -> Option<PipelineInput> {
    let camel = ctx_spec::pipeline::variant_name(name);
    let name: Ident = syn::parse_str(&camel).ok()?;
    let name = Ident::new(&name.to_string(), span);
    Some(PipelineInput {
        attrs: Vec::new(),
        vis: syn::parse_quote!(pub),
        name,
        body: Items { items: Vec::new(), errors: Vec::new() },
    })
}
