//! The context engine's declarations, policies and templates, and the rules that check them
//! without I/O ([`validate_spec`]): what the companion macro checks at compile time. The
//! assembler that runs them lives in `ctx-runtime`.

mod declaration;
mod policy;
mod template;
mod validate;

pub use declaration::{
    CompactorSpec, ContextDeclaration, ContextInsert, ContextPolicySpec, EngineSpec, ExpansionSpec, InputBudgetSpec,
    MessageSpec, PackBudgetSpec, PackPlacement, RetrieverDecl,
};
pub use policy::{Expansion, Overflow, Policy, allocation, pack_ratios};
pub use template::{SyntaxErrorKind, Template, TemplateSyntaxError, VarRef};
pub use validate::{validate_policy, validate_spec, validate_spec_at};

/// The name of the built-in token-exact truncating compactor.
pub const TRUNCATE: &str = "truncate";

/// The names every compactor registry starts with: `truncate` (cuts only), the code compactors
/// `sql`, `dotnet` and `code` (whichever of the two a text is), and the document compactors
/// `markdown`, `text` and `json`. Each language a `compact_code` rule can name
/// ([`BUILTIN_LANGUAGES`](crate::lang::BUILTIN_LANGUAGES)) is compacted by the compactor of the
/// same name.
pub const BUILTIN_COMPACTORS: [&str; 7] = [TRUNCATE, "sql", "dotnet", "code", "markdown", "text", "json"];

#[cfg(test)]
mod tests {
    #[test]
    fn every_builtin_language_is_a_builtin_compactor() {
        for language in crate::lang::BUILTIN_LANGUAGES {
            assert!(super::BUILTIN_COMPACTORS.contains(&language), "{language}");
        }
    }
}
