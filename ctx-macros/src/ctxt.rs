//! The error accumulator: every phase pushes its errors here instead of returning at the first
//! one, so a user sees every problem of one invocation at once.

use std::cell::RefCell;
use std::fmt::Display;

use proc_macro2::Span;

use crate::spans::SpanRange;

/// `message` followed by a help line, the layout every error of the macro uses.
pub(crate) fn with_help(message: impl Display, help: impl Display) -> String {
    format!("{message}\nhelp: {help}")
}

/// A rule's issue as the text of a compile error: its message with its code, as `ctx check` and
/// the file form print it (`… [UNKNOWN_STEP_TARGET]`, which `ctx explain CODE` explains), then
/// its help line. The codes of the YAML area name the file form's syntax (`YAML_UNKNOWN_KEY`):
/// inline, the same mistake is a syntax error, which reads as rustc's own do, without a code.
pub(crate) fn issue_message(issue: &ctx_spec::validation::ConfigIssue) -> String {
    let message = match issue.code.area() {
        ctx_spec::codes::Area::Yaml => issue.message.clone(),
        _ => format!("{} [{}]", issue.message, issue.code),
    };
    match &issue.help {
        Some(help) => with_help(message, help),
        None => message,
    }
}

/// Collects `syn::Error`s; [`Ctxt::check`] must be called exactly once to take them.
///
/// Dropping a `Ctxt` whose errors were never taken panics (in debug builds of the macro): a
/// forgotten `check` would silently swallow the user's errors, which is worse than a loud
/// internal failure while testing.
#[derive(Default)]
pub(crate) struct Ctxt {
    errors: RefCell<Option<Vec<syn::Error>>>,
    deprecations: RefCell<Vec<(Span, Deprecation)>>,
    warnings: RefCell<Vec<Warning>>,
}

/// A rule's warning (`definition_warnings`: valid, but likely a mistake), emitted like a
/// deprecation: a hidden `#[deprecated]` item named after the code, with the message as its
/// note, used at `span`.
#[derive(Clone, Debug)]
pub(crate) struct Warning {
    pub span: Span,
    /// The code, e.g. `VARIABLE_MAYBE_UNSET`: the name of the item rustc names.
    pub code: &'static str,
    pub message: String,
}

/// A deprecated spelling the invocation used. Stable proc macros cannot emit warnings, so the
/// expansion names a `#[deprecated]` hidden item at the spelling's span and rustc warns there.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum Deprecation {
    /// `max_tokens` in a `fetch_node_texts` step, now `evidence_tokens`.
    FetchMaxTokens,
}

impl Deprecation {
    /// The deprecation of the older spelling `alias` of `key`, as the decoder reports it.
    pub(crate) fn of(alias: &str, key: &str) -> Option<Self> {
        match (alias, key) {
            ("max_tokens", "evidence_tokens") => Some(Deprecation::FetchMaxTokens),
            _ => None,
        }
    }

    /// The hidden item in `__private::deprecated` that carries the warning's note.
    pub(crate) fn item(self) -> &'static str {
        match self {
            Deprecation::FetchMaxTokens => "fetch_node_texts_max_tokens",
        }
    }
}

impl Ctxt {
    /// A new, empty accumulator.
    pub(crate) fn new() -> Self {
        Ctxt {
            errors: RefCell::new(Some(Vec::new())),
            deprecations: RefCell::new(Vec::new()),
            warnings: RefCell::new(Vec::new()),
        }
    }

    /// Records a deprecated spelling at `span`; see [`Deprecation`].
    pub(crate) fn deprecated(&self, span: Span, what: Deprecation) {
        self.deprecations.borrow_mut().push((span, what));
    }

    /// The deprecated spellings recorded so far, in the order they were found.
    pub(crate) fn deprecations(&self) -> Vec<(Span, Deprecation)> {
        self.deprecations.borrow().clone()
    }

    /// Records a rule's warning at `span`; see [`Warning`].
    pub(crate) fn warn(&self, span: Span, code: &'static str, message: String) {
        self.warnings.borrow_mut().push(Warning { span, code, message });
    }

    /// The warnings recorded so far, in the order found.
    pub(crate) fn warnings(&self) -> Vec<Warning> {
        self.warnings.borrow().clone()
    }

    /// Records an error at `span`.
    pub(crate) fn error_at(&self, span: Span, message: impl Display) {
        self.syn_error(syn::Error::new(span, message));
    }

    /// Records an error spanning `range` (from its first to its last token).
    pub(crate) fn error_range(&self, range: SpanRange, message: impl Display) {
        self.syn_error(range.error(message));
    }

    /// Records an existing `syn::Error` (which may already combine several).
    pub(crate) fn syn_error(&self, error: syn::Error) {
        if let Some(errors) = self.errors.borrow_mut().as_mut() {
            errors.push(error);
        }
    }

    /// Whether any error was recorded so far.
    pub(crate) fn has_errors(&self) -> bool {
        self.errors.borrow().as_ref().is_some_and(|e| !e.is_empty())
    }

    /// Takes every recorded error, combined into one `syn::Error` in source order (the phases
    /// find problems in their own order; a reader expects them top to bottom). Errors at the
    /// same place keep the order they were recorded in.
    pub(crate) fn check(self) -> Result<(), syn::Error> {
        let mut errors = self.errors.borrow_mut().take().unwrap_or_default();
        errors.sort_by_key(|e| {
            let start = e.span().start();
            (start.line, start.column)
        });
        let mut iter = errors.into_iter();
        match iter.next() {
            None => Ok(()),
            Some(mut first) => {
                for rest in iter {
                    first.combine(rest);
                }
                Err(first)
            }
        }
    }
}

impl Drop for Ctxt {
    fn drop(&mut self) {
        if !std::thread::panicking() && self.errors.borrow().is_some() {
            debug_assert!(false, "ctx-macros: Ctxt dropped without calling check()");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn check_combines_every_error_in_order() {
        let cx = Ctxt::new();
        assert!(!cx.has_errors());
        cx.error_at(Span::call_site(), "first");
        cx.error_at(Span::call_site(), "second");
        assert!(cx.has_errors());
        let err = cx.check().unwrap_err();
        let messages: Vec<String> = err.into_iter().map(|e| e.to_string()).collect();
        assert_eq!(messages, ["first", "second"]);
    }

    #[test]
    fn errors_come_out_in_source_order() {
        let tokens: proc_macro2::TokenStream = "first\nsecond third".parse().unwrap();
        let spans: Vec<Span> = tokens.into_iter().map(|t| t.span()).collect();
        let cx = Ctxt::new();
        cx.error_at(spans[2], "third");
        cx.error_at(spans[0], "first");
        cx.error_at(spans[1], "second");
        let err = cx.check().unwrap_err();
        let messages: Vec<String> = err.into_iter().map(|e| e.to_string()).collect();
        assert_eq!(messages, ["first", "second", "third"]);
    }

    #[test]
    fn check_without_errors_is_ok() {
        assert!(Ctxt::new().check().is_ok());
    }

    #[test]
    #[should_panic(expected = "without calling check")]
    fn forgetting_check_is_loud() {
        let cx = Ctxt::new();
        drop(cx);
    }
}
