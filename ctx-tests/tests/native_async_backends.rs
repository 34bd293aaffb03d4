//! Backends written as a user writes them: plain `async fn`s in the `impl`, no macro and no
//! dependency but `ctx`; chosen at run time and held as trait objects (`Arc<dyn NodeSearchDyn>`,
//! `Arc<dyn ChatModelDyn>`, …); and run on a multi-threaded runtime, where `tokio::spawn` needs
//! the whole run's future to be `Send`.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use ctx::llm::{ChatModel, ChatModelDyn, ChatRequest, ChatResponse, ModelError};
use ctx::pipeline::{
    BoxError, CustomSteps, CustomStepsDyn, LoadOptions, LoadedPipeline, NodeSearch, NodeSearchDyn, NodeStore,
    NodeStoreDyn, StepDetail, StepEnv, Token,
};
use ctx::state::SearchHit;
use ctx::{NodeText, PipelineState};

ctx::pipeline! {
    /// Finds a note, reads it, answers from it.
    pub pipeline Lookup {
        model { context_window: 8_192, max_tokens: 256, encoding: cl100k_base }
        settings { max_context_tokens: 2_000 }
        prompts { answer: "Answer from the context." }
        steps {
            search: search_nodes { top_k: 2, next: fetch },
            fetch: fetch_node_texts { evidence_tokens: 1_000, next: answer },
            answer: call_model { prompt_key: answer, max_output_tokens: 100, next: end },
        }
    }
}

ctx::pipeline! {
    /// A custom step picks the answer's tone; the pipeline is run from its definition, as one
    /// loaded from a file is.
    pub pipeline Routed {
        model { context_window: 8_192, max_tokens: 256, encoding: cl100k_base }
        settings { max_context_tokens: 2_000 }
        prompts { answer: "Answer briefly." }
        steps {
            route: custom { outcomes { short => answer, skip => end } },
            answer: call_model { prompt_key: answer, max_output_tokens: 100, user_parts: [ user_question => "{}" ], next: end },
        }
    }
}

/// Two notes; every method yields to the runtime once, so each future really suspends.
struct Notes;

const DEPLOY_NOTE: &str = "The deploy runs at noon on weekdays.";

impl NodeSearch for Notes {
    async fn search(&self, query: &str, top_k: usize) -> Result<Vec<SearchHit>, BoxError> {
        tokio::task::yield_now().await;
        let ids = if query.contains("deploy") { vec!["deploy.md"] } else { vec!["other.md"] };
        Ok(ids.into_iter().take(top_k).map(|id| SearchHit::new(id.to_owned(), 1.0)).collect())
    }
}

impl NodeStore for Notes {
    async fn texts(&self, ids: &[String]) -> Result<Vec<NodeText>, BoxError> {
        tokio::task::yield_now().await;
        Ok(ids
            .iter()
            .filter(|id| *id == "deploy.md")
            .map(|id| NodeText::new(id.clone(), DEPLOY_NOTE).with_path("notes/deploy.md"))
            .collect())
    }

    async fn dependencies(&self, _id: &str) -> Result<Vec<String>, BoxError> {
        tokio::task::yield_now().await;
        Ok(Vec::new())
    }
}

/// Replies in two pieces when streamed, and keeps every request it is sent.
#[derive(Default)]
struct Scripted {
    requests: Mutex<Vec<ChatRequest>>,
    streamed: AtomicUsize,
}

const REPLY: [&str; 2] = ["At noon, ", "on weekdays."];

impl ChatModel for Scripted {
    fn model_name(&self) -> &str {
        "scripted"
    }

    async fn chat(&self, request: &ChatRequest) -> Result<ChatResponse, ModelError> {
        // The guard is dropped before the `.await`: holding it across would make the future not
        // `Send`, which the trait refuses at this `impl`.
        self.requests.lock().unwrap().push(request.clone());
        tokio::task::yield_now().await;
        Ok(ChatResponse::new(REPLY.concat()))
    }

    async fn chat_stream(
        &self,
        request: &ChatRequest,
        on_token: &mut (dyn for<'t> FnMut(&'t str) + Send),
    ) -> Result<ChatResponse, ModelError> {
        self.streamed.fetch_add(1, Ordering::SeqCst);
        let response = self.chat(request).await?;
        for piece in REPLY {
            tokio::task::yield_now().await;
            on_token(piece);
        }
        Ok(response)
    }
}

/// Answers short questions, skips the rest.
struct Route {
    calls: AtomicUsize,
}

impl CustomSteps for Route {
    async fn run(&self, step_id: &str, state: &mut PipelineState) -> Result<String, BoxError> {
        tokio::task::yield_now().await;
        self.calls.fetch_add(1, Ordering::SeqCst);
        assert_eq!(step_id, "route");
        Ok(if state.user_question.len() < 40 { "short" } else { "skip" }.to_owned())
    }
}

