use super::*;
use crate::chat::ToolCall;

fn t(source: &str) -> JinjaTemplate {
    JinjaTemplate::new("test", source, "<s>", "</s>").unwrap()
}

#[test]
fn blocks_are_trimmed_as_transformers_renders_them() {
    // trim_blocks drops the newline after a block tag, lstrip_blocks the indentation before it.
    let source =
        "{% for m in messages %}\n    {% if m.role == 'user' %}\n[{{ m.content }}]\n    {% endif %}\n{% endfor %}\n";
    assert_eq!(t(source).render(&[ChatMessage::user("a"), ChatMessage::user("b")], &[], false).unwrap(), "[a]\n[b]\n");
}

#[test]
fn variables_python_methods_and_loop_controls() {
    let source = "{{ bos_token }}{% for m in messages %}{% if loop.index0 == 1 %}{% continue %}{% endif %}\
                  {{ m.role.upper() }}:{{ m.content.strip() }}|{% endfor %}{% if add_generation_prompt %}A:{% endif %}{{ eos_token }}";
    let messages = [ChatMessage::system("  sys "), ChatMessage::user("skipped"), ChatMessage::user(" q ")];
    assert_eq!(t(source).render(&messages, &[], true).unwrap(), "<s>SYSTEM:sys|USER:q|A:</s>");
    assert_eq!(t(source).render(&messages, &[], false).unwrap(), "<s>SYSTEM:sys|USER:q|</s>");
}

#[test]
fn raise_exception_is_an_error_naming_the_template_and_the_message() {
    let source =
        "{% if messages[0].role != 'user' %}{{ raise_exception('Conversation roles must alternate') }}{% endif %}ok";
    let err = t(source).render(&[ChatMessage::assistant("x")], &[], false).unwrap_err();
    assert!(matches!(err, TokenError::TemplateRender { .. }), "{err}");
    assert!(err.to_string().contains("roles must alternate") && err.to_string().contains("test"), "{err}");
    assert_eq!(t(source).render(&[ChatMessage::user("x")], &[], false).unwrap(), "ok");
}

#[test]
fn a_syntax_error_is_refused_at_construction() {
    let err = JinjaTemplate::new("broken.gguf", "{% for m in messages %}", "", "").unwrap_err();
    assert!(matches!(err, TokenError::TemplateRender { .. }) && err.to_string().contains("broken.gguf"), "{err}");
}

#[test]
fn tojson_writes_what_python_json_dumps_writes() {
    let tool = ToolSchema {
        name: "search".into(),
        description: "Finds <b>é</b> & more".into(),
        parameters: serde_json::json!({"type": "object", "properties": {"q": {"type": "string"}, "n": {"type": "integer", "default": 1.5}}}),
    };
    let out = t("{% for tool in tools %}{{ tool | tojson }}{% endfor %}")
        .render(&[], std::slice::from_ref(&tool), false)
        .unwrap();
    // Python: json.dumps(tool, ensure_ascii=False), the parameters' keys in the order the request
    // body carries them: as written (serde_json keeps insertion order in every ctx build).
    assert_eq!(
        out,
        r#"{"type": "function", "function": {"name": "search", "description": "Finds <b>é</b> & more", "parameters": {"type": "object", "properties": {"q": {"type": "string"}, "n": {"type": "integer", "default": 1.5}}}}}"#
    );
    let indented =
        t("{{ tools[0].function.parameters.properties.q | tojson(indent=2) }}").render(&[], &[tool], false).unwrap();
    assert_eq!(indented, "{\n  \"type\": \"string\"\n}");
}

#[test]
fn messages_carry_the_wire_fields() {
    let call = ToolCall { id: "c1".into(), name: "f".into(), arguments: "{\"a\":1}".into() };
    let messages = [
        ChatMessage::user("q").with_name("ann"),
        ChatMessage::assistant_tool_calls("", vec![call]),
        ChatMessage::tool_result("c1", "42"),
    ];
    let source = "{% for m in messages %}{{ m.role }}/{{ m.content is none }}/{{ m.name }}/\
                  {% for c in m.tool_calls or [] %}{{ c.id }}:{{ c.type }}:{{ c.function.name }}:{{ c.function.arguments }}{% endfor %}/\
                  {{ m.tool_call_id }};{% endfor %}";
    assert_eq!(
        t(source).render(&messages, &[], false).unwrap(),
        // Booleans print as Python prints them.
        "user/False/ann//;assistant/True//c1:function:f:{\"a\":1}/;tool/False///c1;"
    );
}

#[test]
fn strftime_knows_the_calendar() {
    // 2024-07-26 (a Friday) 13:05:09 UTC, Llama 3.1's default date.
    let at = 1_722_000_000 - (1_722_000_000 % 86_400) + 13 * 3600 + 5 * 60 + 9;
    assert_eq!(strftime("%d %b %Y", at).unwrap(), "26 Jul 2024");
    assert_eq!(strftime("%A %B %m/%y %H:%M:%S %j %%", at).unwrap(), "Friday July 07/24 13:05:09 208 %");
    assert_eq!(strftime("%d %b %Y", 0).unwrap(), "01 Jan 1970");
    assert_eq!(strftime("%Y-%m-%d %a", 951_782_400).unwrap(), "2000-02-29 Tue");
    assert!(strftime("%Q", 0).is_err());
}

#[test]
fn python_floats() {
    assert_eq!(python_float(1.0), "1.0");
    assert_eq!(python_float(0.5), "0.5");
    assert_eq!(python_float(1e-5), "1e-05");
    assert_eq!(python_float(1e16), "1e+16");
    assert_eq!(python_float(-2.5e20), "-2.5e+20");
    assert_eq!(python_float(123.25), "123.25");
}
