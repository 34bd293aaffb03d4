//! Template rendering, both kinds, on any template and any values: never a panic; a value is
//! inserted verbatim, once, and braces inside it are never expanded (retrieved text may contain
//! `{}` or `{input.question}`).

#![no_main]

use ctx_runtime::contract::{render_template, render_user_message};
use ctx_runtime::engine::Template;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|input: (&str, &str, &str)| {
    let (template, value, second) = input;

    // `call_model` user parts: one `{}` per template.
    let out = render_template(template, value);
    match template.split_once("{}") {
        Some((before, after)) => assert_eq!(out, format!("{before}{value}{after}")),
        None => assert_eq!(out, template),
    }
    let both = render_user_message([(template, value), ("{}", second)]);
    assert_eq!(both, format!("{out}{second}"));

    // Context-engine templates: parse errors are typed and positioned; a parsed template renders
    // each variable to its value and nothing else.
    match Template::parse(template) {
        Ok(parsed) => {
            let names: Vec<String> = parsed.variables().map(|v| v.name()).collect();
            let rendered = parsed.render(|_| Ok::<_, ()>(value.to_owned())).expect("infallible values");
            // With every variable rendered as the empty string, the literal text remains; the
            // full rendering is that text with `value` at each variable, so its length adds up.
            let literal = parsed.render(|_| Ok::<_, ()>(String::new())).expect("infallible values");
            assert_eq!(rendered.len(), literal.len() + names.len() * value.len());
            // A value equal to the template itself is inserted, not parsed again.
            let nested = parsed.render(|_| Ok::<_, ()>(template.to_owned())).expect("infallible values");
            assert_eq!(nested.len(), literal.len() + names.len() * template.len());
        }
        Err(errors) => {
            assert!(!errors.is_empty());
            for e in &errors {
                assert!(e.offset <= template.len() && e.line >= 1 && e.column >= 1);
                assert!(!e.to_string().is_empty());
            }
        }
    }
});
