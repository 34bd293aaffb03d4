//! Where each value of the lowered `PipelineDef` was written: a map from `ctx_spec`'s
//! [`FieldPath`]s to the tokens they came from, so that a `ConfigIssue` of `ctx_spec`'s rules
//! becomes a compile error under the offending token.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Display;

use ctx_spec::validation::FieldPath;
use proc_macro2::{Ident, Span, TokenStream};
use quote::quote;

/// The first and last token of a construct. Stable Rust cannot join spans, but a
/// `compile_error!` whose tokens carry the first and the last span underlines everything between
/// them; `syn::Error::new_spanned` relies on the same trick.
#[derive(Copy, Clone, Debug)]
pub(crate) struct SpanRange {
    /// The first token's span.
    pub start: Span,
    /// The last token's span.
    pub end: Span,
}

impl SpanRange {
    /// A range covering one token.
    pub(crate) fn single(span: Span) -> Self {
        SpanRange { start: span, end: span }
    }

    /// From the start of `self` to the end of `other`.
    pub(crate) fn to(self, other: SpanRange) -> Self {
        SpanRange { start: self.start, end: other.end }
    }

    /// An error underlining this range.
    pub(crate) fn error(self, message: impl Display) -> syn::Error {
        let first = Ident::new("__first", self.start);
        let last = Ident::new("__last", self.end);
        let tokens: TokenStream = quote!(#first #last);
        syn::Error::new_spanned(tokens, message)
    }
}

/// FieldPath → the tokens that wrote that value, plus the paths whose value could not be
/// lowered (the rules' issues there would only repeat, or follow from, a syntax error).
#[derive(Default, Debug)]
pub(crate) struct SpanMap {
    spans: BTreeMap<FieldPath, SpanRange>,
    poisoned: BTreeSet<FieldPath>,
    whole: Option<SpanRange>,
}

impl SpanMap {
    /// A map whose last-resort location is `whole` (the pipeline's name).
    pub(crate) fn new(whole: SpanRange) -> Self {
        SpanMap { whole: Some(whole), ..SpanMap::default() }
    }

    /// Records where `path` was written. The first record wins: a duplicate key's second
    /// occurrence is reported by the lowering and must not move the first one's span.
    pub(crate) fn record(&mut self, path: &FieldPath, range: SpanRange) {
        self.spans.entry(path.clone()).or_insert(range);
    }

    /// Marks `path` (and everything below it) as not faithfully lowered.
    pub(crate) fn poison(&mut self, path: &FieldPath) {
        self.poisoned.insert(path.clone());
    }

    /// Whether `path` or one of its ancestors is poisoned.
    pub(crate) fn is_poisoned(&self, path: &FieldPath) -> bool {
        ancestors(path).any(|p| self.poisoned.contains(&p))
    }

    /// The span recorded for `path`, else for its nearest recorded ancestor, else the whole
    /// pipeline's.
    pub(crate) fn lookup(&self, path: &FieldPath) -> SpanRange {
        ancestors(path)
            .find_map(|p| self.spans.get(&p).copied())
            .or(self.whole)
            .unwrap_or_else(|| SpanRange::single(Span::call_site()))
    }

    /// Takes the records and poisoned paths of `other` (a map of a part lowered on its own, with
    /// paths from its root) as those of `prefix` and below.
    pub(crate) fn absorb(&mut self, prefix: &FieldPath, other: SpanMap) {
        let under = |path: FieldPath| FieldPath(prefix.0.iter().cloned().chain(path.0).collect());
        for (path, range) in other.spans {
            self.record(&under(path), range);
        }
        self.poisoned.extend(other.poisoned.into_iter().map(under));
    }

    /// The span recorded for exactly `path`.
    pub(crate) fn get(&self, path: &FieldPath) -> Option<SpanRange> {
        self.spans.get(path).copied()
    }
}

/// `path`, then each of its ancestors up to the root.
fn ancestors(path: &FieldPath) -> impl Iterator<Item = FieldPath> + '_ {
    (0..=path.0.len()).rev().map(|n| FieldPath(path.0[..n].to_vec()))
}

/// The path of step `index`.
pub(crate) fn step_path(index: usize) -> FieldPath {
    FieldPath::root().key("steps").index(index)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lookup_falls_back_to_the_nearest_recorded_ancestor() {
        let mut map = SpanMap::new(SpanRange::single(Span::call_site()));
        let step = step_path(1);
        map.record(&step, SpanRange::single(Span::call_site()));
        let deep = step.key("compact_code").index(0).key("threshold");
        assert!(map.get(&deep).is_none());
        // The ancestor is found (spans cannot be compared, so check through `get`).
        assert!(ancestors(&deep).any(|p| map.get(&p).is_some()));
        let _ = map.lookup(&deep);
    }

    #[test]
    fn poison_covers_descendants_only() {
        let mut map = SpanMap::default();
        map.poison(&step_path(0).key("compact_code"));
        assert!(map.is_poisoned(&step_path(0).key("compact_code").index(2).key("policy")));
        assert!(!map.is_poisoned(&step_path(0).key("on_ok")));
        assert!(!map.is_poisoned(&step_path(1)));
    }
}
