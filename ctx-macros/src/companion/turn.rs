//! `turn_budget!`: an agent turn's progressive-budget settings, lowered into `ctx_spec`'s
//! `TurnBudgetSpec`, checked and resolved by `TurnBudgetSpec::resolve` (which runs
//! `validate_turn_budget`), and emitted as a function returning the `TurnBudgetConfig`.
//!
//! ```text
//! turn_budget! {
//!     /// Docs of the generated function.
//!     pub fn agent_turn {
//!         budget_tokens: 262_000,                 // required
//!         context_window: 272_000,                // required; or `model("gpt-4o")`
//!         fallback_fraction: 0.8,
//!         on_partial: truncate,                   // `skip`, `truncate` or `compact`
//!         min_partial_tokens: 32,
//!         document_template: "<doc id=\"{id}\">\n{text}\n</doc>",
//!         document_separator: "\n\n",
//!     }
//! }
//! ```
//!
//! `context_window: model("…")` takes the window from the model table ctx counts with
//! (`ModelInfo::lookup`), when compiling; an unknown model is an error under its name.

use ctx_spec::tokens::ModelInfo;
use ctx_spec::turn::{PartialPolicy, TurnBudgetConfig, TurnBudgetSpec};
use ctx_spec::validation::FieldPath;
use proc_macro2::{Ident, Literal, TokenStream};
use quote::{ToTokens, quote};

use super::header::{FnHeader, TurnInput};
use super::shared::{allow, report};
use super::symbol::*;
use crate::ast::{Item, Value};
use crate::ctxt::Ctxt;
use crate::fields::{Fields, Reader, unraw, with_help};
use crate::spans::{SpanMap, SpanRange};
use crate::symbol::Symbol;

