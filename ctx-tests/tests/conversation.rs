//! A chat service in three lines: `Conversation` carries the history and the variables from
//! question to question, starts each question from a fresh state, keeps the history within its
//! budget however long the conversation, streams when asked, and is unchanged by a failed
//! question.

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

use ctx::llm::{ChatModel, ChatRequest, ChatResponse, ModelError};
use ctx::pipeline::Token;
use ctx::{ChatMessage, Role};

ctx::pipeline! {
    /// A support bot: no retrieval, the question and the history.
    pub pipeline Support {
        model { context_window: 4_096, max_tokens: 512, encoding: cl100k_base }
        settings { max_context_tokens: 1_000, max_history_tokens: 300 }
        prompts { answer: "You are a helpful support agent. Answer briefly." }
        steps {
            answer: call_model {
                prompt_key: answer,
                max_output_tokens: 200,
                temperature: 0.3,
                user_parts: [ user_question => "{}" ],
                use_history: true,
                next: end,
            },
        }
    }
}

ctx::pipeline! {
    /// A bot that first summarises the question's context for itself, then answers: only the
    /// answer is for the user.
    pub pipeline Notes {
        model { context_window: 4_096, max_tokens: 512, encoding: cl100k_base }
        settings { max_context_tokens: 1_000, max_history_tokens: 300 }
        prompts { summarize: "Summarise the question.", answer: "Answer briefly." }
        steps {
            summarize: call_model { prompt_key: summarize, max_output_tokens: 100, next: answer },
            answer: call_model {
                prompt_key: answer,
                max_output_tokens: 200,
                user_parts: [ last_model_response => "Summary: {}\n\n", user_question => "{}" ],
                use_history: true,
                next: end,
            },
        }
    }
}

/// Replies with a long, numbered answer, and fails when told to.
#[derive(Default)]
struct Agent {
    requests: Mutex<Vec<ChatRequest>>,
    fail: AtomicBool,
}

impl ChatModel for Agent {
    fn model_name(&self) -> &str {
        "agent"
    }

    async fn chat(&self, request: &ChatRequest) -> Result<ChatResponse, ModelError> {
        if self.fail.load(Ordering::SeqCst) {
            return Err(ModelError::Http {
                model: "agent".into(),
                status: 503,
                message: "busy".into(),
                error_type: None,
                error_code: None,
            });
        }
        let mut requests = self.requests.lock().unwrap();
        requests.push(request.clone());
        let n = requests.len();
        Ok(ChatResponse::new(format!("Answer {n}: {}", "the settings page lists every key and its scope. ".repeat(3))))
    }
}

#[tokio::test]
async fn history_and_variables_carry_over_and_the_history_stays_in_budget() {
    let model = Agent::default();
    let env = SupportEnv { model: &model };
    let mut chat = Support::new().unwrap().conversation();
    chat.set_variable("customer", "ACME");

    let first = chat.ask("How do I rotate the API keys?", &env).await.unwrap();
    assert!(first.text.starts_with("Answer 1:"), "{}", first.text);
    assert_eq!(first.reports.len(), 1);
    assert_eq!(chat.history().len(), 2);
    assert_eq!(chat.history()[0], ChatMessage::user("How do I rotate the API keys?"));

    let second = chat.ask("And the old ones?", &env).await.unwrap();
    assert!(second.text.starts_with("Answer 2:"));
    // The second request carried the first exchange between the system prompt and the question.
    let requests = model.requests.lock().unwrap().clone();
    let sent = &requests[1].messages;
    assert_eq!(sent[1], ChatMessage::user("How do I rotate the API keys?"));
    assert_eq!(sent[2].role, Role::Assistant);
    assert_eq!(sent.last().unwrap(), &ChatMessage::user("And the old ones?"));
    assert_eq!(requests[1].params.temperature, Some(0.3));
    assert_eq!(chat.variables()["customer"], "ACME");
    assert_eq!(chat.turns(), 2);
    // A question starts fresh: nothing of the last run's per-question fields is left but the reply.
    assert_eq!(chat.state().user_question, "And the old ones?");

    // However long the conversation, what is sent stays within max_history_tokens.
    let counter = Support::new().unwrap().pipeline().counter().clone();
    for i in 0..25 {
        chat.ask(format!("Follow-up question number {i}?"), &env).await.unwrap();
    }
    for request in model.requests.lock().unwrap().iter() {
        let history = &request.messages[1..request.messages.len() - 1];
        assert!(ctx::history::history_tokens(&counter, history).unwrap() <= 300);
    }
    assert!(chat.history().len() < 2 * 27, "the history was trimmed: {}", chat.history().len());
}

