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

/// The names every compactor registry of the engine starts with.
pub const BUILTIN_COMPACTORS: [&str; 4] = [TRUNCATE, "sql", "dotnet", "code"];
