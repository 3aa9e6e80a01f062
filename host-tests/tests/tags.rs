//! common/tags.rs: the lock-free tag map of rnull_split's bio timer pool.

use rnull_host_tests::tags::{Hint, Tags};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

type HostTags = Tags<Vec<AtomicU64>, Vec<Hint>>;

fn words(count: usize) -> Vec<AtomicU64> {
    (0..count.div_ceil(64)).map(|_| AtomicU64::new(0)).collect()
}

fn hints(cpus: usize) -> Vec<Hint> {
    (0..cpus).map(|_| Hint::new()).collect()
}

/// `count` tags for `cpus` CPUs.
fn tags_on(count: usize, cpus: usize) -> HostTags {
    Tags::new(words(count), hints(cpus), count).expect("words for count")
}

fn tags(count: usize) -> HostTags {
    tags_on(count, 1)
}

#[test]
fn takes_every_tag_once_then_none() {
    for count in [0, 1, 5, 63, 64, 65, 128, 200] {
        let t = tags(count);
        assert!(t.all_free());
        let mut seen: Vec<usize> = (0..count).map(|_| t.take(0).expect("a free tag")).collect();
        assert_eq!(t.take(0), None, "count {count}: all taken");
        assert!(count == 0 || !t.all_free());
        seen.sort();
        assert_eq!(seen, (0..count).collect::<Vec<_>>(), "count {count}");
        for tag in seen {
            t.give_back(tag, 0);
        }
        assert!(t.all_free(), "count {count}");
    }
}

#[test]
fn wrong_word_count_is_refused() {
    let words2: Vec<AtomicU64> = (0..2).map(|_| AtomicU64::new(0)).collect();
    assert!(Tags::new(words2, hints(1), 64).is_none());
    let used: Vec<AtomicU64> = vec![AtomicU64::new(1)];
    assert!(Tags::new(used, hints(1), 10).is_none(), "words must start free");
    assert!(Tags::new(words(10), hints(0), 10).is_none(), "at least one hint");
}

#[test]
fn a_cpu_gets_back_the_tag_it_gave_back_last() {
    let t = tags(8);
    assert_eq!(t.take(0), Some(0));
    t.give_back(0, 0);
    // Its callback ran on this CPU: the timer is free and local, reuse it.
    assert_eq!(t.take(0), Some(0));
    assert_eq!(t.take(0), Some(1));
    assert_eq!(t.take(0), Some(2));
    t.give_back(1, 0);
    assert_eq!(t.take(0), Some(1));
    t.give_back(2, 0);
    t.give_back(1, 0);
    let order: Vec<_> = (0..7).map(|_| t.take(0).unwrap()).collect();
    assert_eq!(order, vec![1, 2, 3, 4, 5, 6, 7], "from the hint up");
    assert_eq!(t.take(0), None);
}

#[test]
fn the_search_wraps_below_the_hint() {
    let t = tags(130);
    let all: Vec<_> = (0..130).map(|_| t.take(0).unwrap()).collect();
    assert_eq!(all, (0..130).collect::<Vec<_>>());
    t.give_back(5, 0);
    t.give_back(100, 0);
    // The hint is at 100 now: 100 first, then wrapping to 5.
    assert_eq!(t.take(0), Some(100));
    assert_eq!(t.take(0), Some(5));
    assert_eq!(t.take(0), None);
}

#[test]
fn cpus_search_from_their_own_hints() {
    let t = tags_on(8, 2);
    // The CPUs start spread over the tags.
    assert_eq!(t.take(0), Some(0));
    assert_eq!(t.take(1), Some(4));
    // A tag given back on CPU 0 is CPU 0's next, not CPU 1's.
    t.give_back(0, 0);
    assert_eq!(t.take(1), Some(5));
    assert_eq!(t.take(0), Some(0));
    // CPU numbers beyond the hints share them.
    assert_eq!(t.take(3), Some(6));
    // When its own part is busy a CPU finds the others' tags.
    let rest: Vec<_> = (0..4).map(|_| t.take(1).unwrap()).collect();
    assert_eq!(rest, vec![7, 1, 2, 3]);
    assert_eq!(t.take(0), None);
}

#[test]
fn give_back_out_of_range_is_ignored() {
    let t = tags(10);
    t.give_back(10, 0);
    t.give_back(1000, 0);
    assert!(t.all_free());
    assert_eq!((0..10).filter_map(|_| t.take(0)).count(), 10);
    assert_eq!(t.take(0), None, "the padding bits stay set");
}

#[test]
fn threads_never_share_a_tag() {
    let t = Arc::new(tags_on(70, 2));
    let held: Arc<Vec<AtomicBool>> = Arc::new((0..70).map(|_| AtomicBool::new(false)).collect());
    let threads: Vec<_> = (0..4)
        .map(|n| {
            // Four threads on two CPUs' hints: two share each.
            let cpu = n % 2;
            let (t, held) = (t.clone(), held.clone());
            std::thread::spawn(move || {
                let mut mine = Vec::new();
                for i in 0..200_000 {
                    if i % 3 != 2 {
                        if let Some(tag) = t.take(cpu) {
                            assert!(!held[tag].swap(true, Ordering::Relaxed), "tag {tag} taken twice");
                            mine.push(tag);
                        }
                    } else if let Some(tag) = mine.pop() {
                        held[tag].store(false, Ordering::Relaxed);
                        t.give_back(tag, cpu);
                    }
                }
                for tag in mine {
                    held[tag].store(false, Ordering::Relaxed);
                    t.give_back(tag, cpu);
                }
            })
        })
        .collect();
    for th in threads {
        th.join().unwrap();
    }
    assert!(t.all_free());
}
