//! The invocation shared by `context_engine!` and `turn_budget!`: a function header and a body of
//! entries in the generic syntax of [`crate::ast`].

use proc_macro2::TokenStream;
use quote::quote;
use syn::ext::IdentExt;
use syn::parse::{Parse, ParseStream};
use syn::token::Paren;
use syn::{Attribute, Ident, Visibility, braced, parenthesized};

use super::symbol::FN;
use crate::ast::Items;

/// A whole invocation.
///
/// ```text
/// invocation := outer_attribute* visibility `fn` IDENT (`(` `)`)? `{` items `}`
/// ```
///
/// The attributes (usually the doc comment) go onto the generated function, which has the
/// visibility and name written and takes no arguments. `what` names the macro in messages.
pub(crate) struct FnHeader {
    /// `/// docs` and other outer attributes.
    pub attrs: Vec<Attribute>,
    /// The generated function's visibility.
    pub vis: Visibility,
    /// The generated function's name.
    pub name: Ident,
    /// The declaration.
    pub body: Items,
}

impl FnHeader {
    /// Parses `input` as the invocation of the macro called `what`, whose body looks like `example`.
    pub(crate) fn parse(input: ParseStream<'_>, what: &str, example: &str) -> syn::Result<Self> {
        let attrs = input.call(Attribute::parse_outer)?;
        let vis: Visibility = input.parse()?;
        let usage = format!("write `pub fn name {{ {example} }}`; `{what}!` expands to that function");
        let keyword =
            input.call(Ident::parse_any).map_err(|e| syn::Error::new(e.span(), format!("expected `fn`: {usage}")))?;
        if keyword != FN {
            return Err(syn::Error::new(keyword.span(), format!("expected `fn`, found `{keyword}`: {usage}")));
        }
        let name: Ident = input
            .parse()
            .map_err(|e| syn::Error::new(e.span(), format!("expected the function's name after `fn`: {usage}")))?;
        // `fn name() { … }` reads naturally too; the function never takes arguments.
        if input.peek(Paren) {
            let args;
            parenthesized!(args in input);
            if !args.is_empty() {
                return Err(args.error(format!("the generated function takes no arguments: {usage}")));
            }
        }
        let content;
        braced!(content in input);
        let body: Items = content.parse()?;
        if !input.is_empty() {
            return Err(
                input.error(format!("unexpected tokens after the `{{ … }}`; declare one function per `{what}!`"))
            );
        }
        Ok(FnHeader { attrs, vis, name, body })
    }

    /// The function's outer attributes, then a blank doc line (when there are docs) and `doc`.
    pub(crate) fn docs(&self, doc: &str) -> TokenStream {
        let attrs = &self.attrs;
        let separator = self.attrs.iter().any(|a| a.path().is_ident("doc")).then(|| quote!(#[doc = ""]));
        // `///` comments keep the space after the slashes; match them.
        let doc = format!(" {doc}");
        quote!(#(#attrs)* #separator #[doc = #doc])
    }
}

/// `FnHeader` for `context_engine!`.
pub(crate) struct EngineInput(pub FnHeader);

impl Parse for EngineInput {
    fn parse(input: ParseStream<'_>) -> syn::Result<Self> {
        FnHeader::parse(input, "context_engine", "contexts { … }").map(EngineInput)
    }
}

/// `FnHeader` for `turn_budget!`.
pub(crate) struct TurnInput(pub FnHeader);

impl Parse for TurnInput {
    fn parse(input: ParseStream<'_>) -> syn::Result<Self> {
        FnHeader::parse(input, "turn_budget", "budget_tokens: 100_000, context_window: 128_000").map(TurnInput)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_forms() {
        let parsed: EngineInput = syn::parse2(quote!(#[doc = "d"] pub(crate) fn support { contexts {} })).unwrap();
        assert_eq!(parsed.0.name.to_string(), "support");
        assert_eq!(parsed.0.attrs.len(), 1);
        assert!(
            syn::parse2::<EngineInput>(quote!(
                fn support() {
                    contexts {}
                }
            ))
            .is_ok()
        );
        let err = syn::parse2::<EngineInput>(quote!(pub engine support {})).err().unwrap().to_string();
        assert!(err.starts_with("expected `fn`, found `engine`"), "{err}");
        let err = syn::parse2::<TurnInput>(quote!(
            fn t(x: u8) {}
        ))
        .err()
        .unwrap()
        .to_string();
        assert!(err.starts_with("the generated function takes no arguments"), "{err}");
    }
}
