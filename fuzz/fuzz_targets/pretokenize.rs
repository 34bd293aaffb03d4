//! ctx's pre-tokenizer scanners against bpe-openai's regex split, on any text: the same pieces,
//! under both encodings, and therefore the same counts.

#![no_main]

use ctx_runtime::tokens::Encoding;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|text: &str| {
    for (encoding, tokenizer) in
        [(Encoding::Cl100kBase, bpe_openai::cl100k_base()), (Encoding::O200kBase, bpe_openai::o200k_base())]
    {
        let ours: Vec<&str> = encoding.pieces(text).collect();
        let theirs: Vec<&str> = tokenizer.split(text).collect();
        assert_eq!(ours, theirs, "{encoding} split of {text:?}");
    }
});
