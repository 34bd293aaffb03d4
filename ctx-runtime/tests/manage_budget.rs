//! `manage_context_budget`, one test per behaviour of the spec (manage_context_budget.md) and per
//! common failure mode.

use std::sync::{Arc, Mutex};

use ctx_runtime::budget::{
    BudgetDecision, BudgetError, ManageBudgetConfig, PolicyKind, format_node, manage_context_budget,
    validate_manage_budget,
};
use ctx_runtime::classify::Language;
use ctx_runtime::error::{CtxError, ErrorCode, TokenError};
use ctx_runtime::pipeline::{CompactRuleSpec, ManageBudgetSpec};
use ctx_runtime::state::{InboxMessage, NodeText, PipelineState, render_context_blocks};
use ctx_runtime::tokens::{ChatFormat, Encoding, TokenCounter, TokenizerBackend};
use ctx_runtime::validation::FieldPath;

const STEP: &str = "manage_budget";

const SQL: &str = "-- Totals of one invoice.\nCREATE PROCEDURE dbo.usp_Total\n    @InvoiceId INT\nAS\nBEGIN\n    /* rounded per rate */\n    SELECT SUM(NetAmount) AS Net\n    FROM   dbo.vw_InvoiceLineAmounts\n    WHERE  InvoiceId = @InvoiceId;   -- one invoice\nEND;\nGO\n";
const CSHARP: &str = "namespace Invoicing;\n\n/// <summary>Rounds money.</summary>\npublic static class Money\n{\n    // Half away from zero, like T-SQL.\n    public static decimal Round(decimal x) =>\n        Math.Round(x, 2, MidpointRounding.AwayFromZero);\n}\n";
const PROSE: &str = "The invoice total is the sum of the net amounts plus the tax, which is rounded once per rate.";

fn counter() -> TokenCounter {
    TokenCounter::for_encoding(Encoding::Cl100kBase)
}

fn rule(language: &str, policy: &str, threshold: Option<f64>, inbox_key: Option<&str>) -> CompactRuleSpec {
    CompactRuleSpec::new(language, policy).threshold(threshold).inbox_key(inbox_key.map(Into::into))
}

fn config(rules: Vec<CompactRuleSpec>, divider: Option<&str>) -> ManageBudgetConfig {
    let spec = ManageBudgetSpec::new("call_model_answer", "call_summarize_context")
        .compact_code(rules)
        .divide_new_content(divider.map(Into::into));
    validate_manage_budget(&spec, &FieldPath::parse("steps[3]")).expect("valid configuration")
}

fn nodes() -> Vec<NodeText> {
    vec![
        NodeText::new("usp_Total", SQL).with_path("sql/usp_Total.sql"),
        NodeText::new("Money", CSHARP).with_path("src/Money.cs"),
        NodeText::new("readme", PROSE),
    ]
}

fn state_with(context: &[&str], nodes: Vec<NodeText>) -> PipelineState {
    let mut s = PipelineState::new("How is the invoice total computed?");
    s.context_blocks = context.iter().map(|c| (*c).to_owned()).collect();
    s.node_texts = nodes;
    s
}

fn tokens(text: &str) -> usize {
    counter().count(text).unwrap()
}

/// What the context would render to with `blocks` appended.
fn rendered_with(state: &PipelineState, blocks: &[String]) -> String {
    let mut all = state.context_blocks.clone();
    all.extend_from_slice(blocks);
    render_context_blocks(&all)
}

fn raw_blocks(nodes: &[NodeText]) -> Vec<String> {
    nodes.iter().map(|n| format_node(n, ctx_runtime::classify::classify(&n.text, n.source()), false, &n.text)).collect()
}

const BIG: usize = 1_000_000;

#[test]
fn on_ok_appends_the_formatted_nodes_and_clears_node_texts() {
    let cfg = config(vec![], None);
    let mut state = state_with(&["Earlier context."], nodes());
    let report = manage_context_budget(STEP, &cfg, BIG, &mut state, &counter()).unwrap();
    assert_eq!(report.decision, BudgetDecision::Ok);
    assert_eq!(report.decision.target(&cfg), "call_model_answer");
    let mut expected = vec!["Earlier context.".to_owned()];
    expected.extend(raw_blocks(&nodes()));
    assert_eq!(state.context_blocks, expected);
    assert!(state.node_texts.is_empty());
    assert!(state.inbox.is_empty());
    // The reported count is the count of the context as it is now rendered.
    assert_eq!(report.context_tokens_after, tokens(&render_context_blocks(&state.context_blocks)));
    assert_eq!(report.context_tokens_before, tokens("Earlier context."));
}

