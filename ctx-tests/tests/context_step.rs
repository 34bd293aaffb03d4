//! A model step that assembles a declared context: `call_model { context: support }` in a
//! pipeline whose `contexts { … }` declares the context and its retriever. The request sent is
//! exactly the context's assembly (the step's prompt as the base system prompt, the retrieved pack,
//! the conversation's history, the user message from the pipeline's variables), counted with the
//! real tokenizer, within the context's input budget and the model's window; the step report shows
//! the assembly; a failing retriever fails the step by name and changes nothing. An `agent` step
//! with the same context sends the assembly first and appends its tool calls to it.

use std::sync::Mutex;

use ctx::engine::{ContextPack, ContextPackBlock, ContextRetrieverRequest, Retriever, RetrieverError};
use ctx::llm::{ChatModel, ChatRequest, ChatResponse, ModelError};
use ctx::pipeline::StepDetail;
use ctx::{ChatMessage, ErrorCode};

ctx::pipeline! {
    /// A support bot whose answer step assembles the `support` context.
    pub pipeline Support {
        model { context_window: 2_048, max_tokens: 256, encoding: cl100k_base }
        settings { max_context_tokens: 1_000 }
        prompts { answer: "You are a support agent." }
        steps {
            ticket: set_variables { rules: [ ticket = "T-42" ], next: answer },
            answer: call_model { prompt_key: answer, context: support, max_output_tokens: 200, next: end },
        }
        contexts {
            retrievers { kb { query: "{input.user_question}", limit: 2 } }
            contexts {
                support {
                    inputs: [user_question, ticket],
                    policy { input_budget { max_tokens: 600 } },
                    messages: [
                        system: "Answer from the documents only.",
                        context: kb,
                        history,
                        user: "Ticket {input.ticket}: {input.user_question}",
                    ],
                }
            }
        }
    }
}

/// Two documents per page, numbered by offset; fails when the query says so.
#[derive(Default)]
struct Docs {
    requests: Mutex<Vec<ContextRetrieverRequest>>,
}

impl Retriever for Docs {
    async fn retrieve(&self, request: &ContextRetrieverRequest) -> Result<ContextPack, RetrieverError> {
        self.requests.lock().unwrap().push(request.clone());
        if request.query.contains("outage") {
            return Err("the index is down".into());
        }
        let block =
            |i: usize| ContextPackBlock::new(format!("doc-{i}"), format!("Doc {i}: keys rotate under Settings."));
        Ok(ContextPack::new((request.offset..request.offset + request.limit).map(block).collect()))
    }
}

/// Answers with a fixed text and keeps every request.
#[derive(Default)]
struct Model {
    requests: Mutex<Vec<ChatRequest>>,
}

impl ChatModel for Model {
    fn model_name(&self) -> &str {
        "scripted"
    }

    async fn chat(&self, request: &ChatRequest) -> Result<ChatResponse, ModelError> {
        self.requests.lock().unwrap().push(request.clone());
        Ok(ChatResponse::new("Open Settings, then API keys."))
    }
}

