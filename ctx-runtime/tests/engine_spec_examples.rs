//! The four examples of the context engine spec (basic usage, retriever packs, expansion,
//! compaction), with real token counts.

mod engine_common;

use std::sync::Arc;

use ctx_runtime::ErrorCode;
use ctx_runtime::chat::ChatMessage;
use ctx_runtime::compact::{CompactRequest, Compactor, FnCompactor, TruncateAfter};
use ctx_runtime::engine::*;
use ctx_runtime::validation::FieldPath;
use engine_common::*;
use serde_json::json;

fn support(policy: Option<ContextPolicySpec>, messages: Vec<MessageSpec>) -> ContextDeclaration {
    ContextDeclaration { name: "support".into(), inputs: vec!["question".into()], policy, messages }
}

#[test]
fn basic_usage() {
    let spec = EngineSpec {
        contexts: vec![support(None, vec![system("You are a support agent."), user("Question: {input.question}")])],
        ..Default::default()
    };
    let assembler = ContextAssembler::builder(spec, counter()).build().unwrap();
    let input = AssemblyInput::new().input("question", "Where is my order?");
    let out = block_on(assembler.assemble("support", &input)).unwrap();

    assert_eq!(out.system_prompt, "You are a support agent.");
    assert_eq!(out.user_message, "Question: Where is my order?");
    assert!(out.history.is_empty());
    let expected =
        vec![ChatMessage::system("You are a support agent."), ChatMessage::user("Question: Where is my order?")];
    assert_eq!(out.messages(), expected);
    assert_eq!(out.report.total_tokens, counter().count_messages(&expected).unwrap());
    // 3 to prime the reply + (3 + "system" + 6 content) + (3 + "user" + 7 content).
    assert_eq!(out.report.total_tokens, 24);
    assert_eq!(out.report.max_tokens, None);
}

#[test]
fn the_spec_json_shape_deserializes_and_inputs_are_declared() {
    // The spec's dictionaries, as JSON. The Python original accepts any `{input.*}`; here the
    // declaration lists its inputs, so an undeclared one is caught before anything runs.
    let decl: ContextDeclaration = serde_json::from_value(json!({
        "name": "support",
        "messages": [
            {"type": "system", "content": "You are a support agent."},
            {"type": "user", "content": "Question: {input.question}"},
        ],
    }))
    .unwrap();
    let issues = validate_spec(&EngineSpec { contexts: vec![decl.clone()], ..Default::default() });
    assert_eq!(issues.len(), 1, "{issues:#?}");
    assert_eq!(issues[0].code.as_str(), "ENGINE_UNKNOWN_VARIABLE");
    assert_eq!(issues[0].path, FieldPath::parse("contexts[0].messages[1].content"));
    assert_eq!(issues[0].help.as_deref(), Some("add `question` to the context's `inputs`"));
    let fixed = ContextDeclaration { inputs: vec!["question".into()], ..decl };
    assert!(validate_spec(&EngineSpec { contexts: vec![fixed], ..Default::default() }).is_empty());
}

/// The spec's `fake_retrieve`: one fixed block, whatever the request.
struct FakeRetrieve;

impl Retriever for FakeRetrieve {
    async fn retrieve(&self, _request: &ContextRetrieverRequest) -> Result<ContextPack, RetrieverError> {
        Ok(ContextPack::new(vec![ContextPackBlock::new("demo-1", "Evidence chunk")]))
    }
}

fn retriever_pack_spec(max_tokens: i64) -> EngineSpec {
    let policy = ContextPolicySpec {
        pack_budget: Some(PackBudgetSpec { default_ratio: Some(1.0) }),
        ..budget_policy(max_tokens, "error")
    };
    EngineSpec {
        contexts: vec![support(Some(policy), vec![system("Use this context."), pack("kb_search"), user("Question")])],
        retrievers: vec![RetrieverDecl { name: "kb_search".into(), query: "demo".into(), limit: 3 }],
        compactors: vec![],
    }
}

#[test]
fn retriever_pack_with_the_spec_budget_is_an_exact_error() {
    // The spec's budget of 10 "tokens" holds when words are counted. Counted as the model counts
    // (contents, roles and chat overhead), the two fixed messages alone are 16 tokens.
    let assembler = ContextAssembler::builder(retriever_pack_spec(10), counter())
        .retriever("kb_search", Arc::new(FakeRetrieve))
        .build();
    let err = block_on(assembler.unwrap().assemble("support", &AssemblyInput::new())).unwrap_err();
    let fixed = counter().count_messages(&[ChatMessage::system("Use this context."), ChatMessage::user("Question")]);
    assert_eq!(err.code(), "ENGINE_FIXED_OVER_BUDGET");
    match err {
        EngineError::FixedOverBudget { context, tokens, budget } => {
            assert_eq!((context.as_str(), tokens, budget), ("support", fixed.unwrap(), 10));
            assert_eq!(tokens, 16);
        }
        other => panic!("expected FixedOverBudget, got {other:?}"),
    }
}

