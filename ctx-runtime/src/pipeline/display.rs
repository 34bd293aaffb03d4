//! The budget trace as text: what a step did in one line ([`StepDetail`]'s and [`StepReport`]'s
//! `Display`), with the lines under it that say what happened to each node, message or tool call
//! (the alternate form, `{:#}`), and a whole run's steps as one numbered table ([`Trace`]).
//!
//! Every figure is one of the report's own; nothing is counted again. `{:#?}` stays the reports'
//! full `Debug`.

use std::fmt;

use crate::budget::{BudgetDecision, BudgetReport, NodeTrace};

use super::driver::StepReport;
use super::steps::{SkipReason, StepDetail, ToolCallKind};

/// How many names a line lists before it says how many more there are.
const SHOWN: usize = 3;

/// `a, b, c and 2 more` (`none` when empty).
fn some_of(names: &[String]) -> String {
    if names.is_empty() {
        return "none".to_owned();
    }
    let shown: Vec<&str> = names.iter().take(SHOWN).map(String::as_str).collect();
    let more = names.len().saturating_sub(SHOWN);
    if more > 0 { format!("{} and {more} more", shown.join(", ")) } else { shown.join(", ") }
}

impl fmt::Display for StepDetail {
    /// One line on what the step did, with its figures: `read 4 texts, 1800 of 1800 evidence
    /// tokens, 1 truncated; 3 skipped (2 after the budget was used up, 1 too large for what was
    /// left)`. With `{:#}`, one more line (indented by
    /// two spaces) per node a `manage_context_budget` step weighed, per history trim of a model
    /// step, per tool call of an agent turn.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StepDetail::SearchNodes { query, hits } => write!(f, "{hits} hits for \"{query}\"")?,
            StepDetail::ExpandDependencyTree { added } => {
                write!(f, "+{} dependency node(s): {}", added.len(), some_of(added))?;
            }
            StepDetail::FetchNodeTexts(r) => {
                write!(f, "read {} texts, {} of {} evidence tokens", r.fetched.len(), r.tokens, r.budget)?;
                if !r.truncated.is_empty() {
                    write!(f, ", {} truncated", r.truncated.len())?;
                }
                if !r.skipped.is_empty() {
                    let count = |why: fn(&SkipReason) -> bool| r.skipped.iter().filter(|k| why(&k.reason)).count();
                    let reasons: Vec<String> = [
                        (count(|w| matches!(w, SkipReason::BudgetExhausted)), "after the budget was used up"),
                        (count(|w| matches!(w, SkipReason::OverBudget { .. })), "too large for what was left"),
                        (count(|w| matches!(w, SkipReason::NotFound)), "not found"),
                        (count(|w| matches!(w, SkipReason::Empty)), "empty"),
                    ]
                    .into_iter()
                    .filter(|(n, _)| *n > 0)
                    .map(|(n, why)| format!("{n} {why}"))
                    .collect();
                    write!(f, "; {} skipped ({})", r.skipped.len(), reasons.join(", "))?;
                }
            }
            StepDetail::ManageContextBudget(r) => budget(f, r)?,
            StepDetail::CallModel(r) => {
                write!(
                    f,
                    "request {} + max_tokens {} = {} <= window {}; history {} msg(s), {} dropped; ",
                    r.request.prompt_tokens,
                    r.request.max_output_tokens,
                    r.request.prompt_tokens + r.request.max_output_tokens,
                    r.context_window,
                    r.history_messages,
                    r.history_removed,
                )?;
                let finish =
                    r.request.finish_reason.as_deref().map(|why| format!(" (finish: {why})")).unwrap_or_default();
                // The server's own count of the prompt shows how far its tokenizer is from ctx's.
                match r.request.usage {
                    Some(u) => write!(
                        f,
                        "reply {} tokens{finish}; the model counted {} prompt tokens",
                        u.completion_tokens, u.prompt_tokens
                    )?,
                    None => write!(f, "reply{finish}, no usage reported")?,
                }
                if f.alternate() {
                    if let Some(trim) = &r.history_trim {
                        write!(f, "\n  {trim}")?;
                    }
                    if r.request.negotiation.reduced {
                        write!(
                            f,
                            "\n  output limit {} -> {} (window - input - margin)",
                            r.request.negotiation.requested_max_tokens, r.request.negotiation.adjusted_max_tokens
                        )?;
                    }
                }
            }
            StepDetail::Agent(r) => {
                let end = r.end.describe();
                let prompt: Vec<String> = r.requests.iter().map(|q| q.request.prompt_tokens.to_string()).collect();
                write!(
                    f,
                    "{} request(s) (prompt {} tokens), {} tool call(s), {end}; history {} msg(s), {} dropped",
                    r.requests.len(),
                    prompt.join(", "),
                    r.tool_calls.len(),
                    r.history_messages,
                    r.history_removed,
                )?;
                if f.alternate() {
                    if let Some(trim) = &r.history_trim {
                        write!(f, "\n  {trim}")?;
                    }
                    for c in &r.tool_calls {
                        let what = match c.kind {
                            ToolCallKind::UnknownTool => "an unknown tool".to_owned(),
                            ToolCallKind::InvalidArguments => "arguments that did not fit".to_owned(),
                            _ => format!(
                                "{} tokens, {} document(s){}{}",
                                c.tokens,
                                c.documents_included.len(),
                                if c.duplicates_skipped.is_empty() {
                                    String::new()
                                } else {
                                    format!(", {} already in the turn", c.duplicates_skipped.len())
                                },
                                if c.truncated { ", cut to its room" } else { "" }
                            ),
                        };
                        write!(f, "\n  tool `{}` ({}): {what}", c.name, c.call_id)?;
                    }
                }
            }
            StepDetail::LoopGuard { count, limit, allowed: true } => write!(f, "allowed: pass {count} of {limit}")?,
            StepDetail::LoopGuard { limit, .. } => write!(f, "denied: all {limit} passes used")?,
            StepDetail::SetVariables { set } => write!(f, "set {}", set.join(", "))?,
            StepDetail::Custom { outcome } => write!(f, "outcome `{outcome}`")?,
        }
        Ok(())
    }
}

