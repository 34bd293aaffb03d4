//! The definition builders of ctx-spec's tests, and loading one for the step tests here.

pub(crate) use ctx_spec::pipeline::testing::*;

use super::{LoadOptions, LoadedPipeline, PipelineDef};

/// `def` loaded with no load-time options (panics with every issue when it does not load).
pub(crate) fn loaded(def: PipelineDef) -> LoadedPipeline {
    match LoadedPipeline::load(def, LoadOptions::new()) {
        Ok(p) => p,
        Err(e) => panic!("test pipeline does not load: {e}"),
    }
}
