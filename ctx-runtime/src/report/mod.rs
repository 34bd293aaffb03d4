//! Reports a person opens: the anatomy of every model request of a run and the run's steps,
//! rendered as one self-contained HTML page, and the budget contract drawn the same way.
//!
//! Documented, with the names users use listed one by one, as the facade's `ctx::report`.

pub(crate) mod anatomy;
mod cost;
mod html;
#[cfg(feature = "otel")]
#[cfg_attr(docsrs, doc(cfg(feature = "otel")))]
mod otel;
mod run;
pub(crate) mod trace;

pub use anatomy::{LazyAnatomy, PartKind, RequestAnatomy, RequestPart};
pub use cost::{PartCost, RequestCost};
pub use html::{contract_to_html, escape};
#[cfg(feature = "otel")]
#[cfg_attr(docsrs, doc(cfg(feature = "otel")))]
pub use otel::{OtlpError, OtlpTracing};
pub use run::{Change, ChangeKind, RequestEntry, RunReport, StepEntry};
pub use trace::{ARRAY_ATTRIBUTES, REQUEST_ATTRIBUTES};

use crate::pipeline::{LoadedPipeline, StepReport};

impl LoadedPipeline {
    /// The report of a run of this pipeline whose steps returned `reports`
    /// (see [`RunReport::new`]).
    pub fn report(&self, reports: &[StepReport]) -> RunReport {
        RunReport::new(self, reports)
    }
}
