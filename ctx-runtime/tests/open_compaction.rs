//! Compaction rules that name the built-in prose compactors or a user's, and a pipeline's own
//! node frame: through the budget action and through a loaded pipeline.

use ctx_runtime::ErrorCode;
use ctx_runtime::budget::{
    BudgetDecision, BudgetError, BudgetOptions, NodeFrame, manage_context_budget_with, validate_manage_budget_with,
};
use std::borrow::Cow;

use ctx_runtime::compact::{CompactError, CompactRequest, Compactor, CompactorRegistry, FnCompactor, TruncateAfter};
use ctx_runtime::pipeline::{
    CompactRuleSpec, ManageBudgetSpec, ModelSource, ModelSpec, PipelineDef, SettingsSpec, StepDef, StepKind,
};
use ctx_runtime::pipeline::{LoadOptions, LoadedPipeline};
use ctx_runtime::state::{NodeText, PipelineState};
use ctx_runtime::tokens::{Encoding, TokenCounter};
use ctx_runtime::validation::FieldPath;

/// INI files without comment lines.
struct Ini;

impl Compactor for Ini {
    fn compact<'t>(&self, request: &CompactRequest<'t>) -> Result<Cow<'t, str>, CompactError> {
        Ok(Cow::Owned(request.text.lines().filter(|l| !l.starts_with(';')).map(|l| format!("{l}\n")).collect()))
    }
    fn applies_to(&self, node: &NodeText) -> bool {
        node.source().is_some_and(|p| p.ends_with(".ini"))
    }
}

fn rule(language: &str) -> CompactRuleSpec {
    CompactRuleSpec::new(language, "always")
}

fn budget_spec(languages: &[&str]) -> ManageBudgetSpec {
    ManageBudgetSpec::new("end", "end").compact_code(languages.iter().map(|l| rule(l)).collect())
}

#[test]
fn markdown_json_and_user_nodes_are_compacted_in_the_pipeline_frame() {
    let declared = vec!["ini".to_owned()];
    let cfg = validate_manage_budget_with(
        &budget_spec(&["markdown", "json", "ini"]),
        &FieldPath::parse("steps[0]"),
        &declared,
    )
    .expect("valid");
    let options =
        BudgetOptions::default().compactors(CompactorRegistry::new().with("ini", Ini).expect("registered")).frame(
            NodeFrame::parse("<doc id=\"{id}\" language=\"{language}\" compact=\"{compact}\">\n{text}\n</doc>")
                .expect("frame"),
        );
    let counter = TokenCounter::for_encoding(Encoding::Cl100kBase);
    let mut state = PipelineState::new("q");
    state.node_texts = vec![
        NodeText::new("guide", "# Guide   \n\n\n\nText.\n```\nkeep   \n\n\n```\n").with_path("docs/guide.md"),
        NodeText::new("cfg", "{\n  \"b\": 1,\n  \"a\": [1, 2]\n}\n").with_path("cfg.json"),
        NodeText::new("app", "; comment\n[app]\nport=1\n").with_path("app.ini"),
        NodeText::new("py", "x  =  1\n\n\n\ny = 2\n").with_path("main.py"),
    ];
    let report = manage_context_budget_with("m", &cfg, 9_000, &mut state, &counter, &options).expect("budget");
    assert_eq!(report.decision, BudgetDecision::Ok);
    assert_eq!(
        state.context_blocks,
        [
            "<doc id=\"guide\" language=\"markdown\" compact=\"true\">\n# Guide\n\nText.\n```\nkeep   \n\n\n```\n\n</doc>",
            "<doc id=\"cfg\" language=\"json\" compact=\"true\">\n{\"b\":1,\"a\":[1,2]}\n</doc>",
            "<doc id=\"app\" language=\"ini\" compact=\"true\">\n[app]\nport=1\n\n</doc>",
            "<doc id=\"py\" language=\"unknown\" compact=\"false\">\nx  =  1\n\n\n\ny = 2\n\n</doc>",
        ]
    );
    let names: Vec<&str> = report.nodes.iter().map(|n| n.language.as_str()).collect();
    assert_eq!(names, ["markdown", "json", "ini", "unknown"]);
    // Counts are of the framed text: the candidate is exactly the rendered context.
    let rendered = ctx_runtime::state::render_context_blocks(&state.context_blocks);
    assert_eq!(report.candidate_tokens, counter.count(&rendered).unwrap());
}

