//! In-memory backends for the unit tests of the steps.

use std::collections::BTreeMap;
use std::sync::Mutex;

use async_trait::async_trait;

use crate::pipeline::driver::{NodeSearch, NodeStore};
use crate::pipeline::error::BoxError;
use crate::state::{NodeText, SearchHit};

/// Returns fixed hits (all of them, whatever `top_k`), and records each query.
pub(crate) struct Search {
    hits: Vec<SearchHit>,
    fail: Option<String>,
    queries: Mutex<Vec<(String, usize)>>,
}

impl Search {
    pub(crate) fn new(hits: &[(&str, f64)]) -> Self {
        Search {
            hits: hits.iter().map(|(id, score)| SearchHit { id: (*id).into(), score: *score }).collect(),
            fail: None,
            queries: Mutex::new(Vec::new()),
        }
    }

    pub(crate) fn failing(message: &str) -> Self {
        Search { fail: Some(message.into()), ..Search::new(&[]) }
    }

    pub(crate) fn queries(&self) -> Vec<(String, usize)> {
        self.queries.lock().map(|q| q.clone()).unwrap_or_default()
    }
}

#[async_trait]
impl NodeSearch for Search {
    async fn search(&self, query: &str, top_k: usize) -> Result<Vec<SearchHit>, BoxError> {
        if let Ok(mut q) = self.queries.lock() {
            q.push((query.to_owned(), top_k));
        }
        match &self.fail {
            Some(m) => Err(m.clone().into()),
            None => Ok(self.hits.clone()),
        }
    }
}

/// Nodes with texts and dependencies.
#[derive(Default)]
pub(crate) struct Graph {
    pub(crate) deps: BTreeMap<String, Vec<String>>,
    pub(crate) texts: BTreeMap<String, String>,
    /// Extra nodes `texts` returns whatever is asked (to test that they are ignored).
    pub(crate) unasked: Vec<NodeText>,
    pub(crate) fail: Option<String>,
}

impl Graph {
    pub(crate) fn new(deps: &[(&str, &[&str])]) -> Self {
        Graph {
            deps: deps.iter().map(|(k, v)| ((*k).to_owned(), v.iter().map(|s| (*s).to_owned()).collect())).collect(),
            ..Graph::default()
        }
    }

    pub(crate) fn with_texts(texts: &[(&str, &str)]) -> Self {
        Graph { texts: texts.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect(), ..Graph::default() }
    }
}

#[async_trait]
impl NodeStore for Graph {
    async fn texts(&self, ids: &[String]) -> Result<Vec<NodeText>, BoxError> {
        if let Some(m) = &self.fail {
            return Err(m.clone().into());
        }
        // Reverse order: the step must restore the rank order itself.
        let mut out: Vec<NodeText> = ids
            .iter()
            .rev()
            .filter_map(|id| {
                self.texts.get(id).map(|t| NodeText::new(id.clone(), t.clone()).with_path(format!("{id}.sql")))
            })
            .collect();
        out.extend(self.unasked.iter().cloned());
        Ok(out)
    }

    async fn dependencies(&self, id: &str) -> Result<Vec<String>, BoxError> {
        if let Some(m) = &self.fail {
            return Err(m.clone().into());
        }
        Ok(self.deps.get(id).cloned().unwrap_or_default())
    }
}

/// A chat model that replies with a fixed text (or fails) and records every request.
pub(crate) struct Model {
    pub(crate) reply: String,
    pub(crate) fail: bool,
    pub(crate) requests: Mutex<Vec<crate::llm::ChatRequest>>,
}

impl Model {
    pub(crate) fn replying(reply: &str) -> Self {
        Model { reply: reply.into(), fail: false, requests: Mutex::new(Vec::new()) }
    }

    pub(crate) fn failing() -> Self {
        Model { fail: true, ..Model::replying("") }
    }

    pub(crate) fn requests(&self) -> Vec<crate::llm::ChatRequest> {
        self.requests.lock().map(|r| r.clone()).unwrap_or_default()
    }
}

#[async_trait]
impl crate::llm::ChatModel for Model {
    fn model_name(&self) -> &str {
        "test"
    }

    async fn chat(
        &self,
        request: &crate::llm::ChatRequest,
    ) -> Result<crate::llm::ChatResponse, crate::llm::ModelError> {
        if let Ok(mut r) = self.requests.lock() {
            r.push(request.clone());
        }
        if self.fail {
            return Err(crate::llm::ModelError::Failed { model: "test".into(), message: "server down".into() });
        }
        Ok(crate::llm::ChatResponse { content: self.reply.clone(), ..Default::default() })
    }
}
