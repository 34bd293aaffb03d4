// A model chosen at run time held as `&dyn ChatModel`, which cannot exist (its methods return
// `impl Future`): rustc's "not dyn compatible" error quotes the line of `ChatModel::chat`, which
// names the twin to write, `dyn ChatModelDyn`. A type that is no model at all, given where a
// `&dyn ChatModelDyn` is expected, is told to implement `ChatModel`. `NodeSearch`, `NodeStore` and
// `Retriever` name theirs the same way.
use ctx::engine::Retriever;
use ctx::llm::{ChatModel, ChatModelDyn};
use ctx::pipeline::{NodeSearch, NodeStore};

fn pick(_model: &dyn ChatModel) {}

// The same for the other backends: each is told its twin.
fn backends(_search: &dyn NodeSearch, _store: &dyn NodeStore, _retriever: &dyn Retriever) {}

struct NotAModel;

fn main() {
    let _held: &dyn ChatModelDyn = &NotAModel;
}
