//! The `#[ctx(crate = path)]` option: where the generated code finds ctx.
//!
//! Generated code names everything through `<path>::__private`, `::ctx` by default. A crate
//! that re-exports ctx under another name (`my_sdk::ctx`) passes that path, as serde's
//! `#[serde(crate = "…")]` allows; its users then need no `ctx` dependency of their own.

use proc_macro2::TokenStream;
use quote::quote;
use syn::{Attribute, Path, Token};

use crate::ctxt::Ctxt;
use crate::ctxt::with_help;
use crate::symbol::{CRATE, CTX_ATTR};

/// Takes the `#[ctx(…)]` attributes out of `attrs` (they configure the macro and must not reach
/// the generated type) and returns the path of the hidden module: `::ctx::__private` unless a
/// `crate = path` says otherwise. Problems go to `cx`, under the offending token.
pub(crate) fn take_private_path(cx: &Ctxt, attrs: &mut Vec<Attribute>) -> TokenStream {
    let mut krate: Option<Path> = None;
    attrs.retain(|attr| {
        if !attr.path().is_ident(&CTX_ATTR) {
            return true;
        }
        let parsed = attr.parse_nested_meta(|meta| {
            if meta.path.is_ident(&CRATE) {
                meta.input.parse::<Token![=]>()?;
                let path: Path = meta.input.parse()?;
                if krate.is_some() {
                    cx.error_at(
                        meta.path.get_ident().map_or_else(proc_macro2::Span::call_site, syn::Ident::span),
                        with_help("`crate` is given twice", "keep one `crate = path`"),
                    );
                }
                krate = Some(path);
                Ok(())
            } else {
                let name = meta.path.get_ident().map_or_else(|| "?".to_owned(), ToString::to_string);
                Err(meta.error(with_help(
                    format!("unknown option `{name}` of `#[ctx(…)]`"),
                    "the one option is `crate = path`, e.g. `#[ctx(crate = my_sdk::ctx)]`",
                )))
            }
        });
        if let Err(error) = parsed {
            cx.syn_error(error);
        }
        false
    });
    match krate {
        Some(path) => quote!(#path::__private),
        None => quote!(::ctx::__private),
    }
}
