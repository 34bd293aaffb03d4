//! The page: escaped, self-contained, and the numbers a reader sees are the report's.

use super::*;
use crate::report::anatomy::RequestAnatomy;
use crate::report::run::{Change, ChangeKind, StepEntry};

const HOSTILE: &str = "<script>alert('x')</script> & \"quoted\" <img src=x onerror=alert(1)>";

fn hostile_report() -> RunReport {
    let mut anatomy = RequestAnatomy::unsplit("test", 100, 50, 10, 1_000);
    anatomy.parts = vec![
        RequestPart { preview: HOSTILE.to_owned(), ..RequestPart::new(PartKind::System, HOSTILE, 40) },
        RequestPart::new(PartKind::Question, "user_question", 60),
    ];
    RunReport {
        pipeline: HOSTILE.to_owned(),
        model: Some(HOSTILE.to_owned()),
        context_window: 1_000,
        counting: "exact".to_owned(),
        steps: vec![StepEntry {
            step_id: HOSTILE.to_owned(),
            kind: "call_model".to_owned(),
            transition_key: "next".to_owned(),
            target: "end".to_owned(),
            summary: HOSTILE.to_owned(),
            model: None,
        }],
        requests: vec![RequestEntry {
            step_id: HOSTILE.to_owned(),
            step_index: 0,
            number_in_step: 1,
            anatomy,
            server_prompt_tokens: Some(101),
            completion_tokens: Some(7),
            worst_case: None,
            cost: None,
            changes: vec![Change { kind: ChangeKind::Compacted, by: HOSTILE.to_owned(), what: HOSTILE.to_owned() }],
            spend: None,
        }],
        spent_nano_usd: None,
        worst_case_nano_usd: None,
    }
}