/// Generic code over `ChatModel` accepts the trait object too (`dyn ChatModelDyn` is a `ChatModel`).
async fn ask_directly(model: &(impl ChatModel + ?Sized), text: &str) -> String {
    let request = ChatRequest::new(vec![ctx::ChatMessage::user(text)], 16);
    model.chat(&request).await.expect("the scripted model answers").content
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_typed_run_on_trait_object_backends_is_send_and_reaches_each_backend() {
    let notes = Arc::new(Notes);
    let scripted = Arc::new(Scripted::default());
    // Chosen at run time: the environment holds trait objects, not the concrete types.
    let search: Arc<dyn NodeSearchDyn> = notes.clone();
    let store: Arc<dyn NodeStoreDyn> = notes;
    let model: Arc<dyn ChatModelDyn> = scripted.clone();
    assert_eq!(model.model_name(), "scripted");

    // `tokio::spawn` moves the run to a worker thread: it compiles only if the run's future,
    // with every backend future inside it, is `Send`.
    let run_model = model.clone();
    let (state, reports) = tokio::spawn(async move {
        let env = LookupEnv { search: &*search, store: &*store, model: &*run_model };
        Lookup::new()?.run(PipelineState::new("When does the deploy run?"), &env).await
    })
    .await
    .expect("the run's task finishes")
    .expect("the run reaches the end");

    let steps: Vec<&str> = reports.iter().map(|r| r.step_id.as_str()).collect();
    assert_eq!(steps, ["search", "fetch", "answer"]);
    assert_eq!(state.last_model_response.as_deref(), Some(REPLY.concat().as_str()));
    // The search found `deploy.md` (not `other.md`), the store gave its text, and the answer
    // step appended it to the context it sends.
    assert!(state.node_texts.is_empty());
    assert_eq!(state.context_blocks.len(), 1);
    assert!(state.context_blocks[0].starts_with("--- NODE ---\nid: deploy.md\n"), "{:?}", state.context_blocks);
    assert!(state.context_blocks[0].ends_with(DEPLOY_NOTE), "{:?}", state.context_blocks);
    let requests = scripted.requests.lock().unwrap().clone();
    assert_eq!(requests.len(), 1);
    assert!(requests[0].messages.iter().any(|m| m.content.contains(DEPLOY_NOTE)), "{:?}", requests[0].messages);
    assert!(
        requests[0].messages.iter().any(|m| m.content.contains("When does the deploy run?")),
        "the model is sent the question: {:?}",
        requests[0].messages
    );
    assert_eq!(scripted.streamed.load(Ordering::SeqCst), 0, "no sink, so no streaming");

    assert_eq!(ask_directly(&*model, "hello").await, REPLY.concat());
    assert_eq!(scripted.requests.lock().unwrap().len(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_loaded_run_takes_custom_steps_and_a_streaming_model_as_trait_objects() {
    let route = Arc::new(Route { calls: AtomicUsize::new(0) });
    let scripted = Arc::new(Scripted::default());
    let custom: Arc<dyn CustomStepsDyn> = route.clone();
    let model: Arc<dyn ChatModelDyn> = scripted.clone();
    let pieces = Arc::new(Mutex::new(Vec::<(String, String)>::new()));

    let loaded = LoadedPipeline::load(Routed::definition(), LoadOptions::default()).expect("checked when compiled");
    let sink_pieces = pieces.clone();
    let (state, reports) = tokio::spawn(async move {
        let sink = move |t: Token<'_>| sink_pieces.lock().unwrap().push((t.step.to_owned(), t.text.to_owned()));
        let env = StepEnv::builder().custom(&*custom).model(&*model).tokens(&sink).build();
        loaded.run(PipelineState::new("When is the deploy?"), &env).await
    })
    .await
    .expect("the run's task finishes")
    .expect("the run reaches the end");

    assert_eq!(route.calls.load(Ordering::SeqCst), 1);
    assert!(
        matches!(&reports[0].detail, StepDetail::Custom { outcome } if outcome == "short"),
        "the custom step chose `short`: {:?}",
        reports[0].detail
    );
    assert_eq!(reports.last().map(|r| r.step_id.as_str()), Some("answer"));
    assert_eq!(state.last_model_response.as_deref(), Some(REPLY.concat().as_str()));
    // The sink is set, so the run called the model's own `chat_stream` through the trait object.
    assert_eq!(scripted.streamed.load(Ordering::SeqCst), 1);
    let pieces = pieces.lock().unwrap().clone();
    assert_eq!(pieces, REPLY.map(|p| ("answer".to_owned(), p.to_owned())));
}