#[test]
fn the_node_format_is_exactly_the_specs() {
    let cfg = config(vec![rule("sql", "always", None, None)], None);
    let mut state = state_with(&[], vec![NodeText::new("usp_Total", SQL).with_path("sql/usp_Total.sql")]);
    manage_context_budget(STEP, &cfg, BIG, &mut state, &counter()).unwrap();
    assert_eq!(
        state.context_blocks,
        [
            "--- NODE ---\nid: usp_Total\npath: sql/usp_Total.sql\nlanguage: sql\ncompact: true\ntext:\nCREATE PROCEDURE dbo.usp_Total\n@InvoiceId INT\nAS\nBEGIN\nSELECT SUM(NetAmount) AS Net\nFROM dbo.vw_InvoiceLineAmounts\nWHERE InvoiceId = @InvoiceId;\nEND;\nGO"
        ]
    );
    let mut unknown = state_with(&[], vec![NodeText::new("readme", PROSE)]);
    manage_context_budget(STEP, &cfg, BIG, &mut unknown, &counter()).unwrap();
    assert_eq!(
        unknown.context_blocks,
        [format!("--- NODE ---\nid: readme\nlanguage: unknown\ncompact: false\ntext:\n{PROSE}")]
    );
}

#[test]
fn on_over_touches_neither_the_context_nor_node_texts() {
    let cfg = config(vec![rule("dotnet", "always", None, None)], Some("<<<New content"));
    let context = "Summary of the conversation so far. ".repeat(40);
    let mut state = state_with(&[&context], nodes());
    let before = state.clone();
    let max = tokens(&context) + 5;
    let report = manage_context_budget(STEP, &cfg, max, &mut state, &counter()).unwrap();
    assert_eq!(report.decision, BudgetDecision::Over);
    assert_eq!(report.decision.target(&cfg), "call_summarize_context");
    assert_eq!(state, before);
    assert_eq!(report.context_tokens_after, report.context_tokens_before);
    assert!(report.candidate_tokens > max);
    assert_eq!(report.divider, None);
}

#[test]
fn the_decision_is_exact_at_the_boundary() {
    let cfg = config(vec![], Some("<<<New content"));
    let state = state_with(&["First block.", "Second block."], nodes());
    let mut blocks = vec!["<<<New content".to_owned()];
    blocks.extend(raw_blocks(&nodes()));
    let exact = tokens(&rendered_with(&state, &blocks));

    let mut fits = state.clone();
    let report = manage_context_budget(STEP, &cfg, exact, &mut fits, &counter()).unwrap();
    assert_eq!((report.decision, report.candidate_tokens), (BudgetDecision::Ok, exact));
    assert_eq!(render_context_blocks(&fits.context_blocks), rendered_with(&state, &blocks));

    let mut over = state.clone();
    let report = manage_context_budget(STEP, &cfg, exact - 1, &mut over, &counter()).unwrap();
    assert_eq!((report.decision, report.candidate_tokens), (BudgetDecision::Over, exact));
    assert_eq!(over, state);
}

#[test]
fn always_compacts_every_node_of_its_language_and_no_other() {
    let cfg = config(vec![rule("dotnet", "always", None, None)], None);
    let mut state = state_with(&[], nodes());
    let report = manage_context_budget(STEP, &cfg, BIG, &mut state, &counter()).unwrap();
    let [sql, dotnet, prose] = &report.nodes[..] else { panic!("three traces") };
    assert_eq!((sql.language.as_str(), sql.code, sql.rule, sql.compacted), ("sql", Some(Language::Sql), None, false));
    assert_eq!((dotnet.language.as_str(), dotnet.code), ("dotnet", Some(Language::Dotnet)));
    assert_eq!(dotnet.rule.map(|r| (r.index, r.policy)), Some((0, PolicyKind::Always)));
    assert!(dotnet.compacted && dotnet.tokens_after < dotnet.tokens_before);
    assert_eq!(dotnet.tokens_before, tokens(CSHARP));
    assert_eq!((prose.language.as_str(), prose.code, prose.rule, prose.compacted), ("unknown", None, None, false));
    assert!(state.context_blocks[0].contains("compact: false\ntext:\n-- Totals of one invoice."));
    assert!(state.context_blocks[1].contains("compact: true\ntext:\nnamespace Invoicing;\npublic static class Money"));
    assert!(report.tokens_saved() > 0);
}

