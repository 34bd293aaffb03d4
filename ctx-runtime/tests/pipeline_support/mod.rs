//! In-memory backends and a deterministic chat model for the pipeline integration tests.

#![allow(dead_code)] // each test file uses a different part

use std::collections::BTreeMap;
use std::sync::Mutex;

use ctx_runtime::chat::Role;
use ctx_runtime::llm::{ChatModel, ChatRequest, ChatResponse, ModelError};
use ctx_runtime::pipeline::{BoxError, NodeSearch, NodeStore};
use ctx_runtime::state::{NodeText, SearchHit};

/// A small code base: id → (path, text), and id → dependencies.
pub struct Corpus {
    pub nodes: BTreeMap<String, NodeText>,
    pub deps: BTreeMap<String, Vec<String>>,
}

impl Corpus {
    pub fn invoicing() -> Self {
        let node = |id: &str, path: &str, text: &str| (id.to_owned(), NodeText::new(id, text).with_path(path));
        let nodes = BTreeMap::from([
            node(
                "vw_InvoiceTotals",
                "sql/views/vw_InvoiceTotals.sql",
                "-- Invoice totals: net, tax and gross per invoice.\n\
                 CREATE VIEW dbo.vw_InvoiceTotals AS\n\
                 SELECT i.InvoiceId,\n       SUM(l.Quantity * l.UnitPrice) AS NetTotal,\n\
                 \u{20}      SUM(l.Quantity * l.UnitPrice * t.Rate) AS TaxTotal\n\
                 FROM dbo.Invoices AS i\n\
                 JOIN dbo.InvoiceLines AS l ON l.InvoiceId = i.InvoiceId\n\
                 JOIN dbo.TaxRates AS t ON t.TaxRateId = l.TaxRateId\n\
                 GROUP BY i.InvoiceId;\n",
            ),
            node(
                "InvoiceLines",
                "sql/schema/invoice_lines.sql",
                "-- One line of an invoice.\n\
                 CREATE TABLE dbo.InvoiceLines (\n    InvoiceLineId INT IDENTITY(1,1) PRIMARY KEY,\n\
                 \u{20}   InvoiceId INT NOT NULL REFERENCES dbo.Invoices(InvoiceId),\n\
                 \u{20}   Quantity DECIMAL(18, 4) NOT NULL,\n    UnitPrice DECIMAL(18, 4) NOT NULL,\n\
                 \u{20}   TaxRateId INT NOT NULL REFERENCES dbo.TaxRates(TaxRateId)\n);\n",
            ),
            node(
                "TaxRates",
                "sql/schema/tax_rates.sql",
                "-- VAT rates by country.\n\
                 CREATE TABLE dbo.TaxRates (\n    TaxRateId INT IDENTITY(1,1) PRIMARY KEY,\n\
                 \u{20}   CountryCode CHAR(2) NOT NULL,\n    Rate DECIMAL(5, 4) NOT NULL\n);\n",
            ),
            node(
                "InvoiceService",
                "src/Billing/InvoiceService.cs",
                "using System.Linq;\n\nnamespace Billing\n{\n    /// <summary>Computes invoice totals.</summary>\n\
                 \u{20}   public class InvoiceService\n    {\n        private readonly BillingContext _db;\n\n\
                 \u{20}       public InvoiceService(BillingContext db) { _db = db; }\n\n\
                 \u{20}       // The gross total is net plus tax, rounded per invoice.\n\
                 \u{20}       public decimal GrossTotal(int invoiceId)\n        {\n\
                 \u{20}           var lines = _db.InvoiceLines.Where(l => l.InvoiceId == invoiceId).ToList();\n\
                 \u{20}           var net = lines.Sum(l => l.Quantity * l.UnitPrice);\n\
                 \u{20}           var tax = lines.Sum(l => l.Quantity * l.UnitPrice * l.TaxRate.Rate);\n\
                 \u{20}           return decimal.Round(net + tax, 2);\n        }\n    }\n}\n",
            ),
        ]);
        let deps = BTreeMap::from([
            ("vw_InvoiceTotals".to_owned(), vec!["InvoiceLines".to_owned(), "TaxRates".to_owned()]),
            ("InvoiceLines".to_owned(), vec!["TaxRates".to_owned()]),
            ("InvoiceService".to_owned(), vec!["InvoiceLines".to_owned()]),
        ]);
        Corpus { nodes, deps }
    }
}