#[test]
fn a_failing_user_compactor_is_a_typed_error_and_the_state_is_unchanged() {
    let declared = vec!["ini".to_owned()];
    let cfg =
        validate_manage_budget_with(&budget_spec(&["ini"]), &FieldPath::parse("steps[0]"), &declared).expect("valid");
    let broken = FnCompactor::new(|r: &CompactRequest<'_>| Err(CompactError::Other(format!("cannot read {}", r.id))));
    let options = BudgetOptions::default()
        .compactors(CompactorRegistry::new().with("ini", TruncateAfter(std::sync::Arc::new(Failing(broken)))).unwrap());
    let counter = TokenCounter::for_encoding(Encoding::Cl100kBase);
    let mut state = PipelineState::new("q");
    state.node_texts = vec![NodeText::new("app", "; comment\n[app]\n").with_path("app.ini")];
    let before = state.clone();
    let err = manage_context_budget_with("m", &cfg, 9_000, &mut state, &counter, &options).unwrap_err();
    assert!(
        matches!(&err, BudgetError::Compactor { step_id, node_id, compactor, .. }
            if step_id == "m" && node_id == "app" && compactor == "ini"),
        "{err:?}"
    );
    assert_eq!(err.code(), "COMPACTOR_FAILED");
    assert!(err.to_string().contains("cannot read app"), "{err}");
    assert_eq!(state, before);
}

/// A compactor that claims `.ini` nodes and fails on them.
struct Failing<C>(C);

impl<C: Compactor> Compactor for Failing<C> {
    fn compact<'t>(&self, request: &CompactRequest<'t>) -> Result<Cow<'t, str>, CompactError> {
        self.0.compact(request)
    }
    fn applies_to(&self, node: &NodeText) -> bool {
        node.source().is_some_and(|p| p.ends_with(".ini"))
    }
}

#[test]
fn an_undeclared_language_is_an_error_with_the_builtins_listed() {
    let issues =
        validate_manage_budget_with(&budget_spec(&["markdwn"]), &FieldPath::parse("steps[0]"), &[]).unwrap_err();
    let text = issues[0].to_string();
    assert!(text.contains("unknown compaction language `markdwn`"), "{text}");
    assert!(
        text.contains("`sql`, `dotnet`, `markdown`, `text`, `json`") && text.contains("did you mean `markdown`?"),
        "{text}"
    );
}

fn def(settings: SettingsSpec) -> PipelineDef {
    PipelineDef::new("Docs")
        .model(ModelSource::Inline(
            ModelSpec::default().context_window(Some(8_192)).max_tokens(Some(512)).encoding(Some("cl100k_base".into())),
        ))
        .settings(settings)
        .steps(vec![StepDef::new("m", StepKind::ManageContextBudget(budget_spec(&["ini", "markdown"])))])
}

#[test]
fn a_declared_compactor_must_be_registered_and_a_frame_must_hold_the_text() {
    let settings = SettingsSpec::default()
        .max_context_tokens(Some(4_000))
        .compactors(vec!["ini".into()])
        .node_frame(Some("[{id}]\n{text}".into()));
    let err = LoadedPipeline::load(def(settings.clone()), LoadOptions::new()).unwrap_err();
    assert_eq!(err.code(), "COMPACTOR_NOT_REGISTERED");
    assert!(
        err.to_string().contains("compactor language `ini` is declared but no compactor for it was registered"),
        "{err}"
    );
    let loaded =
        LoadedPipeline::load(def(settings.clone()), LoadOptions::new().compactor("ini", Ini).unwrap()).expect("loads");
    assert_eq!(loaded.budget_options().frame.template(), Some("[{id}]\n{text}"));
    assert_eq!(loaded.budget_options().compactors.user_names().collect::<Vec<_>>(), ["ini"]);

    let bad_frame = settings.node_frame(Some("[{id}] {body}".into()));
    let err = LoadedPipeline::load(def(bad_frame), LoadOptions::new().compactor("ini", Ini).unwrap()).unwrap_err();
    assert!(err.to_string().contains("unknown placeholder `{body}`"), "{err}");
    assert!(err.to_string().contains("settings.node_frame"), "{err}");
}
