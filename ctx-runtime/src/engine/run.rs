//! One assembly: fetch packs, fit them, confirm the exact count of the whole.
//!
//! The plan, for a context with budget `B` (a nested context's budget is its pack allocation):
//! 1. The *minimal* rendering (every pack empty, no history) must fit `B`, else nothing can.
//! 2. The *pack room* is `B` less the rendering with every pack present but empty (separators
//!    and message overhead included); each pack is allocated its ratio of that room and filled
//!    with whole blocks, best first, paging the retriever under `expansion`. Blocks that do not
//!    fit are compacted into the space left (`overflow: compact`) or are an error.
//! 3. The whole is rendered and counted exactly. Over `B` (BPE is not additive, history takes
//!    room), `compact` drops history oldest-first, then shrinks every pack in proportion to its
//!    size and re-fills it from the blocks already fetched, until the count fits; `error` fails.
//!
//! Step 3 ends: each round drops a history message or lowers every non-empty pack's cap below its
//! current size, and with no history and empty packs the rendering is the minimal one of step 1.

use std::collections::BTreeSet;
use std::future::Future;
use std::pin::Pin;

use super::assembler::{AssemblyInput, Compiled, ContextAssembler, ContextAssembly, RetrieverEntry};
use super::error::EngineError;
use super::level::{Level, PackState, Source, pack_reports};
use super::render::{Empty, Frame, layout_text, layout_top, render_parts, render_query};
use super::report::AssemblyReport;
use super::retriever::{
    ContextPackBlock, ContextRetrieverRequest, PACK_BLOCK_SEPARATOR, Retriever, RetrieverDyn, join_blocks,
};
use crate::chat::ChatMessage;
use crate::compact::{CompactError, CompactRequest};
use crate::tokens::TokenError;
use crate::tokens::{CountedText, TokenCounter};
use ctx_spec::engine::{Overflow, Policy, allocation};

type Fut<'s, T> = Pin<Box<dyn Future<Output = T> + Send + 's>>;

// The assembler's entry points are written beside the run they start: the assembler's own file
// holds its declarations and builder, which the run reads.
impl ContextAssembler {
    /// Assembles the context `name`: fetches its packs (paging retrievers under `expansion`),
    /// renders its templates, and fits the result into `input_budget.max_tokens` counted on the
    /// exact messages of [`ContextAssembly::messages`]. The same declarations, input and
    /// retriever answers always give the same assembly.
    pub async fn assemble(&self, name: &str, input: &AssemblyInput) -> Result<ContextAssembly, EngineError> {
        let Some(compiled) = self.contexts.get(name) else {
            return Err(EngineError::UnknownContext {
                name: name.to_owned(),
                declared: self.contexts.keys().cloned().collect::<Vec<_>>().join(", "),
            });
        };
        Run::new(self, input, None).assemble(compiled).await
    }

    /// [`Self::assemble`] with `retriever` answering every retriever the context draws on (each
    /// request names its retriever), in place of those registered: what the spec calls a
    /// retriever override, and how an assembler built with
    /// [`ContextAssemblerBuilder::retrievers_at_assembly`](super::ContextAssemblerBuilder::retrievers_at_assembly) is used.
    pub async fn assemble_with(
        &self,
        name: &str,
        input: &AssemblyInput,
        retriever: &dyn RetrieverDyn,
    ) -> Result<ContextAssembly, EngineError> {
        let Some(compiled) = self.contexts.get(name) else {
            return Err(EngineError::UnknownContext {
                name: name.to_owned(),
                declared: self.contexts.keys().cloned().collect::<Vec<_>>().join(", "),
            });
        };
        Run::new(self, input, Some(retriever)).assemble(compiled).await
    }
}

/// The outcome of filling a pack from its blocks.
struct Fill {
    text: String,
    included: Vec<String>,
    compacted: bool,
    compactor_calls: usize,
}

pub(super) struct Run<'a> {
    asm: &'a ContextAssembler,
    frame: Frame<'a>,
    history: &'a [ChatMessage],
    /// Answers every retriever in place of the registered ones.
    retriever: Option<&'a dyn RetrieverDyn>,
}

