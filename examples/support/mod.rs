//! What the `spec_*` examples plug into a pipeline: a small SQL/.NET code base searched with
//! BM25, and an offline chat model so the examples run without a network or an API key (a real
//! run passes ctx's HTTP client instead; nothing else changes).

use std::collections::BTreeMap;
use std::sync::Mutex;

use ctx::llm::{ChatModel, ChatRequest, ChatResponse, ModelError};
use ctx::pipeline::{BoxError, NodeSearch, NodeStore};
use ctx::retrieve::Bm25Index;
use ctx::state::SearchHit;
use ctx::{NodeText, Role};

/// Why each file matters, in words: BM25 matches words, and identifiers such as
/// `usp_ComputeInvoiceTotal` are single tokens to it (a real index would add such summaries too).
const SUMMARIES: &[(&str, &str)] = &[
    ("usp_ComputeInvoiceTotal", "stored procedure: recomputes the invoice total from its lines, tax and rounding"),
    ("fn_RoundCurrency", "function: rounds a currency amount of an invoice total to cents"),
    ("invoice_lines", "table: invoice lines with quantity, unit price, discount and tax code"),
    ("InvoiceService", "service class: recomputes the invoice total by calling the stored procedure"),
];

/// The code base: (id, path, text, dependencies).
const FILES: &[(&str, &str, &str, &[&str])] = &[
    (
        "usp_ComputeInvoiceTotal",
        "sql/procedures/usp_ComputeInvoiceTotal.sql",
        "CREATE PROCEDURE dbo.usp_ComputeInvoiceTotal @InvoiceId INT AS\nBEGIN\n    SET NOCOUNT ON;\n    \
         UPDATE i SET i.Total = dbo.fn_RoundCurrency(x.Net + x.Tax)\n    FROM dbo.Invoices i\n    CROSS APPLY (\n        \
         SELECT SUM(l.Quantity * l.UnitPrice - l.Discount) AS Net,\n               \
         SUM((l.Quantity * l.UnitPrice - l.Discount) * t.Rate) AS Tax\n        FROM dbo.InvoiceLines l\n        \
         JOIN dbo.TaxRates t ON t.TaxCode = l.TaxCode\n        WHERE l.InvoiceId = i.InvoiceId\n    ) x\n    \
         WHERE i.InvoiceId = @InvoiceId;\nEND",
        &["fn_RoundCurrency", "invoice_lines"],
    ),
    (
        "fn_RoundCurrency",
        "sql/functions/fn_RoundCurrency.sql",
        "CREATE FUNCTION dbo.fn_RoundCurrency (@Amount DECIMAL(19, 4)) RETURNS DECIMAL(19, 2) AS\nBEGIN\n    \
         -- Banker's rounding is not what the tax office expects: round half away from zero.\n    \
         RETURN ROUND(@Amount, 2, 0);\nEND",
        &[],
    ),
    (
        "invoice_lines",
        "sql/schema/invoice_lines.sql",
        "CREATE TABLE dbo.InvoiceLines (\n    InvoiceLineId INT IDENTITY PRIMARY KEY,\n    \
         InvoiceId INT NOT NULL REFERENCES dbo.Invoices (InvoiceId),\n    Quantity DECIMAL(19, 4) NOT NULL,\n    \
         UnitPrice DECIMAL(19, 4) NOT NULL,\n    Discount DECIMAL(19, 4) NOT NULL DEFAULT 0,\n    \
         TaxCode CHAR(2) NOT NULL\n);",
        &[],
    ),
    (
        "InvoiceService",
        "src/Billing/InvoiceService.cs",
        "public sealed class InvoiceService\n{\n    private readonly IDbConnection _db;\n\n    \
         public InvoiceService(IDbConnection db) => _db = db;\n\n    \
         public Task RecomputeTotalAsync(int invoiceId) =>\n        \
         _db.ExecuteAsync(\"dbo.usp_ComputeInvoiceTotal\", new { InvoiceId = invoiceId },\n            \
         commandType: CommandType.StoredProcedure);\n}",
        &["usp_ComputeInvoiceTotal"],
    ),
];

/// The code base as a BM25 index and a node store.
pub struct Corpus {
    index: Bm25Index,
    nodes: BTreeMap<String, (NodeText, Vec<String>)>,
}

impl Corpus {
    /// Indexes [`FILES`].
    pub fn new() -> Self {
        let index = Bm25Index::from_documents(FILES.iter().map(|(id, path, text, _)| {
            let summary = SUMMARIES.iter().find(|(s, _)| s == id).map_or("", |(_, s)| s);
            (*id, format!("{path}\n{summary}\n{text}"))
        }));
        let nodes = FILES
            .iter()
            .map(|(id, path, text, deps)| {
                let node = NodeText::new(*id, *text).with_path(*path);
                (id.to_string(), (node, deps.iter().map(|d| d.to_string()).collect()))
            })
            .collect();
        Corpus { index, nodes }
    }
}

impl NodeSearch for Corpus {
    async fn search(&self, query: &str, top_k: usize) -> Result<Vec<SearchHit>, BoxError> {
        Ok(self.index.search(query, top_k))
    }
}

impl NodeStore for Corpus {
    async fn texts(&self, ids: &[String]) -> Result<Vec<NodeText>, BoxError> {
        Ok(ids.iter().filter_map(|id| self.nodes.get(id).map(|(n, _)| n.clone())).collect())
    }

    async fn dependencies(&self, id: &str) -> Result<Vec<String>, BoxError> {
        Ok(self.nodes.get(id).map(|(_, d)| d.clone()).unwrap_or_default())
    }
}

/// An offline model: it replies with what it was given (the system prompt's first line and the
/// size of the user message), so a run shows which prompt each step sent. It records every
/// request for the example's checks.
#[derive(Default)]
pub struct OfflineModel {
    /// Every request, in order.
    pub requests: Mutex<Vec<ChatRequest>>,
}

impl ChatModel for OfflineModel {
    fn model_name(&self) -> &str {
        "offline"
    }

    async fn chat(&self, request: &ChatRequest) -> Result<ChatResponse, ModelError> {
        let system = request.messages.iter().find(|m| m.role == Role::System).map(|m| m.content.as_str()).unwrap_or("");
        let user =
            request.messages.iter().rev().find(|m| m.role == Role::User).map(|m| m.content.as_str()).unwrap_or("");
        let content = format!(
            "[{}] reply to a {}-character request under the instruction: {}",
            request.step_id.as_deref().unwrap_or("?"),
            user.len(),
            system.lines().next().unwrap_or("")
        );
        self.requests
            .lock()
            .map_err(|_| ModelError::Failed { model: "offline".into(), message: "request log poisoned".into() })?
            .push(request.clone());
        Ok(ChatResponse::new(content))
    }
}
