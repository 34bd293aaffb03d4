//! The parsed syntax as `ctx-spec`'s located value tree, the one every front end hands to the
//! schema-driven decoder, and the decoder's findings brought back to the tokens: each value's
//! [`Loc`] is an index into a table of token ranges kept here, so a problem the decoder finds
//! becomes a compile error under the token that caused it, and each path it reads gets its span.

use ctx_spec::pipeline::decode::{Decoder, Kind, Loc, Value as DValue, Word};

use crate::ast::{Item, Items, Value};
use crate::ctxt::{Ctxt, Deprecation, issue_message};
use crate::spans::{SpanMap, SpanRange};

/// The token ranges of the values made so far; a value's [`Loc`] is its index here.
#[derive(Default)]
pub(crate) struct Locs {
    ranges: Vec<SpanRange>,
}

impl Locs {
    /// A new location for `range`.
    pub(crate) fn loc(&mut self, range: SpanRange) -> Loc {
        self.ranges.push(range);
        Loc(u32::try_from(self.ranges.len() - 1).unwrap_or(u32::MAX))
    }

    /// The tokens at `loc` (every `Loc` the decoder sees was made by [`Locs::loc`]; the first
    /// range stands in for any other).
    pub(crate) fn range(&self, loc: Loc) -> SpanRange {
        self.ranges
            .get(loc.0 as usize)
            .or(self.ranges.first())
            .copied()
            .unwrap_or_else(|| SpanRange::single(proc_macro2::Span::call_site()))
    }

    /// A word: an identifier's text without its `r#`.
    pub(crate) fn word(&mut self, ident: &syn::Ident) -> Word {
        Word { text: unraw(ident), at: self.loc(SpanRange::single(ident.span())) }
    }

    /// The items of a `{ … }` or `[ … ]` group as values; the group's syntax errors go to `cx`.
    /// In a list, `name { … }` is a named block (a tool); in a map it is the entry `name: { … }`.
    pub(crate) fn items(&mut self, cx: &Ctxt, items: &Items, in_list: bool) -> Vec<DValue> {
        for error in &items.errors {
            cx.syn_error(error.clone());
        }
        items.items.iter().map(|item| self.item(cx, item, in_list)).collect()
    }

    fn item(&mut self, cx: &Ctxt, item: &Item, in_list: bool) -> DValue {
        match item {
            Item::Entry { key, colon: None, value } if in_list => {
                let name = self.word(key);
                let at = self.loc(item.range());
                DValue::new(Kind::Named { name, body: Box::new(self.value(cx, value)) }, at)
            }
            Item::Entry { key, value, .. } => {
                let key = self.word(key);
                let at = key.at;
                DValue::new(Kind::Entry { key, value: Box::new(self.value(cx, value)) }, at)
            }
            Item::Arrow { from, to } => {
                let at = self.loc(item.range());
                let from = self.word(from);
                DValue::new(Kind::Arrow { from, to: Box::new(self.value(cx, to)) }, at)
            }
            Item::Copy { target, source, transform } => {
                let at = self.loc(item.range());
                let (target, source) = (self.word(target), self.word(source));
                let transform = transform.as_ref().map(|(_, t)| self.word(t));
                DValue::new(Kind::Copy { target, source, transform }, at)
            }
            Item::Assign { target, value } => {
                let at = self.loc(item.range());
                let target = self.word(target);
                DValue::new(Kind::Assign { target, value: Box::new(self.value(cx, value)) }, at)
            }
            Item::Value(value) => self.value(cx, value),
        }
    }

    /// One value.
    pub(crate) fn value(&mut self, cx: &Ctxt, value: &Value) -> DValue {
        let at = self.loc(value.range());
        let negate = |neg: &Option<syn::Token![-]>, text: String| match neg {
            Some(_) => format!("-{text}"),
            None => text,
        };
        let kind = match value {
            Value::Int { neg, lit } => {
                let text = negate(neg, lit.base10_digits().to_owned());
                match text.parse::<i64>() {
                    Ok(n) => Kind::Int(n),
                    Err(_) => Kind::IntTooLarge(text),
                }
            }
            Value::Float { neg, lit } => match negate(neg, lit.base10_digits().to_owned()).parse::<f64>() {
                Ok(n) => Kind::Number(n),
                Err(_) => Kind::Number(f64::NAN),
            },
            Value::Str(s) => Kind::Str(s.value()),
            Value::Bool(b) => Kind::Bool(b.value),
            Value::Name(n) if unraw(n) == "null" && !n.to_string().starts_with("r#") => Kind::Null,
            Value::Name(n) => Kind::Word(unraw(n)),
            Value::Tagged { tag, body, brace } => {
                let name = self.word(tag);
                let body_at = self.loc(SpanRange { start: brace.span.open(), end: brace.span.close() });
                let items = self.items(cx, body, false);
                Kind::Named { name, body: Box::new(DValue::new(Kind::Map(items), body_at)) }
            }
            Value::Call { func, args, .. } => Kind::Call { name: self.word(func), args: self.items(cx, args, true) },
            Value::Macro { name, .. } => Kind::Call { name: self.word(name), args: Vec::new() },
            Value::List { body, .. } => Kind::List(self.items(cx, body, true)),
            Value::Map { body, .. } => Kind::Map(self.items(cx, body, false)),
        };
        DValue::new(kind, at)
    }

    /// Hands what `dec` found to the macro: each problem a compile error under its tokens, each
    /// path read and each poisoned path to `spans`, each older spelling a deprecation warning.
    pub(crate) fn finish(&self, cx: &Ctxt, dec: Decoder, spans: &mut SpanMap) {
        for found in dec.issues {
            cx.error_range(self.range(found.at), issue_message(&found.issue));
        }
        for (path, at) in &dec.locations {
            spans.record(path, self.range(*at));
        }
        for path in &dec.poisoned {
            spans.poison(path);
        }
        for alias in dec.aliases {
            if let Some(what) = Deprecation::of(alias.alias, alias.key) {
                cx.deprecated(self.range(alias.at).start, what);
            }
        }
    }
}

/// An identifier's text without a raw prefix.
pub(crate) fn unraw(ident: &syn::Ident) -> String {
    let text = ident.to_string();
    match text.strip_prefix("r#") {
        Some(plain) => plain.to_owned(),
        None => text,
    }
}
