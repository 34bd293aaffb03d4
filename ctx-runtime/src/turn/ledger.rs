//! The turn ledger: what the conversation and this turn's tool calls already hold, kept up to date
//! one message at a time.
//!
//! Each message is counted once, when it is added, with its exact chat-format cost in the
//! conversation so far (a tool result is framed with the name of the call it answers, which the
//! ledger remembers from the call's message); documents are remembered by id. Asking what a call may still use is
//! O(1), and recording a result costs the tokens of that result only — not a re-parse and recount
//! of every earlier message on every call, which makes the cost of a turn quadratic in its calls.

use std::collections::{HashMap, HashSet};

use super::error::TurnError;
use super::pack::{Inclusion, Packed, Partial, RankedDocument, pack_documents};
use crate::chat::{ChatMessage, Role, ToolCall};
use crate::compact::Compactor;
use crate::tokens::TokenCounter;
use crate::validation::ConfigIssues;
use ctx_spec::turn::{PartialPolicy, TurnBudgetConfig};

/// A document the model has seen in this turn, in the order first seen.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[non_exhaustive]
pub struct SeenDocument {
    /// Its id.
    pub id: String,
    /// The text as the model saw it (possibly truncated or compacted).
    pub text: String,
    /// How it was included.
    pub inclusion: Inclusion,
    /// The tool call whose result carried it.
    pub call_id: String,
}

/// Where the reserved tokens of a turn come from (the spec's log breakdown).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[non_exhaustive]
pub struct LedgerBreakdown {
    /// The turn's budget.
    pub budget: usize,
    /// `conversation + accumulated_tools`.
    pub reserved: usize,
    /// Messages other than tool calls and tool results (system, user, assistant text).
    pub conversation: usize,
    /// Assistant tool-call messages and tool results of this turn.
    pub accumulated_tools: usize,
    /// Distinct documents returned so far.
    pub unique_documents: usize,
    /// Tool results recorded so far.
    pub calls: usize,
    /// `budget − reserved` (0 when over).
    pub available: usize,
}

/// What one retrieval call may still use.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct CallBudget {
    /// The call being answered.
    pub call_id: String,
    /// Tokens left in the turn before this call.
    pub available: usize,
    /// Tokens the call's result content may hold: `available` less the tool result message's own
    /// overhead (role, call id, per-message tokens).
    pub content_tokens: usize,
    /// The ledger's state when the budget was given.
    pub breakdown: LedgerBreakdown,
}

/// The token ledger of one agent turn.
#[derive(Debug, Clone)]
pub struct TurnLedger {
    counter: TokenCounter,
    config: TurnBudgetConfig,
    conversation: usize,
    tools: usize,
    calls: usize,
    ids: HashSet<String>,
    documents: Vec<SeenDocument>,
    /// Call id → function name of every tool call added, so a result costs what it costs after
    /// its call (a later call reusing an id takes it over, as in the chat format).
    call_names: HashMap<String, String>,
}

impl TurnLedger {
    /// An empty ledger. Fails when `config` is invalid ([`TurnBudgetConfig::validate`]).
    pub fn new(config: TurnBudgetConfig, counter: TokenCounter) -> Result<Self, TurnError> {
        ConfigIssues::check("turn budget", config.validate())?;
        Ok(TurnLedger {
            counter,
            config,
            conversation: 0,
            tools: 0,
            calls: 0,
            ids: HashSet::new(),
            documents: Vec::new(),
            call_names: HashMap::new(),
        })
    }

    /// A ledger holding `messages` (the conversation so far, system prompt and question included).
    pub fn with_messages(
        config: TurnBudgetConfig,
        counter: TokenCounter,
        messages: &[ChatMessage],
    ) -> Result<Self, TurnError> {
        let mut ledger = Self::new(config, counter)?;
        for m in messages {
            ledger.add_message(m)?;
        }
        Ok(ledger)
    }

    /// The configuration.
    pub fn config(&self) -> &TurnBudgetConfig {
        &self.config
    }

    /// The counter.
    pub fn counter(&self) -> &TokenCounter {
        &self.counter
    }

    /// Adds a message that is not a packed retrieval result: a system, user or assistant message
    /// (tool calls included), or the result of a tool that returns no documents. Returns its exact
    /// cost. A message may push the ledger over its budget; [`Self::available`] is then 0.
    pub fn add_message(&mut self, message: &ChatMessage) -> Result<usize, TurnError> {
        let cost = self.cost(message)?;
        if message.role == Role::Tool || !message.tool_calls.is_empty() {
            self.tools += cost;
        } else {
            self.conversation += cost;
        }
        if message.role != Role::Tool {
            for call in &message.tool_calls {
                self.call_names.insert(call.id.clone(), call.name.clone());
            }
        }
        Ok(cost)
    }

