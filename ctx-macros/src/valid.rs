//! Validation at compile time: `ctx_spec`'s `validate_definition`, the rules YAML files and
//! `ctx check` run too, runs on the lowered definition, and each `ConfigIssue` becomes a compile
//! error under the token its path names. No pipeline rule is written here.

use ctx_spec::pipeline::PipelineDef;
use ctx_spec::validation::{ConfigIssue, FieldPath};

use crate::ctxt::Ctxt;
use crate::ctxt::{issue_message, with_help};
use crate::lower::Lowered;
use crate::spans::SpanMap;

/// Runs `ctx_spec`'s validation (with the compile-time token check when the window and the
/// prompts are literals) and reports each issue under its token.
pub(crate) fn check(cx: &Ctxt, lowered: &Lowered) {
    let issues = without_engine_echoes(rule_issues(&lowered.def));
    let valid = issues.is_empty();
    report(cx, &lowered.spans, lowered.graph_complete, issues);
    // What is valid but likely a mistake, only once nothing is wrong (a warning beside an error
    // would mostly follow from it): a variable read where some path has not set it, and data
    // declared or produced that nothing consumes (`DATAFLOW_*`). An `on_over` no single run can
    // take (`BUDGET_ON_OVER_NEVER_TAKEN`) is not warned here: it is the specification's own
    // compaction loop, right for a run whose caller seeds the context, and `ctx check`,
    // `ctx explain` and the loader's warnings already say it.
    if valid && !cx.has_errors() {
        for warning in ctx_spec::pipeline::definition_warnings(&lowered.def) {
            if !shown_at_compile_time(warning.code) || lowered.spans.is_poisoned(&warning.path) {
                continue;
            }
            let message = match &warning.help {
                Some(help) => with_help(&warning.message, help),
                None => warning.message.clone(),
            };
            cx.warn(lowered.spans.lookup(&warning.path).start, warning.code.as_str(), message);
        }
    }
}

/// Whether the macro shows a rule's warning of this code (see [`check`]).
pub(crate) fn shown_at_compile_time(code: ctx_spec::codes::Code) -> bool {
    code != ctx_spec::codes::Code::BudgetOnOverNeverTaken
}

/// `issues` less those of the `contexts` declarations that only echo another, by the rule
/// `context_engine!` applies to the same declarations (paths taken relative to `contexts`).
fn without_engine_echoes(issues: Vec<ConfigIssue>) -> Vec<ConfigIssue> {
    let prefix = FieldPath::root().key("contexts");
    let under = |i: &ConfigIssue| i.path.0.len() > 1 && i.path.0.first() == prefix.0.first();
    let relative: Vec<ConfigIssue> = issues
        .iter()
        .filter(|i| under(i))
        .map(|i| {
            let mut relative = i.clone();
            relative.path = FieldPath(i.path.0[1..].to_vec());
            relative
        })
        .collect();
    let kept = crate::companion::without_echoes(relative);
    issues
        .into_iter()
        .filter(|i| {
            !under(i)
                || kept.iter().any(|k| k.code == i.code && k.message == i.message && k.path.0[..] == i.path.0[1..])
        })
        .collect()
}

/// Every issue of `ctx_spec`'s rules for `def`.
fn rule_issues(def: &PipelineDef) -> Vec<ConfigIssue> {
    // Model files (`model { tokenizer: … }`) are read relative to the crate, as cargo paths are.
    let base_dir = std::env::var_os("CARGO_MANIFEST_DIR").map(std::path::PathBuf::from);
    let opts =
        ctx_spec::pipeline::ValidateOptions::default().check_tokens(true).env_limits_policy(None).base_dir(base_dir);
    ctx_spec::pipeline::validate_definition(def, &opts)
}

/// The Mermaid flowchart of `def`, as a string literal for the generated `MERMAID` constant.
pub(crate) fn mermaid(def: &PipelineDef) -> String {
    ctx_spec::pipeline::to_mermaid(def)
}

/// Reports `issues`, skipping those that only echo a syntax error already reported: an issue at
/// a value the lowering could not read, or a graph-wide one when a transition was lost.
fn report(cx: &Ctxt, spans: &SpanMap, graph_complete: bool, issues: Vec<ConfigIssue>) {
    for issue in issues {
        if spans.is_poisoned(&issue.path) {
            continue;
        }
        if !graph_complete && issue.code.follows_from_graph() {
            continue;
        }
        cx.error_range(spans.lookup(&issue.path), issue_message(&issue));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spans::{SpanRange, step_path};
    use ctx_spec::validation::FieldPath;
    use proc_macro2::Span;

    use ctx_spec::codes::Code;

    fn issue(code: Code, path: FieldPath) -> ConfigIssue {
        ConfigIssue::new(code, path, format!("{code} message")).with_help("do this")
    }

    fn reported(spans: &SpanMap, graph_complete: bool, issues: Vec<ConfigIssue>) -> Vec<String> {
        let cx = Ctxt::new();
        report(&cx, spans, graph_complete, issues);
        match cx.check() {
            Ok(()) => Vec::new(),
            Err(e) => e.into_iter().map(|e| e.to_string()).collect(),
        }
    }

    #[test]
    fn issues_become_errors_with_their_help() {
        let spans = SpanMap::new(SpanRange::single(Span::call_site()));
        let out = reported(&spans, true, vec![issue(Code::InvalidTopK, step_path(0).key("top_k"))]);
        assert_eq!(out, ["INVALID_TOP_K message [INVALID_TOP_K]\nhelp: do this"]);
    }

    #[test]
    fn echoes_of_syntax_errors_are_dropped() {
        let mut spans = SpanMap::new(SpanRange::single(Span::call_site()));
        spans.poison(&step_path(1).key("on_over"));
        let out = reported(
            &spans,
            false,
            vec![
                issue(Code::UnknownStepTarget, step_path(1).key("on_over")),
                issue(Code::UnreachableStep, step_path(2).key("id")),
                issue(Code::InvalidTopK, step_path(0).key("top_k")),
            ],
        );
        assert_eq!(out, ["INVALID_TOP_K message [INVALID_TOP_K]\nhelp: do this"]);
    }
}