/// Expands one `turn_budget!` invocation.
pub(crate) fn turn_budget(input: TokenStream) -> TokenStream {
    let TurnInput(header) = match syn::parse2(input) {
        Ok(input) => input,
        Err(error) => return error.into_compile_error(),
    };
    let cx = Ctxt::new();
    let (spec, spans) = lower(&cx, &header);
    let config = match spec.resolve(&FieldPath::root()) {
        Ok(config) => Some(config),
        Err(issues) => {
            report(&cx, &spans, issues);
            None
        }
    };
    match (cx.check(), config) {
        (Ok(()), Some(config)) => function(&header, Some(&config)),
        (checked, _) => {
            let function = function(&header, None);
            // `resolve` only fails with issues, and a poisoned issue follows a reported syntax
            // error; the fallback message covers an empty report all the same.
            let errors = match checked {
                Err(errors) => errors.into_compile_error(),
                Ok(()) => syn::Error::new(header.name.span(), "invalid turn budget").into_compile_error(),
            };
            quote!(#function #errors)
        }
    }
}

/// Lowers the body of `header` into the settings as written and where each was written.
pub(crate) fn lower(cx: &Ctxt, header: &FnHeader) -> (TurnBudgetSpec, SpanMap) {
    let whole = SpanRange::single(header.name.span());
    let mut spans = SpanMap::new(whole);
    let owner = format!("turn budget `{}`", unraw(&header.name));
    let mut f = Fields::new(cx, owner, whole, &header.body);
    let mut r = Reader { cx, spans: &mut spans };
    let root = FieldPath::root();
    let path = |key: Symbol| root.key(key.as_str());
    // Missing required settings are a rule's finding (`TURN_SETTING_MISSING`), reported at
    // the function's name; only the shape of what is written is judged here.
    let spec = TurnBudgetSpec {
        budget_tokens: f.take(BUDGET_TOKENS).and_then(|(k, v)| r.int(&path(BUDGET_TOKENS), k, v, "100_000")),
        context_window: f.take(CONTEXT_WINDOW).and_then(|(k, v)| context_window(&mut r, &path(CONTEXT_WINDOW), k, v)),
        fallback_fraction: f.take(FALLBACK_FRACTION).and_then(|(k, v)| r.float(&path(FALLBACK_FRACTION), k, v, "0.8")),
        on_partial: f.take(ON_PARTIAL).and_then(|(k, v)| r.name(&path(ON_PARTIAL), k, v, "truncate")),
        min_partial_tokens: f.take(MIN_PARTIAL_TOKENS).and_then(|(k, v)| r.int(&path(MIN_PARTIAL_TOKENS), k, v, "32")),
        document_template: f
            .take(DOCUMENT_TEMPLATE)
            .and_then(|(k, v)| r.string(&path(DOCUMENT_TEMPLATE), k, v, "\"<doc id=\\\"{id}\\\">\\n{text}\\n</doc>\"")),
        document_separator: f
            .take(DOCUMENT_SEPARATOR)
            .and_then(|(k, v)| r.string(&path(DOCUMENT_SEPARATOR), k, v, "\"\\n\\n\"")),
    };
    f.finish(cx, TURN_KEYS);
    (spec, spans)
}

/// `context_window: 128_000` or `context_window: model("gpt-4o")`.
fn context_window(r: &mut Reader<'_>, path: &FieldPath, key: &Ident, value: &Value) -> Option<i64> {
    let Value::Call { func, args, .. } = value else {
        return r.int(path, key, value, "128_000");
    };
    r.record(path, value);
    let usage = "write `context_window: model(\"gpt-4o\")` or a number of tokens";
    let model = match args.items.as_slice() {
        [Item::Value(Value::Str(model))] if *func == MODEL && args.errors.is_empty() => model,
        _ => {
            r.spans.poison(path);
            let message = if *func == MODEL {
                "`model(…)` takes the model's name as one string".to_owned()
            } else {
                format!("`context_window` takes a number or `model(\"…\")`, found `{func}(…)`")
            };
            r.cx.error_range(value.range(), with_help(message, usage));
            return None;
        }
    };
    match ModelInfo::lookup(&model.value()) {
        Ok(info) => Some(i64::try_from(info.context_window).unwrap_or(i64::MAX)),
        Err(error) => {
            r.spans.poison(path);
            r.cx.error_at(
                model.span(),
                with_help(error, "or write the window in tokens, e.g. `context_window: 128_000`"),
            );
            None
        }
    }
}

/// The function; without `config` (the declaration has errors) its body is a stub.
fn function(header: &FnHeader, config: Option<&TurnBudgetConfig>) -> TokenStream {
    let t = quote!(::ctx::__private::turn);
    let allow = allow();
    let vis = &header.vis;
    let name = &header.name;
    let (docs, body) = match config {
        Some(config) => {
            let doc = format!(
                "The turn budget checked when compiled by `turn_budget!`: {} tokens for the conversation and this \
                 turn's tool calls and results, in a window of {}.",
                config.budget_tokens, config.context_window
            );
            (header.docs(&doc), config_tokens(config))
        }
        None => (
            header.docs("Generated by `turn_budget!`."),
            quote!(::core::unreachable!("`turn_budget!` reported errors at compile time")),
        ),
    };
    quote! {
        #docs
        #allow
        #[must_use]
        #vis fn #name() -> #t::TurnBudgetConfig {
            #body
        }
    }
}

fn config_tokens(config: &TurnBudgetConfig) -> TokenStream {
    let t = quote!(__turn);
    let size = |n: usize| Literal::usize_suffixed(n).into_token_stream();
    let (budget_tokens, context_window) = (size(config.budget_tokens), size(config.context_window));
    let min_partial_tokens = size(config.min_partial_tokens);
    // Validation keeps the fraction finite.
    let fallback_fraction = Literal::f64_suffixed(config.fallback_fraction);
    let on_partial = match config.on_partial {
        PartialPolicy::Skip => quote!(Skip),
        PartialPolicy::Truncate => quote!(Truncate),
        PartialPolicy::Compact => quote!(Compact),
    };
    let format = &config.format;
    let (template, separator, marker) = (&format.template, &format.separator, &format.truncation_marker);
    quote! {
        use ::ctx::__private::turn as #t;
        #t::TurnBudgetConfig {
            budget_tokens: #budget_tokens,
            context_window: #context_window,
            fallback_fraction: #fallback_fraction,
            on_partial: #t::PartialPolicy::#on_partial,
            min_partial_tokens: #min_partial_tokens,
            format: #t::DocumentFormat {
                template: ::std::string::String::from(#template),
                separator: ::std::string::String::from(#separator),
                truncation_marker: ::std::string::String::from(#marker),
            },
        }
    }
}
