//! History trimming and the prompt cache against the real local model (issue 27, "Measure"):
//! SmolLM2-135M-Instruct served by llama-cpp-python (`scripts/llama-server.sh`), whose
//! `Llama.generate` keeps the longest prefix the new prompt shares with the tokens in its KV
//! cache (the previous prompt and its reply) and evaluates only the rest.
//!
//! The same 30-turn chat (a system prompt, then per turn one question and the model's answer,
//! the history growing until `max_history_tokens` cuts it) runs once with `history_trim:
//! oldest_first` and once with `history_trim: fold`. What llama.cpp evaluated per request is read
//! from the server's log (`llama_support::server_log`); ctx's exact counts prove every request
//! within the window. Fold must evaluate far fewer prompt tokens over the conversation.

mod llama_support;

use ctx_runtime::history::history_tokens;
use ctx_runtime::llm::{ChatModel, ChatRequest};
use ctx_runtime::pipeline::*;
use ctx_runtime::state::PipelineState;
use ctx_runtime::{ChatMessage, TokenCounter};
use llama_support::server_log::{Completion, PrefixReuse, ServerLog, parse};
use llama_support::{Llama, Recorder, llama, publish};

const TURNS: usize = 30;
/// The history budget: about eight turns of this conversation, so that it is full after the
/// first third and cut on most of the remaining turns.
const HISTORY: usize = 640;
const LOW_WATER_PERCENT: usize = 50;
/// Short answers keep a turn (question, answer, the chat format's markers) near 70 tokens.
const OUTPUT: usize = 40;

const SYSTEM: &str = "You are the support assistant of an invoicing application used by small companies. \
Answer questions about invoices, credit notes, payments and reminders in two or three sentences. \
An invoice has a number, a customer, a currency, an issue date, a due date, payment terms and one or \
more lines; each line has a quantity, a unit price, a discount and a tax code. The net total is the sum \
of the lines after discounts; the tax is computed per line and rounded half away from zero to two \
decimals; the gross total is the net total plus the tax. Only accountants may change an issued invoice, \
and only through a credit note. Reminders are sent seven, fourteen and thirty days after the due date.";

const FIELDS: [&str; TURNS] = [
    "due date",
    "tax code",
    "net total",
    "gross total",
    "currency",
    "payment terms",
    "line discount",
    "credit note number",
    "line quantity",
    "unit price",
    "rounding mode",
    "billing address",
    "customer number",
    "purchase order reference",
    "status",
    "reminder level",
    "exchange rate",
    "tax exemption reason",
    "cost center",
    "delivery date",
    "late fee",
    "approval stamp",
    "export batch",
    "e-invoice format",
    "bank account",
    "cash discount",
    "partial payment",
    "write-off amount",
    "refund reference",
    "archive date",
];

fn question(turn: usize) -> String {
    format!(
        "Question {}: what does the {} of an invoice mean, and who may change it?",
        turn + 1,
        FIELDS[turn % FIELDS.len()]
    )
}

fn definition(policy: &str) -> PipelineDef {
    let low_water = (policy == "fold").then_some(LOW_WATER_PERCENT as i64);
    PipelineDef::new("PrefixCache")
        .model(ModelSource::Inline(
            ModelSpec::default()
                .context_window(Some(8_192))
                .max_tokens(Some(OUTPUT as i64))
                .encoding(Some("cl100k_base".into())),
        ))
        .settings(
            SettingsSpec::default()
                .max_context_tokens(Some(1))
                .max_history_tokens(Some(HISTORY as i64))
                .budget_safety_margin_tokens(Some(64))
                .history_trim(Some(policy.into()))
                .history_low_water_percent(low_water),
        )
        .prompts(vec![PromptSpec::new("answer", Some(SYSTEM.into()))])
        .steps(vec![StepDef::new(
            "answer",
            StepKind::CallModel(
                CallModelSpec::new("answer", END)
                    .max_output_tokens(Some(OUTPUT as i64))
                    .user_parts(vec![UserPartSpec::new("user_question", "{}")])
                    .use_history(true),
            ),
        )])
}

/// One turn's request as ctx sent it.
#[derive(Debug, Clone)]
struct Turn {
    /// ctx's exact count of the prompt.
    prompt: usize,
    /// The server's `usage.prompt_tokens`.
    reported: Option<usize>,
    max_tokens: usize,
    window: usize,
    /// History messages sent, and what they cost.
    history_messages: usize,
    history_tokens: usize,
    /// History messages the policy cut on this turn.
    history_removed: usize,
    /// History messages output negotiation had to drop (none: the policy alone trims).
    dropped_for_output: usize,
    completion: Option<usize>,
}