#[tokio::test]
async fn the_request_is_the_assembly_counted_exactly_and_within_the_window() {
    let (model, docs) = (Model::default(), Docs::default());
    let env = SupportEnv { model: &model, retriever: &docs };
    let pipeline = Support::new().unwrap();
    let counter = pipeline.pipeline().counter().clone();
    let mut chat = pipeline.conversation();

    let first = chat.ask("How do I rotate keys?", &env).await.unwrap();
    assert_eq!(first.text, "Open Settings, then API keys.");
    let sent = model.requests.lock().unwrap()[0].clone();
    let system = "You are a support agent.\n\nAnswer from the documents only.\n\n\
                  Doc 0: keys rotate under Settings.\n\nDoc 1: keys rotate under Settings.";
    assert_eq!(sent.messages, [ChatMessage::system(system), ChatMessage::user("Ticket T-42: How do I rotate keys?")]);
    let asked = docs.requests.lock().unwrap()[0].clone();
    assert_eq!(
        (asked.retriever.as_str(), asked.query.as_str(), asked.offset, asked.limit),
        ("kb", "How do I rotate keys?", 0, 2)
    );
    // The pack's room: the input budget less the fixed messages, which the assembly counted.
    assert!(asked.max_tokens.is_some_and(|room| room < 600), "{asked:?}");
    // Counted with the real tokenizer: the guard's count is the count of exactly these messages.
    let exact = counter.count_messages(&sent.messages).unwrap();
    assert_eq!(sent.predicted_prompt_tokens, Some(exact));
    assert_eq!((sent.max_tokens, sent.step_id.as_deref()), (200, Some("answer")));
    // Within the context's input budget, and with the output and the margin within the window.
    assert!(exact <= 600, "{exact}");
    assert!(exact + sent.max_tokens + 128 <= 2_048);

    // The step report: the request as sent, the assembly pack by pack, the parts adding up.
    let StepDetail::CallModel(report) = &first.reports[1].detail else { panic!("{:?}", first.reports[1]) };
    assert_eq!(report.request.prompt_tokens, exact);
    let assembly = report.context.as_ref().expect("the assembly is reported");
    assert_eq!((assembly.context.as_str(), assembly.max_tokens, assembly.total_tokens), ("support", Some(600), exact));
    assert_eq!(assembly.packs[0].included, ["doc-0", "doc-1"]);
    // The anatomy cuts the guard's count into the assembled parts: the system prompt (with the
    // pack), the user message the context made, the chat format's priming.
    let anatomy = report.request.anatomy.get();
    assert_eq!(anatomy.parts.iter().map(|p| p.tokens).sum::<usize>(), exact);
    let kinds: Vec<&str> = anatomy.parts.iter().map(|p| p.kind.name()).collect();
    assert!(kinds.contains(&"system") && kinds.contains(&"question"), "{kinds:?}");

    // The conversation goes on: the context's `history` message carries the first exchange.
    chat.ask("And the old ones?", &env).await.unwrap();
    let sent = model.requests.lock().unwrap()[1].clone();
    assert_eq!(
        sent.messages[1..],
        [
            ChatMessage::user("How do I rotate keys?"),
            ChatMessage::assistant("Open Settings, then API keys."),
            ChatMessage::user("Ticket T-42: And the old ones?"),
        ]
    );
    assert_eq!(sent.predicted_prompt_tokens, Some(counter.count_messages(&sent.messages).unwrap()));
}

#[tokio::test]
async fn a_failing_retriever_fails_the_step_by_name_and_changes_nothing() {
    let (model, docs) = (Model::default(), Docs::default());
    let env = SupportEnv { model: &model, retriever: &docs };
    let mut chat = Support::new().unwrap().conversation();
    chat.ask("How do I rotate keys?", &env).await.unwrap();
    let before = chat.state().clone();
    let err = chat.ask("Is there an outage?", &env).await.unwrap_err();
    assert_eq!(err.code().as_str(), "ENGINE_RETRIEVER_FAILED", "{err}");
    assert!(err.to_string().contains("step `answer`"), "{err}");
    assert_eq!(chat.state(), &before);
    assert_eq!(model.requests.lock().unwrap().len(), 1, "nothing was sent");
}

/// The definition the macro generated round-trips through YAML, `contexts` and `context` included.
#[cfg(feature = "yaml")]
#[test]
fn the_definition_round_trips_through_yaml() {
    use ctx::pipeline::StepMachine;
    let def = SupportStep::definition();
    assert_eq!(def.contexts.contexts[0].name, "support");
    let text = ctx::pipeline::yaml::to_yaml(&def);
    let back = ctx::pipeline::yaml::PipelineFile::decode(&text, "/nowhere/support.yaml").unwrap();
    assert_eq!(back, def, "{text}");
}

