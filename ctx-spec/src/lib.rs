//! The core of **ctx**: what a pipeline *is* and the rules that check it, without anything that
//! runs one.
//!
//! * a pipeline's vocabulary — its definition, step schema, transitions and values
//!   ([`pipeline`]), sampling parameters ([`params`]), the node languages ([`lang`]), the state
//!   a run carries ([`state`]), chat messages ([`chat`]);
//! * its rules — validation of a whole definition, the graph, the budget contract
//!   ([`contract`]), settings and model configuration ([`config`]), the rules of
//!   `manage_context_budget` ([`budget`]), of the context engine ([`engine`]) and of a turn's
//!   budget ([`turn`]); every problem is a [`validation::ConfigIssue`] with a field path;
//! * the YAML front end (`pipeline::yaml`, feature `yaml`);
//! * the error codes ([`codes`]);
//! * exact token counting ([`tokens`]) and chat messages ([`chat`]), re-exported by name from
//!   the crate `ctx-tokens`, the floor below this one.
//!
//! The `pipeline!` macro depends on this crate alone, so a user's compiler process never builds
//! the model clients, the driver or the retrievers; `ctx-runtime` builds on it and re-exports it.
//! Users depend on the `ctx` facade, whose paths (`ctx::definition::PipelineDef`, …) are the
//! stable ones.
#![warn(unreachable_pub)]
// docs.rs builds with `--cfg docsrs`: each feature-gated item gets its "available on crate feature"
// badge. Without that cfg (every stable build) nothing changes.
#![cfg_attr(docsrs, feature(doc_cfg))]

pub mod budget;
/// Chat messages and tool schemas: the values counted and sent (from `ctx-tokens`).
pub use ctx_tokens::chat;
pub mod codes;
pub mod config;
pub mod contract;
pub mod engine;
pub mod lang;
pub mod params;
pub mod pipeline;
pub mod state;
pub mod tokens;
pub mod turn;
pub mod validation;