#[test]
fn escape_covers_the_five_characters() {
    assert_eq!(
        escape(r#"<a href="x" title='y'>&</a>"#),
        "&lt;a href=&quot;x&quot; title=&#39;y&#39;&gt;&amp;&lt;/a&gt;"
    );
    assert_eq!(escape("plain é"), "plain é");
}

#[test]
fn user_text_never_becomes_markup() {
    let html = hostile_report().to_html();
    for raw in ["<script", "<img", "onerror=alert(1)>", "'x'"] {
        assert!(!html.contains(raw), "{raw} reached the page unescaped");
    }
    assert!(html.contains("&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; &quot;quoted&quot;"));
}

#[test]
fn the_page_is_self_contained_and_carries_the_counts() {
    let html = hostile_report().to_html();
    assert!(html.starts_with("<!DOCTYPE html>"));
    for remote in ["http:", "https:", "<link", "<script", "@import", "url("] {
        let outside_svg_namespace = html.replace("xmlns=\"http://www.w3.org/2000/svg\"", "");
        assert!(!outside_svg_namespace.contains(remote), "{remote}");
    }
    assert!(html.contains("data-exact=\"100\" data-window=\"1000\""));
    // Window parts: 40 + 60 prompt, 50 output, 10 margin, 840 free.
    for (kind, tokens) in [("system", 40), ("question", 60), ("output", 50), ("margin", 10), ("free", 840)] {
        assert!(html.contains(&format!("data-kind=\"{kind}\" data-tokens=\"{tokens}\"")), "{kind}");
    }
    assert!(html.contains("<td class=\"n warn\">+1</td>"), "server count differs by one");
    // 101 billed for 100 counted: the ratio the spend caps learn.
    assert!(html.contains("billed per counted token"), "{html}");
    assert!(html.contains("<td class=\"n warn\">1.010</td>"), "the ratio");
    assert!(html.contains(": 40 tokens</title>"));
}

#[test]
fn the_contract_page_draws_every_model_step() {
    use crate::pipeline::testing;
    let def = testing::def(vec![testing::call("answer", "answer", "end")]);
    let p = testing::loaded(def);
    let html = contract_to_html(p.name(), p.contract_report());
    let w = p.contract_report().step("answer").unwrap();
    assert!(html.contains(&format!(
        "data-step=\"answer\" data-exact=\"{}\" data-window=\"{}\"",
        w.worst_request_tokens, w.context_window
    )));
    assert!(html.contains(&format!("data-kind=\"free\" data-tokens=\"{}\"", w.headroom())));
    // The question's budget is drawn, and the proof is stated with it.
    assert!(w.input_tokens > 0);
    assert!(html.contains(&format!("data-kind=\"question\" data-tokens=\"{}\"", w.input_tokens)));
    assert!(html.contains("<p class=\"proof\">for any question up to"), "the proof");
    assert!(html.contains(&format!("data-kind=\"system\" data-tokens=\"{}\"", w.fixed_prompt_tokens)));
}

/// The rows of a page's worst-case tables: (term, worst case, sent).
fn worst_case_rows(html: &str) -> Vec<(String, usize, usize)> {
    let number = |row: &str, name: &str| -> usize {
        let key = format!("{name}=\"");
        let at = row.find(&key).expect("the attribute") + key.len();
        row[at..at + row[at..].find('"').expect("closed")].parse().expect("a count")
    };
    html.split("<tr class=\"term\" ")
        .skip(1)
        .map(|row| {
            let at = row.find("<td>").expect("a term") + 4;
            let term = row[at..at + row[at..].find("</td>").expect("closed")].to_owned();
            (term, number(row, "data-worst"), number(row, "data-sent"))
        })
        .collect()
}

#[tokio::test]
async fn no_term_of_a_request_is_sent_larger_than_its_worst_case() {
    use crate::llm::offline::OfflineModel;
    use crate::pipeline::{StepEnv, testing};
    use crate::state::PipelineState;

    let p = testing::loaded(testing::def(vec![testing::call("answer", "answer", "end")]));
    let model = OfflineModel::new(p.counter().clone());
    let (_, reports) =
        p.run(PipelineState::new("How are totals rounded to cents?"), &StepEnv::builder().model(&model)).await.unwrap();
    let report = p.report(&reports);
    let a = &report.requests[0].anatomy;
    let w = report.requests[0].worst_case.as_ref().expect("the step's worst case");
    let question = a.tokens_of(PartKind::Question);
    // Before: the fixed prompt's row counted the question, and showed more sent than its worst
    // case whenever the question outgrew the templates' text it replaces.
    let old_fixed_row = a.tokens_of(PartKind::System) + question + a.tokens_of(PartKind::ChatFormat);
    assert!(question > 0 && old_fixed_row > w.fixed_prompt_tokens, "{a:#?}");
    let rows = worst_case_rows(&report.to_html());
    assert_eq!(rows.len(), 9, "{rows:?}");
    for (term, worst, sent) in &rows {
        assert!(sent <= worst, "{term}: sent {sent} > worst case {worst}");
    }
    let row = |prefix: &str| rows.iter().find(|(t, _, _)| t.starts_with(prefix)).expect(prefix).clone();
    let fixed = a.tokens_of(PartKind::System) + a.tokens_of(PartKind::ChatFormat);
    assert_eq!(row("fixed prompt"), (row("fixed prompt").0, w.fixed_prompt_tokens, fixed));
    assert_eq!(row("question").1, w.input_tokens);
    assert_eq!(row("question").2, question);
    assert_eq!(row("total").2, a.prompt_tokens + a.max_output_tokens + a.margin_in_window());
}

/// A pipeline on two models: the contract's header gives each model's window (not the default
/// model's alone), each bar names its model, the policy reads as the settings write it
/// (`fail_fast`, not the variant's name), and the budgets, which have no text, get no text column.
#[test]
fn the_contract_page_names_each_model_and_writes_the_policy_as_the_file_does() {
    use crate::pipeline::definition::{END, ModelSpec, StepKind};
    use crate::pipeline::testing::{call, def, loaded};
    let mut d = def(vec![call("summarise", "summarizer", "answer"), call("answer", "answer", END)]);
    let small =
        ModelSpec::default().context_window(Some(12_288)).max_tokens(Some(512)).encoding(Some("cl100k_base".into()));
    d.models = vec![("small".to_owned(), small)];
    let StepKind::CallModel(c) = &mut d.steps[0].kind else { unreachable!() };
    c.model = Some("small".into());
    let p = loaded(d);
    let html = contract_to_html("Two", p.contract_report());
    assert!(
        html.contains("context windows: model <code>small</code> 12288 tokens, the default model 16384 tokens"),
        "{html}"
    );
    assert!(html.contains("limits policy fail_fast"), "{html}");
    assert!(!html.contains("FailFast"), "{html}");
    assert!(html.contains("<code>summarise</code> on model <code>small</code>: "), "{html}");
    assert!(html.contains("data-step=\"summarise\" data-exact="), "{html}");
    assert_eq!(html.matches("data-model=\"small\"").count(), 1, "{html}");
    assert!(!html.contains("<th>text</th>") && !html.contains("class=\"preview\""), "{html}");
    // One model: its one window, as before.
    let one = contract_to_html("One", loaded(def(vec![call("answer", "answer", END)])).contract_report());
    assert!(one.contains("context window 16384 tokens · "), "{one}");
}

/// A run's request on a named model names it, in its heading and in the page's header with the
/// window of each model the requests used.
#[test]
fn a_request_on_a_named_model_names_it() {
    let mut report = hostile_report();
    assert!(report.to_html().contains("context window 1000 tokens · "));
    report.steps[0].model = Some("small".to_owned());
    let html = report.to_html();
    assert!(html.contains("context windows: model <code>small</code> 1000 tokens · "), "{html}");
    assert!(html.contains("</code> on model <code>small</code> — 100 prompt"), "{html}");
    assert!(html.contains("data-model=\"small\""), "{html}");
}
