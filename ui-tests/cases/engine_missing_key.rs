// Required keys: a context's `messages`, both settings of `expansion` (a retriever's `limit` is 3
// when left out).
ctx::context_engine! {
    fn help_centre {
        retrievers { kb_search { query: "{input.question}" } }
        contexts {
            support {
                inputs: [question],
                policy { expansion { max_pages: 3 } },
            }
        }
    }
}

fn main() {
    let _ = help_centre();
}
