//! The context engine's declarations, policies and templates, and the rules that check them
//! without I/O ([`validate_spec`]): what the companion macro checks at compile time. The
//! assembler that runs them lives in `ctx-runtime`.

mod declaration;
mod policy;
mod template;
mod validate;

pub(crate) use declaration::DEFAULT_LIMIT;
pub use declaration::{
    BUILTIN_COMPACTORS, CompactorSpec, ContextDeclaration, ContextInsert, ContextPolicySpec, EngineSpec, ExpansionSpec,
    InputBudgetSpec, MessageSpec, PackBudgetSpec, PackPlacement, RetrieverDecl, TRUNCATE,
};
pub use policy::{Expansion, Overflow, Policy, allocation, pack_ratios};
pub use template::{SyntaxErrorKind, Template, TemplateSyntaxError, VarRef};
pub use validate::{validate_policy, validate_spec, validate_spec_at};

#[cfg(test)]
mod tests {
    #[test]
    fn every_builtin_language_is_a_builtin_compactor() {
        for language in crate::lang::BUILTIN_LANGUAGES {
            assert!(super::BUILTIN_COMPACTORS.contains(&language), "{language}");
        }
    }
}
