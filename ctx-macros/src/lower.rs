//! Lowering: the parsed syntax becomes `ctx_spec`'s `PipelineDef` (plain values as written),
//! together with the span of every value, so that `ctx_spec`'s validation can be reported under
//! the user's tokens.
//!
//! Only *syntax* is judged here: unknown sections and keys, missing required keys, values of the
//! wrong type, duplicate keys. Whether a value is *acceptable* (a threshold in range, a target that
//! exists, a reachable `end`) is a pipeline rule, which lives once in `ctx_spec::pipeline`.

use std::path::{Path, PathBuf};

use ctx_spec::pipeline::decode::{Decoder, Dialect, kinds, read_model, read_models, read_settings, read_step};
use ctx_spec::pipeline::schema::{STEP_SCHEMAS, StepSchema};
use ctx_spec::pipeline::{
    CustomSpec, ModelSource, ModelSpec, PipelineDef, PromptSpec, SettingsSpec, StepDef, StepKind,
};
use ctx_spec::validation::FieldPath;
use proc_macro2::{Ident, TokenStream};
use syn::LitStr;

use crate::ast::{Item, PipelineInput, Value};
use crate::ctxt::Ctxt;
use crate::fields::{Fields, Reader, did_you_mean, entry_range, unraw, with_help};
use crate::located::Locs;
use crate::spans::{SpanMap, SpanRange, step_path};
use crate::symbol::{AT_LOAD, CONFIG, CONTEXTS, INCLUDE_STR, MODEL, MODELS, PROMPTS, SECTIONS, SETTINGS, STEPS};

/// A pipeline lowered to its definition, with everything the expansion needs.
pub(crate) struct Lowered {
    /// The definition, as the rules and the generated code see it.
    pub def: PipelineDef,
    /// Where each value was written.
    pub spans: SpanMap,
    /// The id token of each step (same order as `def.steps`), for the generated variants' spans.
    pub step_ids: Vec<Ident>,
    /// How each prompt of `def.prompts` is emitted (same order).
    pub prompts: Vec<PromptCode>,
    /// False when a transition or a whole step could not be lowered: graph-wide findings (an
    /// unreachable step, a missing `end`) would then be artefacts of that syntax error.
    pub graph_complete: bool,
}

/// How a prompt's text reaches the generated code.
pub(crate) enum PromptCode {
    /// A string literal, emitted as is.
    Literal(String),
    /// `include_str!("path")`: re-emitted as `include_str!` so that cargo tracks the file; the
    /// macro also read the file (when it could) so the compile-time token check counts it.
    Include(TokenStream),
    /// `at_load`: provided through `LoadOptions::prompt` when the pipeline is loaded.
    AtLoad,
}

/// Lowers a whole invocation. `base_dir` is the directory of the file holding the invocation:
/// `include_str!` paths are relative to it, as for the standard macro.
pub(crate) fn lower(cx: &Ctxt, input: &PipelineInput, base_dir: Option<&Path>) -> Lowered {
    let name = unraw(&input.name);
    let mut spans = SpanMap::new(SpanRange::single(input.name.span()));
    spans.record(&FieldPath::root().key("name"), SpanRange::single(input.name.span()));
    let owner = format!("pipeline `{name}`");
    let mut sections = Fields::new(cx, owner.clone(), SpanRange::single(input.name.span()), &input.body);
    let mut r = Reader { cx, spans: &mut spans };

    let models = sections.take(MODELS).map(|(key, value)| lower_models(&mut r, key, value));
    // With named models the default `model` may be left out: every model step then names one.
    let model = match models {
        Some(_) => sections.take(MODEL).map(|(key, value)| lower_model(&mut r, key, value)),
        None => sections
            .require(MODEL, "model { context_window: 16_384, max_tokens: 1_024, encoding: cl100k_base }")
            .map(|(key, value)| lower_model(&mut r, key, value)),
    };
    let model = model.unwrap_or_else(|| {
        if models.is_none() {
            r.spans.poison(&FieldPath::root().key("model"));
        }
        ModelSource::Inline(ModelSpec::default())
    });
    let settings = sections.take(SETTINGS).map(|(key, value)| lower_settings(&mut r, key, value)).unwrap_or_default();
    let (prompts, prompt_code) =
        sections.take(PROMPTS).map(|(key, value)| lower_prompts(&mut r, key, value, base_dir)).unwrap_or_default();
    let (steps, step_ids) = match sections.require(STEPS, "steps { first: search_nodes { top_k: 20, next: end } }") {
        Some((key, value)) => lower_steps(&mut r, key, value),
        None => (Vec::new(), Vec::new()),
    };
    let contexts = sections.take(CONTEXTS).map(|(key, value)| lower_contexts(&mut r, key, value)).unwrap_or_default();
    sections.finish(cx, SECTIONS);

    let graph_complete = steps.iter().enumerate().all(|(i, step)| transitions_lowered(&spans, i, &step.kind));
    Lowered {
        def: PipelineDef::new(name)
            .model(model)
            .models(models.unwrap_or_default())
            .settings(settings)
            .prompts(prompts)
            .steps(steps)
            .contexts(contexts),
        spans,
        step_ids,
        prompts: prompt_code,
        graph_complete,
    }
}

