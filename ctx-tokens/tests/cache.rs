//! The content-addressed count cache: hits on repeats, bounded, safe across threads, and never
//! mixing vocabularies.

use std::sync::Arc;
use std::thread;

use ctx_tokens::{
    BpeBackend, CacheStats, ChatFormat, CountCache, Encoding, TiktokenBackend, TokenCounter, TokenizerBackend,
};

fn fresh(encoding: Encoding, entries: usize) -> TokenCounter {
    TokenCounter::with_backend(Arc::new(BpeBackend::new(encoding)), ChatFormat::openai(), entries)
}

fn texts(n: usize) -> Vec<String> {
    (0..n).map(|i| format!("Document {i}: the invoice for order #{} was paid on day {}.", i * 7919, i % 31)).collect()
}

#[test]
fn repeated_counts_are_answered_from_the_cache() {
    let c = fresh(Encoding::Cl100kBase, 1024);
    let text = "A paragraph that several pipeline steps will count again and again.";
    let n = c.count(text).unwrap();
    assert_eq!(c.cache_stats(), CacheStats { hits: 0, misses: 1 });
    for _ in 0..5 {
        assert_eq!(c.count(text).unwrap(), n);
    }
    assert_eq!(c.cache_stats(), CacheStats { hits: 5, misses: 1 });
    // count_up_to and fits read the same entries.
    assert_eq!(c.count_up_to(text, n).unwrap(), Some(n));
    assert!(!c.fits(text, n - 1).unwrap());
    assert_eq!(c.cache_stats(), CacheStats { hits: 7, misses: 1 });
    // Clones share the cache.
    let clone = c.clone();
    assert_eq!(clone.count(text).unwrap(), n);
    assert_eq!(c.cache_stats().hits, 8);
}

#[test]
fn a_refused_count_up_to_is_not_cached_as_a_count() {
    let c = fresh(Encoding::Cl100kBase, 1024);
    let text = "word ".repeat(400);
    assert_eq!(c.count_up_to(&text, 10).unwrap(), None);
    let n = c.count(&text).unwrap();
    assert_eq!(n, BpeBackend::new(Encoding::Cl100kBase).count(&text).unwrap());
}

#[test]
fn the_cache_stays_within_its_bound() {
    let c = fresh(Encoding::O200kBase, 100);
    let capacity = c.cache().capacity();
    assert!((100..=200).contains(&capacity), "capacity {capacity} for 100 requested entries");
    let all = texts(5_000);
    let backend = BpeBackend::new(Encoding::O200kBase);
    for t in &all {
        c.count(t).unwrap();
        assert!(c.cache().len() <= capacity, "{} entries > capacity {capacity}", c.cache().len());
    }
    assert!(!c.cache().is_empty());
    // Evicted texts are simply counted again, correctly.
    for t in all.iter().step_by(97) {
        assert_eq!(c.count(t).unwrap(), backend.count(t).unwrap());
    }
}

#[test]
fn two_encodings_sharing_one_cache_never_share_an_entry() {
    let shared = Arc::new(CountCache::new(1024));
    let cl =
        TokenCounter::with_cache(Arc::new(BpeBackend::new(Encoding::Cl100kBase)), ChatFormat::openai(), shared.clone());
    let o =
        TokenCounter::with_cache(Arc::new(BpeBackend::new(Encoding::O200kBase)), ChatFormat::openai(), shared.clone());
    // Texts whose counts differ between the two vocabularies.
    let samples = ["お誕生日おめでとう", "Příliš žluťoučký kůň úpěl ďábelské ódy.", "दिल्ली की सर्दियों में सुबह कोहरा"];
    for text in samples {
        let want_cl = TiktokenBackend::new(Encoding::Cl100kBase).count(text).unwrap();
        let want_o = TiktokenBackend::new(Encoding::O200kBase).count(text).unwrap();
        assert_ne!(want_cl, want_o, "{text:?} does not tell the vocabularies apart");
        assert_eq!(cl.count(text).unwrap(), want_cl);
        let misses = shared.stats().misses;
        assert_eq!(o.count(text).unwrap(), want_o, "o200k read cl100k's entry for {text:?}");
        assert_eq!(shared.stats().misses, misses + 1);
        assert_eq!(cl.count(text).unwrap(), want_cl);
        assert_eq!(o.count(text).unwrap(), want_o);
        assert_ne!(shared.key(cl.backend_id(), text), shared.key(o.backend_id(), text));
    }
    assert_eq!(shared.len(), 2 * samples.len());
}

#[test]
fn concurrent_counting_from_many_threads_is_exact_and_accounted() {
    const THREADS: usize = 8;
    const ROUNDS: usize = 3;
    let c = fresh(Encoding::Cl100kBase, 10_000);
    let all = Arc::new(texts(400));
    let backend = BpeBackend::new(Encoding::Cl100kBase);
    let want: Vec<usize> = all.iter().map(|t| backend.count(t).unwrap()).collect();
    let want = Arc::new(want);
    let workers: Vec<_> = (0..THREADS)
        .map(|w| {
            let (c, all, want) = (c.clone(), all.clone(), want.clone());
            thread::spawn(move || {
                for round in 0..ROUNDS {
                    // Each thread walks the texts from a different offset, so threads race on
                    // the same entries at different times.
                    for i in 0..all.len() {
                        let j = (i + w * 53 + round * 17) % all.len();
                        assert_eq!(c.count(&all[j]).unwrap(), want[j], "thread {w} text {j}");
                    }
                }
            })
        })
        .collect();
    for w in workers {
        w.join().expect("a counting thread panicked");
    }
    let stats = c.cache_stats();
    let lookups = (THREADS * ROUNDS * all.len()) as u64;
    assert_eq!(stats.hits + stats.misses, lookups);
    // Every text misses at least once; it can miss once per thread that raced on it, never more.
    assert!(stats.misses >= all.len() as u64 && stats.misses <= (THREADS * all.len()) as u64, "{stats:?}");
    assert!(stats.hits >= lookups - (THREADS * all.len()) as u64, "{stats:?}");
}