    /// What `message` adds after the messages added so far.
    fn cost(&self, message: &ChatMessage) -> Result<usize, TurnError> {
        let answered = message.tool_call_id.as_ref().and_then(|id| self.call_names.get(id)).map(String::as_str);
        Ok(self.counter.message_cost(message, answered)?)
    }

    /// Tokens held: conversation plus this turn's tool calls and results.
    pub fn reserved(&self) -> usize {
        self.conversation + self.tools
    }

    /// Tokens left: budget − reserved (0 when over budget).
    pub fn available(&self) -> usize {
        self.config.budget_tokens.saturating_sub(self.reserved())
    }

    /// Whether a document with this id was already returned in this turn.
    pub fn contains(&self, id: &str) -> bool {
        self.ids.contains(id)
    }

    /// The documents returned in this turn, each once, in the order first returned: the
    /// de-duplicated list the model has seen.
    pub fn documents(&self) -> &[SeenDocument] {
        &self.documents
    }

    /// The current breakdown.
    pub fn breakdown(&self) -> LedgerBreakdown {
        LedgerBreakdown {
            budget: self.config.budget_tokens,
            reserved: self.reserved(),
            conversation: self.conversation,
            accumulated_tools: self.tools,
            unique_documents: self.documents.len(),
            calls: self.calls,
            available: self.available(),
        }
    }

    /// What the call may still use, logged with the breakdown. Fails when not even an empty
    /// result message for it fits.
    pub fn call_budget(&self, call: &ToolCall) -> Result<CallBudget, TurnError> {
        let breakdown = self.breakdown();
        let frame = self.cost(&ChatMessage::tool_result(call.id.clone(), ""))?;
        tracing::info!(
            target: "ctx::turn",
            call_id = %call.id,
            tool = %call.name,
            arguments = %preview(&call.arguments),
            reserved = breakdown.reserved,
            conversation = breakdown.conversation,
            accumulated_tools = breakdown.accumulated_tools,
            unique_documents = breakdown.unique_documents,
            available = breakdown.available,
            "retrieval budget"
        );
        if breakdown.available < frame {
            return Err(TurnError::BudgetExhausted {
                call_id: call.id.clone(),
                available: breakdown.available,
                needed: frame,
            });
        }
        Ok(CallBudget {
            call_id: call.id.clone(),
            available: breakdown.available,
            content_tokens: breakdown.available - frame,
            breakdown,
        })
    }

    /// Packs `ranked` into `budget` with this ledger's format and partial policy, skipping
    /// documents already returned in this turn. `compactor` is required when the policy is
    /// [`PartialPolicy::Compact`].
    pub fn pack(
        &self,
        budget: &CallBudget,
        ranked: &[RankedDocument],
        compactor: Option<&dyn Compactor>,
    ) -> Result<Packed, TurnError> {
        let partial = match (self.config.on_partial, compactor) {
            (PartialPolicy::Skip, _) => Partial::Skip,
            (PartialPolicy::Truncate, _) => Partial::Truncate,
            (PartialPolicy::Compact, Some(c)) => Partial::Compact(c),
            (PartialPolicy::Compact, None) => return Err(TurnError::MissingCompactor),
        };
        pack_documents(
            ranked,
            &|id| self.ids.contains(id),
            budget.content_tokens,
            &self.config.format,
            partial,
            self.config.min_partial_tokens,
            &self.counter,
        )
    }

    /// Records a packed result as the tool result of `call_id` and returns that message. Fails,
    /// changing nothing, when the result repeats a document this turn already holds or does not
    /// fit in what is left (a result packed before another was recorded).
    pub fn record(&mut self, call_id: &str, packed: &Packed) -> Result<ChatMessage, TurnError> {
        let mut fresh = HashSet::new();
        for doc in &packed.included {
            if self.ids.contains(&doc.id) || !fresh.insert(doc.id.as_str()) {
                return Err(TurnError::StaleResult { call_id: call_id.to_owned(), document_id: doc.id.clone() });
            }
        }
        let message = ChatMessage::tool_result(call_id, packed.rendered.clone());
        let cost = self.cost(&message)?;
        if cost > self.available() {
            return Err(TurnError::ResultOverflow {
                call_id: call_id.to_owned(),
                tokens: cost,
                available: self.available(),
            });
        }
        self.tools += cost;
        self.calls += 1;
        for doc in &packed.included {
            self.ids.insert(doc.id.clone());
            self.documents.push(SeenDocument {
                id: doc.id.clone(),
                text: doc.text.clone(),
                inclusion: doc.inclusion,
                call_id: call_id.to_owned(),
            });
        }
        tracing::info!(
            target: "ctx::turn",
            call_id,
            result_tokens = cost,
            included = packed.included.len(),
            duplicates = packed.duplicates.len(),
            left_out = packed.left_out.len(),
            reserved = self.reserved(),
            available = self.available(),
            "retrieval result recorded"
        );
        Ok(message)
    }

