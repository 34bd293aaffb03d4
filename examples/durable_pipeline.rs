//! A pipeline served durably by the Restate engine (feature `restate`): each conversation is a
//! Restate virtual object, each question an invocation of its `ask` handler, each step a
//! journaled action. Kill the service in the middle of a question and start it again: the engine
//! replays the recorded steps (no model call is sent twice) and the question completes.
//!
//! ```sh
//! scripts/restate.sh start && eval "$(scripts/restate.sh env)"
//! cargo run --features restate --example durable_pipeline -- serve 127.0.0.1:9080 &
//! scripts/restate.sh register http://127.0.0.1:9080
//! curl -s "$CTX_RESTATE_INGRESS_URL/CtxPipeline/alice/ask" --json '{"question": "How is the invoice total computed?"}'
//! curl -s "$CTX_RESTATE_INGRESS_URL/CtxPipeline/alice/state" -X POST     # the conversation so far
//! ```
//!
//! The model is offline unless `CTX_BASE_URL` and `CTX_MODEL` name an OpenAI-compatible server
//! (with `--features restate,openai`). `cargo test --all-features` runs the test below against the
//! engine `scripts/restate.sh` started, calling it with `curl` as the commands above do.

#[path = "support/mod.rs"]
mod support;

use std::sync::Arc;

use ctx::durable::{DurableSteps, PipelineObject};
use ctx::llm::ChatModel;
use ctx::pipeline::{Backends, BoxError, NodeSearch, StepEnv};
use ctx::state::SearchHit;

ctx::pipeline! {
    /// Answers questions about a code base, remembering the conversation.
    pub pipeline DurableChat {
        model { context_window: 16_384, max_tokens: 1_024, encoding: cl100k_base }
        settings { max_context_tokens: 2_000, max_history_tokens: 1_000 }
        prompts { answer: "Answer the question from the context; quote identifiers verbatim." }
        steps {
            search: search_nodes { top_k: 3, next: fetch },
            fetch: fetch_node_texts { evidence_tokens: 1_200, next: answer },
            answer: call_model {
                prompt_key: answer,
                use_history: true,
                user_parts: [ context_blocks => "### Context:\n{}\n\n", user_question => "### User:\n{}\n\n" ],
                next: end,
            },
        }
    }
}

/// The backends, owned: a service keeps them (and the pipeline's tokenizer and count cache) for
/// its whole life and shares them between every conversation it serves.
pub struct Service<M> {
    corpus: Arc<support::Corpus>,
    model: M,
}

// The index and the model client have nothing worth printing (and a client may hold a key).
impl<M> std::fmt::Debug for Service<M> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Service").finish_non_exhaustive()
    }
}

impl<M: ChatModel> Backends<DurableChatStep> for Service<M> {
    fn step_env(&self) -> StepEnv<'_> {
        StepEnv::builder().search(self).store(&*self.corpus).model(&self.model).build()
    }
}

/// The index's hits with ties broken by id: BM25 returns equal scores in no fixed order, and the
/// test compares a run in the engine with one in process. (A durable run itself needs no such
/// care: the search step's hits are journaled and replayed as they were.)
impl<M: ChatModel> NodeSearch for Service<M> {
    async fn search(&self, query: &str, top_k: usize) -> Result<Vec<SearchHit>, BoxError> {
        let mut hits = self.corpus.search(query, top_k).await?;
        hits.sort_by(|a, b| b.score.total_cmp(&a.score).then_with(|| a.id.cmp(&b.id)));
        Ok(hits)
    }
}

/// The object serving `model` over `corpus`.
fn object(
    corpus: Arc<support::Corpus>,
    model: impl ChatModel + 'static,
) -> Result<PipelineObject, Box<dyn std::error::Error>> {
    let steps = DurableSteps::new(DurableChat::new()?, Service { corpus, model });
    Ok(PipelineObject::new(steps))
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some("serve") = args.first().map(String::as_str) else {
        println!(
            "usage: durable_pipeline serve [127.0.0.1:PORT]   (then: scripts/restate.sh register http://127.0.0.1:PORT)"
        );
        return Ok(());
    };
    let address = args.get(1).map_or("127.0.0.1:9080", String::as_str);
    let corpus = Arc::new(support::Corpus::new());
    let object = match std::env::var("CTX_BASE_URL") {
        #[cfg(feature = "openai")]
        Ok(_) => object(corpus, ctx::llm::openai::OpenAiClient::from_env()?)?,
        #[cfg(not(feature = "openai"))]
        Ok(_) => return Err("CTX_BASE_URL is set, but this build has no OpenAI client: add `--features openai`".into()),
        Err(_) => object(corpus, support::OfflineModel::default())?,
    };
    let listener = tokio::net::TcpListener::bind(address).await?;
    println!("serving {object:?} on http://{address}; register it with scripts/restate.sh register http://{address}");
    object.serve(listener).await;
    Ok(())
}