/// A `manage_context_budget` step: its decision with the counts, and with `{:#}` one line per node.
fn budget(f: &mut fmt::Formatter<'_>, r: &BudgetReport) -> fmt::Result {
    match r.decision {
        BudgetDecision::Ok => write!(
            f,
            "{} nodes appended ({} <= {}), {} tokens saved by compaction",
            r.nodes.len(),
            r.candidate_tokens,
            r.max_context_tokens,
            r.tokens_saved()
        )?,
        BudgetDecision::Over => write!(
            f,
            "{} nodes refused ({} > {}), context and nodes kept for a retry",
            r.nodes.len(),
            r.candidate_tokens,
            r.max_context_tokens
        )?,
    }
    if f.alternate() {
        for n in &r.nodes {
            write!(f, "\n  {}", node_line(n, r.decision))?;
        }
    }
    Ok(())
}

/// `+ src/Total.cs [dotnet] compacted (always): 755 -> 437 tokens` (`x` for a refused batch).
fn node_line(n: &NodeTrace, decision: BudgetDecision) -> String {
    let mark = match decision {
        BudgetDecision::Ok => '+',
        BudgetDecision::Over => 'x',
    };
    let how = match (&n.rule, n.compacted) {
        (Some(rule), true) => {
            format!("compacted ({}): {} -> {} tokens", rule.policy.name(), n.tokens_before, n.tokens_after)
        }
        (Some(rule), false) => {
            format!("rule {} fired, nothing to compact: {} tokens", rule.policy.name(), n.tokens_before)
        }
        (None, _) => format!("as is: {} tokens", n.tokens_before),
    };
    format!("{mark} {} [{}] {how}", n.id, n.language)
}

impl fmt::Display for StepReport {
    /// `fetch (fetch_node_texts) next -> manage_budget: read 4 texts, …`; with `{:#}`, the
    /// detail's own lines under it.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({}) {} -> {}: ", self.step_id, self.kind, self.transition_key, self.target_id)?;
        if f.alternate() { write!(f, "{:#}", self.detail) } else { write!(f, "{}", self.detail) }
    }
}

impl StepReport {
    /// The budget trace of a run whose steps returned `reports` (as `run`, `resume` and a
    /// conversation's answers give them): one numbered line per step, with what happened to each
    /// node, trimmed history and tool call under it. `println!("{}", StepReport::trace(&reports))`.
    pub fn trace(reports: &[StepReport]) -> Trace<'_> {
        Trace { reports }
    }
}