impl<'a> Run<'a> {
    pub(crate) fn new(
        asm: &'a ContextAssembler,
        input: &'a AssemblyInput,
        retriever: Option<&'a dyn RetrieverDyn>,
    ) -> Self {
        let frame = Frame {
            inputs: &input.inputs,
            base_system: input.base_system_prompt.as_deref().unwrap_or(""),
            user_fallback: input.user_message.as_deref().unwrap_or(""),
        };
        Run { asm, frame, history: &input.history, retriever }
    }

    fn counter(&self) -> &TokenCounter {
        &self.asm.counter
    }

    fn level(&self, ctx: &'a Compiled, inherited: &'a Policy, label: String) -> Level<'a> {
        let policy = ctx.policy.as_ref().unwrap_or(inherited);
        let packs = ctx
            .packs
            .iter()
            .map(|def| {
                let source = if def.is_context {
                    self.asm.contexts.get(&def.name).map_or(Source::Unresolved, |inner| {
                        Source::Nested(Box::new(self.level(inner, policy, format!("{label}/{}", def.name))))
                    })
                } else {
                    self.asm.retrievers.get(&def.name).map_or(Source::Unresolved, |entry| Source::Retrieved {
                        entry,
                        blocks: Vec::new(),
                        first_page: 0,
                        fetched: false,
                    })
                };
                PackState {
                    text: String::new(),
                    tokens: 0,
                    allocation: None,
                    pages: 0,
                    compactions: 0,
                    compacted: false,
                    included: Vec::new(),
                    source,
                }
            })
            .collect();
        Level { ctx, policy, label, packs, fixed_tokens: 0, shrink_rounds: 0 }
    }

    pub(crate) async fn assemble(&self, ctx: &'a Compiled) -> Result<ContextAssembly, EngineError> {
        let mut level = self.level(ctx, &self.asm.default_policy, ctx.name.clone());
        let mut history = self.history.to_vec();
        let budget = level.policy.max_tokens;
        self.settle(&mut level, budget, Some(&mut history)).await?;
        let parts = render_parts(ctx, &level.label, &self.frame, &texts(&level, false), &history, true, Empty::Drop)?;
        let layout = layout_top(parts, self.frame.user_fallback, Empty::Drop);
        let assembly = ContextAssembly {
            system_prompt: layout.system_prompt,
            history: layout.history,
            user_message: layout.user_message,
            report: AssemblyReport {
                context: ctx.name.clone(),
                max_tokens: budget,
                fixed_tokens: level.fixed_tokens,
                packs: pack_reports(&level),
                history_dropped: self.history.len().saturating_sub(history.len()),
                shrink_rounds: level.shrink_rounds,
                total_tokens: 0,
            },
        };
        let total = self.counter().count_messages(&assembly.messages())?;
        if let Some(budget) = budget.filter(|b| total > *b) {
            // `settle` returned only after this very rendering fitted; kept as a hard guard.
            return Err(EngineError::InputOverBudget {
                context: ctx.name.clone(),
                tokens: total,
                budget,
                history_messages: history.len(),
            });
        }
        Ok(ContextAssembly { report: AssemblyReport { total_tokens: total, ..assembly.report }, ..assembly })
    }

    /// Exact size of `level` rendered with its packs (or with every pack empty): the count of the
    /// messages for the top level (`history` is `Some`), of the joined text for a nested one.
    fn measure(
        &self,
        level: &Level<'a>,
        blank: bool,
        history: Option<&[ChatMessage]>,
        empty: Empty,
    ) -> Result<usize, EngineError> {
        let texts = texts(level, blank);
        let top = history.is_some();
        let parts = render_parts(level.ctx, &level.label, &self.frame, &texts, history.unwrap_or(&[]), top, empty)?;
        Ok(if top {
            self.counter().count_messages(&layout_top(parts, self.frame.user_fallback, empty).messages())?
        } else {
            self.counter().count(&layout_text(&parts))?
        })
    }

    /// Fills the packs of `level` and fits the whole into `budget` (see the module docs).
    /// Returns the final exact size.
    fn settle<'s>(
        &'s self,
        level: &'s mut Level<'a>,
        budget: Option<usize>,
        mut history: Option<&'s mut Vec<ChatMessage>>,
    ) -> Fut<'s, Result<usize, EngineError>> {
        Box::pin(async move {
            let no_history: Option<&[ChatMessage]> = history.is_some().then_some(&[]);
            let Some(budget) = budget else {
                for i in 0..level.packs.len() {
                    self.fill_pack(level, i, None).await?;
                }
                return self.measure(level, false, history.as_deref().map(Vec::as_slice), Empty::Drop);
            };
            let minimal = self.measure(level, true, no_history, Empty::Drop)?;
            level.fixed_tokens = minimal;
            if minimal > budget {
                return Err(EngineError::FixedOverBudget { context: level.label.clone(), tokens: minimal, budget });
            }
            let structure = self.measure(level, true, no_history, Empty::Keep)?;
            let room = budget.saturating_sub(structure);
            for i in 0..level.packs.len() {
                let cap = allocation(room, level.ctx.packs.get(i).map_or(0.0, |d| d.ratio));
                if let Some(pack) = level.packs.get_mut(i) {
                    pack.allocation.get_or_insert(cap);
                }
                self.fill_pack(level, i, Some(cap)).await?;
            }
            loop {
                let tokens = self.measure(level, false, history.as_deref().map(Vec::as_slice), Empty::Drop)?;
                if tokens <= budget {
                    return Ok(tokens);
                }
                if level.policy.overflow == Overflow::Error {
                    return Err(EngineError::InputOverBudget {
                        context: level.label.clone(),
                        tokens,
                        budget,
                        history_messages: history.as_deref().map_or(0, Vec::len),
                    });
                }
                if let Some(h) = history.as_deref_mut().filter(|h| !h.is_empty())
                    && trim_history(self.counter(), h, tokens - budget)?
                {
                    continue;
                }
                level.shrink_rounds += 1;
                if !self.shrink_packs(level, tokens - budget).await? {
                    return Err(EngineError::FixedOverBudget { context: level.label.clone(), tokens, budget });
                }
            }
        })
    }

    /// Lowers every non-empty pack's cap by its share of `excess` (rounded up) and re-fills it.
    /// `false` when every pack is already empty.
    async fn shrink_packs(&self, level: &mut Level<'a>, excess: usize) -> Result<bool, EngineError> {
        let total: usize = level.packs.iter().map(|p| p.tokens).sum();
        if total == 0 {
            return Ok(false);
        }
        for i in 0..level.packs.len() {
            let tokens = level.packs.get(i).map_or(0, |p| p.tokens);
            if tokens == 0 {
                continue;
            }
            let cut = (excess as u128 * tokens as u128).div_ceil(total as u128);
            let cap = tokens.saturating_sub(usize::try_from(cut).unwrap_or(usize::MAX));
            self.fill_pack(level, i, Some(cap)).await?;
        }
        Ok(true)
    }

    /// Makes pack `i` hold at most `cap` tokens: fetches it the first time, re-fills it from what
    /// was fetched afterwards.
    fn fill_pack<'s>(
        &'s self,
        level: &'s mut Level<'a>,
        i: usize,
        cap: Option<usize>,
    ) -> Fut<'s, Result<(), EngineError>> {
        Box::pin(async move {
            let (label, policy) = (level.label.clone(), level.policy);
            let name = level.ctx.packs.get(i).map_or("", |d| d.name.as_str());
            let Some(pack) = level.packs.get_mut(i) else { return Ok(()) };
            match &mut pack.source {
                Source::Retrieved { entry, blocks, first_page, fetched } => {
                    if !*fetched {
                        *fetched = true;
                        if cap != Some(0) {
                            (*blocks, *first_page, pack.pages) = self.fetch(&label, policy, entry, cap).await?;
                        }
                    }
                    let fill = self.fill_blocks(&label, policy, name, blocks, *first_page, cap).await?;
                    pack.text = fill.text;
                    pack.included = fill.included;
                    pack.compacted = fill.compacted;
                    pack.compactions += fill.compactor_calls;
                }
                Source::Nested(inner) => {
                    let budget = match (cap, inner.policy.max_tokens) {
                        (Some(a), Some(b)) => Some(a.min(b)),
                        (a, b) => a.or(b),
                    };
                    match self.settle(inner, budget, None).await {
                        Ok(_) => {
                            let parts = self.nested_parts(inner, false)?;
                            pack.text = layout_text(&parts);
                            pack.compacted = false;
                        }
                        Err(EngineError::FixedOverBudget { context, tokens: _, budget })
                            if context == inner.label && policy.overflow == Overflow::Compact =>
                        {
                            let minimal = layout_text(&self.nested_parts(inner, true)?);
                            pack.text = self.compact(&label, policy, name, &minimal, budget).await?;
                            pack.compactions += 1;
                            pack.compacted = true;
                        }
                        Err(
                            EngineError::FixedOverBudget { context, tokens, budget }
                            | EngineError::InputOverBudget { context, tokens, budget, .. },
                        ) if context == inner.label => {
                            return Err(EngineError::PackOverBudget {
                                context: label,
                                pack: name.to_owned(),
                                tokens,
                                budget,
                            });
                        }
                        Err(e) => return Err(e),
                    }
                }
                Source::Unresolved => pack.text.clear(),
            }
            pack.tokens = self.counter().count(&pack.text)?;
            Ok(())
        })
    }

    fn nested_parts(&self, inner: &Level<'a>, blank: bool) -> Result<Vec<super::render::Part>, EngineError> {
        render_parts(inner.ctx, &inner.label, &self.frame, &texts(inner, blank), &[], false, Empty::Drop)
    }

    /// Requests pages of `entry` until the pack's fill target is met, a page comes back short,
    /// a block no longer fits, or `expansion.max_pages` is reached. Blocks with an id already
    /// seen are skipped. Returns the blocks in order, how many came with the first page, and the
    /// number of requests.
    async fn fetch(
        &self,
        label: &str,
        policy: &Policy,
        entry: &RetrieverEntry,
        cap: Option<usize>,
    ) -> Result<(Vec<ContextPackBlock>, usize, usize), EngineError> {
        let name = &entry.decl.name;
        let query = render_query(&entry.query, name, label, self.frame.inputs)?;
        let (max_pages, min_fill) = policy.expansion.map_or((1, 1.0), |e| (e.max_pages, e.min_fill_ratio));
        let target = cap.map(|c| ((c as f64) * min_fill).ceil() as usize);
        let (mut blocks, mut seen, mut offset, mut pages, mut filled) = (Vec::new(), BTreeSet::new(), 0, 0, 0);
        let mut first_page = 0;
        loop {
            let request = ContextRetrieverRequest {
                retriever: name.clone(),
                query: query.clone(),
                offset,
                limit: entry.limit,
                max_tokens: cap.map(|c| c.saturating_sub(filled)),
            };
            let implementation = match (self.retriever, &entry.implementation) {
                (Some(given), _) => given,
                (None, Some(registered)) => registered.as_ref(),
                (None, None) => return Err(not_given(name)),
            };
            let page = implementation.retrieve(&request).await.map_err(|source| EngineError::Retriever {
                context: label.to_owned(),
                retriever: name.clone(),
                offset,
                source,
            })?;
            pages += 1;
            let returned = page.blocks.len();
            offset += returned;
            blocks.extend(page.blocks.into_iter().filter(|b| seen.insert(b.id.clone())));
            if pages == 1 {
                first_page = blocks.len();
            }
            if returned < entry.limit || pages >= max_pages {
                break;
            }
            if let (Some(cap), Some(target)) = (cap, target) {
                let (accepted, text) = greedy(self.counter(), &blocks, Some(cap))?;
                if accepted < blocks.len() || self.counter().count(&text)? >= target {
                    break;
                }
                // The next page's blocks follow a separator: the room left is measured with it.
                filled = self.counter().count(&format!("{text}{PACK_BLOCK_SEPARATOR}"))?;
            }
        }
        Ok((blocks, first_page, pages))
    }

    /// Whole blocks, best first, while the joined text fits `cap`; the rest compacted into the
    /// space left, or, under `overflow: error`, an error when a block of the first page (the
    /// `required` first blocks) does not fit.
    async fn fill_blocks(
        &self,
        label: &str,
        policy: &Policy,
        pack: &str,
        blocks: &[ContextPackBlock],
        required: usize,
        cap: Option<usize>,
    ) -> Result<Fill, EngineError> {
        let counter = self.counter();
        let (n, text) = greedy(counter, blocks, cap)?;
        let included = blocks.iter().take(n).map(|b| b.id.clone()).collect();
        let mut fill = Fill { text, included, compacted: false, compactor_calls: 0 };
        let (Some(cap), Some(rest)) = (cap, blocks.get(n..).filter(|r| !r.is_empty())) else {
            return Ok(fill);
        };
        if policy.overflow == Overflow::Error {
            if n >= required {
                return Ok(fill);
            }
            let first = join_blocks(blocks.iter().take(required).map(|b| b.text.as_str()));
            let tokens = counter.count(&first)?;
            return Err(EngineError::PackOverBudget {
                context: label.to_owned(),
                pack: pack.to_owned(),
                tokens,
                budget: cap,
            });
        }
        let leftover = join_blocks(rest.iter().map(|b| b.text.as_str()));
        let joiner = if n > 0 { PACK_BLOCK_SEPARATOR } else { "" };
        let mut room = cap.saturating_sub(counter.count(&fill.text)? + counter.count(joiner)?);
        while room > 0 {
            let compacted = self.compact(label, policy, pack, &leftover, room).await?;
            fill.compactor_calls += 1;
            if compacted.is_empty() {
                break;
            }
            let candidate = format!("{}{joiner}{compacted}", fill.text);
            let tokens = counter.count(&candidate)?;
            if tokens <= cap {
                fill.text = candidate;
                fill.compacted = true;
                break;
            }
            // The join merged tokens differently: ask for less by the overshoot.
            room = room.saturating_sub(tokens - cap);
        }
        Ok(fill)
    }

    /// Runs the policy's compactor and checks its answer's exact size.
    async fn compact(
        &self,
        label: &str,
        policy: &Policy,
        pack: &str,
        text: &str,
        max_tokens: usize,
    ) -> Result<String, EngineError> {
        if max_tokens == 0 {
            return Ok(String::new());
        }
        let fail = |source| EngineError::Compactor {
            context: label.to_owned(),
            compactor: policy.compactor.clone(),
            pack: pack.to_owned(),
            source: Box::new(source),
        };
        let request = CompactRequest::new(pack, text, self.counter()).with_max_tokens(max_tokens);
        // A summariser is the one compaction that waits on a model; every other is synchronous.
        let out = if let Some(summarizer) = self.asm.summarizers.get(&policy.compactor) {
            summarizer.summarize(&request).await.map_err(fail)?
        } else {
            let compactor = self.asm.compactors.get(&policy.compactor).ok_or_else(|| {
                fail(CompactError::Other(format!("compactor `{}` is not registered", policy.compactor)))
            })?;
            compactor.compact(&request).map_err(fail)?.into_owned()
        };
        let tokens = self.counter().count(&out)?;
        if tokens > max_tokens {
            return Err(EngineError::CompactorOverBudget {
                context: label.to_owned(),
                compactor: policy.compactor.clone(),
                pack: pack.to_owned(),
                tokens,
                budget: max_tokens,
            });
        }
        Ok(out)
    }
}