#[test]
fn retriever_pack() {
    let retriever = CorpusRetriever::new(&[("demo-1", "Evidence chunk"), ("demo-2", "Another demo chunk")], true);
    let assembler = ContextAssembler::builder(retriever_pack_spec(40), counter())
        .retriever("kb_search", retriever.clone())
        .build()
        .unwrap();
    let out = block_on(assembler.assemble("support", &AssemblyInput::new())).unwrap();
    // The query "demo" matches only the second document.
    assert_eq!(out.system_prompt, "Use this context.\n\nAnother demo chunk");
    assert_eq!(out.user_message, "Question");
    let pack = &out.report.packs[0];
    assert_eq!((pack.name.as_str(), pack.kind, pack.pages), ("kb_search", PackKind::Retriever, 1));
    assert_eq!(pack.included, ["demo-2"]);
    assert_eq!(pack.tokens, counter().count("Another demo chunk").unwrap());
    // The pack room: the budget less the messages with the pack present but empty.
    let structure = counter()
        .count_messages(&[ChatMessage::system("Use this context.\n\n"), ChatMessage::user("Question")])
        .unwrap();
    assert_eq!(pack.allocation, Some(40 - structure));
    let requests = retriever.requests();
    assert_eq!(requests.len(), 1);
    assert_eq!((requests[0].query.as_str(), requests[0].offset, requests[0].limit), ("demo", 0, 3));
    assert_eq!(requests[0].max_tokens, Some(40 - structure));
    assert_eq!(out.report.total_tokens, counter().count_messages(&out.messages()).unwrap());
    assert!(out.report.total_tokens <= 40);
}

const ORDERS: [(&str, &str); 7] = [
    ("o1", "Order 1 shipped on Monday by courier."),
    ("o2", "Order 2 is waiting for payment."),
    ("o3", "Order 3 was delivered to the front desk."),
    ("o4", "Order 4 left the warehouse on Tuesday."),
    ("o5", "Order 5 was cancelled by the customer."),
    ("o6", "Order 6 is held at customs."),
    ("o7", "Order 7 was returned to the sender."),
];

fn expansion_spec(max_tokens: i64, max_pages: i64, min_fill_ratio: f64) -> EngineSpec {
    let policy = ContextPolicySpec {
        pack_budget: Some(PackBudgetSpec { default_ratio: Some(0.5) }),
        expansion: Some(ExpansionSpec { max_pages, min_fill_ratio }),
        ..budget_policy(max_tokens, "error")
    };
    EngineSpec {
        contexts: vec![support(
            Some(policy),
            vec![system("Answer from the evidence."), pack("orders"), user("Question: {input.question}")],
        )],
        retrievers: vec![RetrieverDecl { name: "orders".into(), query: "{input.question}".into(), limit: 2 }],
        compactors: vec![],
    }
}

fn expand(spec: EngineSpec, docs: &[(&str, &str)]) -> (ContextAssembly, Vec<ContextRetrieverRequest>) {
    let retriever = CorpusRetriever::new(docs, true);
    let assembler = ContextAssembler::builder(spec, counter()).retriever("orders", retriever.clone()).build().unwrap();
    let out = block_on(assembler.assemble("support", &AssemblyInput::new().input("question", "order"))).unwrap();
    (out, retriever.requests())
}

#[test]
fn expansion_pages_until_the_pack_budget_is_met() {
    let (out, requests) = expand(expansion_spec(200, 3, 1.0), &ORDERS);
    let offsets: Vec<_> = requests.iter().map(|r| r.offset).collect();
    assert_eq!(offsets, [0, 2, 4], "three pages of two");
    // Each later page is told the room that is left.
    let rooms: Vec<_> = requests.iter().map(|r| r.max_tokens.unwrap()).collect();
    assert!(rooms.windows(2).all(|w| w[1] < w[0]), "{rooms:?}");
    let pack = &out.report.packs[0];
    assert_eq!(pack.pages, 3);
    assert_eq!(pack.included, ["o1", "o2", "o3", "o4", "o5", "o6"]);
    assert!(pack.tokens <= pack.allocation.unwrap());
    assert!(out.report.total_tokens <= 200);
}

