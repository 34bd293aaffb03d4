//! The syntax of `pipeline!`, kept with its spans.
//!
//! The parser knows the *shape* of the DSL (entries, lists, blocks, `=>`, `<-`) but not its
//! vocabulary: which keys a step kind takes and what type each value has is decided by the
//! lowering, which can then say "unknown key `x` in `fetch_node_texts`; expected one of …" under
//! the key instead of a generic "expected `:`". The parser never stops at the first problem
//! either: a malformed entry is recorded in [`Items::errors`] and skipped up to the next comma,
//! so one typo does not hide the rest of the pipeline (or the generated types from
//! rust-analyzer).

use proc_macro2::{Span, TokenStream, TokenTree};
use syn::ext::IdentExt;
use syn::parse::{Parse, ParseStream};
use syn::token::{Brace, Bracket, Paren};
use syn::{Attribute, Ident, LitBool, LitFloat, LitInt, LitStr, Token, Visibility, braced, bracketed, parenthesized};

use crate::spans::SpanRange;
use crate::symbol::PIPELINE;

/// A whole invocation.
///
/// ```text
/// pipeline := outer_attribute* visibility `pipeline` IDENT `{` items `}`
/// ```
///
/// The attributes (usually the doc comment) go onto the generated struct.
pub(crate) struct PipelineInput {
    /// `/// docs` and other outer attributes.
    pub attrs: Vec<Attribute>,
    /// The generated types' visibility.
    pub vis: Visibility,
    /// The pipeline's name: the generated struct's name.
    pub name: Ident,
    /// The sections: `model { … }`, `settings { … }`, `prompts { … }`, `steps { … }`.
    pub body: Items,
}

impl Parse for PipelineInput {
    fn parse(input: ParseStream<'_>) -> syn::Result<Self> {
        let attrs = input.call(Attribute::parse_outer)?;
        let vis: Visibility = input.parse()?;
        let keyword = input.call(Ident::parse_any).map_err(|e| {
            syn::Error::new(e.span(), "expected `pipeline`: write `pub pipeline Name { model { … } steps { … } }`")
        })?;
        if keyword != PIPELINE {
            return Err(syn::Error::new(
                keyword.span(),
                format!("expected `pipeline`, found `{keyword}`: write `pub pipeline Name {{ … }}`"),
            ));
        }
        let name: Ident = input
            .parse()
            .map_err(|e| syn::Error::new(e.span(), "expected the pipeline's name, e.g. `pipeline CodeQa { … }`"))?;
        let content;
        braced!(content in input);
        let body: Items = content.parse()?;
        if !input.is_empty() {
            return Err(
                input.error("unexpected tokens after the pipeline's `{ … }`; declare one pipeline per `pipeline!`")
            );
        }
        Ok(PipelineInput { attrs, vis, name, body })
    }
}

/// The contents of a `{ … }` or `[ … ]` group, with the syntax errors met on the way.
///
/// ```text
/// items := (item separator?)*
/// separator := `,`        — required between items, except after an item ending in a
///                           bracketed group (so sections can follow each other without commas)
/// ```
pub(crate) struct Items {
    /// The items that parsed.
    pub items: Vec<Item>,
    /// The items that did not, each already pointing at its offending token.
    pub errors: Vec<syn::Error>,
}

impl Parse for Items {
    fn parse(input: ParseStream<'_>) -> syn::Result<Self> {
        let mut items = Vec::new();
        let mut errors = Vec::new();
        while !input.is_empty() {
            match input.parse::<Item>() {
                Ok(item) => {
                    let ends_with_group = item.ends_with_group();
                    items.push(item);
                    if input.is_empty() {
                        break;
                    }
                    if input.peek(Token![,]) {
                        input.parse::<Token![,]>()?;
                    } else if !ends_with_group {
                        // Report, then read on from here: the next entry is most likely fine.
                        errors.push(input.error("expected `,` between entries"));
                    }
                }
                Err(error) => {
                    errors.push(error);
                    skip_past_comma(input)?;
                }
            }
        }
        Ok(Items { items, errors })
    }
}

/// Skips the rest of a malformed item, up to and including the next top-level comma.
fn skip_past_comma(input: ParseStream<'_>) -> syn::Result<()> {
    input.step(|cursor| {
        let mut rest = *cursor;
        while let Some((tt, next)) = rest.token_tree() {
            rest = next;
            if let TokenTree::Punct(p) = &tt
                && p.as_char() == ','
            {
                break;
            }
        }
        Ok(((), rest))
    })
}