/// A request that shares nothing with the conversation beyond the chat format's first marker,
/// sent before each policy's conversation so that both start from the same cache state.
async fn flush(l: &Llama) {
    let request = ChatRequest::new(vec![ChatMessage::user("Reset.")], 1);
    l.client.chat(&request).await.unwrap_or_else(|e| panic!("the flush request failed: {e}"));
}

async fn converse(l: &Llama, policy: &str) -> Vec<Turn> {
    let p = l.local.load(definition(policy), LoadOptions::new()).unwrap_or_else(|e| panic!("{policy}: {e}"));
    assert_eq!(p.context_window(), l.window);
    let model = Recorder::new(&l.client);
    let env = StepEnv::builder().model(&model).build();
    let mut history = Vec::new();
    let mut turns = Vec::new();
    for turn in 0..TURNS {
        let mut state = PipelineState::new(question(turn));
        state.history_dialog = history;
        let (state, reports) = p.run(state, &env).await.unwrap_or_else(|e| panic!("{policy}, turn {}: {e}", turn + 1));
        history = state.history_dialog;
        let [report] = reports.as_slice() else { panic!("{policy}: one step per turn, got {reports:?}") };
        let StepDetail::CallModel(call) = &report.detail else { panic!("{report:?}") };
        let sent = history.get(..history.len().saturating_sub(2)).unwrap_or(&[]);
        assert_eq!(sent.len(), call.history_messages, "the history is what was sent plus this turn");
        turns.push(Turn {
            prompt: call.request.prompt_tokens,
            reported: call.request.usage.map(|u| u.prompt_tokens),
            max_tokens: call.request.max_output_tokens,
            window: call.context_window,
            history_messages: call.history_messages,
            history_tokens: history_tokens(p.counter(), sent).unwrap(),
            history_removed: call.history_removed,
            dropped_for_output: call.request.negotiation.history_messages_dropped,
            completion: call.request.usage.map(|u| u.completion_tokens),
        });
    }
    let exchanges = model.exchanges();
    assert_eq!(exchanges.len(), TURNS, "{policy}: one request per turn");
    for (t, e) in turns.iter().zip(&exchanges) {
        assert_eq!(e.predicted, Some(t.prompt));
    }
    turns
}

/// What one policy's conversation cost llama.cpp.
struct Totals {
    prompt: usize,
    evaluated: usize,
    trimmed_turns: usize,
}

fn totals(turns: &[Turn], log: &[Completion]) -> Totals {
    Totals {
        prompt: turns.iter().map(|t| t.prompt).sum(),
        evaluated: turns.iter().zip(log).map(|(t, c)| c.evaluated(t.prompt)).sum(),
        trimmed_turns: turns.iter().filter(|t| t.history_removed > 0).count(),
    }
}

fn table(policy: &str, turns: &[Turn], log: &[Completion]) -> String {
    let mut out = format!(
        "#### `history_trim: {policy}`\n\n| turn | history sent (messages, tokens) | cut this turn | prompt (ctx = server) | \
         max_tokens | llama.cpp reused | evaluated | llama.cpp prompt eval | completion |\n\
         |---|---|---|---|---|---|---|---|---|\n"
    );
    for (i, (t, c)) in turns.iter().zip(log).enumerate() {
        let reused = match c.reuse {
            PrefixReuse::Hit { reused, .. } => reused,
            PrefixReuse::Cached => t.prompt,
            PrefixReuse::Cold | PrefixReuse::NotRemovable { .. } => 0,
        };
        out.push_str(&format!(
            "| {} | {}, {} | {} | {} | {} | {} | {} | {} | {} |\n",
            i + 1,
            t.history_messages,
            t.history_tokens,
            t.history_removed,
            t.prompt,
            t.max_tokens,
            reused,
            c.evaluated(t.prompt),
            c.perf_prompt_eval,
            t.completion.map_or_else(|| "-".to_owned(), |n| n.to_string()),
        ));
    }
    out
}