fn texts<'l>(level: &'l Level<'_>, blank: bool) -> Vec<&'l str> {
    level.packs.iter().map(|p| if blank { "" } else { p.text.as_str() }).collect()
}

/// The longest prefix of `blocks` whose joined text fits `cap`, and that text.
fn greedy(
    counter: &TokenCounter,
    blocks: &[ContextPackBlock],
    cap: Option<usize>,
) -> Result<(usize, String), TokenError> {
    let Some(cap) = cap else {
        return Ok((blocks.len(), join_blocks(blocks.iter().map(|b| b.text.as_str()))));
    };
    // The joined text grows block by block and is counted for what each block adds (the join can
    // merge pieces across it, so a sum of block counts would not be exact).
    let mut text = CountedText::new(counter);
    for (n, block) in blocks.iter().enumerate() {
        let more = if n == 0 { block.text.clone() } else { format!("{PACK_BLOCK_SEPARATOR}{}", block.text) };
        // Too many bytes to fit even at the longest token per byte: refused without counting.
        if counter.min_tokens_for_bytes(text.len() + more.len()) > cap || text.try_push_str(&more, cap)?.is_none() {
            return Ok((n, text.into_string()));
        }
    }
    Ok((blocks.len(), text.into_string()))
}

/// Drops the oldest messages that free at least `excess` tokens (at least one message), keeping a
/// The error of an assembly that needs retriever `name` when none was registered nor given.
fn not_given(name: &str) -> EngineError {
    let issue = crate::validation::ConfigIssue::new(
        crate::codes::Code::EngineRetrieverNotRegistered,
        crate::validation::FieldPath::root().key("retrievers"),
        format!("retriever `{name}` has no implementation: none is registered and none was given to the assembly"),
    )
    .with_help("give one to `ContextAssembler::assemble_with`, or register it on the builder");
    EngineError::Config(crate::validation::ConfigIssues::new("context engine", vec![issue]))
}

