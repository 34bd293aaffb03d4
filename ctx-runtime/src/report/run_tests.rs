//! The report of an agent turn: each request after the first says which tool results joined the
//! turn and which documents were deduplicated, and its parts hold one block per call.

use super::*;
use crate::pipeline::definition::StepKind;
use crate::pipeline::steps::test_backends::{Scripted, Tools};
use crate::pipeline::{StepEnv, ToolOutput, testing};
use crate::report::PartKind;
use crate::state::PipelineState;
use crate::turn::RankedDocument;

#[tokio::test]
async fn an_agent_turn_shows_its_tool_results_and_what_was_deduplicated() {
    let mut def = testing::def(vec![testing::agent("answer", "end")]);
    let StepKind::Agent(spec) = &mut def.steps[0].kind else { unreachable!() };
    spec.max_tool_calls = 3;
    let p = testing::loaded(def);
    let model = Scripted::always_calling(3);
    let docs = |ids: &[&str]| {
        ToolOutput::Documents(
            ids.iter().map(|id| RankedDocument::new(*id, format!("Article {id}. ").repeat(50))).collect(),
        )
    };
    let tools = Tools::new(vec![("c1", docs(&["a", "b"])), ("c2", docs(&["a", "c"])), ("c3", docs(&["b", "d"]))]);
    let env = StepEnv::builder().model(&model).tools(&tools);
    let (_, reports) = p.run(PipelineState::new("What are the features?"), &env).await.unwrap();
    let report = RunReport::new(&p, &reports);

    assert_eq!(report.requests.len(), 4);
    assert_eq!(report.steps.len(), 1);
    let numbers: Vec<usize> = report.requests.iter().map(|r| r.number_in_step).collect();
    assert_eq!(numbers, [1, 2, 3, 4]);
    for (i, r) in report.requests.iter().enumerate() {
        assert_eq!(r.anatomy.parts_total(), r.anatomy.prompt_tokens);
        // The n-th request holds the n - 1 calls answered before it, each with its result.
        let blocks = r.anatomy.parts.iter().filter(|p| p.kind == PartKind::ToolTurn).count();
        assert_eq!(blocks, i, "request {}", i + 1);
        assert!(r.worst_case.is_some());
    }
    let changes = |i: usize| -> Vec<(ChangeKind, &str)> {
        report.requests[i].changes.iter().map(|c| (c.kind, c.what.as_str())).collect()
    };
    assert!(changes(0).is_empty(), "{:?}", changes(0));
    assert_eq!(changes(1).len(), 1);
    assert_eq!(changes(1)[0].0, ChangeKind::Added);
    assert!(changes(2).contains(&(ChangeKind::Deduplicated, "document a already in the turn")), "{:?}", changes(2));
    assert!(changes(3).contains(&(ChangeKind::Deduplicated, "document b already in the turn")), "{:?}", changes(3));
    // How the loop ended, in words, not as the variant is named.
    assert!(
        changes(3).contains(&(ChangeKind::Dropped, "tools no longer offered (answered at max_tool_calls)")),
        "{:?}",
        changes(3)
    );
    let dedup = &report.requests[2].changes.iter().find(|c| c.kind == ChangeKind::Deduplicated).unwrap().by;
    assert_eq!(dedup, "answer, tool `search_docs` (c2)");

    let html = report.to_html();
    assert_eq!(html.matches("<section class=\"request\"").count(), 4);
    assert_eq!(html.matches("data-change=\"deduplicated\"").count(), 2);
    assert!(html.contains("(call 4)"));
}

/// Replies at once, reporting ctx's own prompt count with its first `cached` tokens read from
/// the prompt cache.
struct Caching {
    cached: usize,
}

impl crate::llm::ChatModel for Caching {
    fn model_name(&self) -> &str {
        "caching"
    }