    /// Budgets, packs and records one retrieval call: the tool result message to append to the
    /// conversation. On an error the ledger is unchanged.
    pub fn answer_call(
        &mut self,
        call: &ToolCall,
        ranked: &[RankedDocument],
        compactor: Option<&dyn Compactor>,
    ) -> Result<(ChatMessage, Packed), TurnError> {
        let budget = self.call_budget(call)?;
        let packed = self.pack(&budget, ranked, compactor)?;
        let message = self.record(&call.id, &packed)?;
        Ok((message, packed))
    }
}

/// The first 100 characters of a tool call's arguments, for logs.
fn preview(arguments: &str) -> &str {
    match arguments.char_indices().nth(100) {
        Some((i, _)) => arguments.get(..i).unwrap_or(arguments),
        None => arguments,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tokens::Encoding;

    fn ledger(budget: usize) -> TurnLedger {
        let counter = TokenCounter::for_encoding(Encoding::Cl100kBase);
        TurnLedger::new(TurnBudgetConfig::new(budget, 100_000), counter).unwrap()
    }

    fn call(id: &str) -> ToolCall {
        ToolCall::new(id, "retrieve", "{\"query\":\"x\"}")
    }

    #[test]
    fn invalid_config_is_rejected() {
        let counter = TokenCounter::for_encoding(Encoding::Cl100kBase);
        let err = TurnLedger::new(TurnBudgetConfig::new(0, 10), counter).unwrap_err();
        assert!(matches!(err, TurnError::Config(_)), "{err}");
    }

    #[test]
    fn a_stale_result_changes_nothing() {
        let mut l = ledger(10_000);
        let docs = [RankedDocument::new("a", "some text")];
        let b1 = l.call_budget(&call("1")).unwrap();
        let p1 = l.pack(&b1, &docs, None).unwrap();
        let p2 = l.pack(&b1, &docs, None).unwrap();
        l.record("1", &p1).unwrap();
        let before = l.breakdown();
        let err = l.record("2", &p2).unwrap_err();
        assert!(matches!(err, TurnError::StaleResult { ref document_id, .. } if document_id == "a"), "{err}");
        assert_eq!(l.breakdown(), before);
    }

    #[test]
    fn an_exhausted_budget_is_a_typed_error() {
        let mut l = ledger(5);
        l.add_message(&ChatMessage::user("hello")).unwrap();
        let err = l.call_budget(&call("1")).unwrap_err();
        assert!(matches!(err, TurnError::BudgetExhausted { available: 0, .. }), "{err}");
    }

    #[test]
    fn compact_policy_needs_a_compactor() {
        let counter = TokenCounter::for_encoding(Encoding::Cl100kBase);
        let config = TurnBudgetConfig::new(1000, 2000).with_partial(PartialPolicy::Compact);
        let l = TurnLedger::new(config, counter).unwrap();
        let b = l.call_budget(&call("1")).unwrap();
        assert!(matches!(l.pack(&b, &[], None), Err(TurnError::MissingCompactor)));
    }

    #[test]
    fn a_result_costs_what_it_costs_after_its_call() {
        // The result's framing names the function; an id and a name of different lengths make
        // a result counted on its own differ from the same result after its call.
        let mut l = ledger(10_000);
        let counter = l.counter().clone();
        let call = ToolCall::new("c1", "search_the_knowledge_base_by_keyword", "{\"query\":\"x\"}");
        let mut transcript = vec![ChatMessage::user("q"), ChatMessage::assistant_tool_calls("", vec![call.clone()])];
        for m in &transcript {
            l.add_message(m).unwrap();
        }
        let (message, _) = l.answer_call(&call, &[RankedDocument::new("a", "some text")], None).unwrap();
        transcript.push(message);
        assert_eq!(l.reserved(), crate::history::history_tokens(&counter, &transcript).unwrap());
        // A result whose call the ledger never saw is framed with its id, as the format does.
        let orphan = ChatMessage::tool_result("zz", "late");
        let cost = l.add_message(&orphan).unwrap();
        assert_eq!(cost, crate::history::message_tokens(&counter, &orphan).unwrap());
    }

    #[test]
    fn preview_cuts_on_a_char_boundary() {
        let long = "é".repeat(150);
        assert_eq!(preview(&long).chars().count(), 100);
        assert_eq!(preview("short"), "short");
    }
}
