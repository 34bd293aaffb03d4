//! The `manage_context_budget` action itself.

use crate::codes::Code;
use crate::compact::{CompactError, Compacted, CompactorRegistry, NodeLanguage};
use crate::state::{InboxMessage, NodeText, PipelineState, render_context_blocks};
use crate::tokens::TokenCounter;
use crate::tokens::TokenError;

use super::error::BudgetError;
use super::prefix::Prefix;
use super::report::{AppliedRule, BudgetDecision, BudgetReport, NodeTrace};
use ctx_spec::budget::NodeFrame;
use ctx_spec::budget::{CompactPolicy, ManageBudgetConfig, RuleLanguage};

/// Decides whether the retrieved `state.node_texts` join `state.context_blocks` within
/// `max_context_tokens`, compacting nodes by the rules of `cfg` (see the [module
/// documentation](super) for every rule of the decision).
///
/// The caller consumes the step's inbox (`state.consume_inbox(step_id)`) before calling, and
/// follows [`BudgetDecision::target`]. On `Ok` the formatted nodes (after the divider, if any) are
/// appended and `node_texts` is cleared; on `Over` the context and `node_texts` are untouched and
/// the consumed demand messages are put back in the inbox. On error the state is unchanged.
///
/// ```
/// use ctx::budget::{BudgetDecision, manage_context_budget, validate_manage_budget};
/// use ctx::definition::{CompactRuleSpec, ManageBudgetSpec};
/// use ctx::state::{NodeText, PipelineState};
/// use ctx::tokens::{Encoding, TokenCounter};
/// use ctx::FieldPath;
///
/// let always_sql = CompactRuleSpec::new("sql", "always");
/// let spec = ManageBudgetSpec::new("answer", "summarize")
///     .compact_code(vec![always_sql])
///     .divide_new_content(Some("<<<New content".into()));
/// let cfg = validate_manage_budget(&spec, &FieldPath::parse("steps[2]")).unwrap();
///
/// let mut state = PipelineState::new("How is the invoice total computed?");
/// let sql = "SELECT SUM(NetAmount)   -- per invoice\n  FROM dbo.InvoiceLines;";
/// state.node_texts.push(NodeText::new("usp_Total", sql).with_path("sql/usp_Total.sql"));
/// state.consume_inbox("manage_budget");
/// let counter = TokenCounter::for_encoding(Encoding::Cl100kBase);
/// let report = manage_context_budget("manage_budget", &cfg, 9_000, &mut state, &counter).unwrap();
///
/// assert_eq!(report.decision, BudgetDecision::Ok);
/// assert_eq!(report.decision.target(&cfg), "answer");
/// assert_eq!(state.context_blocks, [
///     "<<<New content",
///     "--- NODE ---\nid: usp_Total\npath: sql/usp_Total.sql\nlanguage: sql\ncompact: true\ntext:\nSELECT SUM(NetAmount)\nFROM dbo.InvoiceLines;",
/// ]);
/// assert!(state.node_texts.is_empty());
/// ```
pub fn manage_context_budget(
    step_id: &str,
    cfg: &ManageBudgetConfig,
    max_context_tokens: usize,
    state: &mut PipelineState,
    counter: &TokenCounter,
) -> Result<BudgetReport, BudgetError> {
    manage_context_budget_with(step_id, cfg, max_context_tokens, state, counter, &BudgetOptions::default())
}

/// What a pipeline adds to a `manage_context_budget` step beyond its rules: the user compactors
/// its rules may name and the frame nodes are wrapped in. The default has no user compactor and
/// the spec's `--- NODE ---` frame.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct BudgetOptions {
    /// The user compactors.
    pub compactors: CompactorRegistry,
    /// The node frame.
    pub frame: NodeFrame,
}

ctx_spec::setters!(BudgetOptions { compactors: CompactorRegistry, frame: NodeFrame });