ctx::pipeline! {
    /// The same context, assembled by an `agent` step that may look the ticket up first.
    pub pipeline SupportAgent {
        model { context_window: 2_048, max_tokens: 256, encoding: cl100k_base }
        settings { max_context_tokens: 1_000 }
        prompts { answer: "You are a support agent." }
        steps {
            ticket: set_variables { rules: [ ticket = "T-42" ], next: answer },
            answer: agent {
                prompt_key: answer,
                context: support,
                tools: [
                    lookup_ticket {
                        description: "The ticket's status",
                        parameters: r#"{"type":"object","properties":{"id":{"type":"string"}},"required":["id"]}"#,
                    },
                ],
                max_tool_calls: 2,
                max_output_tokens: 200,
                next: end,
            },
        }
        contexts {
            retrievers { kb { query: "{input.user_question}", limit: 2 } }
            contexts {
                support {
                    inputs: [user_question, ticket],
                    policy { input_budget { max_tokens: 600 } },
                    messages: [
                        system: "Answer from the documents only.",
                        context: kb,
                        history,
                        user: "Ticket {input.ticket}: {input.user_question}",
                    ],
                }
            }
        }
    }
}

/// Looks the ticket up once, then answers.
#[derive(Default)]
struct Agent {
    requests: Mutex<Vec<ChatRequest>>,
}

impl ChatModel for Agent {
    fn model_name(&self) -> &str {
        "scripted"
    }

    async fn chat(&self, request: &ChatRequest) -> Result<ChatResponse, ModelError> {
        let mut requests = self.requests.lock().unwrap();
        requests.push(request.clone());
        Ok(if requests.len() == 1 {
            ChatResponse::new("").tool_calls(vec![ctx::ToolCall::new("call_1", "lookup_ticket", r#"{"id":"T-42"}"#)])
        } else {
            ChatResponse::new("T-42 is resolved: open Settings, then API keys.")
        })
    }
}

struct Tickets;

impl SupportAgentTools for Tickets {
    async fn lookup_ticket(
        &self,
        request: ctx::pipeline::ToolRequest<'_>,
    ) -> Result<ctx::pipeline::ToolOutput, ctx::pipeline::BoxError> {
        assert_eq!(request.arguments, r#"{"id":"T-42"}"#);
        Ok(ctx::pipeline::ToolOutput::Text("T-42: resolved on 2026-11-20.".into()))
    }
}

#[tokio::test]
async fn an_agent_step_sends_the_assembly_then_appends_its_tool_calls_counted_exactly() {
    let (model, docs) = (Agent::default(), Docs::default());
    let env = SupportAgentEnv { model: &model, tools: &Tickets, retriever: &docs };
    let pipeline = SupportAgent::new().unwrap();
    let counter = pipeline.pipeline().counter().clone();
    let (state, reports) = pipeline.run(ctx::PipelineState::new("How do I rotate keys?"), &env).await.unwrap();
    assert_eq!(state.last_model_response.as_deref(), Some("T-42 is resolved: open Settings, then API keys."));

    let sent = model.requests.lock().unwrap().clone();
    assert_eq!(sent.len(), 2);
    // The first request is the context's assembly, as for `call_model`, with the step's tools.
    let system = "You are a support agent.\n\nAnswer from the documents only.\n\n\
                  Doc 0: keys rotate under Settings.\n\nDoc 1: keys rotate under Settings.";
    let assembled = [ChatMessage::system(system), ChatMessage::user("Ticket T-42: How do I rotate keys?")];
    assert_eq!(sent[0].messages, assembled);
    assert_eq!(sent[0].tools.iter().map(|t| t.name.as_str()).collect::<Vec<_>>(), ["lookup_ticket"]);
    // The second appends the call and its result to the unchanged assembly: the prefix stays.
    assert_eq!(sent[1].messages[..2], assembled);
    assert_eq!(sent[1].messages.len(), 4);
    assert_eq!(sent[1].messages[3], ChatMessage::tool_result("call_1", "T-42: resolved on 2026-11-20."));
    // The retriever was asked once: the agent's later requests reuse the assembly.
    assert_eq!(docs.requests.lock().unwrap().len(), 1);
    // Each request is counted exactly, tools included, and fits the window with its output.
    for request in &sent {
        let exact = counter.count_request(&request.messages, &request.tools).unwrap();
        assert_eq!(request.predicted_prompt_tokens, Some(exact));
        assert!(exact + request.max_tokens <= 2_048, "{exact} + {}", request.max_tokens);
        assert_eq!(request.step_id.as_deref(), Some("answer"));
    }
    let StepDetail::Agent(report) = &reports[1].detail else { panic!("{:?}", reports[1]) };
    assert_eq!(report.requests.len(), 2);
}
