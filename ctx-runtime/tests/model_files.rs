//! Model files against llama.cpp's own references (feature `hf`):
//!
//! - the tokenizers ctx rebuilds from GGUF vocabularies produce, token for token, the ids llama.cpp
//!   produces for its tokenizer test inputs (`ggml-vocab-*.gguf.inp` / `.out`, from
//!   `scripts/model-fixtures.sh`), for the Llama 3, Qwen 2, GPT-2, StarCoder, Refact and Command-R
//!   vocabularies; other vocabularies are refused with an error naming why;
//! - the Llama 3, Qwen 2, GPT-2, Command-R, StarCoder, Refact and SmolLM2 vocabularies count on
//!   ctx's own scanners, merge and piece cache (`HfTokenizer::counts_natively`), and their counts
//!   are `tokenizers`' own on llama.cpp's inputs, the token corpus and generated strings;
//! - the model templates of Llama 3.1, Qwen 2.5, Phi-3.5 and Mistral Nemo render exactly what
//!   llama-cpp-python's server renders, and count what llama.cpp counts
//!   (`ctx-tokens/tests/data/tokens/model_templates.json`, made by `scripts/template-refs.py`);
//! - SmolLM2's GGUF (the served model of the `llama_*` tests) loads as a whole: window, template,
//!   tokenizer, and the same counter through a `tokenizer.json` + `tokenizer_config.json` pair.
//!
//! Without the files (`CTX_VOCAB_DIR`, `CTX_LLAMA_GGUF`) a test is skipped with a message on a
//! developer machine and fails under CI, where `.ci/run` provisions them.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use ctx_runtime::ErrorCode;
use ctx_runtime::chat::{ChatMessage, Role, ToolCall, ToolSchema};
use ctx_runtime::tokens::{
    ChatFormat, ChatTemplate, GgufMetadata, HfTokenizer, JinjaTemplate, ModelFiles, TokenCounter, TokenError,
    TokenizerBackend,
};
use serde_json::Value;

#[path = "../../ctx-tokens/tests/corpus/mod.rs"]
mod corpus;

fn env_path(var: &str, test: &str, how: &str) -> Option<PathBuf> {
    match std::env::var_os(var).filter(|v| !v.is_empty()) {
        Some(p) => Some(PathBuf::from(p)),
        None => {
            assert!(std::env::var_os("CI").is_none(), "{var} is not set under CI: .ci/run must run {how}");
            let _ = writeln!(std::io::stderr(), "skipped {test}: {var} is not set; to run it: {how}");
            None
        }
    }
}

fn vocab_dir(test: &str) -> Option<PathBuf> {
    env_path("CTX_VOCAB_DIR", test, "scripts/model-fixtures.sh provision && eval \"$(scripts/model-fixtures.sh env)\"")
}

/// llama.cpp's tokenizer test cases of a vocabulary: (input, expected ids).
fn reference_cases(dir: &Path, vocab: &str) -> Vec<(String, Vec<u32>)> {
    let inp = std::fs::read_to_string(dir.join(format!("{vocab}.inp"))).unwrap();
    let out = std::fs::read_to_string(dir.join(format!("{vocab}.out"))).unwrap();
    let mut inputs: Vec<&str> = inp.split("\n__ggml_vocab_test__\n").collect();
    if inputs.last() == Some(&"") {
        inputs.pop();
    }
    let outputs: Vec<Vec<u32>> =
        out.lines().map(|l| l.split_whitespace().map(|id| id.parse().unwrap()).collect()).collect();
    assert_eq!(inputs.len(), outputs.len(), "{vocab}: inputs and outputs differ in number");
    inputs.into_iter().map(str::to_owned).zip(outputs).collect()
}

#[test]
fn gguf_tokenizers_produce_llama_cpps_reference_tokens() {
    let Some(dir) = vocab_dir("gguf_tokenizers_produce_llama_cpps_reference_tokens") else { return };
    let mut checked = 0;
    for vocab in [
        "ggml-vocab-llama-bpe.gguf",
        "ggml-vocab-qwen2.gguf",
        "ggml-vocab-gpt-2.gguf",
        "ggml-vocab-starcoder.gguf",
        "ggml-vocab-refact.gguf",
        "ggml-vocab-command-r.gguf",
    ] {
        let meta = GgufMetadata::read(dir.join(vocab)).unwrap();
        let tokenizer = HfTokenizer::from_gguf(&meta).unwrap_or_else(|e| panic!("{vocab}: {e}"));
        for (input, expected) in reference_cases(&dir, vocab) {
            let ids = tokenizer.encode(&input).unwrap();
            assert_eq!(ids, expected, "{vocab}: {input:?}");
            assert_eq!(tokenizer.count(&input).unwrap(), expected.len());
            assert_eq!(tokenizer.decode(&ids).unwrap(), input, "{vocab}: decode");
            checked += 1;
        }
    }
    assert!(checked > 100, "{checked}");
}

