//! Retrieval by embeddings from a real vector store: SQLite with the sqlite-vec extension (rig's
//! `rig-sqlite`, embedded: no server, no network), filled with documents embedded by the local
//! server's `/v1/embeddings` (the served GGUF, mean-pooled) through rig's OpenAI provider. A
//! `pipeline!` RAG pipeline searches it through `RigIndex`, fetches the texts within its evidence
//! budget (counted with the served model's tokenizer, as for `Bm25Index`), and answers on the
//! same server through rig, ctx's prompt count equal to the server's.

mod llama_support;
mod rig_support;

use std::os::raw::{c_char, c_int};

use ctx::pipeline::{LoadOptions, StepDetail, StepEnv, StepMachine};
use ctx::retrieve::RigIndex;
use ctx::state::PipelineState;
use ctx_runtime::pipeline::{NodeSearch, NodeStore};
use llama_support::{llama, publish, table};
use rig_core::Embed;
use rig_core::embeddings::{EmbedError, EmbeddingsBuilder, TextEmbedder};
use rig_core::vector_store::{InsertDocuments, VectorSearchRequest, VectorStoreIndex};
use rig_sqlite::{Column, ColumnValue, SqliteDistanceMetric, SqliteVectorStore, SqliteVectorStoreTable};
use rig_support::{Recorder, chat_model, embedding_model, string_content_dialect};
use serde::{Deserialize, Serialize};

ctx::pipeline! {
    /// Search the store, fetch within 160 tokens of evidence, answer.
    pub pipeline VectorRag {
        model { context_window: 2_048, max_tokens: 256, encoding: cl100k_base }
        settings { max_context_tokens: 600, budget_safety_margin_tokens: 64 }
        prompts { answer: "Answer the question from the context. Be brief." }
        steps {
            search: search_nodes { top_k: 3, next: fetch },
            fetch: fetch_node_texts { evidence_tokens: 160, next: answer },
            answer: call_model { prompt_key: answer, max_output_tokens: 60, next: end },
        }
    }
}

/// One stored document: an id and its text.
#[derive(Clone, Debug, Serialize, Deserialize)]
struct Doc {
    id: String,
    content: String,
}

impl Embed for Doc {
    fn embed(&self, embedder: &mut TextEmbedder) -> Result<(), EmbedError> {
        embedder.embed(self.content.clone());
        Ok(())
    }
}

impl SqliteVectorStoreTable for Doc {
    fn name() -> &'static str {
        "docs"
    }

    fn schema() -> Vec<Column> {
        vec![Column::new("id", "TEXT PRIMARY KEY"), Column::new("content", "TEXT")]
    }

    fn id(&self) -> String {
        self.id.clone()
    }

    fn column_values(&self) -> Vec<(&'static str, Box<dyn ColumnValue>)> {
        vec![("id", Box::new(self.id.clone())), ("content", Box::new(self.content.clone()))]
    }
}

const QUESTION: &str = "How is the tax of an invoice rounded?";

/// Short documents on distinct subjects; one answers the question, and one is long enough that
/// the evidence budget cannot hold every hit whole.
fn corpus() -> Vec<Doc> {
    let doc = |id: &str, content: &str| Doc { id: id.to_owned(), content: content.to_owned() };
    vec![
        doc(
            "tax-rounding",
            "Invoice tax is computed per invoice: the tax rate of the customer's country is applied to \
             the net total and the tax is rounded half away from zero to two decimals.",
        ),
        doc("deploy", "Deploy the service by copying the binary and restarting it with systemd."),
        doc("colours", "The report draws system prompts in blue and tool results in orange."),
        doc("holidays", "The office is closed on public holidays and between Christmas and New Year."),
        doc(
            "invoice-numbers",
            &"Invoices are numbered in one series per year, with no gaps; a cancelled invoice keeps its \
              number and is reversed by a credit note. "
                .repeat(4),
        ),
    ]
}

type ExtensionInit = unsafe extern "C" fn(
    *mut rusqlite::ffi::sqlite3,
    *mut *mut c_char,
    *const rusqlite::ffi::sqlite3_api_routines,
) -> c_int;

/// Registers sqlite-vec with every SQLite connection this process opens (the crate compiles the
/// extension from source and links it in).
fn register_sqlite_vec() {
    // SAFETY: sqlite3_vec_init has the signature of an SQLite extension entry point, which is
    // what sqlite3_auto_extension calls it as; registering it twice is a no-op. The one unsafe
    // block of the tests: SQLite's C API is the only way to load the extension.
    #[allow(unsafe_code)]
    unsafe {
        let init = std::mem::transmute::<*const (), ExtensionInit>(sqlite_vec::sqlite3_vec_init as *const ());
        rusqlite::ffi::sqlite3_auto_extension(Some(init));
    }
}

