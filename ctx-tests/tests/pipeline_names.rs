//! The names `pipeline!` generates: every one starts with the pipeline's name, so two pipelines
//! of one module, each with a custom step `route` and a tool `lookup`, compile side by side and
//! both run (their outcome enums are `BillingRouteOutcome` and `ShippingRouteOutcome`); and a
//! name that is a Rust keyword (a tool `match`, a custom step `type`) becomes a raw identifier
//! (`fn r#match`, `fn r#type`) instead of a tool without a method.

use ctx::PipelineState;
use ctx::llm::offline::OfflineModel;
use ctx::pipeline::BoxError;
use ctx::pipeline::{StepDetail, ToolOutput, ToolRequest};

ctx::pipeline! {
    /// Routes invoice questions to an agent with a `lookup` tool.
    pub pipeline Billing {
        model { context_window: 8_192, max_tokens: 512, encoding: cl100k_base }
        settings { max_context_tokens: 2_000 }
        prompts { answer: "Answer from the lookup results." }
        steps {
            route: custom { outcomes { invoices => answer, other => end } },
            answer: agent {
                prompt_key: answer,
                tools: [
                    lookup {
                        description: "Look up an invoice",
                        parameters: r#"{"type":"object","properties":{"query":{"type":"string"}},"required":["query"]}"#,
                    },
                ],
                max_tool_calls: 2,
                max_output_tokens: 200,
                user_parts: [ user_question => "{}" ],
                next: end,
            },
        }
    }
}

ctx::pipeline! {
    /// The same shape, other outcomes: routes parcel questions to an agent with a `lookup` tool.
    pub pipeline Shipping {
        model { context_window: 8_192, max_tokens: 512, encoding: cl100k_base }
        settings { max_context_tokens: 2_000 }
        prompts { answer: "Answer from the tracking results." }
        steps {
            route: custom { outcomes { parcels => answer, elsewhere => end } },
            answer: agent {
                prompt_key: answer,
                tools: [
                    lookup {
                        description: "Track a parcel",
                        parameters: r#"{"type":"object","properties":{"query":{"type":"string"}},"required":["query"]}"#,
                    },
                ],
                max_tool_calls: 2,
                max_output_tokens: 200,
                user_parts: [ user_question => "{}" ],
                next: end,
            },
        }
    }
}

ctx::pipeline! {
    /// Keywords as names: a custom step `type` with outcomes `match` and `loop`, tools `match`
    /// and `gen` (reserved since edition 2024).
    pub pipeline Keywords {
        model { context_window: 8_192, max_tokens: 512, encoding: cl100k_base }
        settings { max_context_tokens: 2_000 }
        prompts { answer: "Answer from the match results." }
        steps {
            type: custom { outcomes { match => answer, loop => end } },
            answer: agent {
                prompt_key: answer,
                tools: [
                    match {
                        description: "Find matching records",
                        parameters: r#"{"type":"object","properties":{"query":{"type":"string"}},"required":["query"]}"#,
                    },
                    gen {
                        description: "Generate a record",
                        parameters: r#"{"type":"object","properties":{"query":{"type":"string"}},"required":["query"]}"#,
                    },
                ],
                max_tool_calls: 2,
                max_output_tokens: 200,
                user_parts: [ user_question => "{}" ],
                next: end,
            },
        }
    }
}

/// Both pipelines' custom steps and tools, on one type: the traits are distinct.
struct Desk;

impl BillingCustom for Desk {
    async fn route(&self, state: &mut PipelineState) -> Result<BillingRouteOutcome, BoxError> {
        Ok(if state.user_question.contains("invoice") {
            BillingRouteOutcome::Invoices
        } else {
            BillingRouteOutcome::Other
        })
    }
}

impl ShippingCustom for Desk {
    async fn route(&self, state: &mut PipelineState) -> Result<ShippingRouteOutcome, BoxError> {
        Ok(if state.user_question.contains("parcel") {
            ShippingRouteOutcome::Parcels
        } else {
            ShippingRouteOutcome::Elsewhere
        })
    }
}

