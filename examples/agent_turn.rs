//! Progressive budgeting of one agent turn: the progressive_budgeting spec's scenario, declared
//! with `turn_budget!` and run with the exact counter.
//!
//! A 10,000-token conversation; three retrieval tool calls — "features" returns articles A (36K),
//! B (20K) and C (15K), "integrations" returns A again with D (25K) and E (20K), "architecture"
//! returns F (22K) and G (18K). Each call is told what the turn has left after everything before
//! it, each article counted once: A is not sent twice. A fourth call asks for a 120K-token
//! article when less than that is left; it is cut at a token boundary to exactly the room left, and
//! the final 80 % fallback check catches the full turn before it is sent.
//!
//! Every number printed is an exact cl100k_base count of what would be sent, chat overhead
//! included. Run with `cargo run --example agent_turn`; `cargo test` runs it too and checks it.

use ctx::history::{history_tokens, message_tokens};
use ctx::turn::{Inclusion, Partial, RankedDocument, TurnBudgetConfig, TurnError, TurnLedger, pack_documents};
use ctx::{ChatMessage, Encoding, TokenCounter, ToolCall};

ctx::turn_budget! {
    /// The spec's turn: 252K tokens left for articles after a 10K conversation, in a 272K window,
    /// checked against 80 % of it before the final request; the best article that does not fit
    /// whole is cut at a token boundary.
    fn spec_turn {
        budget_tokens: 262_000,
        context_window: 272_000,
        fallback_fraction: 0.8,
        on_partial: truncate,
        min_partial_tokens: 256,
        document_template: "<article id=\"{id}\">\n{text}\n</article>",
    }
}

/// Words that are one cl100k token each, alone and after a space.
const WORDS: [&str; 12] =
    ["process", "record", "form", "data", "workflow", "user", "field", "value", "model", "task", "report", "role"];

/// A text of exactly `tokens` tokens (checked with the counter; never assumed).
fn article(counter: &TokenCounter, seed: usize, tokens: usize) -> Result<String, TurnError> {
    let words: Vec<&str> = (0..tokens).map(|i| WORDS[(i * 5 + seed + i / 7) % WORDS.len()]).collect();
    let text = words.join(" ");
    let counted = counter.count(&text)?;
    assert_eq!(counted, tokens, "the generated article must count exactly what the scenario says");
    Ok(text)
}

fn tool_call(n: usize, query: &str) -> ToolCall {
    ToolCall::new(format!("call_{n}"), "retrieve_context", format!("{{\"query\":\"{query}\"}}"))
}

/// One tool call as the spec's table and log show it.
#[derive(Debug)]
struct CallRow {
    /// `conversation + accumulated_tools` when the call was budgeted (its own tool-call message
    /// included).
    reserved: usize,
    /// What its result could use.
    available: usize,
    /// Articles included, with their own token counts and how they were included.
    included: Vec<(String, usize, Inclusion)>,
    /// Articles skipped because the turn already holds them.
    duplicates: Vec<String>,
    /// The tool result message's exact cost.
    result_message: usize,
}

/// What the example prints, and the figures its test checks.
struct Outcome {
    lines: Vec<String>,
    rows: Vec<CallRow>,
    /// The ids the model has seen, each once, in the order first seen.
    documents: Vec<String>,
    /// (request tokens, threshold, exceeded) after three calls and after four.
    fallback: [(usize, usize, bool); 2],
    /// Whether the ledger always equalled an exact recount of the whole transcript.
    exact: bool,
    /// The conversation's tokens, and what the ledger holds at the end.
    conversation: usize,
    reserved: usize,
    config: TurnBudgetConfig,
}