    async fn chat(
        &self,
        request: &crate::llm::ChatRequest,
    ) -> Result<crate::llm::ChatResponse, crate::llm::ModelError> {
        let usage = request
            .predicted_prompt_tokens
            .map(|p| crate::llm::Usage::new(p, 3).with_cache(Some(self.cached.min(p)), None));
        Ok(crate::llm::ChatResponse { content: "It is summed.".into(), usage, ..Default::default() })
    }
}

#[tokio::test]
async fn a_priced_request_shows_its_cached_prefix_and_the_price_of_each_part() {
    let mut def = testing::def(vec![testing::call("answer", "answer", "end")]);
    let crate::pipeline::ModelSource::Inline(model) = &mut def.model else { unreachable!() };
    let mut price = crate::pipeline::PriceSpec::default();
    price.input = Some(2.50);
    price.cached_input = Some(1.25);
    price.output = Some(10.00);
    model.price = Some(price);
    let p = testing::loaded(def);
    let system = p.counter().message_costs(&[crate::chat::ChatMessage::system("Answer the question.")]).unwrap()[0];
    let model = Caching { cached: system + 2 };
    let env = StepEnv::builder().model(&model);
    let (_, reports) = p.run(PipelineState::new("How is the total computed?"), &env).await.unwrap();
    let StepDetail::CallModel(call) = &reports[0].detail else { panic!("{reports:?}") };
    let spend = call.request.spend.expect("a priced model");
    let report = RunReport::new(&p, &reports);

    let request = &report.requests[0];
    let cost = request.cost.as_ref().expect("the request's cost");
    assert_eq!(cost.parts.len(), request.anatomy.parts.len());
    assert_eq!(cost.cached_prefix_tokens, system + 2);
    // The system prompt is read from the cache whole, the part after it for its first 2 tokens.
    assert_eq!(request.anatomy.parts[0].kind, PartKind::System);
    assert_eq!((cost.parts[0].cached_tokens, cost.parts[0].uncached_tokens), (system, 0));
    assert_eq!(cost.parts[0].nano_usd, system as u64 * 1_250);
    assert_eq!(cost.parts[1].cached_tokens, 2);
    let tokens = |p: &crate::report::PartCost| p.cached_tokens + p.cache_write_tokens + p.uncached_tokens;
    assert!(cost.parts.iter().zip(&request.anatomy.parts).all(|(c, part)| tokens(c) == part.tokens));
    // The parts and the output add up to the request's bill, which the run's spend is.
    let prompt: u64 = cost.parts.iter().map(|p| p.nano_usd).sum();
    assert_eq!(prompt + cost.output_nano_usd, spend.nano_usd);
    assert_eq!((cost.nano_usd, cost.billed_nano_usd), (spend.nano_usd, spend.nano_usd));
    assert_eq!(cost.output_nano_usd, 3 * 10_000);

    let html = report.to_html();
    assert!(html.contains("<table class=\"cost\""), "{html}");
    assert!(html.contains(&format!("data-cached=\"{}\"", system + 2)));
    let priced: u64 = html
        .split("<td class=\"n\" data-nano-usd=\"")
        .skip(1)
        .map(|s| s[..s.find('"').unwrap()].parse::<u64>().unwrap())
        .sum();
    assert_eq!(priced, spend.nano_usd, "the page's prices add up to the bill");
    // The reserved output is a share of the window and has no price; the 3 tokens generated
    // have their own row, with the output's price.
    let reserved = html.split("<tr class=\"part window\" data-kind=\"output\"").nth(1).expect("the reserved row");
    let reserved = &reserved[..reserved.find("</tr>").unwrap()];
    assert!(!reserved.contains("data-nano-usd"), "{reserved}");
    assert!(reserved.contains(&format!("data-tokens=\"{}\"", request.anatomy.max_output_tokens)), "{reserved}");
    let generated = html.split("<tr class=\"generated\" data-generated=\"3\">").nth(1).expect("the generated row");
    let generated = &generated[..generated.find("</tr>").unwrap()];
    assert!(generated.contains(&format!("of the {} reserved", request.anatomy.max_output_tokens)), "{generated}");
    assert!(generated.contains(&format!("data-nano-usd=\"{}\"", 3 * 10_000)), "{generated}");

    // Without a price there is no cost, and the page has no price column.
    let unpriced = testing::loaded(testing::def(vec![testing::call("answer", "answer", "end")]));
    let (_, reports) = unpriced.run(PipelineState::new("How is the total computed?"), &env).await.unwrap();
    let report = RunReport::new(&unpriced, &reports);
    assert!(report.requests[0].cost.is_none());
    assert!(!report.to_html().contains("data-nano-usd"));
}

