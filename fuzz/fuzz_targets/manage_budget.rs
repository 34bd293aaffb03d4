//! `manage_context_budget` on any context, nodes, rules and budget: never panics; after `Ok` the
//! rendered context fits the budget exactly as counted; after `Over` the context and the nodes
//! are untouched and only the consumed demands return to the inbox; after an error the state is
//! unchanged.

#![no_main]

use arbitrary::Arbitrary;
use ctx_runtime::budget::{BudgetDecision, manage_context_budget, validate_manage_budget};
use ctx_runtime::pipeline::{CompactRuleSpec, ManageBudgetSpec};
use ctx_runtime::state::render_context_blocks;
use ctx_runtime::validation::FieldPath;
use ctx_runtime::{Encoding, InboxMessage, NodeText, PipelineState, TokenCounter};
use libfuzzer_sys::fuzz_target;

const STEP: &str = "manage_budget";
const PATHS: [Option<&str>; 5] =
    [None, Some("sql/usp_Total.sql"), Some("src/Invoice.cs"), Some("README.md"), Some("x")];

#[derive(Arbitrary, Debug)]
struct Rule {
    dotnet: bool,
    policy: u8,
    threshold: u8,
}

#[derive(Arbitrary, Debug)]
struct Input {
    max_context_tokens: u16,
    blocks: Vec<String>,
    nodes: Vec<(String, u8, String)>,
    rules: Vec<Rule>,
    divider: Option<String>,
    demand: bool,
}

fuzz_target!(|input: Input| {
    let counter = TokenCounter::for_encoding(Encoding::Cl100kBase);
    let compact_code = input
        .rules
        .iter()
        .take(4)
        .map(|r| {
            CompactRuleSpec::new(
                if r.dotnet { "dotnet" } else { "sql" },
                ["always", "threshold", "demand"][usize::from(r.policy % 3)],
            )
            .threshold((r.policy % 3 == 1).then(|| f64::from(r.threshold.max(1)) / 255.0))
            .inbox_key((r.policy % 3 == 2).then(|| "compact_sql".to_owned()))
        })
        .collect();
    let spec = ManageBudgetSpec::new("answer", "summarize")
        .compact_code(compact_code)
        .divide_new_content(input.divider.clone());
    let Ok(config) = validate_manage_budget(&spec, &FieldPath::parse("steps[0]")) else { return };

    let mut state = PipelineState::new("q");
    state.context_blocks = input.blocks.iter().take(8).cloned().collect();
    for (id, path, text) in input.nodes.iter().take(8) {
        let mut node = NodeText::new(id.clone(), text.clone());
        if let Some(p) = PATHS[usize::from(*path) % PATHS.len()] {
            node = node.with_path(p);
        }
        state.node_texts.push(node);
    }
    state.enqueue(InboxMessage::new("other_step", "compact_sql"));
    if input.demand {
        state.enqueue(InboxMessage::new(STEP, "compact_sql"));
    }
    state.consume_inbox(STEP);
    let before = state.clone();
    let max = usize::from(input.max_context_tokens);

    match manage_context_budget(STEP, &config, max, &mut state, &counter) {
        Ok(report) => match report.decision {
            BudgetDecision::Ok => {
                let rendered = render_context_blocks(&state.context_blocks);
                let tokens = counter.count(&rendered).unwrap();
                assert!(tokens <= max, "Ok but the context has {tokens} > {max} tokens");
                assert_eq!(tokens, report.context_tokens_after);
                assert!(state.node_texts.is_empty());
                assert_eq!(state.context_blocks[..before.context_blocks.len()], before.context_blocks[..]);
                assert_eq!(state.inbox, before.inbox);
            }
            BudgetDecision::Over => {
                assert_eq!(state.context_blocks, before.context_blocks, "Over changed the context");
                assert_eq!(state.node_texts, before.node_texts, "Over changed the nodes");
                let mut expected = before.inbox.clone();
                expected.extend(report.reenqueued.iter().cloned());
                assert_eq!(state.inbox, expected);
                // Only the consumed demands (a demand rule's topic) go back; other messages
                // were consumed on entry like any step's.
                let demands: Vec<InboxMessage> = before
                    .inbox_last_consumed
                    .iter()
                    .filter(|m| config.demand_keys().any(|k| k == m.topic))
                    .cloned()
                    .collect();
                assert_eq!(report.reenqueued, demands);
                let mut rest = state.clone();
                rest.inbox = before.inbox.clone();
                assert_eq!(rest, before, "Over changed a field it does not own");
            }
        },
        Err(_) => assert_eq!(state, before, "a failed step changed the state"),
    }
});