/// A run's steps as a table, from [`StepReport::trace`]:
///
/// ```text
///   #  step    transition         what happened
///   1  search  next -> fetch      3 hits for "How is the total computed?"
///   2  fetch   next -> answer     read 3 texts, 912 of 1000 evidence tokens
///   3  answer  next -> end        request 1104 + max_tokens 256 = 1360 <= window 8192; …
/// ```
#[derive(Debug, Clone, Copy)]
pub struct Trace<'a> {
    reports: &'a [StepReport],
}

impl fmt::Display for Trace<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let transition = |r: &StepReport| format!("{} -> {}", r.transition_key, r.target_id);
        let step_width = self.reports.iter().map(|r| r.step_id.chars().count()).max().unwrap_or(0).max(4);
        let to_width = self.reports.iter().map(|r| transition(r).chars().count()).max().unwrap_or(0).max(10);
        let number_width = self.reports.len().to_string().len().max(3);
        writeln!(f, "{:>number_width$}  {:<step_width$}  {:<to_width$}  what happened", "#", "step", "transition")?;
        let indent = number_width + step_width + to_width + 6;
        for (i, r) in self.reports.iter().enumerate() {
            let detail = format!("{:#}", r.detail);
            let mut lines = detail.lines();
            writeln!(
                f,
                "{:>number_width$}  {:<step_width$}  {:<to_width$}  {}",
                i + 1,
                r.step_id,
                transition(r),
                lines.next().unwrap_or("")
            )?;
            for line in lines {
                writeln!(f, "{:indent$}{}", "", line.trim_start())?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use crate::chat::ChatMessage;
    use crate::llm::offline::OfflineModel;
    use crate::pipeline::definition::StepKind;
    use crate::pipeline::{StepDetail, StepEnv, StepReport, testing};
    use crate::state::PipelineState;

    #[tokio::test]
    async fn the_trace_is_one_line_a_step_with_the_reports_own_figures() {
        let mut def = testing::def(vec![testing::call("answer", "answer", "end")]);
        let StepKind::CallModel(spec) = &mut def.steps[0].kind else { unreachable!() };
        spec.use_history = true;
        let p = testing::loaded(def);
        let mut state = PipelineState::new("Why is it higher?");
        let old = "An earlier answer about invoices and their totals. ".repeat(30);
        for i in 0..12 {
            state.history_dialog.push(ChatMessage::user(format!("question {i}")));
            state.history_dialog.push(ChatMessage::assistant(old.clone()));
        }
        let model = OfflineModel::new(p.counter().clone());
        let (_, reports) = p.run(state, &StepEnv::builder().model(&model)).await.unwrap();
        let StepDetail::CallModel(call) = &reports[0].detail else { panic!("{reports:?}") };
        let usage = call.request.usage.expect("the offline model reports its usage");
        let line = format!(
            "request {} + max_tokens {} = {} <= window {}; history {} msg(s), {} dropped; reply {} tokens{}; the model \
             counted {} prompt tokens",
            call.request.prompt_tokens,
            call.request.max_output_tokens,
            call.request.prompt_tokens + call.request.max_output_tokens,
            call.context_window,
            call.history_messages,
            call.history_removed,
            usage.completion_tokens,
            call.request.finish_reason.as_deref().map(|f| format!(" (finish: {f})")).unwrap_or_default(),
            usage.prompt_tokens,
        );
        assert_eq!(reports[0].detail.to_string(), line);
        assert_eq!(reports[0].to_string(), format!("answer (call_model) next -> end: {line}"));
        // The alternate form adds what the history trim dropped, on its own line.
        let trim = call.history_trim.as_ref().expect("a trimmed history");
        assert_eq!(format!("{:#}", reports[0].detail), format!("{line}\n  {trim}"));

        let trace = StepReport::trace(&reports).to_string();
        let lines: Vec<&str> = trace.lines().collect();
        assert_eq!(lines.len(), 3, "{trace}");
        assert!(lines[0].ends_with("what happened") && lines[0].trim_start().starts_with("#  step"), "{trace}");
        assert!(lines[1].trim_start().starts_with("1  answer  next -> end") && lines[1].ends_with(&line), "{trace}");
        assert_eq!(lines[2].trim_start(), trim.to_string());
        let column = lines[1].find("request").unwrap();
        assert_eq!(lines[2].len() - lines[2].trim_start().len(), column, "details sit under what happened");
    }
}