#[tokio::test]
async fn fold_trimming_makes_llama_cpp_evaluate_far_fewer_prompt_tokens_than_oldest_first() {
    let test = "fold_trimming_makes_llama_cpp_evaluate_far_fewer_prompt_tokens_than_oldest_first";
    let Some(l) = llama(test) else { return };
    let Some(log) = ServerLog::from_env(test) else { return };
    let base = std::env::var("CTX_LLAMA_BASE_URL").unwrap();
    let origin = base.trim_end_matches('/').trim_end_matches("/v1");
    assert!(
        log.text().contains(&format!("Uvicorn running on {origin}")),
        "CTX_LLAMA_LOG is not the log of the server at {origin}"
    );
    let counter: &TokenCounter = &l.counter;
    let system_tokens = counter.count(SYSTEM).unwrap();

    // Both conversations one after the other in this one test function: the server keeps one
    // KV cache, and a concurrent request would evict the prefix being measured.
    let mark = log.mark();
    flush(&l).await;
    let oldest = converse(&l, "oldest_first").await;
    flush(&l).await;
    let fold = converse(&l, "fold").await;
    let completions = log.completions_since(mark).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        completions.len(),
        2 * (TURNS + 1),
        "the server's log holds completions this test did not send: another client used the server during the \
         measurement (run the test alone, or on a server of its own via CTX_LLAMA_PORT)"
    );
    let (oldest_log, fold_log) = (&completions[1..=TURNS], &completions[TURNS + 2..]);

    let (o, f) = (totals(&oldest, oldest_log), totals(&fold, fold_log));
    let ratio = f.evaluated as f64 / o.evaluated as f64;
    publish(
        "prefix_cache",
        &format!(
            "### History trimming and llama.cpp's prefix reuse ({TURNS} turns, n_ctx {}, max_history_tokens \
             {HISTORY}, system prompt {system_tokens} tokens, max_tokens {OUTPUT})\n\n\
             | history_trim | prompt tokens sent | prompt tokens llama.cpp evaluated | share evaluated | turns cut |\n\
             |---|---:|---:|---:|---:|\n\
             | `oldest_first` | {} | {} | {:.1}% | {} |\n\
             | `fold`, low-water {LOW_WATER_PERCENT}% | {} | {} | {:.1}% | {} |\n\n\
             fold evaluated / oldest-first evaluated: {ratio:.3}\n\n{}\n{}",
            l.window,
            o.prompt,
            o.evaluated,
            100.0 * o.evaluated as f64 / o.prompt as f64,
            o.trimmed_turns,
            f.prompt,
            f.evaluated,
            100.0 * f.evaluated as f64 / f.prompt as f64,
            f.trimmed_turns,
            table("oldest_first", &oldest, oldest_log),
            table("fold", &fold, fold_log),
        ),
    );

    for (policy, turns, log) in [("oldest_first", &oldest, oldest_log), ("fold", &fold, fold_log)] {
        for (i, (t, c)) in turns.iter().zip(log).enumerate() {
            let at = format!("{policy}, turn {}: {t:?} {c:?}", i + 1);
            // Within the window by ctx's exact count, which is the server's own.
            assert_eq!(t.reported, Some(t.prompt), "{at}");
            assert!(t.prompt + t.max_tokens <= t.window, "{at}");
            assert_eq!(t.window, l.window, "{at}");
            assert!(t.history_tokens <= HISTORY, "{at}");
            // Only the policy cuts the history; output negotiation never had to.
            assert_eq!(t.dropped_for_output, 0, "{at}");
            assert_eq!(t.max_tokens, OUTPUT, "{at}");
            // The log's prefix line and llama.cpp's own counter agree (a decode of a single token
            // is booked as generation by llama.cpp, hence the one-token seam).
            let evaluated = c.evaluated(t.prompt);
            assert!(evaluated <= t.prompt, "{at}");
            if evaluated >= 2 {
                assert!(
                    c.perf_prompt_eval == evaluated || c.perf_prompt_eval + 1 == evaluated,
                    "{at}: llama.cpp's counter disagrees with its prefix line"
                );
            }
            if let PrefixReuse::Hit { reused, remaining } = c.reuse {
                assert_eq!(reused + remaining, t.prompt, "{at}");
            }
        }
    }
    // The history really was cut, many times: oldest-first on every turn once it was full, fold
    // in a few folds of half the budget each.
    assert!(o.trimmed_turns >= TURNS / 2, "oldest_first cut the history on {} turns only", o.trimmed_turns);
    assert!(f.trimmed_turns >= 3, "fold cut the history {} times only", f.trimmed_turns);
    assert!(f.trimmed_turns < o.trimmed_turns);

    // The physics. A turn adds t ≈ 70 tokens to the history (question, answer, the chat format's
    // markers), but when nothing before it moved llama.cpp evaluates only q ≈ 32 of them: the
    // answer is already in its KV cache, generated there by the previous request. With a history
    // budget H = 640: once the history is full, oldest-first drops its first message on every
    // turn, so the common prefix ends at the end of the system prompt and llama.cpp re-evaluates
    // the whole history, ≈ H, on every turn. A fold to L = H/2 re-evaluates ≈ L + q once every
    // (H − L)/t turns and q otherwise: on average q + L·t/(H − L) = q + t ≈ 100 per turn. The
    // steady-state ratio is therefore ≈ (q + t)/H ≈ 0.16; the first turns, identical for both
    // policies (each appends to a cached prefix), raise it slightly. At most half leaves room
    // for answers and questions of other lengths, while a fold that moved the prefix would
    // evaluate about as much as oldest-first (a ratio near 1).
    assert!(
        2 * f.evaluated <= o.evaluated,
        "fold evaluated {} prompt tokens, oldest-first {} (ratio {ratio:.3}): expected at most half",
        f.evaluated,
        o.evaluated
    );
}