#[test]
fn unknown_nodes_match_no_rule() {
    let cfg = config(vec![rule("sql", "always", None, None), rule("dotnet", "always", None, None)], None);
    let messy_prose = "  Notes:   the total   is   rounded.   // not code  \n\n\n";
    let mut state = state_with(&[], vec![NodeText::new("notes", messy_prose)]);
    let report = manage_context_budget(STEP, &cfg, BIG, &mut state, &counter()).unwrap();
    assert_eq!(
        (report.nodes[0].language.as_str(), report.nodes[0].code, report.nodes[0].rule, report.nodes[0].compacted),
        ("unknown", None, None, false)
    );
    assert!(state.context_blocks[0].ends_with(messy_prose));
}

#[test]
fn dotnet_with_sql_uses_the_dotnet_rules() {
    let dapper = "public Task<int> CountAsync() =>\n    _db.ExecuteScalarAsync<int>(\"SELECT COUNT(*) FROM dbo.Invoices -- all\");   // count\n";
    let cfg = config(vec![rule("sql", "always", None, None), rule("dotnet", "always", None, None)], None);
    let mut state = state_with(&[], vec![NodeText::new("repo", dapper).with_path("Repo.cs")]);
    let report = manage_context_budget(STEP, &cfg, BIG, &mut state, &counter()).unwrap();
    assert_eq!((report.nodes[0].language.as_str(), report.nodes[0].code), ("dotnet", Some(Language::DotnetWithSql)));
    assert_eq!(report.nodes[0].rule.map(|r| r.index), Some(1));
    assert!(state.context_blocks[0].contains("language: dotnet\ncompact: true\n"));
    // The SQL inside the string is the string's content: untouched, its `--` included.
    assert!(state.context_blocks[0].contains("(\"SELECT COUNT(*) FROM dbo.Invoices -- all\");"));
    assert!(!state.context_blocks[0].contains("// count"));
}

/// The context just long enough that the raw SQL node, appended, reaches `n` tokens.
fn threshold_case() -> (PipelineState, usize) {
    let state = state_with(
        &["Earlier context about invoices."],
        vec![NodeText::new("usp_Total", SQL).with_path("sql/usp_Total.sql")],
    );
    let n = tokens(&rendered_with(&state, &raw_blocks(&state.node_texts)));
    (state, n)
}

#[test]
fn threshold_fires_only_when_the_raw_candidate_exceeds_the_trigger() {
    let cfg = config(vec![rule("sql", "threshold", Some(0.5), None)], None);
    let (state, n) = threshold_case();
    // max = 2n: trigger n, the raw candidate has n tokens, which does not exceed it.
    let mut at = state.clone();
    let report = manage_context_budget(STEP, &cfg, 2 * n, &mut at, &counter()).unwrap();
    assert_eq!((report.nodes[0].rule, report.nodes[0].compacted), (None, false));
    // max = 2n - 2: trigger n - 1, exceeded by one token.
    let mut above = state.clone();
    let report = manage_context_budget(STEP, &cfg, 2 * n - 2, &mut above, &counter()).unwrap();
    assert_eq!(report.nodes[0].rule.map(|r| r.policy), Some(PolicyKind::Threshold));
    assert!(report.nodes[0].compacted);
    assert_eq!(report.decision, BudgetDecision::Ok);
}

#[test]
fn threshold_counts_the_nodes_already_accepted_in_the_batch() {
    // Two identical SQL nodes: the first fits under the trigger raw, the second does not.
    let cfg = config(vec![rule("sql", "threshold", Some(0.5), None)], None);
    let node = |id: &str| NodeText::new(id, SQL).with_path("sql/usp_Total.sql");
    let state = state_with(&[], vec![node("a"), node("b")]);
    let first_alone = tokens(&rendered_with(&state, &raw_blocks(&state.node_texts[..1])));
    let mut s = state.clone();
    let report = manage_context_budget(STEP, &cfg, 2 * first_alone, &mut s, &counter()).unwrap();
    assert_eq!(report.nodes.iter().map(|n| n.compacted).collect::<Vec<_>>(), [false, true]);
}