#[test]
fn expansion_stops_at_the_fill_ratio() {
    let (out, requests) = expand(expansion_spec(200, 3, 0.25), &ORDERS);
    let pack = &out.report.packs[0];
    let target = (0.25 * pack.allocation.unwrap() as f64).ceil() as usize;
    // One page (two blocks) is under a quarter of the allocation, two pages are over it.
    let one_page = counter().count(&join_blocks([ORDERS[0].1, ORDERS[1].1])).unwrap();
    assert!(one_page < target && target <= pack.tokens, "{one_page} < {target} <= {}", pack.tokens);
    assert_eq!(requests.len(), 2);
    assert_eq!(pack.included, ["o1", "o2", "o3", "o4"]);
}

#[test]
fn expansion_stops_when_results_run_out() {
    let (out, requests) = expand(expansion_spec(200, 5, 1.0), &ORDERS[..3]);
    assert_eq!(requests.iter().map(|r| r.offset).collect::<Vec<_>>(), [0, 2], "the second page came back short");
    assert_eq!(out.report.packs[0].included, ["o1", "o2", "o3"]);
}

#[test]
fn expansion_stops_when_the_pack_is_full() {
    // A tighter budget: the retriever stops adding blocks at the room it is told, the page comes
    // back short of `limit`, and paging ends with the pack full.
    let (out, requests) = expand(expansion_spec(60, 5, 1.0), &ORDERS);
    let pack = &out.report.packs[0];
    assert!(requests.len() < 5, "{requests:?}");
    assert!(pack.tokens <= pack.allocation.unwrap());
    let next = ORDERS.get(pack.included.len()).map(|d| d.1).unwrap();
    let with_next = format!("{}\n\n{next}", out.system_prompt.split_once("\n\n").unwrap().1);
    assert!(counter().count(&with_next).unwrap() > pack.allocation.unwrap(), "the next block would not have fitted");
    assert!(out.report.total_tokens <= 60);
}

const POLICY_DOC: &str = "Refunds are issued within 14 days of the return being received at our warehouse. \
    Items must be unused and in their original packaging. Shipping costs are refunded only when the item \
    arrived damaged or was not what was ordered. Gift cards and downloadable products cannot be refunded. \
    To start a return, open the order page and choose Return items; print the label and drop the parcel at \
    any post office within 30 days of delivery.";

fn compaction_spec(overflow: &str, compactor: &str) -> EngineSpec {
    let policy =
        ContextPolicySpec { compactor: Some(CompactorSpec { name: compactor.into() }), ..budget_policy(60, overflow) };
    EngineSpec {
        contexts: vec![support(
            Some(policy),
            vec![system("Answer from the policy."), pack("policies"), user("Question: {input.question}")],
        )],
        retrievers: vec![RetrieverDecl { name: "policies".into(), query: "{input.question}".into(), limit: 1 }],
        compactors: vec!["strip_comments".into()],
    }
}

fn strip_comments() -> Arc<dyn Compactor> {
    // A reducing compactor written as a plain function, made budget-exact by `TruncateAfter`.
    let strip = FnCompactor::new(|r: &CompactRequest<'_>| {
        Ok(r.text.lines().filter(|l| !l.trim_start().starts_with("--")).collect::<Vec<_>>().join("\n"))
    });
    Arc::new(TruncateAfter(Arc::new(strip)))
}

fn compact(spec: EngineSpec, doc: &str) -> Result<ContextAssembly, EngineError> {
    // The retriever ignores the budget: the whole document comes back.
    let retriever = CorpusRetriever::new(&[("refunds", doc)], false);
    let assembler = ContextAssembler::builder(spec, counter())
        .retriever("policies", retriever)
        .compactor("strip_comments", strip_comments())
        .build()?;
    block_on(assembler.assemble("support", &AssemblyInput::new().input("question", "refunds orders")))
}

#[test]
fn compaction_truncates_token_exactly() {
    let out = compact(compaction_spec("compact", "truncate"), POLICY_DOC).unwrap();
    let pack = &out.report.packs[0];
    assert!(pack.compacted && pack.compactions >= 1, "{pack:?}");
    assert!(pack.included.is_empty(), "the block did not fit whole");
    let text = out.system_prompt.strip_prefix("Answer from the policy.\n\n").unwrap();
    assert!(POLICY_DOC.starts_with(text) && text.len() < POLICY_DOC.len());
    assert_eq!(pack.tokens, counter().count(text).unwrap());
    assert!(out.report.total_tokens <= 60);
    // Token-exact: one more token of the document would not fit.
    assert_eq!(out.report.total_tokens, 60, "truncation fills the budget exactly here");
}

