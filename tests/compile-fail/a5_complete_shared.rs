// what: A5: a shared reference (ARef, as timeout() gets) cannot complete the request
// expect: error\[E0599\]: no method named `complete` found
fn misuse(rq: ARef<Request<D>>) {
    rq.complete();
}