#[tokio::test]
async fn a_rag_pipeline_retrieves_by_embeddings_from_sqlite_vec_within_its_budget() {
    let test = "a_rag_pipeline_retrieves_by_embeddings_from_sqlite_vec_within_its_budget";
    let Some(l) = llama(test) else { return };
    let Some(embedder) = embedding_model(&l, test) else { return };

    // The store: a SQLite file in a temporary folder, the documents embedded by the server.
    register_sqlite_vec();
    let dir = tempfile::tempdir().unwrap();
    let conn = tokio_rusqlite::Connection::open(dir.path().join("store.db")).await.unwrap();
    let embedded = EmbeddingsBuilder::new(embedder.clone()).documents(corpus()).unwrap().build().await.unwrap();
    let ndims = embedded[0].1[0].vec.len();
    assert!(ndims > 1, "the server answered one value per text, not an embedding");
    let store: SqliteVectorStore<Doc> =
        SqliteVectorStore::with_distance_metric(conn, ndims, SqliteDistanceMetric::Cosine).await.unwrap();
    store.insert_documents(embedded).await.unwrap();
    let index = RigIndex::new(store.index(embedder)).text_field("content");

    // The store's own ranking for the question, which the pipeline must follow.
    let request = VectorSearchRequest::builder().query(QUESTION).samples(3).build();
    let ranked: Vec<String> = index.index().top_n_ids(request).await.unwrap().into_iter().map(|h| h.id).collect();
    assert_eq!(ranked.len(), 3);
    assert_eq!(ranked[0], "tax-rounding", "the embeddings did not rank the answer first: {ranked:?}");

    let p = l.local.load(VectorRagStep::definition(), LoadOptions::new()).unwrap_or_else(|e| panic!("{e}"));
    let model = Recorder::new(chat_model(&l, &string_content_dialect()));
    let env = StepEnv::builder().search(&index).store(&index).model(&model).build();
    let (state, reports) = p.run(PipelineState::new(QUESTION), &env).await.unwrap_or_else(|e| panic!("{e}"));
    let exchanges = model.exchanges();
    publish(
        "rig_rag",
        &table("RAG from sqlite-vec through rig (embeddings from the local server)", l.window, &exchanges),
    );

    assert_eq!(reports.iter().map(|r| r.step_id.as_str()).collect::<Vec<_>>(), ["search", "fetch", "answer"]);
    let StepDetail::FetchNodeTexts(fetch) = &reports[1].detail else { panic!("{:?}", reports[1]) };
    // The hits are the store's ranking; the texts kept fit the evidence budget, counted with the
    // served model's tokenizer one by one, as fetch_node_texts counts any store's.
    assert_eq!(state.search_results.iter().map(|h| h.id.clone()).collect::<Vec<_>>(), ranked);
    assert_eq!(fetch.budget, 160);
    assert!(fetch.tokens <= fetch.budget, "{fetch:?}");
    // The texts as the store returned them (the answer step took `node_texts` into its context).
    let texts = index.texts(&fetch.fetched).await.unwrap();
    assert_eq!(texts.iter().map(|n| n.id.clone()).collect::<Vec<_>>(), fetch.fetched);
    let counted: usize = texts
        .iter()
        .map(|n| match fetch.truncated.iter().find(|t| t.id == n.id) {
            Some(cut) => {
                assert_eq!(cut.original_tokens, l.counter.count(&n.text).unwrap());
                cut.kept_tokens
            }
            None => l.counter.count(&n.text).unwrap(),
        })
        .sum();
    assert_eq!(counted, fetch.tokens, "{fetch:?}");
    assert_eq!(fetch.fetched.first().map(String::as_str), Some("tax-rounding"));
    assert!(
        fetch.fetched.len() + fetch.skipped.len() == 3 && (!fetch.truncated.is_empty() || !fetch.skipped.is_empty()),
        "the budget held every hit whole, so it was not exercised: {fetch:?}"
    );
    assert!(texts[0].metadata.contains_key("score"));
    // The answer's context holds the evidence that answers the question.
    assert!(
        state.context_blocks.iter().any(|b| b.contains("rounded half away from zero")),
        "{:?}",
        state.context_blocks
    );
    assert!(index.search("anything", 0).await.unwrap().is_empty());

    // The answer: ctx's count of what rig sent is the server's.
    assert_eq!(exchanges.len(), 1);
    let e = &exchanges[0];
    assert_eq!(e.predicted, e.reported, "{e:?}");
    let StepDetail::CallModel(call) = &reports[2].detail else { panic!("{:?}", reports[2]) };
    assert_eq!(Some(call.request.prompt_tokens), e.reported);
    assert!(call.evidence.is_some(), "the fetched texts were not rendered into the answer's context");
}