/// One element of a group.
///
/// ```text
/// item := IDENT `:` value                       — an entry:       top_k: 20
///       | IDENT `{` items `}`                   — a keyed block:  settings { … }, outcomes { … }
///       | IDENT `=>` value                      — an arrow:       context_blocks => "### Context:\n{}"
///       | IDENT `<-` IDENT (`|` IDENT)?         — a copy rule:    context_blocks <- last_model_response | to_context_blocks
///       | IDENT `=` value                       — a value rule:   last_model_response = null
///       | value                                 — a bare value:   { language: sql, policy: always }
/// ```
pub(crate) enum Item {
    /// `key: value`, or `key { … }` (then `colon` is `None` and `value` is a [`Value::Map`]).
    Entry {
        /// The key.
        key: Ident,
        /// The `:`, absent in the block form.
        colon: Option<Token![:]>,
        /// The value.
        value: Value,
    },
    /// `from => to`.
    Arrow {
        /// The left side.
        from: Ident,
        /// The right side.
        to: Value,
    },
    /// `target <- source | transform`.
    Copy {
        /// What is set.
        target: Ident,
        /// Where the value comes from.
        source: Ident,
        /// The optional `| transform`.
        transform: Option<(Token![|], Ident)>,
    },
    /// `target = value`.
    Assign {
        /// What is set.
        target: Ident,
        /// The value.
        value: Value,
    },
    /// A value on its own.
    Value(Value),
}

impl Parse for Item {
    fn parse(input: ParseStream<'_>) -> syn::Result<Self> {
        let starts_with_name = input.peek(Ident::peek_any) && !input.peek(LitBool);
        if starts_with_name && !input.peek2(Token![::]) && !input.peek2(Token![!]) {
            if input.peek2(Token![=>]) {
                let from = input.call(Ident::parse_any)?;
                input.parse::<Token![=>]>()?;
                return Ok(Item::Arrow { from, to: input.parse()? });
            }
            if input.peek2(Token![<-]) {
                let target = input.call(Ident::parse_any)?;
                input.parse::<Token![<-]>()?;
                let source = input.call(Ident::parse_any).map_err(|e| {
                    syn::Error::new(e.span(), "expected the source field after `<-`, e.g. `last_model_response`")
                })?;
                let transform = if input.peek(Token![|]) {
                    let bar = input.parse()?;
                    let name = input.call(Ident::parse_any).map_err(|e| {
                        syn::Error::new(e.span(), "expected a transform name after `|`, e.g. `to_context_blocks`")
                    })?;
                    Some((bar, name))
                } else {
                    None
                };
                return Ok(Item::Copy { target, source, transform });
            }
            if input.peek2(Token![:]) {
                return Ok(Item::Entry {
                    key: input.call(Ident::parse_any)?,
                    colon: Some(input.parse()?),
                    value: input.parse()?,
                });
            }
            if input.peek2(Token![=]) {
                let target = input.call(Ident::parse_any)?;
                input.parse::<Token![=]>()?;
                return Ok(Item::Assign { target, value: input.parse()? });
            }
            if input.peek2(Brace) {
                let key = input.call(Ident::parse_any)?;
                let content;
                let brace = braced!(content in input);
                return Ok(Item::Entry { key, colon: None, value: Value::Map { brace, body: content.parse()? } });
            }
        }
        Ok(Item::Value(input.parse()?))
    }
}

impl Item {
    /// Whether the item's last token is a `{ … }`, `( … )` or `[ … ]` group (then no comma is
    /// needed after it).
    pub(crate) fn ends_with_group(&self) -> bool {
        match self {
            Item::Entry { value, .. }
            | Item::Arrow { to: value, .. }
            | Item::Assign { value, .. }
            | Item::Value(value) => {
                matches!(
                    value,
                    Value::Map { .. }
                        | Value::Tagged { .. }
                        | Value::Call { .. }
                        | Value::Macro { .. }
                        | Value::List { .. }
                )
            }
            Item::Copy { .. } => false,
        }
    }

