//! The offline model as a deterministic agent: offered tools, it asks the first one once per
//! question, with the question as the argument, and answers from the results afterwards.
//!
//! The argument is the first string property of the tool's schema that is `required` (else the
//! first string property); a tool without one is called with `{}`. The request "has results for
//! the question" when a tool message follows the last user message.

use serde_json::Value;

use crate::chat::{Role, ToolCall, ToolSchema};
use crate::llm::ChatRequest;

/// The prefix of the offline model's call ids; the number is the request's tool-call count + 1.
pub const OFFLINE_CALL_ID_PREFIX: &str = "offline_call_";

/// The call the offline model makes for `request` with question `question`, or `None` when it
/// offers no tools or already holds results for the question.
pub(crate) fn next_call(request: &ChatRequest, question: &str) -> Option<ToolCall> {
    let tool = request.tools.first()?;
    let last_user = request.messages.iter().rposition(|m| m.role == Role::User)?;
    let answered = request.messages.iter().skip(last_user + 1).any(|m| m.role == Role::Tool);
    if answered {
        return None;
    }
    let calls_so_far: usize = request.messages.iter().map(|m| m.tool_calls.len()).sum();
    let arguments = match question_property(tool) {
        Some(key) => serde_json::json!({ key: question }).to_string(),
        None => "{}".to_owned(),
    };
    Some(ToolCall::new(format!("{OFFLINE_CALL_ID_PREFIX}{}", calls_so_far + 1), tool.name.clone(), arguments))
}

/// The property the question goes in: the first required string property, else the first
/// string property.
fn question_property(tool: &ToolSchema) -> Option<String> {
    let properties = tool.parameters.get("properties")?.as_object()?;
    let is_string =
        |key: &str| properties.get(key).and_then(|p| p.get("type")).and_then(Value::as_str) == Some("string");
    let required = tool.parameters.get("required").and_then(Value::as_array);
    required
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .find(|key| is_string(key))
        .or_else(|| properties.keys().map(String::as_str).find(|key| is_string(key)))
        .map(str::to_owned)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chat::ChatMessage;

    fn tool(parameters: Value) -> ToolSchema {
        ToolSchema::new("search", "Search", parameters)
    }

    #[test]
    fn the_question_goes_in_the_first_required_string_property() {
        let t = tool(serde_json::json!({
            "type": "object",
            "properties": {"limit": {"type": "integer"}, "topic": {"type": "string"}, "query": {"type": "string"}},
            "required": ["limit", "query"]
        }));
        assert_eq!(question_property(&t).as_deref(), Some("query"));
        let t = tool(
            serde_json::json!({"type": "object", "properties": {"n": {"type": "integer"}, "q": {"type": "string"}}}),
        );
        assert_eq!(question_property(&t).as_deref(), Some("q"));
        assert_eq!(question_property(&tool(serde_json::json!({"type": "object"}))), None);
    }

    #[test]
    fn one_call_per_question_then_none() {
        let t =
            tool(serde_json::json!({"type":"object","properties":{"query":{"type":"string"}},"required":["query"]}));
        let mut request = ChatRequest::new(vec![ChatMessage::system("s"), ChatMessage::user("How?")], 100);
        assert!(next_call(&request, "How?").is_none(), "no tools offered");
        request.tools = vec![t];
        let call = next_call(&request, "How?").unwrap();
        assert_eq!(
            (call.id.as_str(), call.name.as_str(), call.arguments.as_str()),
            ("offline_call_1", "search", r#"{"query":"How?"}"#)
        );
        request.messages.push(ChatMessage::assistant_tool_calls("", vec![call.clone()]));
        request.messages.push(ChatMessage::tool_result(call.id, "result"));
        assert!(next_call(&request, "How?").is_none());
        request.messages.push(ChatMessage::user("And then?"));
        assert_eq!(next_call(&request, "And then?").unwrap().id, "offline_call_2");
    }
}
