//! The `pipeline!` proc macro of ctx.
//!
//! Parse ([`ast`]) → lower to the runtime's `PipelineDef` with a span per value ([`lower`]) →
//! validate with the runtime's own rules, reported under the user's tokens ([`valid`]) → emit a
//! typed state machine ([`expand`]). Use it through the `ctx` facade crate, whose documentation
//! shows the DSL.

mod ast;
mod ctxt;
mod defcode;
mod expand;
mod fields;
mod lower;
mod lower_steps;
mod spans;
mod symbol;
mod valid;

#[cfg(test)]
mod lower_tests;
#[cfg(test)]
mod tests;

use proc_macro::TokenStream;

/// Declares a pipeline and expands it into a typed state machine; see the `ctx` crate's
/// documentation for the DSL. Every problem of the declaration is a compile error under the
/// token that caused it, the runtime's validation rules included.
#[proc_macro]
pub fn pipeline(input: TokenStream) -> TokenStream {
    // `include_str!` paths are relative to the invoking file, as for the standard macro.
    let base_dir = proc_macro::Span::call_site().local_file().and_then(|file| file.parent().map(|d| d.to_path_buf()));
    expand::pipeline(input.into(), base_dir.as_deref()).into()
}
