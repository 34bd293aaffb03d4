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
        w.total_tokens(),
        w.context_window
    )));
    assert!(html.contains(&format!("data-kind=\"free\" data-tokens=\"{}\"", w.headroom())));
    assert!(html.contains(&format!("data-kind=\"system\" data-tokens=\"{}\"", w.fixed_prompt_tokens)));
}