/// Whether step `i` and each of its transitions were lowered from what the user wrote.
fn transitions_lowered(spans: &SpanMap, i: usize, kind: &StepKind) -> bool {
    let path = step_path(i);
    if spans.is_poisoned(&path) {
        return false;
    }
    match kind {
        StepKind::Custom(spec) => {
            let outcomes = path.key("outcomes");
            !spans.is_poisoned(&outcomes) && spec.outcomes.iter().all(|(o, _)| !spans.is_poisoned(&outcomes.key(o)))
        }
        other => other.transitions().iter().all(|(key, _)| !spans.is_poisoned(&path.key(*key))),
    }
}

/// `model { … }` or `model: config("config.json")`.
fn lower_model(r: &mut Reader<'_>, key: &Ident, value: &Value) -> ModelSource {
    let path = FieldPath::root().key("model");
    r.spans.record(&path, entry_range(key, value));
    match value {
        Value::Map { .. } => {
            // The keys of `model` are read by the schema rows the YAML reader shares.
            let mut locs = Locs::default();
            let value = locs.value(r.cx, value);
            let mut dec = Decoder::new(Dialect::Dsl);
            let spec = read_model(&mut dec, &value, &path, &[]).map(|(spec, _)| spec).unwrap_or_default();
            locs.finish(r.cx, dec, r.spans);
            ModelSource::Inline(spec)
        }
        Value::Call { func, args, .. } if *func == CONFIG => {
            for error in &args.errors {
                r.cx.syn_error(error.clone());
            }
            match args.items.as_slice() {
                [Item::Value(Value::Str(file))] => ModelSource::ConfigFile(file.value()),
                _ => {
                    r.spans.poison(&path);
                    r.cx.error_range(
                        value.range(),
                        with_help(
                            "`config(…)` takes one string: the path of the JSON file",
                            "write `model: config(\"config.json\")`",
                        ),
                    );
                    ModelSource::ConfigFile(String::new())
                }
            }
        }
        other => {
            r.spans.poison(&path);
            r.cx.error_range(
                other.range(),
                with_help(
                    format!("`model` takes a block or `config(\"…\")`, found {}", other.describe()),
                    "write `model { context_window: 16_384, max_tokens: 1_024, encoding: cl100k_base }`, \
                     `model { model: \"gpt-4o\" }` or `model: config(\"config.json\")`",
                ),
            );
            ModelSource::Inline(ModelSpec::default())
        }
    }
}

/// `models { small { … }, strong { … } }`, each block read by the rows of `model { … }`.
fn lower_models(r: &mut Reader<'_>, key: &Ident, value: &Value) -> Vec<(String, ModelSpec)> {
    let path = FieldPath::root().key("models");
    if block_body(r, key, value, &path, "models { small { model: \"gpt-4o-mini\" } }").is_none() {
        return Vec::new();
    }
    let mut locs = Locs::default();
    let value = locs.value(r.cx, value);
    let mut dec = Decoder::new(Dialect::Dsl);
    let models = read_models(&mut dec, &value, &path).unwrap_or_default();
    locs.finish(r.cx, dec, r.spans);
    models
}