/// [`manage_context_budget`] with user compactors and a node frame. Every count is of the
/// framed text, whatever the frame.
///
/// ```
/// use ctx::budget::{BudgetOptions, NodeFrame, manage_context_budget_with, validate_manage_budget};
/// use ctx::definition::{CompactRuleSpec, ManageBudgetSpec};
/// use ctx::state::{NodeText, PipelineState};
/// use ctx::{Encoding, FieldPath, TokenCounter};
///
/// // Nodes framed as XML-like elements instead of the `--- NODE ---` header (user compactors
/// // are registered on `BudgetOptions::compactors`: see `ctx::compact::Compactor`).
/// let options = BudgetOptions::default().frame(NodeFrame::parse("<doc id=\"{id}\" language=\"{language}\">\n{text}\n</doc>")?);
/// let spec = ManageBudgetSpec::new("answer", "summarize").compact_code(vec![CompactRuleSpec::new("sql", "always")]);
/// let cfg = validate_manage_budget(&spec, &FieldPath::parse("steps[2]")).unwrap();
///
/// let mut state = PipelineState::new("How is the invoice total computed?");
/// let sql = "SELECT SUM(NetAmount)   -- per invoice\n  FROM dbo.InvoiceLines;";
/// state.node_texts.push(NodeText::new("usp_Total", sql).with_path("sql/usp_Total.sql"));
/// state.consume_inbox("manage_budget");
/// let counter = TokenCounter::for_encoding(Encoding::Cl100kBase);
/// manage_context_budget_with("manage_budget", &cfg, 9_000, &mut state, &counter, &options)?;
/// assert_eq!(state.context_blocks, [
///     "<doc id=\"usp_Total\" language=\"sql\">\nSELECT SUM(NetAmount)\nFROM dbo.InvoiceLines;\n</doc>",
/// ]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn manage_context_budget_with(
    step_id: &str,
    cfg: &ManageBudgetConfig,
    max_context_tokens: usize,
    state: &mut PipelineState,
    counter: &TokenCounter,
    options: &BudgetOptions,
) -> Result<BudgetReport, BudgetError> {
    let token_error = |source: TokenError| BudgetError::Token { step_id: step_id.to_owned(), source };
    if max_context_tokens == 0 {
        return Err(BudgetError::NoBudget { step_id: step_id.to_owned() });
    }
    let demand_messages: Vec<InboxMessage> = state
        .inbox_last_consumed
        .iter()
        .filter(|m| m.target_step_id == step_id && cfg.demand_keys().any(|k| k == m.topic))
        .cloned()
        .collect();
    let mut demands: Vec<String> = Vec::new();
    for key in cfg.demand_keys() {
        if demand_messages.iter().any(|m| m.topic == key) && !demands.iter().any(|d| d == key) {
            demands.push(key.to_owned());
        }
    }

    let existing = render_context_blocks(&state.context_blocks);
    let context_tokens_before = counter.count(&existing).map_err(token_error)?;
    let has_threshold = cfg.rules().iter().any(|r| matches!(r.policy, CompactPolicy::Threshold { .. }));
    let mut rendered =
        Prefix::new(existing, state.context_blocks.len(), counter, has_threshold).map_err(token_error)?;
    let divider = if state.node_texts.is_empty() { None } else { cfg.divide_new_content().map(str::to_owned) };
    let mut appended: Vec<String> = Vec::with_capacity(state.node_texts.len() + 1);
    if let Some(d) = &divider {
        rendered.push(d).map_err(token_error)?;
        appended.push(d.clone());
    }
    let mut planned = Vec::with_capacity(state.node_texts.len());
    for node in &state.node_texts {
        let plan = plan_node(step_id, node, cfg, options, &demands, max_context_tokens, &mut rendered, counter)?;
        rendered.push(&plan.block).map_err(token_error)?;
        appended.push(plan.block.clone());
        planned.push(plan);
    }

    // The decision is taken on the context exactly as it will be rendered.
    let mut new_blocks = Vec::with_capacity(state.context_blocks.len() + appended.len());
    new_blocks.extend(state.context_blocks.iter().cloned());
    new_blocks.extend(appended);
    let candidate = render_context_blocks(&new_blocks);
    debug_assert_eq!(candidate, rendered.text(), "incremental rendering diverged from render_context_blocks");
    let candidate_tokens = counter.count(&candidate).map_err(token_error)?;
    let nodes: Vec<NodeTrace> = planned.iter().map(|p| p.trace.clone()).collect();

    if candidate_tokens <= max_context_tokens {
        let report = BudgetReport {
            step_id: step_id.to_owned(),
            decision: BudgetDecision::Ok,
            max_context_tokens,
            context_tokens_before,
            candidate_tokens,
            context_tokens_after: candidate_tokens,
            divider,
            nodes,
            demands,
            reenqueued: Vec::new(),
        };
        state.context_blocks = new_blocks;
        state.node_texts.clear();
        report.emit();
        return Ok(report);
    }

    // Over budget. If the batch could not fit even into an empty context with every rule of
    // its languages applied, compacting the existing context cannot help: the limits are wrong.
    let mut alone = Vec::with_capacity(planned.len() + 1);
    alone.extend(divider.clone());
    for (node, plan) in state.node_texts.iter().zip(&planned) {
        alone.push(most_compact_block(step_id, node, plan, cfg, options, counter)?);
    }
    let alone = render_context_blocks(&alone);
    if !counter.fits(&alone, max_context_tokens).map_err(token_error)? {
        let error = BudgetError::Misconfig {
            step_id: step_id.to_owned(),
            nodes: state.node_texts.len(),
            retrieval_tokens: counter.count(&alone).map_err(token_error)?,
            max_context_tokens,
        };
        tracing::error!(
            target: "ctx::budget",
            event_type = "MANAGE_CONTEXT_BUDGET",
            step_id,
            decision = "error",
            code = Code::PipelineBudgetMisconfig.as_str(),
            max_context_tokens,
            context_tokens_before,
            candidate_tokens,
            "{error}"
        );
        return Err(error);
    }
    let report = BudgetReport {
        step_id: step_id.to_owned(),
        decision: BudgetDecision::Over,
        max_context_tokens,
        context_tokens_before,
        candidate_tokens,
        context_tokens_after: context_tokens_before,
        divider: None,
        nodes,
        demands,
        reenqueued: demand_messages.clone(),
    };
    // Demands were consumed on entry; they must survive the retry.
    state.inbox.extend(demand_messages);
    report.emit();
    Ok(report)
}