    /// The item's tokens, first to last.
    pub(crate) fn range(&self) -> SpanRange {
        match self {
            Item::Entry { key, value, .. } => SpanRange::single(key.span()).to(value.range()),
            Item::Arrow { from, to, .. } => SpanRange::single(from.span()).to(to.range()),
            Item::Copy { target, source, transform, .. } => {
                SpanRange { start: target.span(), end: transform.as_ref().map_or(source.span(), |(_, t)| t.span()) }
            }
            Item::Assign { target, value, .. } => SpanRange::single(target.span()).to(value.range()),
            Item::Value(value) => value.range(),
        }
    }
}

/// A value.
///
/// ```text
/// value := INT | `-` INT | FLOAT | `-` FLOAT | STRING | `true` | `false`
///        | IDENT                                — a name: a step id, a field, `null`, `at_load`
///        | IDENT `{` items `}`                  — a tagged block: a step `fetch_node_texts { … }`
///        | IDENT `(` items `)`                  — a call: `config("config.json")`
///        | IDENT `!` group                      — a macro: `include_str!("prompts/answer.txt")`
///        | `[` items `]`                        — a list
///        | `{` items `}`                        — a map
/// ```
pub(crate) enum Value {
    /// An integer, possibly negated.
    Int {
        /// A leading `-`.
        neg: Option<Token![-]>,
        /// The literal.
        lit: LitInt,
    },
    /// A float, possibly negated.
    Float {
        /// A leading `-`.
        neg: Option<Token![-]>,
        /// The literal.
        lit: LitFloat,
    },
    /// A string literal.
    Str(LitStr),
    /// `true` or `false`.
    Bool(LitBool),
    /// A bare name.
    Name(Ident),
    /// `tag { … }`.
    Tagged {
        /// The tag (a step kind).
        tag: Ident,
        /// The braces.
        brace: Brace,
        /// The contents.
        body: Items,
    },
    /// `func(…)`.
    Call {
        /// The function name.
        func: Ident,
        /// The parentheses.
        paren: Paren,
        /// The arguments.
        args: Items,
    },
    /// `name!(…)`, kept as tokens for the lowering to interpret.
    Macro {
        /// The macro's name.
        name: Ident,
        /// Its argument tokens.
        args: TokenStream,
        /// The span of its closing delimiter.
        close: Span,
    },
    /// `[ … ]`.
    List {
        /// The brackets.
        bracket: Bracket,
        /// The elements.
        body: Items,
    },
    /// `{ … }`.
    Map {
        /// The braces.
        brace: Brace,
        /// The entries.
        body: Items,
    },
}

impl Parse for Value {
    fn parse(input: ParseStream<'_>) -> syn::Result<Self> {
        let lookahead = input.lookahead1();
        if lookahead.peek(LitStr) {
            return Ok(Value::Str(input.parse()?));
        }
        if lookahead.peek(LitBool) {
            return Ok(Value::Bool(input.parse()?));
        }
        let neg: Option<Token![-]> = if input.peek(Token![-]) { Some(input.parse()?) } else { None };
        if input.peek(LitInt) {
            return Ok(Value::Int { neg, lit: input.parse()? });
        }
        if input.peek(LitFloat) {
            return Ok(Value::Float { neg, lit: input.parse()? });
        }
        if let Some(neg) = neg {
            return Err(syn::Error::new(neg.span, "expected a number after `-`"));
        }
        if lookahead.peek(Bracket) {
            let content;
            let bracket = bracketed!(content in input);
            return Ok(Value::List { bracket, body: content.parse()? });
        }
        if lookahead.peek(Brace) {
            let content;
            let brace = braced!(content in input);
            return Ok(Value::Map { brace, body: content.parse()? });
        }
        if input.peek(Ident::peek_any) {
            let name = input.call(Ident::parse_any)?;
            if input.peek(Token![!]) {
                input.parse::<Token![!]>()?;
                let (args, close) = input.step(|cursor| match cursor.token_tree() {
                    Some((TokenTree::Group(group), rest)) => Ok(((group.stream(), group.span_close()), rest)),
                    _ => Err(cursor.error("expected `(…)` after `!`, e.g. `include_str!(\"prompts/answer.txt\")`")),
                })?;
                return Ok(Value::Macro { name, args, close });
            }
            if input.peek(Paren) {
                let content;
                let paren = parenthesized!(content in input);
                return Ok(Value::Call { func: name, paren, args: content.parse()? });
            }
            if input.peek(Brace) {
                let content;
                let brace = braced!(content in input);
                return Ok(Value::Tagged { tag: name, brace, body: content.parse()? });
            }
            return Ok(Value::Name(name));
        }
        Err(syn::Error::new(
            input.span(),
            "expected a value: a number, a string, a name, `true`/`false`, `[ … ]` or `{ … }`",
        ))
    }
}