/// The byte-level vocabularies ctx counts natively, as llama.cpp's fixtures name them (SmolLM2's,
/// which lacks some bytes as StarCoder's does, is checked beside its GGUF below).
const NATIVE_VOCABS: [&str; 6] = [
    "ggml-vocab-llama-bpe.gguf",
    "ggml-vocab-qwen2.gguf",
    "ggml-vocab-gpt-2.gguf",
    "ggml-vocab-command-r.gguf",
    "ggml-vocab-starcoder.gguf",
    "ggml-vocab-refact.gguf",
];

/// `tokenizers`' own count, on the same tokenizer ctx counts natively.
fn tokenizers_count(tokenizer: &HfTokenizer, text: &str) -> usize {
    tokenizer.tokenizer().encode_fast(text, false).unwrap().len()
}

#[test]
fn native_counts_are_tokenizers_counts_on_the_corpus_and_llama_cpps_inputs() {
    let Some(dir) = vocab_dir("native_counts_are_tokenizers_counts_on_the_corpus_and_llama_cpps_inputs") else {
        return;
    };
    let corpus = corpus::corpus_files();
    for vocab in NATIVE_VOCABS {
        let tokenizer = HfTokenizer::from_gguf(&GgufMetadata::read(dir.join(vocab)).unwrap()).unwrap();
        assert!(tokenizer.counts_natively(), "{vocab}");
        for (input, expected) in reference_cases(&dir, vocab) {
            assert_eq!(tokenizer.count(&input).unwrap(), expected.len(), "{vocab}: {input:?}");
        }
        for (name, text) in &corpus {
            let want = tokenizers_count(&tokenizer, text);
            assert_eq!(tokenizer.count(text).unwrap(), want, "{vocab}: {name}");
            // Twice: the second count comes from the piece cache.
            assert_eq!(tokenizer.count(text).unwrap(), want, "{vocab}: {name} again");
        }
        // Special tokens of the vocabulary inside text, and at its edges.
        for special in tokenizer.special_tokens().iter().take(8) {
            let text = format!("{special}x {special}{special}  12345\n{special}");
            assert_eq!(tokenizer.count(&text).unwrap(), tokenizers_count(&tokenizer, &text), "{vocab}: {text:?}");
        }
    }
}

/// The native vocabularies of the fixtures, built once for the property test.
fn native_tokenizers() -> Option<&'static [HfTokenizer]> {
    static ALL: std::sync::OnceLock<Option<Vec<HfTokenizer>>> = std::sync::OnceLock::new();
    ALL.get_or_init(|| {
        let dir = vocab_dir("native_counts_are_tokenizers_counts_on_generated_strings")?;
        let all: Vec<HfTokenizer> = NATIVE_VOCABS
            .iter()
            .map(|v| HfTokenizer::from_gguf(&GgufMetadata::read(dir.join(v)).unwrap()).unwrap())
            .collect();
        Some(all)
    })
    .as_deref()
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig { cases: 128, ..Default::default() })]

    #[test]
    fn native_counts_are_tokenizers_counts_on_generated_strings(
        text in "(\\PC|[ \\n\\t0-9']|'s|'LL|<\\|im_(start|end)\\|>|<\\|begin_of_text\\|>){0,80}"
    ) {
        let Some(all) = native_tokenizers() else { return Ok(()) };
        for tokenizer in all {
            proptest::prop_assert_eq!(tokenizer.count(&text).unwrap(), tokenizers_count(tokenizer, &text), "{:?}", tokenizer);
        }
    }
}

