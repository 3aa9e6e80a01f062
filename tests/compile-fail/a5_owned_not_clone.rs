// what: A5: the unique owner of a request cannot be duplicated
// expect: error\[E0599\]: no method named `clone` found
fn misuse(rq: Owned<Request<D>>) {
    let twin = rq.clone();
    twin.end_ok();
    rq.end_ok();
}
