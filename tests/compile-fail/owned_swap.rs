// what: Owned typestate: an owned request is never `&mut`, so two requests' C structs cannot be swapped
// expect: error\[E0596\]: cannot borrow data in dereference of `[a-z:_]*Owned<
fn misuse(mut a: Owned<Request<D>>, mut b: Owned<Request<D>>) {
    core::mem::swap(&mut *a, &mut *b);
}