/// The log parser on lines as the server writes them (llama-cpp-python 0.3.36), no server needed.
#[test]
fn the_server_log_is_read_completion_by_completion() {
    let log = "\
INFO:     127.0.0.1:52566 - \"GET /v1/models HTTP/1.1\" 200 OK
llama_perf_context_print:        load time =       0.22 ms
llama_perf_context_print: prompt eval time =       0.05 ms /    36 tokens (    0.00 ms per token, 750000.00 tokens per second)
llama_perf_context_print:        eval time =      26.51 ms /     1 runs   (   26.51 ms per token,    37.73 tokens per second)
llama_perf_context_print:       total time =     222.96 ms /    37 tokens
llama_perf_context_print:    graphs reused =          0
INFO:     127.0.0.1:52576 - \"POST /v1/chat/completions HTTP/1.1\" 200 OK
Llama.generate: 34 prefix-match hit, remaining 10 prompt tokens to eval
llama_perf_context_print:        load time =       0.28 ms
llama_perf_context_print: prompt eval time =      97.62 ms /    10 tokens (    9.76 ms per token,   102.44 tokens per second)
llama_perf_context_print:        eval time =     592.83 ms /    19 runs   (   31.20 ms per token,    32.05 tokens per second)
llama_perf_context_print:       total time =     700.04 ms /    29 tokens
INFO:     127.0.0.1:57616 - \"POST /v1/chat/completions HTTP/1.1\" 200 OK
Llama.generate: full prompt already cached, skipping reset
llama_perf_context_print: prompt eval time =       0.00 ms /     1 tokens (    0.00 ms per token,      inf tokens per second)
llama_perf_context_print:        eval time =       0.00 ms /     1 runs   (    0.00 ms per token,      inf tokens per second)
llama_perf_context_print:       total time =       1.00 ms /     2 tokens
";
    let completions = parse(log).unwrap();
    assert_eq!(
        completions,
        [
            Completion { reuse: PrefixReuse::Cold, perf_prompt_eval: 36, perf_eval_runs: 1 },
            Completion {
                reuse: PrefixReuse::Hit { reused: 34, remaining: 10 },
                perf_prompt_eval: 10,
                perf_eval_runs: 19
            },
            Completion { reuse: PrefixReuse::Cached, perf_prompt_eval: 1, perf_eval_runs: 1 },
        ]
    );
    assert_eq!(completions[0].evaluated(36), 36);
    assert_eq!(completions[1].evaluated(44), 10);
    assert_eq!(completions[2].evaluated(44), 0);
    // A completion still running at the end (another client) and interleaved lines are errors.
    assert!(parse("Llama.generate: 3 prefix-match hit, remaining 5 prompt tokens to eval\n").is_err());
    let interleaved = "Llama.generate: 3 prefix-match hit, remaining 5 prompt tokens to eval\n\
                       Llama.generate: 4 prefix-match hit, remaining 6 prompt tokens to eval\n";
    assert!(parse(interleaved).unwrap_err().contains("interleaved"));
    assert!(parse("Llama.generate: something new\n").is_err());
}