struct Plan {
    language: NodeLanguage,
    block: String,
    trace: NodeTrace,
}

/// `node` compacted by the compactor of `language`, its failure named after the step and node.
fn compact_node(
    step_id: &str,
    options: &BudgetOptions,
    language: &NodeLanguage,
    node: &NodeText,
    counter: &TokenCounter,
) -> Result<Compacted, BudgetError> {
    options.compactors.compact(language, node, counter).map_err(|source| match source {
        CompactError::Token(source) => BudgetError::Token { step_id: step_id.to_owned(), source },
        source => BudgetError::Compactor {
            step_id: step_id.to_owned(),
            node_id: node.id.clone(),
            compactor: language.name().to_owned(),
            source: Box::new(source),
        },
    })
}

#[allow(clippy::too_many_arguments)] // the step's inputs, each read once; a struct would only rename them
fn plan_node(
    step_id: &str,
    node: &NodeText,
    cfg: &ManageBudgetConfig,
    options: &BudgetOptions,
    demands: &[String],
    max_context_tokens: usize,
    rendered: &mut Prefix<'_>,
    counter: &TokenCounter,
) -> Result<Plan, BudgetError> {
    let token_error = |source: TokenError| BudgetError::Token { step_id: step_id.to_owned(), source };
    let language = options.compactors.language_of(node);
    let raw = options.frame.render(node, language.name(), false, &node.text);
    let rule = match RuleLanguage::of(&language) {
        Some(rule_language) => {
            first_firing_rule(cfg, &rule_language, demands, max_context_tokens, rendered, &raw).map_err(token_error)?
        }
        None => None,
    };
    let (block, compacted, tokens_before, tokens_after) = match rule {
        Some(_) => {
            let c = compact_node(step_id, options, &language, node, counter)?;
            if c.changed {
                (options.frame.render(node, language.name(), true, &c.text), true, c.tokens_before, c.tokens_after)
            } else {
                (raw, false, c.tokens_before, c.tokens_after)
            }
        }
        None => {
            let n = counter.count(&node.text).map_err(token_error)?;
            (raw, false, n, n)
        }
    };
    let trace = NodeTrace {
        id: node.id.clone(),
        source: node.source().map(str::to_owned),
        language: language.name().to_owned(),
        code: match language {
            NodeLanguage::Code(code) => Some(code),
            _ => None,
        },
        rule,
        compacted,
        tokens_before,
        tokens_after,
    };
    Ok(Plan { language, block, trace })
}

