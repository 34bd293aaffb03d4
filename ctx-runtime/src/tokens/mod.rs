//! Exact token accounting: everything of `ctx_spec::tokens`, plus (feature `llama`) counting
//! with a served model's own tokenizer over HTTP, which runs and so lives here.

pub use ctx_spec::tokens::*;

#[cfg(feature = "llama")]
mod remote;
#[cfg(feature = "llama")]
#[cfg_attr(docsrs, doc(cfg(feature = "llama")))]
pub use remote::{LlamaCppServer, REMOTE_TIMEOUT, RemoteTokenizer};