impl Value {
    /// The value's tokens, first to last.
    pub(crate) fn range(&self) -> SpanRange {
        match self {
            Value::Int { neg, lit } => SpanRange { start: neg.map_or(lit.span(), |n| n.span), end: lit.span() },
            Value::Float { neg, lit } => SpanRange { start: neg.map_or(lit.span(), |n| n.span), end: lit.span() },
            Value::Str(lit) => SpanRange::single(lit.span()),
            Value::Bool(lit) => SpanRange::single(lit.span),
            Value::Name(name) => SpanRange::single(name.span()),
            Value::Tagged { tag, brace, .. } => SpanRange { start: tag.span(), end: brace.span.close() },
            Value::Call { func, paren, .. } => SpanRange { start: func.span(), end: paren.span.close() },
            Value::Macro { name, close, .. } => SpanRange { start: name.span(), end: *close },
            Value::List { bracket, .. } => SpanRange { start: bracket.span.open(), end: bracket.span.close() },
            Value::Map { brace, .. } => SpanRange { start: brace.span.open(), end: brace.span.close() },
        }
    }

    /// What kind of value this is, for "expected …, found …" messages.
    pub(crate) fn describe(&self) -> &'static str {
        match self {
            Value::Int { .. } => "an integer",
            Value::Float { .. } => "a decimal number",
            Value::Str(_) => "a string",
            Value::Bool(_) => "a boolean",
            Value::Name(_) => "a name",
            Value::Tagged { .. } => "a block `name { … }`",
            Value::Call { .. } => "a call `name(…)`",
            Value::Macro { .. } => "a macro call",
            Value::List { .. } => "a list `[ … ]`",
            Value::Map { .. } => "a block `{ … }`",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use quote::quote;

    fn parse_items(tokens: TokenStream) -> Items {
        syn::parse2(tokens).expect("items never fail as a whole")
    }

    #[test]
    fn every_item_form_parses() {
        let items = parse_items(quote! {
            top_k: 20,
            settings { a: 1 }
            context_blocks => "### Context:\n{}",
            context_blocks <- last_model_response | to_context_blocks,
            last_model_response = null,
            { language: sql, policy: always },
            threshold: -0.5,
            prompt: include_str!("a.txt"),
            model: config("config.json"),
            search: search_nodes { top_k: 1, next: end },
        });
        assert!(items.errors.is_empty(), "{:?}", items.errors.iter().map(|e| e.to_string()).collect::<Vec<_>>());
        assert_eq!(items.items.len(), 10);
        assert!(matches!(&items.items[1], Item::Entry { colon: None, value: Value::Map { .. }, .. }));
        assert!(matches!(&items.items[3], Item::Copy { transform: Some(_), .. }));
        assert!(matches!(&items.items[6], Item::Entry { value: Value::Float { neg: Some(_), .. }, .. }));
        assert!(matches!(&items.items[7], Item::Entry { value: Value::Macro { .. }, .. }));
        assert!(matches!(&items.items[8], Item::Entry { value: Value::Call { .. }, .. }));
        assert!(matches!(&items.items[9], Item::Entry { value: Value::Tagged { .. }, .. }));
    }

    #[test]
    fn a_malformed_item_is_recorded_and_skipped() {
        let items = parse_items(quote! { a: , b: 2, c 3, d: 4 e: 5 });
        assert_eq!(items.errors.len(), 3);
        let keys: Vec<String> = items
            .items
            .iter()
            .filter_map(|i| match i {
                Item::Entry { key, .. } => Some(key.to_string()),
                _ => None,
            })
            .collect();
        assert_eq!(keys, ["b", "d", "e"], "a missing comma loses nothing");
    }

    #[test]
    fn header_requires_the_pipeline_keyword() {
        let err = syn::parse2::<PipelineInput>(quote!(
            pub struct X {}
        ))
        .err()
        .expect("must fail");
        assert!(err.to_string().contains("expected `pipeline`"), "{err}");
        let ok = syn::parse2::<PipelineInput>(quote!(#[doc = "d"] pub pipeline X { steps {} })).expect("parses");
        assert_eq!(ok.name.to_string(), "X");
        assert_eq!(ok.attrs.len(), 1);
        assert_eq!(ok.body.items.len(), 1);
    }
}