#[tokio::test]
async fn a_failed_question_changes_nothing_and_streaming_gives_the_same_answer() {
    let model = Agent::default();
    let env = SupportEnv { model: &model };
    let mut chat = Support::new().unwrap().conversation();
    chat.ask("First?", &env).await.unwrap();
    let before = chat.state().clone();

    model.fail.store(true, Ordering::SeqCst);
    let err = chat.ask("Second?", &env).await.unwrap_err();
    assert!(err.to_string().contains("answer"), "{err}");
    assert_eq!(chat.state(), &before);
    assert_eq!(chat.turns(), 1);

    model.fail.store(false, Ordering::SeqCst);
    let pieces = Mutex::new(String::new());
    let answer = chat
        .ask_streaming("Second?", &env, |t: Token<'_, SupportStep>| pieces.lock().unwrap().push_str(t.text))
        .await
        .unwrap();
    assert_eq!(*pieces.lock().unwrap(), answer.text);
    assert_eq!(chat.history().len(), 4);

    // Saved and resumed, the conversation goes on where it was.
    let saved = serde_json::to_string(chat.state()).unwrap();
    let mut resumed =
        ctx::pipeline::Conversation::resume(Support::new().unwrap(), serde_json::from_str(&saved).unwrap());
    resumed.ask("Third?", &env).await.unwrap();
    assert_eq!(resumed.history().len(), 6);
}

/// A chat service streams the answer, not the internal summary: each piece comes with its step
/// as the pipeline's step enum, so the filter is a comparison the compiler checks. (The sink once
/// got the step id as a string, and every reply of the run, summary included, was streamed.)
#[tokio::test]
async fn a_streaming_sink_gets_the_typed_step_and_shows_only_the_answer() {
    let model = Agent::default();
    let env = NotesEnv { model: &model };
    let mut chat = Notes::new().unwrap().conversation();
    let seen = Mutex::new(Vec::new());
    let shown = Mutex::new(String::new());
    let sink = |t: Token<'_, NotesStep>| {
        seen.lock().unwrap().push(t.step);
        if t.step == NotesStep::Answer {
            shown.lock().unwrap().push_str(t.text);
        }
    };
    let answer = chat.ask_streaming("How do I rotate the API keys?", &env, sink).await.unwrap();
    let mut steps = seen.into_inner().unwrap();
    steps.dedup();
    assert_eq!(steps, [NotesStep::Summarize, NotesStep::Answer]);
    assert_eq!(shown.into_inner().unwrap(), answer.text);
    assert!(answer.text.starts_with("Answer 2:"), "the second request answers: {}", answer.text);
}

ctx::pipeline! {
    /// Keeps its answers as the context of the next question (`carry_context: true`).
    pub pipeline Notebook {
        model { context_window: 4_096, max_tokens: 512, encoding: cl100k_base }
        settings { max_context_tokens: 1_000, carry_context: true }
        prompts { answer: "Answer briefly." }
        steps {
            answer: call_model {
                prompt_key: answer,
                max_output_tokens: 200,
                user_parts: [ context_blocks => "### Context:\n{}\n\n", user_question => "### User:\n{}" ],
                next: remember,
            },
            remember: set_variables { rules: [ context_blocks <- last_model_response | to_context_blocks ], next: end },
        }
    }
}

/// `carry_context: true`, declared in the pipeline, makes a conversation keep the context for
/// the next question (a conversation once started every question with an empty context).
#[tokio::test]
async fn a_pipeline_that_carries_its_context_sees_it_on_the_next_question() {
    assert_eq!(Notebook::definition().settings.carry_context, Some(true));
    let model = Agent::default();
    let env = NotebookEnv { model: &model };
    let mut chat = Notebook::new().unwrap().conversation();
    let first = chat.ask("How do I rotate the API keys?", &env).await.unwrap();
    assert_eq!(chat.context(), std::slice::from_ref(&first.text));
    chat.ask("And the old ones?", &env).await.unwrap();
    let requests = model.requests.lock().unwrap().clone();
    let sent = &requests[1].messages.last().unwrap().content;
    assert!(sent.contains(&first.text), "the second question saw the first answer as context: {sent}");
    assert!(Notebook::new().unwrap().pipeline().warnings().is_empty());
}