/// A `fold` names itself, how many messages were over the budget and how many more went to reach
/// the low-water mark, the history's tokens before and after, and each message it dropped.
#[tokio::test]
async fn a_history_trim_says_what_was_over_the_budget_and_what_the_fold_added() {
    use crate::chat::ChatMessage;
    use crate::history::{HistoryTrimPolicy, history_tokens, trim_history, trim_history_with};

    let mut def = testing::def(vec![testing::call("answer", "answer", "end")]);
    let StepKind::CallModel(spec) = &mut def.steps[0].kind else { unreachable!() };
    spec.use_history = true;
    def.settings = def.settings.clone().history_trim(Some("fold".into())).history_low_water_percent(Some(40));
    let p = testing::loaded(def);
    let budget = p.max_history_tokens().expect("a history budget");
    let fold = HistoryTrimPolicy::Fold { low_water_percent: 40 };
    assert_eq!(p.history_trim(), fold);
    let old = "An earlier answer about invoices and their totals. ".repeat(30);
    let mut state = PipelineState::new("Why is it higher?");
    for i in 0..12 {
        state.history_dialog.push(ChatMessage::user(format!("question {i}")));
        state.history_dialog.push(ChatMessage::assistant(old.clone()));
    }
    let history = state.history_dialog.clone();
    let counter = p.counter();
    let over = trim_history(&history, budget, counter).unwrap();
    let folded = trim_history_with(&history, budget, fold, counter).unwrap();
    assert!(over.removed > 0 && folded.removed > over.removed, "{over:?} {folded:?}");

    let model = crate::llm::offline::OfflineModel::new(counter.clone());
    let (_, reports) = p.run(state, &StepEnv::builder().model(&model)).await.unwrap();
    let StepDetail::CallModel(call) = &reports[0].detail else { panic!("{reports:?}") };
    let trim = call.history_trim.as_ref().expect("the trim's report");
    assert_eq!((trim.over_budget, trim.to_low_water), (over.removed, folded.removed - over.removed));
    assert_eq!(trim.tokens_before, history_tokens(counter, &history).unwrap());
    assert_eq!(trim.tokens_after, folded.kept_tokens);
    assert_eq!(trim.low_water_tokens(), Some(fold.cut_to(budget)));
    let costs = counter.message_costs(&history).unwrap();
    let dropped: Vec<(usize, usize)> = trim.dropped.iter().map(|m| (m.index, m.tokens)).collect();
    assert_eq!(dropped, (0..folded.removed).map(|i| (i, costs[i])).collect::<Vec<_>>());

    let report = RunReport::new(&p, &reports);
    let change = report.requests[0].changes.iter().find(|c| c.kind == ChangeKind::Dropped).expect("the trim");
    assert_eq!(change.by, "answer, history_trim: fold (history_low_water_percent 40)");
    let expected = format!(
        "{} oldest history message(s) dropped, {} → {} tokens: {} over max_history_tokens {budget}, then {} more down \
         to the low-water mark of {} tokens (history_trim: fold, history_low_water_percent 40): #0 user {}, #1 assistant {}",
        folded.removed,
        trim.tokens_before,
        folded.kept_tokens,
        over.removed,
        folded.removed - over.removed,
        fold.cut_to(budget),
        costs[0],
        costs[1],
    );
    assert!(change.what.starts_with(&expected), "{}\n{expected}", change.what);
    assert_eq!(change.what.matches(" assistant ").count() + change.what.matches(" user ").count(), folded.removed);
}