#[test]
fn demand_needs_a_message_to_this_step_on_this_topic() {
    let cfg = config(vec![rule("sql", "demand", None, Some("compact_sql"))], None);
    let run = |messages: Vec<InboxMessage>| {
        let mut state = state_with(&[], vec![NodeText::new("usp_Total", SQL).with_path("x.sql")]);
        state.inbox = messages;
        state.consume_inbox(STEP);
        manage_context_budget(STEP, &cfg, BIG, &mut state, &counter()).unwrap().nodes[0].compacted
    };
    assert!(!run(vec![]));
    assert!(!run(vec![InboxMessage::new("other_step", "compact_sql")]));
    assert!(!run(vec![InboxMessage::new(STEP, "compact_dotnet")]));
    assert!(run(vec![InboxMessage::new(STEP, "compact_sql")]));
}

#[test]
fn demand_then_threshold_falls_through_when_no_demand_came() {
    let cfg = config(
        vec![
            rule("sql", "demand", None, Some("compact_sql")),
            rule("sql", "threshold", Some(0.5), None),
            rule("dotnet", "always", None, None),
        ],
        None,
    );
    let (state, n) = threshold_case();
    // No demand, context below the trigger: raw.
    let mut s = state.clone();
    assert_eq!(manage_context_budget(STEP, &cfg, 4 * n, &mut s, &counter()).unwrap().nodes[0].rule, None);
    // No demand, above the trigger: the threshold rule (index 1) compacts.
    let mut s = state.clone();
    let rule = manage_context_budget(STEP, &cfg, 2 * n - 2, &mut s, &counter()).unwrap().nodes[0].rule.unwrap();
    assert_eq!((rule.index, rule.policy), (1, PolicyKind::Threshold));
    // A demand: the demand rule (index 0) wins even below the trigger.
    let mut s = state.clone();
    s.inbox_last_consumed = vec![InboxMessage::new(STEP, "compact_sql")];
    let report = manage_context_budget(STEP, &cfg, 4 * n, &mut s, &counter()).unwrap();
    assert_eq!(report.nodes[0].rule.map(|r| (r.index, r.policy)), Some((0, PolicyKind::Demand)));
    assert_eq!(report.demands, ["compact_sql"]);
}

#[test]
fn demand_survives_over_and_is_used_up_by_ok() {
    let cfg = config(vec![rule("sql", "demand", None, Some("compact_sql"))], None);
    let mut state = state_with(&["x ".repeat(300).as_str()], vec![NodeText::new("usp_Total", SQL).with_path("x.sql")]);
    let mut demand = InboxMessage::new(STEP, "compact_sql");
    demand.payload = Some("from summarizer".into());
    state.enqueue(demand.clone());
    state.enqueue(InboxMessage::new(STEP, "unrelated"));
    state.enqueue(InboxMessage::new("elsewhere", "compact_sql"));

    // Entry consumes the inbox; the context alone is over budget: Over, demand re-enqueued.
    state.consume_inbox(STEP);
    let report = manage_context_budget(STEP, &cfg, 200, &mut state, &counter()).unwrap();
    assert_eq!(report.decision, BudgetDecision::Over);
    assert_eq!(report.reenqueued, [demand.clone()]);
    assert_eq!(state.inbox, [InboxMessage::new("elsewhere", "compact_sql"), demand.clone()]);

    // The pipeline compacts its context, then retries: the demand is still there, and used.
    state.context_blocks = vec!["Short summary.".into()];
    state.consume_inbox(STEP);
    assert_eq!(state.inbox_last_consumed, [demand]);
    let report = manage_context_budget(STEP, &cfg, 200, &mut state, &counter()).unwrap();
    assert_eq!(report.decision, BudgetDecision::Ok);
    assert!(report.nodes[0].compacted && report.reenqueued.is_empty());
    assert_eq!(state.inbox, [InboxMessage::new("elsewhere", "compact_sql")]);
}

