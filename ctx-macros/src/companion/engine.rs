//! `context_engine!`: the context engine's declarations, lowered into the runtime's `EngineSpec`
//! with the span of every value, then checked by `ctx_spec::engine::validate_spec`.
//!
//! ```text
//! context_engine! {
//!     /// Docs of the generated function.
//!     pub fn help_centre {
//!         compactors: [summarize],                                  // registered at run time
//!         retrievers {
//!             kb_search { query: "{input.question}", limit: 3 },
//!         }
//!         contexts {
//!             support {
//!                 inputs: [question],
//!                 policy {
//!                     input_budget { max_tokens: 4_000 },
//!                     pack_budget { default_ratio: 0.5 },
//!                     overflow: compact,                            // or `error`
//!                     compactor: truncate,                          // or `compactor { type: truncate }`
//!                     expansion { max_pages: 3, min_fill_ratio: 1.0 },
//!                 },
//!                 messages: [
//!                     system: "You are a support agent.",
//!                     context: kb_search { ratio: 0.6 },            // or `context: kb_search`
//!                     context: faq { placement: variable },
//!                     history,
//!                     user: "{context.faq}\n\nQuestion: {input.question}",
//!                 ],
//!             }
//!         }
//!     }
//! }
//! ```
//!
//! Only the shape is judged here (keys, value types, message kinds, `placement`); whether a value
//! is acceptable — a ratio in range, ratios summing to at most 1, a known retriever, compactor or
//! template variable — is the runtime's rule, reported under the token that wrote the value.

use ctx_spec::engine::{
    CompactorSpec, ContextDeclaration, ContextInsert, ContextPolicySpec, EngineSpec, ExpansionSpec, InputBudgetSpec,
    MessageSpec, PackBudgetSpec, PackPlacement, RetrieverDecl, validate_spec,
};
use ctx_spec::validation::{ConfigIssue, FieldPath, PathSegment};
use proc_macro2::{Ident, TokenStream};
use quote::quote;

use super::header::{EngineInput, FnHeader};
use super::symbol::*;
use super::{engine_expand, report};
use crate::ast::{Item, Items, Value};
use crate::ctxt::Ctxt;
use crate::fields::{Fields, Reader, did_you_mean, entry_range, unraw, with_help};
use crate::spans::{SpanMap, SpanRange};
use crate::symbol::{Symbol, one_of};

