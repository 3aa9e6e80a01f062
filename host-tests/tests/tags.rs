//! common/tags.rs: the lock-free tag map of rnull_split's bio timer pool.

use rnull_host_tests::tags::Tags;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

fn tags(count: usize) -> Tags<Vec<AtomicU64>> {
    let words = (0..count.div_ceil(64)).map(|_| AtomicU64::new(0)).collect();
    Tags::new(words, count).expect("words for count")
}

#[test]
fn takes_every_tag_once_then_none() {
    for count in [0, 1, 5, 63, 64, 65, 128, 200] {
        let t = tags(count);
        assert!(t.all_free());
        let mut seen: Vec<usize> = (0..count).map(|_| t.take().expect("a free tag")).collect();
        assert_eq!(t.take(), None, "count {count}: all taken");
        assert!(count == 0 || !t.all_free());
        seen.sort();
        assert_eq!(seen, (0..count).collect::<Vec<_>>(), "count {count}");
        for tag in seen {
            t.give_back(tag);
        }
        assert!(t.all_free(), "count {count}");
    }
}

#[test]
fn wrong_word_count_is_refused() {
    let words: Vec<AtomicU64> = (0..2).map(|_| AtomicU64::new(0)).collect();
    assert!(Tags::new(words, 64).is_none());
    let words: Vec<AtomicU64> = vec![AtomicU64::new(1)];
    assert!(Tags::new(words, 10).is_none(), "words must start free");
}

#[test]
fn search_rotates_past_the_tag_given_back_last() {
    let t = tags(8);
    assert_eq!(t.take(), Some(0));
    t.give_back(0);
    // Tag 0 was given back last: the search goes on from tag 1.
    assert_eq!(t.take(), Some(1));
    assert_eq!(t.take(), Some(2));
    t.give_back(1);
    t.give_back(2);
    let order: Vec<_> = (0..8).map(|_| t.take().unwrap()).collect();
    assert_eq!(order, vec![3, 4, 5, 6, 7, 0, 1, 2], "oldest free first, wrapping");
}

#[test]
fn give_back_out_of_range_is_ignored() {
    let t = tags(10);
    t.give_back(10);
    t.give_back(1000);
    assert!(t.all_free());
    assert_eq!((0..10).filter_map(|_| t.take()).count(), 10);
    assert_eq!(t.take(), None, "the padding bits stay set");
}

#[test]
fn threads_never_share_a_tag() {
    let t = Arc::new(tags(70));
    let held: Arc<Vec<AtomicBool>> = Arc::new((0..70).map(|_| AtomicBool::new(false)).collect());
    let threads: Vec<_> = (0..4)
        .map(|_| {
            let (t, held) = (t.clone(), held.clone());
            std::thread::spawn(move || {
                let mut mine = Vec::new();
                for i in 0..200_000 {
                    if i % 3 != 2 {
                        if let Some(tag) = t.take() {
                            assert!(!held[tag].swap(true, Ordering::Relaxed), "tag {tag} taken twice");
                            mine.push(tag);
                        }
                    } else if let Some(tag) = mine.pop() {
                        held[tag].store(false, Ordering::Relaxed);
                        t.give_back(tag);
                    }
                }
                for tag in mine {
                    held[tag].store(false, Ordering::Relaxed);
                    t.give_back(tag);
                }
            })
        })
        .collect();
    for th in threads {
        th.join().unwrap();
    }
    assert!(t.all_free());
}