#[test]
fn the_divider_comes_once_before_each_appended_batch() {
    let cfg = config(vec![], Some("<<<New content"));
    let mut state = state_with(&["Old."], nodes()[..2].to_vec());
    manage_context_budget(STEP, &cfg, BIG, &mut state, &counter()).unwrap();
    assert_eq!(state.context_blocks.len(), 4);
    assert_eq!(state.context_blocks[1], "<<<New content");
    assert!(state.context_blocks[2].starts_with("--- NODE ---"));

    // The next batch gets its own divider; the previous one stays where it was, as old context.
    state.node_texts = nodes()[2..].to_vec();
    let report = manage_context_budget(STEP, &cfg, BIG, &mut state, &counter()).unwrap();
    assert_eq!(report.divider.as_deref(), Some("<<<New content"));
    assert_eq!(state.context_blocks.iter().filter(|b| *b == "<<<New content").count(), 2);
    assert_eq!(state.context_blocks[4], "<<<New content");

    // No batch, no divider.
    let report = manage_context_budget(STEP, &cfg, BIG, &mut state, &counter()).unwrap();
    assert_eq!((report.decision, report.divider.as_deref(), state.context_blocks.len()), (BudgetDecision::Ok, None, 6));
}

#[test]
fn an_empty_batch_on_an_overfull_context_is_over() {
    let cfg = config(vec![], Some("<<<New content"));
    let mut state = state_with(&[&"word ".repeat(100)], vec![]);
    let before = state.clone();
    let report = manage_context_budget(STEP, &cfg, 50, &mut state, &counter()).unwrap();
    assert_eq!(report.decision, BudgetDecision::Over);
    assert_eq!(state, before);
}

#[test]
fn a_retrieval_buffer_that_cannot_fit_alone_is_a_misconfiguration() {
    let cfg = config(vec![rule("sql", "always", None, None)], None);
    let mut state = state_with(&["Some context."], nodes());
    let before = state.clone();
    let err = manage_context_budget(STEP, &cfg, 60, &mut state, &counter()).unwrap_err();
    assert_eq!(err.code(), "PIPELINE_BUDGET_MISCONFIG");
    let BudgetError::Misconfig { step_id, nodes, retrieval_tokens, max_context_tokens } = &err else { panic!("{err}") };
    assert_eq!((step_id.as_str(), *nodes, *max_context_tokens), (STEP, 3, 60));
    assert!(*retrieval_tokens > 60);
    assert!(err.to_string().starts_with("PIPELINE_BUDGET_MISCONFIG: step `manage_budget`: fetch_node_texts produced retrieval texts that cannot fit into settings.max_context_tokens (60)"), "{err}");
    assert_eq!(state, before, "a failed step changes nothing");
    assert_eq!(CtxError::from(err).code(), "PIPELINE_BUDGET_MISCONFIG");
}

#[test]
fn misconfiguration_counts_every_compaction_the_pipeline_could_still_get() {
    // Raw, the batch alone does not fit; compacted it would. With a demand rule the pipeline can
    // still ask for compaction, so this is Over (retry), not a misconfiguration.
    let sql_only = vec![NodeText::new("usp_Total", SQL).with_path("x.sql")];
    let raw_alone = tokens(&render_context_blocks(&raw_blocks(&sql_only)));
    let with_demand = config(vec![rule("sql", "demand", None, Some("compact_sql"))], None);
    let mut state = state_with(&[], sql_only.clone());
    let report = manage_context_budget(STEP, &with_demand, raw_alone - 1, &mut state, &counter()).unwrap();
    assert_eq!(report.decision, BudgetDecision::Over);
    // Without any rule for SQL nothing could shrink it.
    let no_rules = config(vec![], None);
    let mut state = state_with(&[], sql_only);
    let err = manage_context_budget(STEP, &no_rules, raw_alone - 1, &mut state, &counter()).unwrap_err();
    assert!(matches!(err, BudgetError::Misconfig { .. }));
}

#[test]
fn a_zero_budget_fails_fast() {
    let mut state = state_with(&[], nodes());
    let before = state.clone();
    let err = manage_context_budget(STEP, &config(vec![], None), 0, &mut state, &counter()).unwrap_err();
    assert_eq!(err.code(), "MISSING_MAX_CONTEXT_TOKENS");
    assert_eq!(state, before);
}

#[derive(Debug)]
struct FailingBackend;

impl TokenizerBackend for FailingBackend {
    fn id(&self) -> &str {
        "failing"
    }
    fn count(&self, text: &str) -> Result<usize, TokenError> {
        if text.contains("NODE") {
            Err(TokenError::Backend { backend: "failing".into(), reason: "remote tokenizer unavailable".into() })
        } else {
            Ok(text.len())
        }
    }
    fn encode(&self, _: &str) -> Result<Vec<u32>, TokenError> {
        Err(TokenError::Backend { backend: "failing".into(), reason: "no encode".into() })
    }
    fn decode(&self, _: &[u32]) -> Result<String, TokenError> {
        Err(TokenError::Backend { backend: "failing".into(), reason: "no decode".into() })
    }
}

