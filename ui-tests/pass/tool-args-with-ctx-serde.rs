// A tool's typed arguments in a crate whose one dependency is ctx: serde's derive comes through
// `ctx::serde`, with `#[serde(crate = "ctx::serde")]` pointing the generated code there.
use ctx::CtxError;
use ctx::pipeline::ToolRequest;

#[derive(Debug, ctx::serde::Deserialize)]
#[serde(crate = "ctx::serde")]
struct Search {
    query: String,
    #[serde(default)]
    limit: Option<u32>,
}

fn search_args(request: &ToolRequest<'_>) -> Result<Search, CtxError> {
    request.args()
}

fn main() {
    let parse: fn(&ToolRequest<'_>) -> Result<Search, CtxError> = search_args;
    let _ = parse;
    let _ = |s: Search| (s.query, s.limit);
}
