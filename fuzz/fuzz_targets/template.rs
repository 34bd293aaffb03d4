//! Template rendering: the value is inserted verbatim, once, and braces inside it are never
//! expanded (retrieved text may contain `{}` or `{input.question}`).

#![no_main]

use ctx_runtime::contract::{render_template, render_user_message};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|input: (&str, &str, &str)| {
    let (template, value, second) = input;
    let out = render_template(template, value);
    match template.split_once("{}") {
        Some((before, after)) => assert_eq!(out, format!("{before}{value}{after}")),
        None => assert_eq!(out, template),
    }
    // Two parts: each rendered on its own, concatenated; the first value's braces stay text.
    let both = render_user_message([(template, value), ("{}", second)]);
    assert_eq!(both, format!("{out}{second}"));
});