/// The first rule of the node's language whose policy fires. A rule that does not fire passes
/// the node on to the next rule of its language.
fn first_firing_rule(
    cfg: &ManageBudgetConfig,
    language: &RuleLanguage,
    demands: &[String],
    max_context_tokens: usize,
    rendered: &mut Prefix<'_>,
    raw_block: &str,
) -> Result<Option<AppliedRule>, TokenError> {
    for (index, rule) in cfg.rules_for(language) {
        let fires = match &rule.policy {
            CompactPolicy::Always => true,
            CompactPolicy::Demand { inbox_key } => demands.iter().any(|d| d == inbox_key),
            CompactPolicy::Threshold { fraction } => {
                let trigger = threshold_tokens(*fraction, max_context_tokens);
                rendered.exceeds_with(raw_block, trigger)?
            }
        };
        if fires {
            return Ok(Some(AppliedRule { index, policy: rule.policy.kind() }));
        }
    }
    Ok(None)
}

/// `⌊fraction × max⌋`, the largest token count that does not exceed the trigger. The product is
/// nudged up by a relative 1e-12 before flooring so that a decimal threshold gives the integer a
/// person expects: `0.29` is stored as 0.28999…, and 0.29 × 100 must be 29, not 28.
pub(crate) fn threshold_tokens(fraction: f64, max_context_tokens: usize) -> usize {
    let exact = fraction * max_context_tokens as f64;
    let nudged = exact + exact.abs() * 1e-12;
    // The cast saturates; `fraction` is at most 1, so the result never exceeds the budget.
    (nudged.floor() as usize).min(max_context_tokens)
}

/// The node's block with every rule of its language applied: compacted when any rule could
/// compact it, as planned otherwise.
fn most_compact_block(
    step_id: &str,
    node: &NodeText,
    plan: &Plan,
    cfg: &ManageBudgetConfig,
    options: &BudgetOptions,
    counter: &TokenCounter,
) -> Result<String, BudgetError> {
    let has_rule = RuleLanguage::of(&plan.language).is_some_and(|l| cfg.rules_for(&l).next().is_some());
    if plan.trace.compacted || !has_rule {
        return Ok(plan.block.clone());
    }
    let c = compact_node(step_id, options, &plan.language, node, counter)?;
    Ok(if c.changed { options.frame.render(node, plan.language.name(), true, &c.text) } else { plan.block.clone() })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trigger_is_the_integer_people_expect() {
        assert_eq!(threshold_tokens(0.4, 5000), 2000);
        assert_eq!(threshold_tokens(0.29, 100), 29);
        assert_eq!(threshold_tokens(0.7, 10), 7);
        assert_eq!(threshold_tokens(1.0, 9000), 9000);
        assert_eq!(threshold_tokens(0.001, 10), 0);
        assert_eq!(threshold_tokens(0.333, 1000), 333);
    }
}