/// Ranks nodes by how many distinct query words (4+ letters, case-insensitive) their text holds;
/// ties by id. Deterministic, and dumb on purpose: the tests check the pipeline, not retrieval.
pub struct WordSearch<'a>(pub &'a Corpus);

impl NodeSearch for WordSearch<'_> {
    async fn search(&self, query: &str, top_k: usize) -> Result<Vec<SearchHit>, BoxError> {
        let words: Vec<String> =
            query.split(|c: char| !c.is_alphanumeric()).filter(|w| w.len() >= 4).map(str::to_lowercase).collect();
        let mut hits: Vec<SearchHit> = self
            .0
            .nodes
            .values()
            .map(|n| {
                let text = n.text.to_lowercase();
                SearchHit::new(n.id.clone(), words.iter().filter(|w| text.contains(w.as_str())).count() as f64)
            })
            .filter(|h| h.score > 0.0)
            .collect();
        hits.sort_by(|a, b| b.score.total_cmp(&a.score).then_with(|| a.id.cmp(&b.id)));
        hits.truncate(top_k);
        Ok(hits)
    }
}

impl NodeStore for Corpus {
    async fn texts(&self, ids: &[String]) -> Result<Vec<NodeText>, BoxError> {
        Ok(ids.iter().filter_map(|id| self.nodes.get(id).cloned()).collect())
    }

    async fn dependencies(&self, id: &str) -> Result<Vec<String>, BoxError> {
        Ok(self.deps.get(id).cloned().unwrap_or_default())
    }
}

/// How the test model answers a summarisation request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Summaries {
    /// A short summary naming how many context characters it read.
    Short,
    /// The context it was given, unchanged: compaction never makes the context smaller.
    Unchanged,
}

/// A deterministic chat model: it recognises the system prompt of the request, answers from
/// the request's contents, and records every request it received.
pub struct ScriptedModel {
    pub summarizer_prompt: String,
    pub summaries: Summaries,
    pub requests: Mutex<Vec<ChatRequest>>,
}

impl ScriptedModel {
    pub fn new(summarizer_prompt: &str, summaries: Summaries) -> Self {
        ScriptedModel { summarizer_prompt: summarizer_prompt.to_owned(), summaries, requests: Mutex::new(Vec::new()) }
    }

    pub fn requests(&self) -> Vec<ChatRequest> {
        self.requests.lock().map(|r| r.clone()).unwrap_or_default()
    }
}

impl ChatModel for ScriptedModel {
    fn model_name(&self) -> &str {
        "scripted"
    }

    async fn chat(&self, request: &ChatRequest) -> Result<ChatResponse, ModelError> {
        if let Ok(mut r) = self.requests.lock() {
            r.push(request.clone());
        }
        let system = request.messages.first().filter(|m| m.role == Role::System).map_or("", |m| m.content.as_str());
        let user = request.messages.last().filter(|m| m.role == Role::User).map_or("", |m| m.content.as_str());
        let content = if system == self.summarizer_prompt {
            match self.summaries {
                Summaries::Short => format!("Summary of {} characters of context.", user.len()),
                // The user message is "### Context:\n{context}\n\n### User:\n{question}\n\n".
                Summaries::Unchanged => user
                    .strip_prefix("### Context:\n")
                    .and_then(|rest| rest.rsplit_once("\n\n### User:\n"))
                    .map_or(user, |(context, _)| context)
                    .to_owned(),
            }
        } else {
            format!("Answer #{}: the total is net plus tax.", request.messages.len())
        };
        Ok(ChatResponse::new(content))
    }
}

/// A model that fails its first `failures` calls, then behaves like `inner`.
pub struct Flaky<'a> {
    pub inner: &'a ScriptedModel,
    pub failures: Mutex<usize>,
}