/// Expands one `context_engine!` invocation.
pub(crate) fn context_engine(input: TokenStream) -> TokenStream {
    let EngineInput(header) = match syn::parse2(input) {
        Ok(input) => input,
        Err(error) => return error.into_compile_error(),
    };
    let cx = Ctxt::new();
    let lowered = lower(&cx, &header);
    report(&cx, &lowered.spans, without_echoes(validate_spec(&lowered.spec)));
    match cx.check() {
        Ok(()) => engine_expand::function(&header, Some(&lowered.spec)),
        Err(errors) => {
            let function = engine_expand::function(&header, None);
            let errors = errors.into_compile_error();
            quote!(#function #errors)
        }
    }
}

/// `issues` without those that only echo another
/// ([`Code::echo_of`](ctx_spec::codes::Code::echo_of)): the ratios of a context sum
/// to more than 1 because a ratio in that sum is out of range already (a pack's own ratio, or the
/// default ratio when the runtime places the sum there).
pub(crate) fn without_echoes(issues: Vec<ConfigIssue>) -> Vec<ConfigIssue> {
    // `contexts[i]`, and whether the path is under its `messages`.
    let context = |path: &FieldPath| FieldPath(path.0.iter().take(2).cloned().collect());
    let in_messages = |path: &FieldPath| matches!(path.0.get(2), Some(PathSegment::Key(k)) if k == "messages");
    // Whether the finding at `cause` makes the one at `echo` follow: the same value, or a ratio
    // under the messages of the context whose sum is reported.
    let same_value =
        |cause: &FieldPath, echo: &FieldPath| cause == echo || (in_messages(cause) && context(cause) == context(echo));
    let echoes = |issue: &ConfigIssue| {
        issue
            .code
            .echo_of()
            .is_some_and(|cause| issues.iter().any(|other| other.code == cause && same_value(&other.path, &issue.path)))
    };
    let keep: Vec<bool> = issues.iter().map(|i| !echoes(i)).collect();
    issues.into_iter().zip(keep).filter_map(|(issue, keep)| keep.then_some(issue)).collect()
}

/// A declaration lowered to the runtime's spec.
pub(crate) struct LoweredEngine {
    /// The spec as written.
    pub spec: EngineSpec,
    /// Where each value was written.
    pub spans: SpanMap,
}

/// A block's span: its key alone, so that an issue of the block as a whole underlines one word.
fn at(ident: &Ident) -> SpanRange {
    SpanRange::single(ident.span())
}

/// Lowers the body of `header`.
pub(crate) fn lower(cx: &Ctxt, header: &FnHeader) -> LoweredEngine {
    let owner = format!("context engine `{}`", unraw(&header.name));
    lower_engine(cx, owner, at(&header.name), &header.body)
}

/// Lowers `body`, the declarations of `owner` (a `context_engine!` function, or a pipeline's
/// `contexts { … }`, which takes the same vocabulary), `whole` standing for all of it.
pub(crate) fn lower_engine(cx: &Ctxt, owner: String, whole: SpanRange, body: &Items) -> LoweredEngine {
    let mut spans = SpanMap::new(whole);
    let mut sections = Fields::new(cx, owner, whole, body);
    let mut r = Reader { cx, spans: &mut spans };
    let compactors = sections
        .take(COMPACTORS)
        .map(|(k, v)| lower_names(&mut r, &FieldPath::root().key(COMPACTORS.as_str()), k, v, "[summarize]"))
        .unwrap_or_default();
    let retrievers = match sections.take(RETRIEVERS) {
        Some((k, v)) => {
            named_blocks(&mut r, RETRIEVERS, k, v, "retrievers { kb_search { query: \"{input.question}\", limit: 3 } }")
                .into_iter()
                .enumerate()
                .map(|(i, (name, body))| lower_retriever(&mut r, i, name, body))
                .collect()
        }
        None => Vec::new(),
    };
    let contexts = match sections.require(CONTEXTS, "contexts { support { messages: [user: \"{input.question}\"] } }") {
        Some((k, v)) => named_blocks(&mut r, CONTEXTS, k, v, "contexts { support { messages: [user: \"…\"] } }")
            .into_iter()
            .enumerate()
            .map(|(i, (name, body))| lower_context(&mut r, i, name, body))
            .collect(),
        None => Vec::new(),
    };
    sections.finish(cx, ENGINE_KEYS);
    LoweredEngine { spec: EngineSpec { contexts, retrievers, compactors }, spans }
}

/// The body of a `key { … }` block, or the wrong-type error (the path is then poisoned).
fn block<'v>(r: &mut Reader<'_>, path: &FieldPath, key: &Ident, value: &'v Value, example: &str) -> Option<&'v Items> {
    r.spans.record(path, at(key));
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

/// The `name { … }` entries of `contexts` or `retrievers`, in order; `None` for an entry whose
/// value is not a block (reported here).
fn named_blocks<'v>(
    r: &mut Reader<'_>,
    section: Symbol,
    key: &Ident,
    value: &'v Value,
    example: &str,
) -> Vec<(&'v Ident, Option<&'v Items>)> {
    let path = FieldPath::root().key(section.as_str());
    let Some(body) = block(r, &path, key, value, example) else { return Vec::new() };
    let mut f = Fields::new(r.cx, format!("`{section}`"), at(key), body);
    let entries = f.rest();
    f.finish(r.cx, &[]);
    entries
        .into_iter()
        .map(|(name, value)| match value {
            Value::Map { body, .. } => (name, Some(body)),
            other => {
                r.cx.error_range(
                    other.range(),
                    with_help(
                        format!("`{name}` in `{section}` takes a block `{{ … }}`, found {}", other.describe()),
                        format!("write `{example}`"),
                    ),
                );
                (name, None)
            }
        })
        .collect()
}

/// `[a, b, "c-d"]`: names or strings.
fn lower_names(r: &mut Reader<'_>, path: &FieldPath, key: &Ident, value: &Value, example: &str) -> Vec<String> {
    r.spans.record(path, at(key));
    let Some(items) = r.list(path, key, value, example) else { return Vec::new() };
    let mut names = Vec::new();
    for item in &items.items {
        match item {
            Item::Value(Value::Name(name)) => {
                r.spans.record(&path.index(names.len()), at(name));
                names.push(unraw(name));
            }
            Item::Value(Value::Str(text)) => {
                r.spans.record(&path.index(names.len()), SpanRange::single(text.span()));
                names.push(text.value());
            }
            other => r.cx.error_range(
                other.range(),
                with_help(format!("`{key}` lists names"), format!("write `{key}: {example}`")),
            ),
        }
    }
    names
}

/// `name { query: "…", limit: 3 }` in `retrievers`.
fn lower_retriever(r: &mut Reader<'_>, index: usize, name: &Ident, body: Option<&Items>) -> RetrieverDecl {
    let path = FieldPath::root().key(RETRIEVERS.as_str()).index(index);
    r.spans.record(&path, at(name));
    r.spans.record(&path.key("name"), at(name));
    let mut decl = RetrieverDecl { name: unraw(name), query: String::new(), limit: 1 };
    let Some(body) = body else {
        r.spans.poison(&path);
        return decl;
    };
    let mut f = Fields::new(r.cx, format!("retriever `{}`", decl.name), at(name), body);
    let query = path.key(QUERY.as_str());
    match f.require(QUERY, "query: \"{input.question}\"") {
        Some((k, v)) => decl.query = r.string(&query, k, v, "\"{input.question}\"").unwrap_or_default(),
        None => r.spans.poison(&query),
    }
    let limit = path.key(LIMIT.as_str());
    match f.require(LIMIT, "limit: 3") {
        Some((k, v)) => decl.limit = r.int(&limit, k, v, "3").unwrap_or(1),
        None => r.spans.poison(&limit),
    }
    f.finish(r.cx, RETRIEVER_KEYS);
    decl
}

/// `name { inputs: […], policy { … }, messages: […] }` in `contexts`.
fn lower_context(r: &mut Reader<'_>, index: usize, name: &Ident, body: Option<&Items>) -> ContextDeclaration {
    let path = FieldPath::root().key(CONTEXTS.as_str()).index(index);
    r.spans.record(&path, at(name));
    r.spans.record(&path.key("name"), at(name));
    let mut decl = ContextDeclaration { name: unraw(name), ..ContextDeclaration::default() };
    let Some(body) = body else {
        // Kept (empty) so that directives naming it still resolve; its own findings would only
        // repeat the error above.
        r.spans.poison(&path);
        return decl;
    };
    let mut f = Fields::new(r.cx, format!("context `{}`", decl.name), at(name), body);
    if let Some((k, v)) = f.take(INPUTS) {
        decl.inputs = lower_names(r, &path.key(INPUTS.as_str()), k, v, "[question]");
    }
    if let Some((k, v)) = f.take(POLICY) {
        decl.policy = lower_policy(r, &path.key(POLICY.as_str()), k, v);
    }
    let messages = path.key(MESSAGES.as_str());
    match f.require(MESSAGES, "messages: [system: \"…\", user: \"{input.question}\"]") {
        Some((k, v)) => decl.messages = lower_messages(r, &messages, k, v),
        None => r.spans.poison(&messages),
    }
    f.finish(r.cx, CONTEXT_KEYS);
    decl
}

/// `policy { input_budget { … }, pack_budget { … }, overflow: …, compactor: …, expansion { … } }`.
fn lower_policy(r: &mut Reader<'_>, path: &FieldPath, key: &Ident, value: &Value) -> Option<ContextPolicySpec> {
    let body = block(r, path, key, value, "policy { input_budget { max_tokens: 4_000 } }")?;
    let mut f = Fields::new(r.cx, "`policy`".into(), at(key), body);
    let mut policy = ContextPolicySpec::default();
    if let Some((k, v)) = f.take(INPUT_BUDGET) {
        let p = path.key(INPUT_BUDGET.as_str());
        if let Some(body) = block(r, &p, k, v, "input_budget { max_tokens: 4_000 }") {
            let mut g = Fields::new(r.cx, "`input_budget`".into(), at(k), body);
            let max_tokens = required_int(r, &mut g, &p, MAX_TOKENS, "4_000");
            g.finish(r.cx, INPUT_BUDGET_KEYS);
            policy.input_budget = Some(InputBudgetSpec { max_tokens: max_tokens.unwrap_or(1) });
        }
    }
    if let Some((k, v)) = f.take(PACK_BUDGET) {
        let p = path.key(PACK_BUDGET.as_str());
        if let Some(body) = block(r, &p, k, v, "pack_budget { default_ratio: 0.5 }") {
            let mut g = Fields::new(r.cx, "`pack_budget`".into(), at(k), body);
            let default_ratio =
                g.take(DEFAULT_RATIO).and_then(|(k, v)| r.float(&p.key(DEFAULT_RATIO.as_str()), k, v, "0.5"));
            g.finish(r.cx, PACK_BUDGET_KEYS);
            policy.pack_budget = Some(PackBudgetSpec { default_ratio });
        }
    }
    if let Some((k, v)) = f.take(OVERFLOW) {
        policy.overflow = r.name(&path.key(OVERFLOW.as_str()), k, v, "compact");
    }
    if let Some((k, v)) = f.take(COMPACTOR) {
        policy.compactor = lower_compactor(r, &path.key(COMPACTOR.as_str()), k, v);
    }
    if let Some((k, v)) = f.take(EXPANSION) {
        let p = path.key(EXPANSION.as_str());
        if let Some(body) = block(r, &p, k, v, "expansion { max_pages: 3, min_fill_ratio: 1.0 }") {
            let mut g = Fields::new(r.cx, "`expansion`".into(), at(k), body);
            let max_pages = required_int(r, &mut g, &p, MAX_PAGES, "3");
            let min_fill_ratio = match g.require(MIN_FILL_RATIO, "min_fill_ratio: 1.0") {
                Some((k, v)) => r.float(&p.key(MIN_FILL_RATIO.as_str()), k, v, "1.0"),
                None => None,
            };
            if min_fill_ratio.is_none() {
                r.spans.poison(&p.key(MIN_FILL_RATIO.as_str()));
            }
            g.finish(r.cx, EXPANSION_KEYS);
            policy.expansion = Some(ExpansionSpec {
                max_pages: max_pages.unwrap_or(1),
                min_fill_ratio: min_fill_ratio.unwrap_or(1.0),
            });
        }
    }
    f.finish(r.cx, POLICY_KEYS);
    Some(policy)
}

/// A required integer key; when it is missing or unreadable its path is poisoned, so that the
/// placeholder the caller puts in its place is never judged.
fn required_int(r: &mut Reader<'_>, f: &mut Fields<'_>, path: &FieldPath, key: Symbol, example: &str) -> Option<i64> {
    let value = match f.require(key, &format!("{key}: {example}")) {
        Some((k, v)) => r.int(&path.key(key.as_str()), k, v, example),
        None => None,
    };
    if value.is_none() {
        r.spans.poison(&path.key(key.as_str()));
    }
    value
}

/// `compactor: truncate`, or the spec's form `compactor { type: truncate }`.
fn lower_compactor(r: &mut Reader<'_>, path: &FieldPath, key: &Ident, value: &Value) -> Option<CompactorSpec> {
    let name = match value {
        Value::Map { body, .. } => {
            let mut f = Fields::new(r.cx, "`compactor`".into(), at(key), body);
            let name = match f.require(TYPE, "type: truncate") {
                Some((k, v)) => r.name_or_string(path, k, v, "truncate"),
                None => None,
            };
            f.finish(r.cx, COMPACTOR_KEYS);
            name
        }
        other => r.name_or_string(path, key, other, "truncate"),
    };
    if name.is_none() {
        r.spans.poison(path);
    }
    name.map(|name| CompactorSpec { name })
}

/// `messages: [system: "…", user: "…", assistant: "…", context: name { … }, history]`.
fn lower_messages(r: &mut Reader<'_>, path: &FieldPath, key: &Ident, value: &Value) -> Vec<MessageSpec> {
    r.spans.record(path, at(key));
    let Some(items) = r.list(path, key, value, "[system: \"…\", user: \"{input.question}\"]") else {
        return Vec::new();
    };
    let mut messages = Vec::new();
    for item in &items.items {
        let message = lower_message(r, &path.index(messages.len()), item);
        messages.push(message);
    }
    messages
}

/// How to write each message, for errors.
const MESSAGE_FORMS: &str =
    "`system: \"…\"`, `user: \"…\"`, `assistant: \"…\"`, `context: retriever_or_context`, or `history`";

/// One message. A message that cannot be read becomes an empty system message whose path is
/// poisoned: positions stay those the user wrote, and nothing is judged on the placeholder.
fn lower_message(r: &mut Reader<'_>, path: &FieldPath, item: &Item) -> MessageSpec {
    let placeholder = |r: &mut Reader<'_>| {
        r.spans.poison(path);
        MessageSpec::System { content: String::new() }
    };
    let (word, value) = match item {
        Item::Entry { key, value, .. } => {
            r.spans.record(path, entry_range(key, value));
            (key, Some(value))
        }
        Item::Value(Value::Name(name)) => {
            r.spans.record(path, at(name));
            (name, None)
        }
        other => {
            r.cx.error_range(other.range(), with_help("expected a message", format!("write {MESSAGE_FORMS}")));
            return placeholder(r);
        }
    };
    let template = |r: &mut Reader<'_>, v: &Value| {
        let content = path.key("content");
        r.string(&content, word, v, "\"Question: {input.question}\"").unwrap_or_default()
    };
    match value {
        Some(v) if *word == SYSTEM => MessageSpec::System { content: template(r, v) },
        Some(v) if *word == USER => MessageSpec::User { content: template(r, v) },
        Some(v) if *word == ASSISTANT => MessageSpec::Assistant { content: template(r, v) },
        Some(v) if *word == CONTEXT => match lower_insert(r, path, word, v) {
            Some(insert) => MessageSpec::Context(insert),
            None => placeholder(r),
        },
        None if *word == HISTORY => MessageSpec::History,
        Some(v) if *word == HISTORY => {
            r.cx.error_range(
                v.range(),
                with_help("`history` takes no value", "write `history` alone where the caller's history goes"),
            );
            MessageSpec::History
        }
        None if MESSAGE_KINDS.iter().any(|k| *word == *k) => {
            let example = if *word == CONTEXT { "context: kb_search".to_owned() } else { format!("{word}: \"…\"") };
            r.cx.error_at(word.span(), with_help(format!("`{word}` needs a value"), format!("write `{example}`")));
            placeholder(r)
        }
        _ => {
            let text = unraw(word);
            let help = match did_you_mean(&text, MESSAGE_KINDS.iter().map(|k| k.as_str())) {
                Some(best) => format!("did you mean `{best}`?"),
                None => format!("write {MESSAGE_FORMS}"),
            };
            r.cx.error_at(
                word.span(),
                with_help(format!("unknown message `{text}`; expected one of {}", one_of(MESSAGE_KINDS)), help),
            );
            placeholder(r)
        }
    }
}

