//! Exact budgets for a model that is not OpenAI's, against the real server: SmolLM2-135M-Instruct
//! served by llama-cpp-python (`scripts/llama-server.sh`). For every request ctx's predicted
//! prompt tokens equal the server's `usage.prompt_tokens`; the window is the server's own; a
//! request that would not fit is refused by ctx before it is sent; streaming works.

mod llama_support;

use ctx_runtime::contract::{ContractError, guard_request};
use ctx_runtime::llm::{ChatModel, ChatRequest, ModelError, ModelParams};
use ctx_runtime::tokens::TokenizerBackend;
use ctx_runtime::{ChatMessage, ErrorCode};
use llama_support::{Exchange, Llama, Recorder, llama, publish, table};

/// A real source file of the example code base: prose, code and SQL in one text.
const SERVICE: &str = include_str!("../../examples/codebase/src/Invoicing.Services/InvoiceTotalCalculator.cs");
const VIEW: &str = include_str!("../../examples/codebase/sql/views/vw_InvoiceTotals.sql");

/// Conversations that stress the template and the tokenizer's seams.
fn conversations(l: &Llama) -> Vec<(&'static str, Vec<ChatMessage>)> {
    let long_doc = l.counter.truncate_to(&SERVICE.repeat(4), 1_500).unwrap();
    vec![
        ("user only (default system inserted)", vec![ChatMessage::user("hi")]),
        ("system + user", vec![ChatMessage::system("Be terse."), ChatMessage::user("Name three primes.")]),
        (
            "multi-turn",
            vec![
                ChatMessage::system("You answer about invoices."),
                ChatMessage::user("What is a net total?"),
                ChatMessage::assistant("The sum of quantity times unit price over the lines."),
                ChatMessage::user("And the tax?"),
            ],
        ),
        ("whitespace at the seams", vec![ChatMessage::user("  leading spaces\n\n\ntrailing  \n")]),
        ("empty contents", vec![ChatMessage::system(""), ChatMessage::user("")]),
        (
            "special-token text in content",
            vec![ChatMessage::user("doc with <|im_start|>user\nfake<|im_end|> markers and <|endoftext|>")],
        ),
        ("unicode", vec![ChatMessage::user("ünïcødé 日本語の請求書 🎉🧾 — «quotes» ½ € ∑")]),
        ("sql", vec![ChatMessage::system("Explain the SQL."), ChatMessage::user(VIEW)]),
        ("tool result message", vec![ChatMessage::user("q"), ChatMessage::tool_result("call_1", "{\"total\": 42}")]),
        ("1,500-token document", vec![ChatMessage::system("Summarise."), ChatMessage::user(long_doc)]),
    ]
}

#[tokio::test]
async fn predicted_prompt_tokens_equal_the_servers_usage() {
    let Some(l) = llama("predicted_prompt_tokens_equal_the_servers_usage") else { return };
    let model = Recorder::new(&l.client);
    for (name, messages) in conversations(&l) {
        let predicted = guard_request(name, &messages, &[], 1, l.window, &l.counter).unwrap();
        let request =
            ChatRequest::new(messages, 1).predicted_prompt_tokens(Some(predicted)).step_id(Some(name.to_owned()));
        model.chat(&request).await.unwrap_or_else(|e| panic!("{name}: {e}"));
    }
    let exchanges = model.exchanges();
    publish("server_conversations", &table("Conversations: ctx's prediction vs the server", l.window, &exchanges));
    assert_eq!(exchanges.len(), conversations(&l).len());
    for e in &exchanges {
        assert!(e.predicted.is_some() && e.predicted == e.reported, "{e:?}");
    }
}

#[tokio::test]
async fn the_window_is_the_servers_context_size() {
    let Some(l) = llama("the_window_is_the_servers_context_size") else { return };
    // The probe read it from the server's own refusal; a prompt of at least that many tokens
    // is refused by the server (before it evaluates anything), and by ctx's guard.
    let messages = prompt_of(&l, l.window + 16);
    let n = l.counter.count_messages(&messages).unwrap();
    assert!((l.window..=l.window + 16).contains(&n), "{n}");
    let refused = guard_request("probe", &messages, &[], 1, l.window, &l.counter).unwrap_err();
    assert!(matches!(refused, ContractError::RequestTooLarge { .. }), "{refused}");
    let err = l.client.chat(&ChatRequest::new(messages, 1)).await.unwrap_err();
    assert!(matches!(err, ModelError::ContextLengthExceeded { .. }), "{err}");
    assert!(err.to_string().contains(&format!("maximum context length is {} tokens", l.window)), "{err}");
}

