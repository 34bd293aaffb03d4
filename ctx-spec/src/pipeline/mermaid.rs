//! Diagrams of a pipeline: Mermaid (for docs and READMEs) and Graphviz DOT.
//!
//! Steps are drawn by kind (a loop_guard as a hexagon, manage_context_budget as a rhombus), the
//! `on_allow` edge of a loop_guard dotted (it is the edge that consumes a loop), and every
//! transition labelled with its key.

use std::fmt::Write;

use super::definition::{END, PipelineDef, StepKind};

fn node(i: usize) -> String {
    format!("s{i}")
}

fn target_node(def: &PipelineDef, target: &str) -> String {
    if target == END {
        return "stop".to_owned();
    }
    match def.steps.iter().position(|s| s.id == target) {
        Some(j) => node(j),
        None => format!(
            "missing_{}",
            target.chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '_' }).collect::<String>()
        ),
    }
}

/// `text` safe inside a quoted node label or a `|…|` edge label: a `|` would end an edge label.
fn mermaid_text(text: &str) -> String {
    text.replace('"', "#quot;").replace('<', "#lt;").replace('>', "#gt;").replace('|', "#124;")
}

/// A Mermaid flowchart of `def`.
///
/// ```
/// # use ctx::definition::*;
/// let def = PipelineDef::new("Demo").model(ModelSource::Inline(ModelSpec::default())).settings(SettingsSpec::default()).steps(vec![StepDef::new("search", StepKind::SearchNodes(SearchNodesSpec::new(5, "end")))]);
/// assert_eq!(to_mermaid(&def), "flowchart TD\n    s0[\"search<br/><i>search_nodes</i>\"]\n    stop(((end)))\n    s0 -->|next| stop\n");
/// ```
pub fn to_mermaid(def: &PipelineDef) -> String {
    let mut out = String::from("flowchart TD\n");
    for (i, step) in def.steps.iter().enumerate() {
        let label = format!("{}<br/><i>{}</i>", mermaid_text(&step.id), kind_label(&step.kind));
        let shape = match step.kind {
            StepKind::LoopGuard(_) => format!("{{{{\"{label}\"}}}}"),
            StepKind::ManageContextBudget(_) | StepKind::Custom(_) => format!("{{\"{label}\"}}"),
            _ => format!("[\"{label}\"]"),
        };
        let _ = writeln!(out, "    {}{shape}", node(i));
    }
    let _ = writeln!(out, "    stop(((end)))");
    let mut missing = Vec::new();
    for (i, step) in def.steps.iter().enumerate() {
        let guard = matches!(step.kind, StepKind::LoopGuard(_));
        for (key, target) in step.kind.transitions() {
            let to = target_node(def, target);
            if to.starts_with("missing_") && !missing.contains(&to) {
                let _ = writeln!(out, "    {to}[/\"? {}\"/]", mermaid_text(target));
                missing.push(to.clone());
            }
            let arrow = if guard && key == "on_allow" { "-.->" } else { "-->" };
            let _ = writeln!(out, "    {} {arrow}|{}| {to}", node(i), mermaid_text(key));
        }
    }
    out
}

/// The kind under a step's id; an agent's shows its bound on tool calls.
fn kind_label(kind: &StepKind) -> String {
    match kind {
        StepKind::Agent(a) => format!("agent, at most {} tool calls", a.max_tool_calls),
        other => other.keyword().to_owned(),
    }
}

fn dot_text(text: &str) -> String {
    text.replace('\\', "\\\\").replace('"', "\\\"")
}

/// A Graphviz DOT digraph of `def`.
pub fn to_dot(def: &PipelineDef) -> String {
    let mut out = format!("digraph \"{}\" {{\n    rankdir=TB;\n", dot_text(&def.name));
    for (i, step) in def.steps.iter().enumerate() {
        let shape = match step.kind {
            StepKind::LoopGuard(_) => "hexagon",
            StepKind::ManageContextBudget(_) | StepKind::Custom(_) => "diamond",
            _ => "box",
        };
        let _ = writeln!(
            out,
            "    {} [label=\"{}\\n{}\", shape={shape}];",
            node(i),
            dot_text(&step.id),
            kind_label(&step.kind)
        );
    }
    let _ = writeln!(out, "    stop [label=\"end\", shape=doublecircle];");
    for (i, step) in def.steps.iter().enumerate() {
        let guard = matches!(step.kind, StepKind::LoopGuard(_));
        for (key, target) in step.kind.transitions() {
            let to = target_node(def, target);
            let style = if guard && key == "on_allow" { ", style=dashed" } else { "" };
            let _ = writeln!(out, "    {} -> {to} [label=\"{}\"{style}];", node(i), dot_text(key));
        }
    }
    out.push_str("}\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pipeline::testing;

    #[test]
    fn the_compaction_loop_as_mermaid() {
        let m = to_mermaid(&testing::compaction_loop());
        let expected = "flowchart TD
    s0[\"search<br/><i>search_nodes</i>\"]
    s1[\"fetch<br/><i>fetch_node_texts</i>\"]
    s2{\"manage_budget<br/><i>manage_context_budget</i>\"}
    s3{{\"budget_loop_guard<br/><i>loop_guard</i>\"}}
    s4[\"summarize<br/><i>call_model</i>\"]
    s5[\"set_context_from_summary<br/><i>set_variables</i>\"]
    s6[\"answer<br/><i>call_model</i>\"]
    stop(((end)))
    s0 -->|next| s1
    s1 -->|next| s2
    s2 -->|on_ok| s6
    s2 -->|on_over| s3
    s3 -.->|on_allow| s4
    s3 -->|on_deny| s6
    s4 -->|next| s5
    s5 -->|next| s2
    s6 -->|next| stop
";
        assert_eq!(m, expected);
    }

    #[test]
    fn unknown_targets_and_odd_ids_are_drawn_safely() {
        let d = testing::def(vec![testing::search("a\"b", "nowhere here")]);
        let m = to_mermaid(&d);
        assert!(m.contains("s0[\"a#quot;b<br/><i>search_nodes</i>\"]"), "{m}");
        assert!(m.contains("missing_nowhere_here[/\"? nowhere here\"/]"), "{m}");
        assert!(m.contains("s0 -->|next| missing_nowhere_here"), "{m}");
        let dot = to_dot(&d);
        assert!(dot.contains("s0 [label=\"a\\\"b\\nsearch_nodes\", shape=box];"), "{dot}");
        // A custom outcome is a name from the caller: a `|` in it must not end the edge label.
        let d = testing::def(vec![testing::custom("route", &[("yes|no", "end")])]);
        assert!(to_mermaid(&d).contains("s0 -->|yes#124;no| stop"), "{}", to_mermaid(&d));
    }

    #[test]
    fn dot_marks_the_loop_edge() {
        let dot = to_dot(&testing::compaction_loop());
        assert!(dot.starts_with("digraph \"Test\" {"), "{dot}");
        assert!(dot.contains("s3 -> s4 [label=\"on_allow\", style=dashed];"), "{dot}");
        assert!(dot.contains("s6 -> stop [label=\"next\"];"), "{dot}");
        assert!(dot.ends_with("}\n"));
    }
}