#[test]
fn a_counting_failure_names_the_step_and_changes_nothing() {
    let failing = TokenCounter::with_backend(Arc::new(FailingBackend), ChatFormat::openai(), 16);
    let mut state = state_with(&["ctx"], nodes());
    state.inbox_last_consumed = vec![InboxMessage::new(STEP, "compact_sql")];
    let before = state.clone();
    let cfg = config(vec![rule("sql", "demand", None, Some("compact_sql"))], None);
    let err = manage_context_budget(STEP, &cfg, BIG, &mut state, &failing).unwrap_err();
    assert_eq!(err.code(), "TOKENIZER_BACKEND");
    assert!(err.to_string().contains("step `manage_budget`"), "{err}");
    assert_eq!(state, before);
}

#[test]
fn validation_failure_modes_fail_fast() {
    let spec = |rules| ManageBudgetSpec::new("a", "b").compact_code(rules);
    let codes = |rules| {
        validate_manage_budget(&spec(rules), &FieldPath::root())
            .unwrap_err()
            .into_iter()
            .map(|i| i.code)
            .collect::<Vec<_>>()
    };
    assert_eq!(codes(vec![rule("sql", "threshold", None, None)]), ["COMPACT_RULE_MISSING_THRESHOLD"]);
    assert_eq!(codes(vec![rule("sql", "threshold", Some(1.01), None)]), ["COMPACT_RULE_THRESHOLD_OUT_OF_RANGE"]);
    assert_eq!(codes(vec![rule("sql", "threshold", Some(-0.2), None)]), ["COMPACT_RULE_THRESHOLD_OUT_OF_RANGE"]);
    assert_eq!(codes(vec![rule("sql", "demand", None, None)]), ["COMPACT_RULE_MISSING_INBOX_KEY"]);
    assert_eq!(codes(vec![rule("sql", "eventually", None, None)]), ["COMPACT_RULE_UNKNOWN_POLICY"]);
    assert!(validate_manage_budget(&spec(vec![rule("sql", "threshold", Some(1.0), None)]), &FieldPath::root()).is_ok());
}