fn run() -> Result<Outcome, TurnError> {
    let config = spec_turn();
    let counter = TokenCounter::for_encoding(Encoding::Cl100kBase);

    // The conversation: 10,000 tokens as a request counts them, each message's overhead included.
    let message = |make: fn(String) -> ChatMessage, seed: usize, cost: usize| -> Result<ChatMessage, TurnError> {
        let overhead = message_tokens(&counter, &make(String::new()))?;
        Ok(make(article(&counter, seed, cost - overhead)?))
    };
    let mut transcript = vec![
        message(ChatMessage::system, 1, 1_200)?,
        message(ChatMessage::user, 2, 3_000)?,
        message(ChatMessage::assistant, 3, 5_700)?,
        message(ChatMessage::user, 4, 100)?,
    ];
    let mut ledger = TurnLedger::with_messages(config.clone(), counter.clone(), &transcript)?;
    let conversation = history_tokens(&counter, &transcript)?;
    let mut exact = ledger.reserved() == conversation;

    let sizes = [("A", 36_000), ("B", 20_000), ("C", 15_000), ("D", 25_000), ("E", 20_000), ("F", 22_000)];
    let mut articles = Vec::new();
    for (seed, (id, tokens)) in sizes.iter().chain(&[("G", 18_000), ("H", 120_000)]).enumerate() {
        articles.push(RankedDocument::new(*id, article(&counter, 10 + seed, *tokens)?));
    }
    let ranked = |ids: &[&str]| -> Vec<RankedDocument> {
        ids.iter().filter_map(|id| articles.iter().find(|a| a.id == *id).cloned()).collect()
    };
    let calls: [(&'static str, Vec<RankedDocument>); 4] = [
        ("Comindware features", ranked(&["A", "B", "C"])),
        ("Comindware integrations", ranked(&["A", "D", "E"])),
        ("Comindware architecture", ranked(&["F", "G"])),
        ("Comindware full reference", ranked(&["H"])),
    ];

    let mut lines = vec![format!(
        "turn budget {} tokens, window {}, fallback at {} of the window, partial articles: {}",
        config.budget_tokens,
        config.context_window,
        config.fallback_fraction,
        config.on_partial.name()
    )];
    let mut rows = Vec::new();
    let mut fallback = [(0, 0, false); 2];
    for (n, (query, ranked)) in calls.iter().enumerate() {
        let call = tool_call(n + 1, query);
        let assistant = ChatMessage::assistant_tool_calls("", vec![call.clone()]);
        ledger.add_message(&assistant)?;
        transcript.push(assistant);
        let budget = ledger.call_budget(&call)?;
        let b = budget.breakdown;
        lines.push(format!(
            "Tool call {} {query:?}: reserved_tokens={} (conversation: {}, accumulated_tools: {}, unique_articles: {}), \
             available {}",
            n + 1,
            b.reserved,
            b.conversation,
            b.accumulated_tools,
            b.unique_documents,
            b.available
        ));
        // The same packing `TurnLedger::pack` does, spelled out: articles the turn already holds
        // are skipped, whole articles go first, the first that does not fit is truncated.
        let packed = pack_documents(
            ranked,
            &|id| ledger.contains(id),
            budget.content_tokens,
            &config.format,
            Partial::Truncate,
            config.min_partial_tokens,
            &counter,
        )?;
        let message = ledger.record(&call.id, &packed)?;
        transcript.push(message);
        // What the result adds in context (its framing names the call it answers).
        let result_message = counter.message_costs(&transcript)?.last().copied().unwrap_or_default();
        exact &= ledger.reserved() == history_tokens(&counter, &transcript)?;

        let mut included = Vec::new();
        for doc in &packed.included {
            included.push((doc.id.clone(), counter.count(&doc.text)?, doc.inclusion));
        }
        let shown: Vec<String> = included
            .iter()
            .map(|(id, tokens, how)| match how {
                Inclusion::Whole => format!("{id} ({tokens})"),
                _ => format!("{id} ({tokens}, truncated)"),
            })
            .collect();
        let articles: usize = included.iter().map(|(_, t, _)| t).sum();
        lines.push(format!(
            "  returns {} = {articles} article tokens{}; tool result message {result_message} tokens",
            shown.join(", "),
            if packed.duplicates.is_empty() {
                String::new()
            } else {
                format!(" (skipped, already in this turn: {})", packed.duplicates.join(", "))
            }
        ));
        rows.push(CallRow {
            reserved: b.reserved,
            available: b.available,
            included,
            duplicates: packed.duplicates,
            result_message,
        });
        if n >= 2 {
            let verdict = ledger.fallback_check(&transcript, &[])?;
            fallback[n - 2] = (verdict.request_tokens, verdict.threshold, verdict.exceeded);
        }
    }

    let documents: Vec<String> = ledger.documents().iter().map(|d| d.id.clone()).collect();
    Ok(Outcome { lines, rows, documents, fallback, exact, conversation, reserved: ledger.reserved(), config })
}

/// The spec's table and the end of the turn, from the outcome.
fn summary(out: &Outcome) -> Vec<String> {
    let mut lines =
        vec!["| Tool Call | Reserved Tokens | Available Budget | Retrieved | Skipped | Result Message |".to_owned()];
    for (n, row) in out.rows.iter().enumerate() {
        let retrieved: usize = row.included.iter().map(|(_, t, _)| t).sum();
        let skipped = if row.duplicates.is_empty() { "-".to_owned() } else { row.duplicates.join(", ") };
        lines.push(format!(
            "| {} | {} | {} | {retrieved} | {skipped} | {} |",
            n + 1,
            row.reserved,
            row.available,
            row.result_message
        ));
    }
    lines.push(format!("articles the model sees, each once: {}", out.documents.join(", ")));
    lines.push(format!(
        "the turn holds {} of its {} tokens ({} of them the conversation){}",
        out.reserved,
        out.config.budget_tokens,
        out.conversation,
        if out.exact { ", exactly what the transcript counts" } else { "; the transcript counts otherwise" }
    ));
    let [(three, threshold, over3), (four, _, over4)] = out.fallback;
    lines.push(format!(
        "fallback check ({} of {}): {three} tokens after three calls ({}), {four} after four ({})",
        threshold,
        out.config.context_window,
        if over3 { "over" } else { "fine" },
        if over4 { "over: compact or answer without more tools" } else { "fine" }
    ));
    lines
}

fn main() -> Result<(), TurnError> {
    let out = run()?;
    for line in out.lines.iter().chain(&summary(&out)) {
        println!("{line}");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_spec_turn_budgets_each_call_with_what_is_left() {
        let out = run().unwrap();
        let declared = TurnBudgetConfig {
            min_partial_tokens: 256,
            format: ctx::turn::DocumentFormat {
                template: "<article id=\"{id}\">\n{text}\n</article>".into(),
                ..Default::default()
            },
            ..TurnBudgetConfig::new(262_000, 272_000).with_partial(ctx::turn::PartialPolicy::Truncate)
        };
        assert_eq!(out.config, declared, "what `turn_budget!` declared");
        assert_eq!(out.conversation, 10_000);
        // Each call cost what it added, counted once, and the ledger still equals a recount of the
        // whole transcript after every call.
        assert!(out.exact, "the ledger equals an exact recount of the transcript");

        let ids = |n: usize| out.rows[n].included.iter().map(|(id, _, _)| id.as_str()).collect::<Vec<_>>();
        assert_eq!([ids(0), ids(1), ids(2)], [vec!["A", "B", "C"], vec!["D", "E"], vec!["F", "G"]]);
        assert_eq!(out.rows[1].duplicates, ["A"], "article A is sent once");
        let articles = |n: usize| out.rows[n].included.iter().map(|(_, t, _)| t).sum::<usize>();
        // The spec's retrieved column: 71K, 45K, 40K.
        assert_eq!([articles(0), articles(1), articles(2)], [71_000, 45_000, 40_000]);

        // Each call is budgeted after everything before it: reserved grows by at least the
        // previous result, and the spec's 81K and 126K appear plus what the spec does not count
        // (tool-call messages, article framing, message overhead).
        assert_eq!(out.rows[0].available, 262_000 - out.rows[0].reserved);
        for n in 1..4 {
            assert!(out.rows[n].reserved >= out.rows[n - 1].reserved + out.rows[n - 1].result_message);
            assert_eq!(out.rows[n].available, 262_000 - out.rows[n].reserved);
        }
        assert!((81_000..81_500).contains(&out.rows[1].reserved), "{}", out.rows[1].reserved);
        assert!((126_000..126_500).contains(&out.rows[2].reserved), "{}", out.rows[2].reserved);

        // The fourth call's 120K article is cut to the room left; the turn stays within budget.
        let (id, tokens, how) = &out.rows[3].included[0];
        assert_eq!((id.as_str(), *how), ("H", Inclusion::Truncated));
        assert!(*tokens < 120_000 && out.rows[3].result_message <= out.rows[3].available);
        assert!(out.reserved <= 262_000);
        assert_eq!(out.documents, ["A", "B", "C", "D", "E", "F", "G", "H"]);

        // 80 % of the 272K window: fine after three calls, over after the fourth.
        assert_eq!(out.fallback[0].1, 217_600);
        assert!(!out.fallback[0].2 && out.fallback[1].2, "{:?}", out.fallback);
        let text = summary(&out).join("\n");
        assert!(text.contains("| 2 | 81"), "{text}");
        assert!(text.contains("| A |") && text.contains("articles the model sees, each once: A, B, C, D, E, F, G, H"));
        assert_eq!(run().unwrap().lines, out.lines, "deterministic");
    }
}