#[cfg(test)]
mod tests {
    use ctx::PipelineState;
    use ctx::durable::RunOutcome;
    use serde_json::json;

    use super::*;

    /// The engine started by `scripts/restate.sh start` (`.ci/run` does), through the variables
    /// `scripts/restate.sh env` prints; `None` (and a message) when there is none outside CI.
    fn engine() -> Option<(String, String)> {
        let ingress = std::env::var("CTX_RESTATE_INGRESS_URL").ok();
        let admin = std::env::var("CTX_RESTATE_ADMIN_URL").ok();
        match (ingress, admin) {
            (Some(i), Some(a)) => Some((i, a)),
            _ if std::env::var("CI").is_ok_and(|v| v == "true") => {
                panic!("CI=true but no engine: run scripts/restate.sh start and eval \"$(scripts/restate.sh env)\"")
            }
            _ => {
                eprintln!(
                    "durable_pipeline: skipped: no engine (scripts/restate.sh start; eval \"$(scripts/restate.sh env)\")"
                );
                None
            }
        }
    }

    /// POSTs `body` as JSON (or nothing) to `url` with `curl`, as `scripts/restate.sh` does, and
    /// returns the JSON answer (`null` for an empty one); a failed call or a status over 399
    /// fails the test with curl's and the engine's message. curl runs on tokio's blocking pool:
    /// the engine calls the service back on this test's runtime meanwhile.
    async fn post(url: String, body: Option<serde_json::Value>) -> serde_json::Value {
        let mut curl = std::process::Command::new("curl");
        curl.args(["-sS", "--noproxy", "*", "--max-time", "120", "--fail-with-body", "-X", "POST", &url]);
        if let Some(body) = body {
            curl.args(["-H", "content-type: application/json", "--data-binary", &body.to_string()]);
        }
        let output = tokio::task::spawn_blocking(move || curl.output()).await.expect("joined").expect("curl runs");
        let text = String::from_utf8_lossy(&output.stdout);
        assert!(output.status.success(), "{url}: {}{text}", String::from_utf8_lossy(&output.stderr));
        serde_json::from_str(&text).unwrap_or(serde_json::Value::Null)
    }

    #[tokio::test]
    async fn a_durable_conversation_equals_the_in_process_one() {
        let Some((ingress, admin)) = engine() else { return };
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("a free port");
        let address = listener.local_addr().expect("bound");
        let corpus = Arc::new(support::Corpus::new());
        let service =
            tokio::spawn(object(Arc::clone(&corpus), support::OfflineModel::default()).expect("loads").serve(listener));
        post(format!("{admin}/deployments"), Some(json!({ "uri": format!("http://{address}"), "force": true }))).await;

        // Two questions of one conversation through the engine, and the same two in process.
        let questions = ["How is the invoice total computed?", "Which function rounds it?"];
        let conversation = format!("example-{}-{}", std::process::id(), address.port());
        // The engine may outlive test runs: start the conversation from nothing.
        post(format!("{ingress}/CtxPipeline/{conversation}/clear"), None).await;
        let mut local = DurableChat::new().expect("loads").conversation();
        let env = Service { corpus, model: support::OfflineModel::default() };
        for question in questions {
            let url = format!("{ingress}/CtxPipeline/{conversation}/ask");
            let outcome: RunOutcome =
                serde_json::from_value(post(url, Some(json!({ "question": question }))).await).expect("a run outcome");
            let answer = local.ask(question, &env).await.expect("runs in process");
            let reports: Vec<_> = answer.reports.iter().map(|r| serde_json::to_value(r).expect("serialises")).collect();
            assert_eq!(outcome.reports, reports, "{question}");
            assert_eq!(&outcome.state, local.state(), "{question}");
        }
        // The second question was answered with the first in its history, and the engine keeps it.
        assert!(local.history().iter().any(|m| m.content.contains(questions[0])), "{:?}", local.history());
        let kept: Option<PipelineState> =
            serde_json::from_value(post(format!("{ingress}/CtxPipeline/{conversation}/state"), None).await)
                .expect("a state");
        assert_eq!(kept.as_ref(), Some(local.state()));
        service.abort();
    }
}