#[test]
fn the_trace_event_carries_the_decision_and_every_node() {
    use tracing_subscriber::layer::SubscriberExt;

    let events = Arc::new(Mutex::new(Vec::new()));
    let subscriber = tracing_subscriber::registry().with(Capture(events.clone()));
    let cfg = config(vec![rule("dotnet", "always", None, None)], None);
    // Register the event's callsite here first (other test threads may be registering it while
    // no subscriber wants it), then make tracing ask again once this thread has a subscriber. A
    // registration another thread started before ours can still finish after the rebuild and
    // store its "never": then the event is missed, and the rebuild is done again.
    manage_context_budget(STEP, &cfg, BIG, &mut state_with(&[], nodes()), &counter()).unwrap();
    let report = tracing::subscriber::with_default(subscriber, || {
        let mut attempts = 0;
        loop {
            tracing::callsite::rebuild_interest_cache();
            let mut state = state_with(&[], nodes());
            let report = manage_context_budget(STEP, &cfg, BIG, &mut state, &counter()).unwrap();
            attempts += 1;
            // Both events, INFO and DEBUG, have their own callsite: wait for the DEBUG one too,
            // since one callsite's interest can be settled before the other's.
            let seen = events.lock().unwrap().iter().any(|e| e["event_type"] == "MANAGE_CONTEXT_BUDGET_NODES");
            if seen || attempts == 10 {
                break report;
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
    });
    let events = events.lock().unwrap();
    // INFO: one line a person reads, the counts as fields, no node data.
    let info = events.iter().find(|e| e["event_type"] == "MANAGE_CONTEXT_BUDGET").expect("the INFO event");
    assert_eq!(info["decision"], "on_ok");
    assert_eq!(info["step_id"], STEP);
    assert_eq!(info["candidate_tokens"], report.candidate_tokens.to_string());
    assert!(!info.contains_key("nodes"), "{info:?}");
    let line = &info["message"];
    assert!(line.contains("3 node(s) appended (1 compacted"), "{line}");
    assert!(line.len() < 200, "{line}");
    // DEBUG: the data.
    let debug = events.iter().find(|e| e["event_type"] == "MANAGE_CONTEXT_BUDGET_NODES").expect("the DEBUG event");
    let traced: serde_json::Value = serde_json::from_str(&debug["nodes"]).unwrap();
    assert_eq!(traced, serde_json::to_value(&report.nodes).unwrap());
    assert_eq!(traced[1]["language"], "dotnet");
    assert_eq!(traced[1]["code"], "dotnet");
    assert_eq!(traced[1]["rule"]["policy"], "always");
    assert_eq!(traced[1]["compacted"], true);
    assert!(traced[1]["tokens_after"].as_u64() < traced[1]["tokens_before"].as_u64());
    // One language per node, the one its `--- NODE ---` header names: no `unknown` beside a
    // `markdown`.
    assert_eq!(traced[2]["language"], "unknown");
    assert!(traced[2].get("code").is_none() && traced[2].get("language_name").is_none(), "{}", traced[2]);
}

/// Records the fields of every `ctx::budget` event.
struct Capture(Arc<Mutex<Vec<std::collections::BTreeMap<String, String>>>>);

impl<S: tracing::Subscriber> tracing_subscriber::Layer<S> for Capture {
    fn on_event(&self, event: &tracing::Event<'_>, _: tracing_subscriber::layer::Context<'_, S>) {
        struct Fields(std::collections::BTreeMap<String, String>);
        impl tracing::field::Visit for Fields {
            fn record_str(&mut self, field: &tracing::field::Field, value: &str) {
                self.0.insert(field.name().to_owned(), value.to_owned());
            }
            fn record_u64(&mut self, field: &tracing::field::Field, value: u64) {
                self.0.insert(field.name().to_owned(), value.to_string());
            }
            fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
                self.0.insert(field.name().to_owned(), format!("{value:?}"));
            }
        }
        if event.metadata().target() == "ctx::budget" {
            let mut fields = Fields(Default::default());
            event.record(&mut fields);
            self.0.lock().unwrap().push(fields.0);
        }
    }
}

/// An empty context can still go `on_over`: a `demand` rule not yet demanded leaves an SQL node
/// raw, the batch does not fit as appended, and it fits with every rule applied, so the step
/// decides `Over`, not `PIPELINE_BUDGET_MISCONFIG`. The checker therefore calls an `on_over`
/// never taken (`BUDGET_ON_OVER_NEVER_TAKEN`, which the cost bound leaves unpaid) only for a step
/// that compacts every node it can on the first pass: an `always` rule for each language.
#[test]
fn an_empty_context_goes_on_over_when_a_demand_rule_has_not_fired() {
    use ctx_spec::pipeline::StepKind;
    use ctx_spec::pipeline::context_flow::on_over_never_taken_steps;
    let notes: String =
        (0..40).map(|i| format!("-- note {i}: the totals are rounded once per invoice, per rate\n")).collect();
    let sql = format!("{notes}SELECT SUM(NetAmount) AS Net FROM dbo.InvoiceLines;\n");
    let node = NodeText::new("usp_Total", sql.as_str()).with_path("sql/usp_Total.sql");
    let budget = 100;
    let counter = counter();
    assert!(counter.count(&sql).unwrap() > budget, "the raw node alone is over the budget");
    let demand = || vec![rule("sql", "demand", None, Some("compact_sql"))];
    let mut state = PipelineState::new("How is the invoice total computed?");
    state.node_texts.push(node);
    state.consume_inbox(STEP);
    let report = manage_context_budget(STEP, &config(demand(), None), budget, &mut state, &counter).unwrap();
    assert!(state.context_blocks.is_empty());
    assert_eq!(report.decision, BudgetDecision::Over);

    // The specification's loop with this rule: its `on_over` is not called never taken; with an
    // `always` rule for SQL instead, it is.
    let with = |rules: Vec<CompactRuleSpec>| {
        let mut def = ctx_spec::pipeline::testing::compaction_loop();
        let StepKind::ManageContextBudget(spec) = &mut def.steps[2].kind else { panic!("manage_budget") };
        spec.compact_code = rules;
        on_over_never_taken_steps(&def)
    };
    assert_eq!(with(demand()), Vec::<usize>::new());
    assert_eq!(with(vec![rule("sql", "always", None, None)]), [2]);
}