#[test]
fn vocabularies_ctx_cannot_rebuild_are_refused_by_name() {
    let Some(dir) = vocab_dir("vocabularies_ctx_cannot_rebuild_are_refused_by_name") else { return };
    // SentencePiece vocabularies, and BPE vocabularies whose split rules ctx does not know.
    for (vocab, why) in [
        ("ggml-vocab-llama-spm.gguf", "tokenizer.ggml.model = llama"),
        ("ggml-vocab-phi-3.gguf", "tokenizer.ggml.model = llama"),
        ("ggml-vocab-deepseek-coder.gguf", "tokenizer.ggml.pre = deepseek-coder"),
        ("ggml-vocab-bert-bge.gguf", "tokenizer.ggml.model = bert"),
    ] {
        let meta = GgufMetadata::read(dir.join(vocab)).unwrap();
        let err = HfTokenizer::from_gguf(&meta).unwrap_err();
        assert!(matches!(err, TokenError::ModelFile { .. }), "{vocab}: {err}");
        let text = err.to_string();
        assert!(text.contains(why) && text.contains(vocab), "{vocab}: {text}");
    }
}

fn message(v: &Value) -> ChatMessage {
    let role = match v["role"].as_str().unwrap() {
        "system" => Role::System,
        "user" => Role::User,
        "assistant" => Role::Assistant,
        _ => Role::Tool,
    };
    let content = v["content"].as_str().unwrap_or_default().to_owned();
    let tool_calls = v["tool_calls"]
        .as_array()
        .map(|calls| {
            calls
                .iter()
                .map(|c| {
                    ToolCall::new(
                        c["id"].as_str().unwrap(),
                        c["function"]["name"].as_str().unwrap(),
                        c["function"]["arguments"].as_str().unwrap(),
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    let tool_call_id = v["tool_call_id"].as_str().map(str::to_owned);
    ChatMessage::new(role, content).tool_calls(tool_calls).tool_call_id(tool_call_id)
}

/// The conversations of scripts/template-refs.py, as ctx values.
fn conversation(name: &str) -> (Vec<ChatMessage>, Vec<ToolSchema>) {
    let search = ToolSchema::new(
        "search",
        "Searches the code base.",
        // The keys in the order scripts/template-refs.py gave llama-cpp-python: ctx sends (and
        // renders) a schema's keys in the order they are written.
        serde_json::json!({
            "properties": {
                "k": {"description": "How many hits.", "type": "integer"},
                "query": {"description": "Words to find.", "type": "string"}
            },
            "required": ["query"],
            "type": "object"
        }),
    );
    let json = |v: Value| v.as_array().unwrap().iter().map(message).collect::<Vec<_>>();
    match name {
        "user only" => (vec![ChatMessage::user("hi")], vec![]),
        "system + user" => (vec![ChatMessage::system("Be terse."), ChatMessage::user("Name three primes.")], vec![]),
        "multi-turn" => (
            vec![
                ChatMessage::system("You answer about invoices."),
                ChatMessage::user("What is a net total?"),
                ChatMessage::assistant("The sum of quantity times unit price."),
                ChatMessage::user("And the tax?"),
            ],
            vec![],
        ),
        "seams and unicode" => (vec![ChatMessage::user("  leading\n\n\ntrailing  \n ünïcødé 日本語 🎉 — ½ €")], vec![]),
        "tools offered" => {
            (vec![ChatMessage::system("Use tools."), ChatMessage::user("Find the tax code.")], vec![search])
        }
        "tool call and result" => (
            json(serde_json::json!([
                {"role": "user", "content": "Find the tax code."},
                {"role": "assistant", "content": null, "tool_calls": [
                    {"id": "call_1", "type": "function", "function": {"name": "search", "arguments": "{\"query\":\"tax\"}"}}]},
                {"role": "tool", "content": "{\"hits\": 3}", "tool_call_id": "call_1"}
            ])),
            vec![search],
        ),
        other => panic!("unknown conversation {other}"),
    }
}

#[test]
fn model_templates_render_and_count_as_llama_cpp_python_does() {
    let Some(dir) = vocab_dir("model_templates_render_and_count_as_llama_cpp_python_does") else { return };
    let refs: Value = serde_json::from_str(include_str!("../../ctx-tokens/tests/data/tokens/model_templates.json"))
        .expect("the reference file is JSON");
    let mut counted = 0;
    // Rebuilding a 128k-token vocabulary takes a while in a debug build: once per vocabulary.
    let mut tokenizers: std::collections::HashMap<String, HfTokenizer> = std::collections::HashMap::new();
    for case in refs["cases"].as_array().unwrap() {
        let file = case["template"].as_str().unwrap();
        let name = case["conversation"].as_str().unwrap();
        let source = std::fs::read_to_string(dir.join("templates").join(file)).unwrap();
        let bos = case["bos"].as_str().unwrap_or_default();
        let eos = case["eos"].as_str().unwrap_or_default();
        let template = JinjaTemplate::new(file, source, bos, eos).unwrap();
        let (messages, tools) = conversation(name);
        let rendered = template.render(&messages, &tools, true);
        if let Some(error) = case["error"].as_str() {
            // The template refuses the conversation in Python; it must here too.
            let err = rendered.expect_err(&format!("{file} / {name}: Python refused it ({error})"));
            assert!(matches!(err, TokenError::TemplateRender { .. }), "{file} / {name}: {err}");
            assert_eq!(err.code(), "CHAT_TEMPLATE_RENDER");
            continue;
        }
        let rendered = rendered.unwrap_or_else(|e| panic!("{file} / {name}: {e}"));
        // The text itself is stored for the templates whose license allows it (scripts/template-refs.py).
        if let Some(reference) = case["rendered"].as_str() {
            assert_eq!(rendered, reference, "{file} / {name}");
        }
        assert_eq!(rendered.chars().count() as u64, case["rendered_chars"].as_u64().unwrap(), "{file} / {name}");

        let Some(vocab) = case["vocab"].as_str() else { continue };
        let expected = case["count"].as_u64().unwrap() as usize;
        let tokenizer = tokenizers
            .entry(vocab.to_owned())
            .or_insert_with(|| HfTokenizer::from_gguf(&GgufMetadata::read(dir.join(vocab)).unwrap()).unwrap());
        let files = ModelFiles::from_parts(tokenizer.clone(), template.clone(), None, vec![]);
        let counter = files.counter();
        assert_eq!(counter.count(&rendered).unwrap(), expected, "{file} / {name}");
        assert_eq!(counter.count_request(&messages, &tools).unwrap(), expected, "{file} / {name}");
        if tools.is_empty() {
            assert_eq!(counter.count_messages(&messages).unwrap(), expected, "{file} / {name}");
            // The per-message costs add up to the messages' share of the prompt.
            let costs = counter.message_costs(&messages).unwrap();
            let share = ctx_runtime::history::history_tokens(counter, &messages).unwrap();
            assert_eq!(costs.iter().sum::<usize>(), share, "{file} / {name}");
        }
        counted += 1;
    }
    assert!(counted >= 10, "{counted}");
}

#[test]
fn a_template_that_drops_the_tools_refuses_them() {
    let Some(dir) = vocab_dir("a_template_that_drops_the_tools_refuses_them") else { return };
    // Phi-3.5's template has no place for tools: llama-cpp-python renders the request without
    // them (the reference rendering of "tools offered" has no trace of the schema).
    let source = std::fs::read_to_string(dir.join("templates/microsoft-Phi-3.5-mini-instruct.jinja")).unwrap();
    let template = ChatTemplate::jinja(JinjaTemplate::new("phi-3.5", source, "<s>", "<|endoftext|>").unwrap(), vec![]);
    let (messages, tools) = conversation("tools offered");
    let err = template.render_request(&messages, &tools).unwrap_err();
    assert!(matches!(err, TokenError::TemplateUnsupported { .. }), "{err}");
    assert_eq!(err.code(), "CHAT_TEMPLATE_UNSUPPORTED");
    assert!(err.to_string().contains("search"), "{err}");
    // And the tool calls of an assistant message, which it drops too (with text beside them:
    // a call-only message has no content, which this template cannot even concatenate).
    let call = ToolCall::new("call_1", "search", "{\"query\":\"tax\"}");
    let messages = [ChatMessage::user("Find the tax code."), ChatMessage::assistant_tool_calls("Looking.", vec![call])];
    let err = template.render(&messages).unwrap_err();
    assert!(err.to_string().contains("tool calls (message 1"), "{err}");
}

fn smollm2(test: &str) -> Option<PathBuf> {
    env_path("CTX_LLAMA_GGUF", test, "scripts/llama-server.sh provision && eval \"$(scripts/llama-server.sh env)\"")
}

#[test]
fn smollm2s_gguf_gives_window_template_and_tokenizer() {
    let Some(path) = smollm2("smollm2s_gguf_gives_window_template_and_tokenizer") else { return };
    let files = ModelFiles::load(&path).unwrap();
    assert_eq!(files.files(), std::slice::from_ref(&path));
    assert_eq!(files.context_window(), Some(8192));
    let template = files.template().as_jinja().unwrap();
    assert_eq!(
        template.render(&[ChatMessage::user("hi")], &[], true).unwrap(),
        "<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by Hugging Face<|im_end|>\n\
         <|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n"
    );
    assert_eq!(files.template().special_tokens(), ["<|im_start|>", "<|im_end|>"]);
    // The count llama-cpp-python's server reported for this request (tests/llama_server.rs).
    assert_eq!(files.counter().count_messages(&[ChatMessage::user("hi")]).unwrap(), 31);
    // A second load is the first one (parsed once per process).
    assert_eq!(ModelFiles::load(&path).unwrap().counter().backend_id(), files.counter().backend_id());
}

#[test]
fn a_tokenizer_json_beside_its_config_counts_as_the_gguf_does() {
    let Some(path) = smollm2("a_tokenizer_json_beside_its_config_counts_as_the_gguf_does") else { return };
    let gguf = ModelFiles::from_gguf(&path).unwrap();
    let template = gguf.template().as_jinja().unwrap();
    let dir = tempfile::tempdir().unwrap();
    // The GGUF's tokenizer written out as a tokenizer.json, and its template in a
    // tokenizer_config.json, as a Hugging Face model directory has them.
    let json = gguf.tokenizer().tokenizer().to_string(false).unwrap();
    std::fs::write(dir.path().join("tokenizer.json"), json).unwrap();
    let config = serde_json::json!({
        "chat_template": template.source(),
        "bos_token": {"content": "<|im_start|>", "special": true},
        "eos_token": "<|im_end|>",
    });
    std::fs::write(dir.path().join("tokenizer_config.json"), config.to_string()).unwrap();
    let files = ModelFiles::load(dir.path().join("tokenizer.json")).unwrap();
    assert_eq!(files.files().len(), 2);
    // Both count on ctx's own path (`tokenizers`' own serialisation is recognised too).
    assert!(gguf.tokenizer().counts_natively() && files.tokenizer().counts_natively());
    assert_eq!(files.context_window(), None);
    // Such a directory states no window: a model block naming it must write one.
    let at = ctx_runtime::validation::FieldPath::root().key("model");
    let kind = ctx_runtime::config::ModelFileKind::Tokenizer;
    let issues =
        ctx_runtime::config::model_files_config(kind, &dir.path().join("tokenizer.json"), None, &at).unwrap_err();
    assert_eq!(issues[0].code, "MODEL_WINDOW_MISSING");
    assert_eq!(files.template().as_jinja().unwrap().bos_token(), "<|im_start|>");
    let messages = [ChatMessage::system("Be brief."), ChatMessage::user("ünïcødé <|im_end|> 日本語")];
    assert_eq!(files.counter().count_messages(&messages).unwrap(), gguf.counter().count_messages(&messages).unwrap());
    let text = "fn main() {\n    println!(\"héllo\");\n}\n\n\n 12345 tokens";
    assert_eq!(files.counter().encode(text).unwrap(), gguf.counter().encode(text).unwrap());

    // Without a template beside it, the file is refused: a chat cannot be counted without it.
    std::fs::remove_file(dir.path().join("tokenizer_config.json")).unwrap();
    let err = ModelFiles::load(dir.path().join("tokenizer.json")).unwrap_err();
    assert!(matches!(err, TokenError::ModelFile { .. }) && err.to_string().contains("chat template"), "{err}");
}

#[test]
fn smollm2_counts_natively_as_tokenizers_counts() {
    let Some(path) = smollm2("smollm2_counts_natively_as_tokenizers_counts") else { return };
    let files = ModelFiles::from_gguf(&path).unwrap();
    let tokenizer = files.tokenizer();
    assert!(tokenizer.counts_natively());
    // Its vocabulary has no token for the bytes 0x04, 0x06, 0x13, 0x14, 0x16, 0x1D, 0xF1 and
    // 0xF2 (among others no UTF-8 text holds): `tokenizers` leaves them out, and so does ctx.
    let mut texts = corpus::corpus_files();
    texts.push(("missing bytes".into(), "a\u{4}b \u{6}\u{13}\u{14}x\u{16}\u{1d} \u{40000}\u{80000}z 12\u{4}34".into()));
    for (name, text) in &texts {
        let want = tokenizers_count(tokenizer, text);
        assert_eq!(tokenizer.count(text).unwrap(), want, "{name}");
        assert_eq!(tokenizer.count(text).unwrap(), want, "{name} again");
    }
}

#[test]
fn a_counter_of_model_files_is_an_ordinary_counter() {
    let Some(path) = smollm2("a_counter_of_model_files_is_an_ordinary_counter") else { return };
    let files = ModelFiles::from_gguf(&path).unwrap();
    let counter = files.counter();
    let text = "Příliš žluťoučký kůň úpěl ďábelské ódy. 🦀 ".repeat(30);
    for max in [0, 1, 7, 50, 200] {
        let prefix = counter.truncate_to(&text, max).unwrap();
        assert!(text.starts_with(&prefix) && counter.count(&prefix).unwrap() <= max, "{max}");
    }
    let n = counter.count(&text).unwrap();
    assert_eq!(counter.count_up_to(&text, n).unwrap(), Some(n));
    assert_eq!(counter.count_up_to(&text, n - 1).unwrap(), None);
    // A cut inside a character does not decode.
    let crab = counter.encode("🦀").unwrap();
    assert!(crab.len() > 1 && counter.decode(&crab[..1]).is_err());
    // A template-driven counter refuses a backend that splits its specials.
    let cl100k = TokenCounter::for_encoding(ctx_runtime::tokens::Encoding::Cl100kBase)
        .with_format(ChatFormat::Template(files.template().clone()));
    assert!(cl100k.count_messages(&[ChatMessage::user("hi")]).is_err());
    let _ = Arc::clone(files.tokenizer());
}

/// The SmolLM2 GGUF tokenizer, built once for the property test.
fn smollm2_tokenizer() -> Option<&'static ModelFiles> {
    static FILES: std::sync::OnceLock<Option<ModelFiles>> = std::sync::OnceLock::new();
    FILES.get_or_init(|| smollm2("gguf_tokenizer_properties").map(|p| ModelFiles::from_gguf(p).unwrap())).as_ref()
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig { cases: 256, ..Default::default() })]

    /// Any text: decoding its tokens gives it back, the count is the number of tokens, the
    /// early-exit count agrees at the limit and below, and no input panics.
    #[test]
    fn gguf_tokenizer_properties(text in "(\\PC|[ \\n\\t]|<\\|im_(start|end)\\|>){0,64}") {
        let Some(files) = smollm2_tokenizer() else { return Ok(()) };
        let counter = files.counter();
        let ids = counter.encode(&text).unwrap();
        proptest::prop_assert_eq!(counter.decode(&ids).unwrap(), text.clone());
        let n = counter.count(&text).unwrap();
        proptest::prop_assert_eq!(n, ids.len());
        proptest::prop_assert_eq!(counter.count_up_to(&text, n).unwrap(), Some(n));
        if n > 0 {
            proptest::prop_assert_eq!(counter.count_up_to(&text, n - 1).unwrap(), None);
        }
        proptest::prop_assert!(n >= counter.min_tokens_for_bytes(text.len()));
    }
}

#[test]
fn a_model_block_naming_a_gguf_takes_its_window_and_checks_a_written_one() {
    use ctx_runtime::config::{ModelFileKind, model_files_config};
    use ctx_runtime::validation::FieldPath;
    let Some(path) = smollm2("a_model_block_naming_a_gguf_takes_its_window_and_checks_a_written_one") else { return };
    let at = FieldPath::root().key("model");
    let config = model_files_config(ModelFileKind::Gguf, &path, None, &at).unwrap();
    assert_eq!(config.context_window, 8192);
    assert_eq!(model_files_config(ModelFileKind::Gguf, &path, Some(2048), &at).unwrap().context_window, 2048);
    let issues = model_files_config(ModelFileKind::Gguf, &path, Some(9000), &at).unwrap_err();
    let text = format!("{issues:?}");
    assert!(text.contains("MODEL_WINDOW_ABOVE_TRAINING") && text.contains("8192"), "{text}");
    assert!(
        format!("{:?}", model_files_config(ModelFileKind::Gguf, &path, Some(0), &at).unwrap_err())
            .contains("INVALID_CONTEXT_WINDOW")
    );
}
