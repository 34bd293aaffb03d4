//! `context_engine!`: the context engine's declarations, decoded into `ctx_spec`'s `EngineSpec`
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
//! The declarations are decoded by `ctx_spec`'s one decoder
//! ([`read_engine`](ctx_spec::pipeline::decode::read_engine)), which YAML's `contexts:` goes
//! through too: the same keys, messages and codes, each problem under the token it names. Only
//! the shape is judged there; whether a value is acceptable — a ratio in range, ratios summing to
//! at most 1, a known retriever, compactor or template variable — is a rule of
//! `ctx_spec::engine::validate_spec`, reported under the token that wrote the value.

use ctx_spec::engine::{EngineSpec, validate_spec};
use ctx_spec::pipeline::decode::{Decoder, Dialect, read_engine};
use ctx_spec::validation::{ConfigIssue, FieldPath, PathSegment};
use proc_macro2::{Ident, TokenStream};
use quote::quote;

use super::engine_expand;
use super::header::{EngineInput, FnHeader};
use super::shared::report;
use crate::ast::Items;
use crate::ctxt::Ctxt;
use crate::located::{Locs, unraw};
use crate::spans::{SpanMap, SpanRange};

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
/// default ratio when the rule places the sum there).
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

/// A declaration decoded into its spec.
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
/// `contexts { … }`, which takes the same vocabulary), `whole` standing for all of it; paths are
/// relative to the declarations.
pub(crate) fn lower_engine(cx: &Ctxt, owner: String, whole: SpanRange, body: &Items) -> LoweredEngine {
    let mut spans = SpanMap::new(whole);
    let mut locs = Locs::default();
    let at = locs.loc(whole);
    let items = locs.items(cx, body, false);
    let mut dec = Decoder::new(Dialect::Dsl);
    let spec = read_engine(&mut dec, &items, at, owner, &FieldPath::root());
    locs.finish(cx, dec, &mut spans);
    LoweredEngine { spec, spans }
}