/// `context: name` or `context: name { ratio: 0.5, placement: variable }`.
fn lower_insert(r: &mut Reader<'_>, path: &FieldPath, key: &Ident, value: &Value) -> Option<ContextInsert> {
    let name_path = path.key("name");
    let Value::Tagged { tag, body, .. } = value else {
        return r.name(&name_path, key, value, "kb_search").map(ContextInsert::new);
    };
    r.spans.record(&name_path, at(tag));
    let mut insert = ContextInsert::new(unraw(tag));
    let mut f = Fields::new(r.cx, format!("pack `{}`", insert.name), at(tag), body);
    if let Some((k, v)) = f.take(RATIO) {
        insert.ratio = r.float(&path.key(RATIO.as_str()), k, v, "0.5");
    }
    if let Some((k, v)) = f.take(PLACEMENT)
        && let Some(word) = r.name(&path.key(PLACEMENT.as_str()), k, v, "variable")
    {
        if word == PLACEMENT_VARIABLE.as_str() {
            insert.placement = PackPlacement::Variable;
        } else if word != PLACEMENT_MESSAGE.as_str() {
            let help = match did_you_mean(&word, PLACEMENTS.iter().map(|p| p.as_str())) {
                Some(best) => format!("did you mean `{best}`?"),
                None => "`message` sends the pack as its own system message; `variable` only where a template \
                         says `{context.<name>}`"
                    .to_owned(),
            };
            r.cx.error_range(
                v.range(),
                with_help(format!("unknown placement `{word}`; expected one of {}", one_of(PLACEMENTS)), help),
            );
        }
    }
    f.finish(r.cx, INSERT_KEYS);
    Some(insert)
}