/// A section that must be a `{ … }` block; reports anything else.
fn block_body<'v>(
    r: &mut Reader<'_>,
    key: &Ident,
    value: &'v Value,
    path: &FieldPath,
    example: &str,
) -> Option<&'v crate::ast::Items> {
    r.spans.record(path, entry_range(key, value));
    match value {
        Value::Map { body, .. } => Some(body),
        other => {
            r.spans.poison(path);
            r.cx.error_range(
                other.range(),
                with_help(
                    format!("`{key}` takes a block `{{ … }}`, found {}", other.describe()),
                    format!("write `{example}`"),
                ),
            );
            None
        }
    }
}

/// `contexts { retrievers { … } contexts { … } compactors: […] }`: the body `context_engine!`
/// takes, lowered by the same code, its spans recorded under `contexts`.
fn lower_contexts(r: &mut Reader<'_>, key: &Ident, value: &Value) -> ctx_spec::engine::EngineSpec {
    let path = FieldPath::root().key("contexts");
    let example = "contexts { contexts { support { messages: [user: \"{input.user_question}\"] } } }";
    let Some(body) = block_body(r, key, value, &path, example) else { return Default::default() };
    let owner = "`contexts`".to_owned();
    let engine = crate::companion::lower_engine(r.cx, owner, SpanRange::single(key.span()), body);
    r.spans.absorb(&path, engine.spans);
    engine.spec
}

/// `settings { max_context_tokens: 9_000, …, any_name: 3 }`, read by the schema rows the YAML
/// reader shares.
fn lower_settings(r: &mut Reader<'_>, key: &Ident, value: &Value) -> SettingsSpec {
    let path = FieldPath::root().key("settings");
    if block_body(r, key, value, &path, "settings { max_context_tokens: 9_000 }").is_none() {
        return SettingsSpec::default();
    }
    let mut locs = Locs::default();
    let value = locs.value(r.cx, value);
    let mut dec = Decoder::new(Dialect::Dsl);
    let spec = read_settings(&mut dec, &value, &path).unwrap_or_default();
    locs.finish(r.cx, dec, r.spans);
    spec
}

/// `prompts { key: "text" | include_str!("file") | at_load, … }`.
fn lower_prompts(
    r: &mut Reader<'_>,
    key: &Ident,
    value: &Value,
    base_dir: Option<&Path>,
) -> (Vec<PromptSpec>, Vec<PromptCode>) {
    let path = FieldPath::root().key("prompts");
    let mut specs = Vec::new();
    let mut code = Vec::new();
    let Some(body) = block_body(r, key, value, &path, "prompts { answer: \"You answer questions.\" }") else {
        return (specs, code);
    };
    let mut f = Fields::new(r.cx, "`prompts`".into(), SpanRange::single(key.span()), body);
    for (k, v) in f.rest() {
        let name = unraw(k);
        let prompt_path = path.key(name.as_str());
        r.record(&prompt_path, v);
        let (text, emitted) = match v {
            Value::Str(s) => (Some(s.value()), PromptCode::Literal(s.value())),
            Value::Macro { name: mac, args, .. } if *mac == INCLUDE_STR => match read_include(r, v, args, base_dir) {
                Some((text, tokens)) => (text, PromptCode::Include(tokens)),
                None => {
                    r.spans.poison(&prompt_path);
                    (None, PromptCode::AtLoad)
                }
            },
            Value::Name(n) if *n == AT_LOAD => (None, PromptCode::AtLoad),
            other => {
                r.spans.poison(&prompt_path);
                r.cx.error_range(
                    other.range(),
                    with_help(
                        format!("prompt `{name}` takes a string, `include_str!(\"…\")` or `at_load`, found {}", other.describe()),
                        format!("write `{name}: \"You are …\"`, `{name}: include_str!(\"prompts/{name}.txt\")` or `{name}: at_load`"),
                    ),
                );
                (None, PromptCode::AtLoad)
            }
        };
        specs.push(PromptSpec::new(name, text));
        code.push(emitted);
    }
    (specs, code)
}