#[test]
fn compaction_off_is_an_error_naming_the_pack() {
    let err = compact(compaction_spec("error", "truncate"), POLICY_DOC).unwrap_err();
    match err {
        EngineError::PackOverBudget { context, pack, tokens, budget } => {
            assert_eq!((context.as_str(), pack.as_str()), ("support", "policies"));
            assert_eq!(tokens, counter().count(POLICY_DOC).unwrap());
            assert!(budget < tokens);
        }
        other => panic!("expected PackOverBudget, got {other:?}"),
    }
}

const LATE_ORDERS_SQL: &str = "-- find late orders\nSELECT id, placed_at, customer_id, total, currency, shipping_method\n\
    -- only open ones, oldest first, with their customers' contact details for the reminder mail\n\
    FROM orders JOIN customers ON customers.id = orders.customer_id\n\
    WHERE status = 'open' AND placed_at < now() - interval '7 days' ORDER BY placed_at";

#[test]
fn a_registered_compactor_is_used_by_name() {
    let out = compact(compaction_spec("compact", "strip_comments"), LATE_ORDERS_SQL).unwrap();
    let text = out.system_prompt.strip_prefix("Answer from the policy.\n\n").unwrap();
    assert!(!text.contains("--"), "comments stripped: {text}");
    assert!(
        text.starts_with("SELECT id, placed_at, customer_id, total, currency, shipping_method\nFROM orders"),
        "{text}"
    );
    assert!(out.report.packs[0].compacted);
    assert!(out.report.total_tokens <= 60);
}

#[test]
fn the_builtin_sql_compactor_strips_then_truncates() {
    let out = compact(compaction_spec("compact", "sql"), LATE_ORDERS_SQL).unwrap();
    let text = out.system_prompt.strip_prefix("Answer from the policy.\n\n").unwrap();
    let stripped = ctx_runtime::compact::sql::compact(LATE_ORDERS_SQL, &counter()).unwrap().text;
    assert!(stripped.starts_with(text) && !text.contains("--"), "{text}");
    assert!(out.report.packs[0].compacted);
    assert!(out.report.total_tokens <= 60);
}

/// The spec's compaction policy as written (a 10-token input budget, `compact`, `truncate`), on a
/// context that is just the pack: no user message is sent, so none is counted, and the pack gets
/// every token the system message leaves (issue 14, item 12).
#[test]
fn the_ten_token_compaction_example_fills_its_budget() {
    let policy = ContextPolicySpec {
        compactor: Some(CompactorSpec { name: "truncate".into() }),
        ..budget_policy(10, "compact")
    };
    let spec = EngineSpec {
        contexts: vec![support(Some(policy), vec![pack("policies")])],
        retrievers: vec![RetrieverDecl { name: "policies".into(), query: "{input.question}".into(), limit: 1 }],
        compactors: vec![],
    };
    let out = compact(spec, POLICY_DOC).unwrap();
    assert_eq!(out.messages().len(), 1, "{out:?}");
    assert!(out.user_message.is_empty());
    let pack = &out.report.packs[0];
    assert_eq!(pack.tokens, 3, "{pack:?}");
    assert!(POLICY_DOC.starts_with(&out.system_prompt) && !out.system_prompt.is_empty());
    assert_eq!(out.report.total_tokens, counter().count_messages(&out.messages()).unwrap());
    assert_eq!(out.report.total_tokens, 10);
}

/// Without a user message, an assembly whose text allows it fills its budget to the token.
#[test]
fn an_assembly_without_a_user_message_fills_its_budget_exactly() {
    let policy = ContextPolicySpec {
        compactor: Some(CompactorSpec { name: "truncate".into() }),
        ..budget_policy(60, "compact")
    };
    let spec = EngineSpec {
        contexts: vec![support(Some(policy), vec![system("Answer from the policy."), pack("policies")])],
        retrievers: vec![RetrieverDecl { name: "policies".into(), query: "{input.question}".into(), limit: 1 }],
        compactors: vec![],
    };
    let out = compact(spec, POLICY_DOC).unwrap();
    assert!(out.user_message.is_empty());
    assert_eq!(out.messages().len(), 1);
    assert_eq!(out.report.total_tokens, counter().count_messages(&out.messages()).unwrap());
    assert_eq!(out.report.total_tokens, 60);
}