/// tool call with its results and a leading system message: the history module's trim, to what
/// the history holds less `excess`. History messages are whole messages of the request, so what
/// they free is exactly what the request loses; the caller re-counts the whole all the same.
/// False when nothing could be dropped (only the system message is left).
fn trim_history(counter: &TokenCounter, history: &mut Vec<ChatMessage>, excess: usize) -> Result<bool, TokenError> {
    let held = crate::history::history_tokens(counter, history)?;
    let trim = crate::history::trim_after_system(history, held.saturating_sub(excess.max(1)), counter)?;
    let head = usize::from(trim.system_kept);
    history.drain(head.min(history.len())..trim.first_kept.min(history.len()));
    Ok(trim.removed > 0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tokens::Encoding;

    #[test]
    fn trim_history_frees_enough_and_keeps_tool_pairs_whole() {
        let counter = TokenCounter::for_encoding(Encoding::Cl100kBase);
        let call = crate::chat::ToolCall::new("c1", "f", "{}");
        let mut history = vec![
            ChatMessage::user("first question"),
            ChatMessage::assistant_tool_calls("", vec![call]),
            ChatMessage::tool_result("c1", "result"),
            ChatMessage::assistant("answer"),
        ];
        trim_history(&counter, &mut history, 1).unwrap();
        assert_eq!(history.len(), 3, "one message frees at least one token");
        trim_history(&counter, &mut history, 1).unwrap();
        assert_eq!(history, vec![ChatMessage::assistant("answer")], "the orphaned tool result goes with its call");
    }

    #[test]
    fn trim_history_keeps_a_leading_system_message_and_says_when_it_is_all_that_is_left() {
        let counter = TokenCounter::for_encoding(Encoding::Cl100kBase);
        let system = ChatMessage::system("Be brief.");
        let mut history = vec![system.clone(), ChatMessage::user("q"), ChatMessage::assistant("a")];
        assert!(trim_history(&counter, &mut history, 1).unwrap());
        assert_eq!(history, vec![system.clone(), ChatMessage::assistant("a")]);
        assert!(trim_history(&counter, &mut history, 1_000).unwrap());
        assert_eq!(history, vec![system.clone()]);
        assert!(!trim_history(&counter, &mut history, 1).unwrap(), "nothing left to drop: the caller shrinks packs");
        assert_eq!(history, vec![system]);
    }

    #[test]
    fn greedy_stops_at_the_first_block_that_does_not_fit() {
        let counter = TokenCounter::for_encoding(Encoding::Cl100kBase);
        let blocks: Vec<_> =
            ["one two", "three four five six seven", "eight"].iter().map(|t| ContextPackBlock::new(*t, *t)).collect();
        let (n, text) = greedy(&counter, &blocks, Some(4)).unwrap();
        assert_eq!((n, text.as_str()), (1, "one two"), "the short third block does not jump the queue");
        let (n, text) = greedy(&counter, &blocks, None).unwrap();
        assert_eq!((n, text), (3, "one two\n\nthree four five six seven\n\neight".to_owned()));
    }
}
