// A backend is written with plain `async fn`, and its future must be `Send` (a run moves between
// threads on a multi-threaded runtime): holding a `std::sync::MutexGuard` across an `.await` is
// one error, at the method, naming the guard and the `.await`.
use std::sync::Mutex;

use ctx::llm::{ChatModel, ChatRequest, ChatResponse, ModelError};

struct Counting {
    seen: Mutex<usize>,
}

async fn pause() {}

impl ChatModel for Counting {
    fn model_name(&self) -> &str {
        "counting"
    }

    async fn chat(&self, _request: &ChatRequest) -> Result<ChatResponse, ModelError> {
        let mut seen = self.seen.lock().unwrap();
        pause().await;
        *seen += 1;
        Ok(ChatResponse::default())
    }
}

fn main() {}