/// Reads an `include_str!` prompt so the token check can count it. `Some((None, tokens))` when the
/// file is fine for rustc but the macro cannot locate it (no source file known, e.g. in an IDE):
/// the check then happens when the pipeline is loaded, with the same rules.
fn read_include(
    r: &mut Reader<'_>,
    value: &Value,
    args: &TokenStream,
    base_dir: Option<&Path>,
) -> Option<(Option<String>, TokenStream)> {
    let Ok(file) = syn::parse2::<LitStr>(args.clone()) else {
        r.cx.error_range(
            value.range(),
            with_help(
                "`include_str!` takes one string: the prompt file's path",
                "write `include_str!(\"prompts/answer.txt\")`",
            ),
        );
        return None;
    };
    let tokens = quote::quote!(::core::include_str!(#args));
    let Some(base) = base_dir else {
        return Some((None, tokens));
    };
    let full: PathBuf = base.join(file.value());
    match std::fs::read_to_string(&full) {
        Ok(text) => Some((Some(text), tokens)),
        Err(error) => {
            r.cx.error_at(
                file.span(),
                with_help(
                    format!("cannot read prompt file `{}`: {error}", full.display()),
                    "the path is relative to the file holding `pipeline!`, as for `include_str!`",
                ),
            );
            None
        }
    }
}

/// `steps { id: kind { … }, … }`.
fn lower_steps(r: &mut Reader<'_>, key: &Ident, value: &Value) -> (Vec<StepDef>, Vec<Ident>) {
    let path = FieldPath::root().key("steps");
    let mut steps = Vec::new();
    let mut ids = Vec::new();
    let Some(body) = block_body(r, key, value, &path, "steps { search: search_nodes { top_k: 20, next: end } }") else {
        return (steps, ids);
    };
    for error in &body.errors {
        r.cx.syn_error(error.clone());
    }
    // The steps' values, decoded by the schema rows every front end shares.
    let mut locs = Locs::default();
    for item in &body.items {
        let (id, kind, brace_body) = match item {
            Item::Entry { key, colon: Some(_), value: Value::Tagged { tag, body, .. } } => (key, tag, body),
            Item::Entry { key, colon: Some(_), value: Value::Name(tag) } => {
                r.cx.error_range(
                    item.range(),
                    with_help(
                        format!("step `{key}` needs a `{{ … }}` block after its kind"),
                        format!("write `{key}: {tag} {{ … }}` with the step's keys inside"),
                    ),
                );
                continue;
            }
            other => {
                r.cx.error_range(
                    other.range(),
                    with_help(
                        "expected a step `id: kind { … }`",
                        "write e.g. `search: search_nodes { top_k: 20, next: fetch }`",
                    ),
                );
                continue;
            }
        };
        let index = steps.len();
        let step = step_path(index);
        r.spans.record(&step, item.range());
        r.spans.record(&step.key("id"), SpanRange::single(id.span()));
        r.spans.record(&step.key("kind"), SpanRange::single(kind.span()));
        let id_text = unraw(id);
        let kind_text = unraw(kind);
        let lowered = match StepSchema::of(&kind_text) {
            Some(schema) => {
                let items = locs.items(r.cx, brace_body, false);
                let at = locs.loc(SpanRange::single(kind.span()));
                let what = format!("`{}` step `{id_text}`", schema.kind);
                // One decoder per step, so its problems are reported in the order written.
                let mut dec = Decoder::new(Dialect::Dsl);
                let kind = read_step(&mut dec, schema, &items, at, what, &step, &[]);
                locs.finish(r.cx, dec, r.spans);
                kind
            }
            None => {
                unknown_kind(r.cx, kind, &kind_text, brace_body);
                r.spans.poison(&step);
                StepKind::Custom(CustomSpec::default())
            }
        };
        steps.push(StepDef::new(id_text, lowered));
        ids.push(id.clone());
    }
    if steps.is_empty() && !r.cx.has_errors() {
        r.cx.error_range(
            value.range(),
            with_help(
                "a pipeline needs at least one step",
                "add e.g. `answer: call_model { prompt_key: answer, next: end }`",
            ),
        );
    }
    (steps, ids)
}

/// A step kind that is not in the schema; its block's syntax errors are still reported.
fn unknown_kind(cx: &Ctxt, kind: &Ident, name: &str, body: &crate::ast::Items) {
    let help = match did_you_mean(name, STEP_SCHEMAS.iter().map(|s| s.kind)) {
        Some(best) => format!("did you mean `{best}`?"),
        None => "a user-written step is `custom { outcomes { done => end } }`".to_owned(),
    };
    cx.error_at(kind.span(), with_help(format!("unknown step kind `{name}`; expected one of {}", kinds()), help));
    for error in &body.errors {
        cx.syn_error(error.clone());
    }
}