impl BillingTools for Desk {
    async fn lookup(&self, _request: ToolRequest<'_>) -> Result<ToolOutput, BoxError> {
        Ok(ToolOutput::Text("Invoice INV-7 totals 120 EUR including VAT.".into()))
    }
}

impl ShippingTools for Desk {
    async fn lookup(&self, _request: ToolRequest<'_>) -> Result<ToolOutput, BoxError> {
        Ok(ToolOutput::Text("Parcel PX-42 left the Lyon depot on Monday.".into()))
    }
}

impl KeywordsCustom for Desk {
    async fn r#type(&self, _state: &mut PipelineState) -> Result<KeywordsTypeOutcome, BoxError> {
        Ok(KeywordsTypeOutcome::Match)
    }
}

impl KeywordsTools for Desk {
    async fn r#match(&self, _request: ToolRequest<'_>) -> Result<ToolOutput, BoxError> {
        Ok(ToolOutput::Text("Record R-9 matches the customer ACME.".into()))
    }

    async fn r#gen(&self, _request: ToolRequest<'_>) -> Result<ToolOutput, BoxError> {
        Ok(ToolOutput::Text(String::new()))
    }
}

/// The names of the tools the run called, in order.
fn tools_called(reports: &[ctx::pipeline::StepReport]) -> Vec<String> {
    reports
        .iter()
        .filter_map(|r| match &r.detail {
            StepDetail::Agent(agent) => Some(agent.tool_calls.iter().map(|c| c.name.clone()).collect::<Vec<_>>()),
            _ => None,
        })
        .flatten()
        .collect()
}

#[tokio::test]
async fn two_pipelines_with_a_step_route_and_a_tool_lookup_share_a_module_and_both_run() {
    let billing = Billing::new().unwrap();
    let shipping = Shipping::new().unwrap();
    let model = OfflineModel::new(billing.pipeline().counter().clone());

    let env = BillingEnv { model: &model, custom: &Desk, tools: &Desk };
    let (state, reports) = billing.run(PipelineState::new("What is the total of the invoice?"), &env).await.unwrap();
    assert_eq!(tools_called(&reports), ["lookup"]);
    let answer = state.last_model_response.unwrap_or_default();
    assert!(answer.contains("INV-7"), "billing answers from its own tool: {answer}");

    let env = ShippingEnv { model: &model, custom: &Desk, tools: &Desk };
    let (state, reports) = shipping.run(PipelineState::new("Where is my parcel?"), &env).await.unwrap();
    assert_eq!(tools_called(&reports), ["lookup"]);
    let answer = state.last_model_response.unwrap_or_default();
    assert!(answer.contains("PX-42"), "shipping answers from its own tool: {answer}");

    // Each pipeline's route goes by its own outcomes.
    let (state, reports) = shipping.run(PipelineState::new("What is the total of the invoice?"), &env).await.unwrap();
    assert_eq!((reports.len(), state.last_model_response), (1, None), "`elsewhere` ends the run");
    assert_eq!(BillingRouteOutcome::Other.name(), "other");
    assert_eq!(ShippingRouteOutcome::Elsewhere.name(), "elsewhere");
    assert_eq!(BillingStep::Route.id(), ShippingStep::Route.id());
}

#[tokio::test]
async fn a_tool_and_a_step_named_with_keywords_are_raw_identifiers_that_run() {
    let keywords = Keywords::new().unwrap();
    let model = OfflineModel::new(keywords.pipeline().counter().clone());
    let env = KeywordsEnv { model: &model, custom: &Desk, tools: &Desk };
    let (state, reports) = keywords.run(PipelineState::new("Which record matches ACME?"), &env).await.unwrap();
    // The model calls the tool by its name, `match`, and the run calls `r#match`.
    assert_eq!(tools_called(&reports), ["match"]);
    let answer = state.last_model_response.unwrap_or_default();
    assert!(answer.contains("R-9"), "the answer uses the tool's result: {answer}");
    assert_eq!(KeywordsStep::FIRST, KeywordsStep::Type);
    assert_eq!(KeywordsStep::Type.id(), "type");
    assert_eq!(KeywordsTypeOutcome::Match.name(), "match");
    assert_eq!(KeywordsTypeOutcome::Loop.name(), "loop");
}
