//! Runtime of **ctx**: exact token accounting, the pipeline state, the budget actions of the
//! specification, the budget contract, and the pieces a `pipeline!` expansion calls.
//!
//! Everything here is usable without the macro; the macro calls the same validation functions
//! at compile time that this crate calls at load time, so every rule lives once.
#![warn(unreachable_pub)]
// docs.rs builds with `--cfg docsrs`: each feature-gated item gets its "available on crate feature"
// badge. Without that cfg (every stable build) nothing changes.
#![cfg_attr(docsrs, feature(doc_cfg))]

pub mod budget;
pub use ctx_spec::{chat, codes, config, contract, lang, state, validation};
pub mod classify;
pub mod compact;
#[cfg(feature = "restate")]
#[cfg_attr(docsrs, doc(cfg(feature = "restate")))]
pub mod durable;
// The object-safe twins of the backend traits, generated (`dyn_twin!`).
mod dyn_twin;
pub mod engine;
pub mod error;
pub mod history;
pub mod llm;
#[cfg(feature = "mcp")]
#[cfg_attr(docsrs, doc(cfg(feature = "mcp")))]
pub mod mcp;
pub mod negotiate;
pub mod pipeline;
pub mod report;
pub mod retrieve;
pub mod tokens;
pub mod turn;

pub use chat::{ChatMessage, Role, ToolCall, ToolSchema};
pub use error::{Code, CtxError, ErrorCode, Result, TokenError};
pub use state::{InboxMessage, NodeText, PipelineState};
pub use tokens::{ChatFormat, Encoding, ModelInfo, TokenCounter};
pub use validation::{ConfigIssue, ConfigIssues, FieldPath};

/// What the `ctx` facade's hidden module re-exports for generated code. Not a public API.
#[doc(hidden)]
pub mod __private {
    pub use serde_json;
    /// The schema rows the `pipeline!` macro's generated `definition()` rebuilds a definition
    /// through, so that a new key needs no code in the macro.
    pub mod spec {
        pub use ctx_spec::pipeline::schema::{MODEL_KEYS, SETTINGS_KEYS, STEP_SCHEMAS, from_fields};
        pub use ctx_spec::pipeline::slot::FieldValue;
    }
}

#[cfg(test)]
mod tests {
    /// Every trace event and span of ctx names a `ctx::<area>` target, so one filter
    /// (`RUST_LOG=ctx=info`) selects all of ctx and none of the crate layout (`ctx_runtime::…`).
    #[test]
    fn every_trace_names_a_ctx_target() {
        let manifest = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut missing = Vec::new();
        let mut seen = 0;
        for root in [manifest.join("src"), manifest.join("../ctx-spec/src")] {
            let mut dirs = vec![root];
            while let Some(dir) = dirs.pop() {
                for entry in std::fs::read_dir(&dir).unwrap().flatten() {
                    let path = entry.path();
                    if path.is_dir() {
                        dirs.push(path);
                        continue;
                    }
                    let text = std::fs::read_to_string(&path).unwrap_or_default();
                    for (at, _) in text.match_indices("tracing::") {
                        let rest = &text[at + "tracing::".len()..];
                        let name: String =
                            rest.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
                        let is_trace = ["info", "warn", "debug", "error", "trace"]
                            .iter()
                            .any(|level| name == *level || name == format!("{level}_span"));
                        let Some(args) = rest[name.len()..].strip_prefix("!(") else { continue };
                        if !is_trace {
                            continue;
                        }
                        seen += 1;
                        if !args.trim_start().starts_with("target: \"ctx::") {
                            missing.push(format!("{}: tracing::{name}!", path.display()));
                        }
                    }
                }
            }
        }
        assert!(seen > 30, "the scan found the trace calls ({seen})");
        assert!(missing.is_empty(), "trace calls without a `ctx::` target:\n{}", missing.join("\n"));
    }
}
