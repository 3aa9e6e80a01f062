// what: A4: a bio set never moves while pieces split off from it may point to it (they find it by address and hold a reference on it, which dropping it waits for): it is pinned, so it cannot be swapped or moved out
// expect: error\[E0596\]: cannot borrow data in dereference of `[a-z:_]*Pin<
use kernel::block::bio::BioSet;

fn misuse(a: &mut Pin<KBox<BioSet>>, b: &mut Pin<KBox<BioSet>>) {
    core::mem::swap(&mut **a, &mut **b);
}
