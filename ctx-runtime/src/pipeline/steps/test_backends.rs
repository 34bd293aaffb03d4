//! In-memory backends for the unit tests of the steps.

use std::collections::BTreeMap;
use std::sync::Mutex;

use crate::pipeline::env::{NodeSearch, NodeStore};
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
            hits: hits.iter().map(|(id, score)| SearchHit::new(*id, *score)).collect(),
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
    /// The usage every reply reports.
    pub(crate) usage: Option<crate::llm::Usage>,
}

impl Model {
    pub(crate) fn replying(reply: &str) -> Self {
        Model { reply: reply.into(), fail: false, requests: Mutex::new(Vec::new()), usage: None }
    }

    pub(crate) fn failing() -> Self {
        Model { fail: true, ..Model::replying("") }
    }

    pub(crate) fn requests(&self) -> Vec<crate::llm::ChatRequest> {
        self.requests.lock().map(|r| r.clone()).unwrap_or_default()
    }
}

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
        Ok(crate::llm::ChatResponse { content: self.reply.clone(), usage: self.usage, ..Default::default() })
    }
}

/// A chat model that plays a script: each request that offers tools gets the next reply of the
/// script (the answer once it runs out); a request without tools gets the answer, as a real
/// model should not call tools it was not offered (unless `stubborn`: then every request gets the
/// next reply, as a misbehaving server would). Records every request.
pub(crate) struct Scripted {
    script: Mutex<std::collections::VecDeque<crate::llm::ChatResponse>>,
    answer: String,
    requests: Mutex<Vec<crate::llm::ChatRequest>>,
    stubborn: bool,
}

impl Scripted {
    pub(crate) fn new(script: Vec<crate::llm::ChatResponse>, answer: &str) -> Self {
        Scripted {
            script: Mutex::new(script.into()),
            answer: answer.into(),
            requests: Mutex::new(Vec::new()),
            stubborn: false,
        }
    }

    /// A model that plays its script even to requests that offer no tools.
    pub(crate) fn stubborn(script: Vec<crate::llm::ChatResponse>, answer: &str) -> Self {
        Scripted { stubborn: true, ..Self::new(script, answer) }
    }

    /// A model that asks for one more `search_docs` call (ids `c1`, `c2`, …) every time it may.
    pub(crate) fn always_calling(n: usize) -> Self {
        Self::new((1..=n).map(|i| calls(&[(&format!("c{i}"), "search_docs")])).collect(), "done")
    }

    pub(crate) fn requests(&self) -> Vec<crate::llm::ChatRequest> {
        self.requests.lock().map(|r| r.clone()).unwrap_or_default()
    }
}

/// A reply requesting the calls `(id, tool)`, each with `{"query":"q <id>"}`.
pub(crate) fn calls(calls: &[(&str, &str)]) -> crate::llm::ChatResponse {
    crate::llm::ChatResponse {
        tool_calls: calls
            .iter()
            .map(|(id, name)| crate::chat::ToolCall::new(*id, *name, format!(r#"{{"query":"q {id}"}}"#)))
            .collect(),
        ..Default::default()
    }
}

impl crate::llm::ChatModel for Scripted {
    fn model_name(&self) -> &str {
        "scripted"
    }

    async fn chat(
        &self,
        request: &crate::llm::ChatRequest,
    ) -> Result<crate::llm::ChatResponse, crate::llm::ModelError> {
        if let Ok(mut r) = self.requests.lock() {
            r.push(request.clone());
        }
        let next = if request.tools.is_empty() && !self.stubborn {
            None
        } else {
            self.script.lock().ok().and_then(|mut s| s.pop_front())
        };
        Ok(next.unwrap_or_else(|| crate::llm::ChatResponse { content: self.answer.clone(), ..Default::default() }))
    }
}

/// Tool handlers with a fixed output per call id (else `default`), or failing; records each
/// call as (tool, call id, content budget).
pub(crate) struct Tools {
    pub(crate) outputs: BTreeMap<String, crate::pipeline::ToolOutput>,
    pub(crate) default: crate::pipeline::ToolOutput,
    pub(crate) fail: Option<String>,
    pub(crate) seen: Mutex<Vec<(String, String, usize)>>,
}

impl Tools {
    pub(crate) fn new(outputs: Vec<(&str, crate::pipeline::ToolOutput)>) -> Self {
        Tools {
            outputs: outputs.into_iter().map(|(id, o)| (id.to_owned(), o)).collect(),
            default: crate::pipeline::ToolOutput::Text("nothing found".into()),
            fail: None,
            seen: Mutex::new(Vec::new()),
        }
    }

    pub(crate) fn seen(&self) -> Vec<(String, String, usize)> {
        self.seen.lock().map(|s| s.clone()).unwrap_or_default()
    }
}

impl crate::pipeline::ToolHandlers for Tools {
    async fn call(
        &self,
        _step_id: &str,
        request: crate::pipeline::ToolRequest<'_>,
    ) -> Result<crate::pipeline::ToolOutput, crate::pipeline::BoxError> {
        if let Ok(mut s) = self.seen.lock() {
            s.push((request.name.to_owned(), request.call_id.to_owned(), request.budget.content_tokens));
        }
        if let Some(m) = &self.fail {
            // The handler's own error, as it comes: the step names itself, the tool and the call.
            return Err(m.clone().into());
        }
        Ok(self.outputs.get(request.call_id).cloned().unwrap_or_else(|| self.default.clone()))
    }
}