impl ChatModel for Flaky<'_> {
    fn model_name(&self) -> &str {
        "flaky"
    }

    async fn chat(&self, request: &ChatRequest) -> Result<ChatResponse, ModelError> {
        if let Ok(mut left) = self.failures.lock()
            && *left > 0
        {
            *left -= 1;
            return Err(ModelError::Failed { model: "flaky".into(), message: "503 Service Unavailable".into() });
        }
        self.inner.chat(request).await
    }
}

pub mod defs {
    //! The spec's pipelines as `PipelineDef` values.

    use std::collections::BTreeMap;

    use ctx_runtime::pipeline::*;

    pub const SUMMARIZER: &str = "Summarise the context; keep identifiers and SQL verbatim.";
    pub const ANSWER: &str = "Answer the question from the context.";

    pub fn rule(language: &str, policy: &str, threshold: Option<f64>, inbox_key: Option<&str>) -> CompactRuleSpec {
        CompactRuleSpec::new(language, policy).threshold(threshold).inbox_key(inbox_key.map(Into::into))
    }

    fn step(id: &str, kind: StepKind) -> StepDef {
        StepDef::new(id, kind)
    }

    fn call(prompt_key: &str, max_output_tokens: i64, use_history: bool, next: &str) -> StepKind {
        StepKind::CallModel(
            CallModelSpec::new(prompt_key, next)
                .max_output_tokens(Some(max_output_tokens))
                .user_parts(vec![
                    UserPartSpec::new("context_blocks", "### Context:\n{}\n\n"),
                    UserPartSpec::new("user_question_en", "### User:\n{}\n\n"),
                ])
                .use_history(use_history),
        )
    }

    /// search → fetch → manage_budget → … around the spec's `manage_budget` step. With
    /// `guarded`, `on_over` is the spec's compaction loop (loop_guard → summarize →
    /// set_context_from_summary → manage_budget); without, `on_over` summarises once and answers.
    pub fn pipeline(name: &str, compact_code: Vec<CompactRuleSpec>, guarded: bool) -> PipelineDef {
        let mut steps = vec![
            step("search", StepKind::SearchNodes(SearchNodesSpec::new(3, "fetch"))),
            step("fetch", StepKind::FetchNodeTexts(FetchSpec::new(600, "manage_budget"))),
            step(
                "manage_budget",
                StepKind::ManageContextBudget(
                    ManageBudgetSpec::new(
                        "call_model_answer",
                        if guarded { "budget_loop_guard" } else { "call_summarize_context" },
                    )
                    .compact_code(compact_code),
                ),
            ),
        ];
        if guarded {
            steps.push(step(
                "budget_loop_guard",
                StepKind::LoopGuard(LoopGuardSpec::new(
                    "max_turn_loops",
                    "call_summarize_context",
                    "call_model_answer",
                )),
            ));
        }
        steps.push(step("call_summarize_context", call("sumarizer", 300, false, "set_context_from_summary")));
        steps.push(step(
            "set_context_from_summary",
            StepKind::SetVariables(SetVariablesSpec::new(
                vec![
                    SetRuleSpec::new(
                        "context_blocks",
                        SetValueSpec::From {
                            from: "last_model_response".into(),
                            transform: Some("to_context_blocks".into()),
                        },
                    ),
                    SetRuleSpec::new("last_model_response", SetValueSpec::Value(serde_json::Value::Null)),
                ],
                if guarded { "manage_budget" } else { "call_model_answer" },
            )),
        ));
        steps.push(step("call_model_answer", call("answer", 400, true, END)));
        PipelineDef::new(name)
            .model(ModelSource::Inline(
                ModelSpec::default()
                    .context_window(Some(4_096))
                    .max_tokens(Some(512))
                    .encoding(Some("cl100k_base".into())),
            ))
            .settings(
                SettingsSpec::default()
                    .max_context_tokens(Some(2_000))
                    .max_history_tokens(Some(300))
                    .budget_safety_margin_tokens(Some(128))
                    .extra(BTreeMap::from([("max_turn_loops".to_owned(), 3)])),
            )
            .prompts(vec![
                PromptSpec::new("sumarizer", Some(SUMMARIZER.into())),
                PromptSpec::new("answer", Some(ANSWER.into())),
            ])
            .steps(steps)
    }
}
