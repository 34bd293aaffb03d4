//! The state of a context while it is assembled: each declaration ([`Level`]) with its packs'
//! text, counts and the blocks they came from, nested contexts inside their pack, and the
//! [`PackReport`]s read from it once the assembly is done.
//!
//! Apart from the run that fills it so that the report is read from the state without the report
//! module knowing the run.

use super::assembler::{Compiled, RetrieverEntry};
use super::report::{PackKind, PackReport};
use super::retriever::ContextPackBlock;
use ctx_spec::engine::Policy;

/// A declaration being assembled, with the state of its packs.
pub(super) struct Level<'a> {
    pub ctx: &'a Compiled,
    pub policy: &'a Policy,
    /// `support`, or `support/faq` for a nested context.
    pub label: String,
    pub packs: Vec<PackState<'a>>,
    /// Exact count of the minimal rendering, when bounded.
    pub fixed_tokens: usize,
    /// Rounds of proportional pack shrinking.
    pub shrink_rounds: usize,
}

pub(super) struct PackState<'a> {
    pub text: String,
    pub tokens: usize,
    /// The first allocation (later shrinking lowers the cap, not this).
    pub allocation: Option<usize>,
    pub pages: usize,
    pub compactions: usize,
    pub compacted: bool,
    pub included: Vec<String>,
    pub source: Source<'a>,
}

pub(super) enum Source<'a> {
    Retrieved {
        entry: &'a RetrieverEntry,
        blocks: Vec<ContextPackBlock>,
        /// How many of `blocks` came with the first page: under `overflow: error` those must fit;
        /// blocks of later (expansion) pages that do not fit are simply left out.
        first_page: usize,
        fetched: bool,
    },
    Nested(Box<Level<'a>>),
    /// A name that resolves to nothing; validation rejects it, so this only keeps lookups total.
    Unresolved,
}

/// The report of each pack of `level`, nested contexts with their own packs.
pub(super) fn pack_reports(level: &Level<'_>) -> Vec<PackReport> {
    level
        .packs
        .iter()
        .zip(&level.ctx.packs)
        .map(|(pack, def)| {
            let (kind, retrieved, packs) = match &pack.source {
                Source::Retrieved { blocks, .. } => {
                    (PackKind::Retriever, blocks.iter().map(|b| b.id.clone()).collect(), Vec::new())
                }
                Source::Nested(inner) => (PackKind::Context, Vec::new(), pack_reports(inner)),
                Source::Unresolved => {
                    (if def.is_context { PackKind::Context } else { PackKind::Retriever }, Vec::new(), Vec::new())
                }
            };
            PackReport {
                name: def.name.clone(),
                kind,
                allocation: pack.allocation,
                tokens: pack.tokens,
                pages: pack.pages,
                retrieved,
                included: pack.included.clone(),
                compactions: pack.compactions,
                compacted: pack.compacted,
                packs,
            }
        })
        .collect()
}