/// The longest system + user request of real text whose prompt is at most `target` tokens as
/// the server counts them (a binary search over the user text's token budget).
fn prompt_of(l: &Llama, target: usize) -> Vec<ChatMessage> {
    let source = SERVICE.repeat(1 + target / 400);
    let messages = |budget: usize| {
        let body = l.counter.truncate_to(&source, budget).unwrap();
        vec![ChatMessage::system("Reply with one word."), ChatMessage::user(body)]
    };
    let (mut lo, mut hi) = (0, target);
    while lo < hi {
        let mid = (lo + hi).div_ceil(2);
        if l.counter.count_messages(&messages(mid)).unwrap() <= target {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    messages(lo)
}

#[tokio::test]
async fn a_request_built_to_overflow_is_refused_before_it_is_sent_and_one_at_the_window_is_served() {
    let Some(l) = llama("a_request_built_to_overflow_is_refused_before_it_is_sent") else { return };
    let model = Recorder::new(&l.client);
    // Prompt + output = window + 1: llama-cpp-python would accept it and silently shorten the
    // output to fit; ctx refuses it and sends nothing.
    let messages = prompt_of(&l, l.window - 8);
    let prompt = l.counter.count_messages(&messages).unwrap();
    let err = guard_request("overflow", &messages, &[], l.window - prompt + 1, l.window, &l.counter).unwrap_err();
    assert_eq!(err.code(), "REQUEST_EXCEEDS_CONTEXT_WINDOW");
    assert!(matches!(err, ContractError::RequestTooLarge { overflow: 1, .. }), "{err}");
    assert!(model.exchanges().is_empty());

    // Prompt + output = window exactly: allowed, and the server agrees with every number.
    let max_tokens = l.window - prompt;
    let predicted = guard_request("at_window", &messages, &[], max_tokens, l.window, &l.counter).unwrap();
    let request = ChatRequest::new(messages, max_tokens)
        .predicted_prompt_tokens(Some(predicted))
        .step_id(Some("at_window".into()));
    let reply = model.chat(&request).await.unwrap();
    let exchanges = model.exchanges();
    publish("server_at_window", &table("A request of exactly n_ctx tokens", l.window, &exchanges));
    let usage = reply.usage.unwrap();
    assert_eq!(usage.prompt_tokens, predicted);
    assert_eq!(predicted + max_tokens, l.window);
    assert!(usage.prompt_tokens + usage.completion_tokens <= l.window);
}

#[tokio::test]
async fn streaming_delivers_the_reply_in_pieces() {
    let Some(l) = llama("streaming_delivers_the_reply_in_pieces") else { return };
    let messages = vec![ChatMessage::system("You are concise."), ChatMessage::user("List three colours.")];
    let predicted = guard_request("stream", &messages, &[], 24, l.window, &l.counter).unwrap();
    let request = ChatRequest::new(messages, 24)
        .params(ModelParams::default().temperature(Some(0.0)))
        .predicted_prompt_tokens(Some(predicted));
    let mut pieces = Vec::new();
    // A count sent while the reply streams: the server queues it behind the stream (with its
    // default `interrupt_requests` it would end the stream early instead).
    let mut side_count = None;
    let reply = l
        .client
        .chat_stream(&request, &mut |piece| {
            if side_count.is_none() {
                let counter = l.counter.clone();
                side_count = Some(std::thread::spawn(move || counter.count("counted while a reply streams")));
            }
            pieces.push(piece.to_owned());
        })
        .await
        .unwrap();
    assert!(pieces.len() > 1, "one piece is not a stream: {pieces:?}");
    assert_eq!(pieces.concat(), reply.content);
    assert!(!reply.content.trim().is_empty());
    // An interrupted stream ends with `[DONE]` and no finish reason.
    assert!(matches!(reply.finish_reason.as_deref(), Some("stop" | "length")), "{reply:?}");
    let side = side_count.expect("a piece arrived").join().expect("the counting thread ran");
    assert!(side.unwrap() > 0);
    // llama-cpp-python sends no usage in a stream; when a server does, it must agree.
    if let Some(usage) = reply.usage {
        assert_eq!(usage.prompt_tokens, predicted);
    }
    // The same prompt without streaming: the server's count is ctx's.
    let whole = l.client.chat(&request).await.unwrap();
    assert_eq!(whole.usage.map(|u| u.prompt_tokens), Some(predicted));
    let exchanges = [Exchange {
        step: "stream (then the same request whole)".into(),
        predicted: Some(predicted),
        reported: whole.usage.map(|u| u.prompt_tokens),
        max_tokens: 24,
        completion: whole.usage.map(|u| u.completion_tokens),
        finish_reason: reply.finish_reason.clone(),
    }];
    publish("server_stream", &table("Streaming", l.window, &exchanges));
}

#[tokio::test]
async fn the_remote_tokenizer_encodes_truncates_and_decodes_exactly() {
    let Some(l) = llama("the_remote_tokenizer_encodes_truncates_and_decodes_exactly") else { return };
    let text = format!("{VIEW}\nÉtat: 日本語 🎉 ½ — fin.");
    let ids = l.counter.encode(&text).unwrap();
    assert_eq!(ids.len(), l.counter.count(&text).unwrap());
    assert_eq!(l.counter.decode(&ids).unwrap(), text);
    let backend = l.server.tokenizer();
    assert_eq!(backend.encode(&text).unwrap(), ids);
    for limit in [0, 1, 7, 50, ids.len() - 1, ids.len()] {
        let prefix = l.counter.truncate_to(&text, limit).unwrap();
        assert!(text.starts_with(&prefix), "{limit}");
        assert!(l.counter.count(&prefix).unwrap() <= limit, "{limit}");
    }
    // A cut inside a multi-byte character does not decode: an error, never a panic.
    let emoji = l.counter.encode("🎉").unwrap();
    if emoji.len() > 1 {
        assert!(l.counter.decode(&emoji[..1]).is_err());
    }
}

/// Counting blocks for one round trip; it must neither panic nor deadlock inside either kind of
/// tokio runtime, and concurrent counts from blocking tasks must agree with sequential ones.
#[tokio::test(flavor = "current_thread")]
async fn counting_inside_a_current_thread_runtime() {
    let Some(l) = llama("counting_inside_a_current_thread_runtime") else { return };
    let n = l.counter.count("counted from async code on the runtime's only thread").unwrap();
    assert!(n > 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn counting_from_blocking_tasks_in_parallel() {
    let Some(l) = llama("counting_from_blocking_tasks_in_parallel") else { return };
    let texts: Vec<String> = (0..16).map(|i| format!("line {i}: {}", &SERVICE[..200 + i * 10])).collect();
    let sequential: Vec<usize> = texts.iter().map(|t| l.server.tokenizer().count(t).unwrap()).collect();
    let tasks: Vec<_> = texts
        .iter()
        .cloned()
        .map(|t| {
            let counter = l.counter.clone();
            tokio::task::spawn_blocking(move || counter.count(&t))
        })
        .collect();
    let mut parallel = Vec::new();
    for task in tasks {
        parallel.push(task.await.unwrap().unwrap());
    }
    assert_eq!(parallel, sequential);
}

/// Per-message costs (what history trimming walks with) add up to the exact count of the whole
/// prompt under the model's tokenizer, seams with whitespace and special-token text included;
/// a trim keeps the newest messages within the budget, by the exact count.
#[test]
fn message_costs_add_up_and_history_trims_by_the_exact_count() {
    let Some(l) = llama("message_costs_add_up_and_history_trims_by_the_exact_count") else { return };
    let history = vec![
        ChatMessage::user("Which table holds the tax rates?"),
        ChatMessage::assistant("dbo.TaxRates.\n\n"),
        ChatMessage::user("  And the <|im_end|> marker?"),
        ChatMessage::assistant(VIEW),
        ChatMessage::user("\n\nRounding?"),
        ChatMessage::assistant("Per invoice, to two decimals (fn_RoundCurrency)."),
    ];
    let costs = l.counter.message_costs(&history).unwrap();
    let whole = ctx_runtime::history::history_tokens(&l.counter, &history).unwrap();
    assert_eq!(costs.iter().sum::<usize>(), whole);
    let with_system: Vec<ChatMessage> =
        std::iter::once(ChatMessage::system("Be brief.")).chain(history.iter().cloned()).collect();
    // In context a message costs what the rendered conversation grows by: the system message
    // first (SmolLM2's template then leaves out its default system message), the rest after it.
    let in_context = l.counter.message_costs(&with_system).unwrap();
    let with_system_tokens = ctx_runtime::history::history_tokens(&l.counter, &with_system).unwrap();
    assert_eq!(in_context.iter().sum::<usize>(), with_system_tokens);
    assert_eq!(in_context[0], ctx_runtime::history::history_tokens(&l.counter, &with_system[..1]).unwrap());
    assert_eq!(
        with_system_tokens + l.counter.count_messages(&[]).unwrap(),
        l.counter.count_messages(&with_system).unwrap()
    );

    let budget = whole / 2;
    let trim = ctx_runtime::history::trim_history(&history, budget, &l.counter).unwrap();
    let kept = trim.kept(&history);
    assert!(!kept.is_empty() && kept.len() < history.len());
    assert!(trim.kept_tokens <= budget);
    assert_eq!(trim.kept_tokens, ctx_runtime::history::history_tokens(&l.counter, &kept).unwrap());
    // One more message would not have fitted.
    let one_more = &history[trim.first_kept - 1..];
    assert!(ctx_runtime::history::history_tokens(&l.counter, one_more).unwrap() > budget);
}
