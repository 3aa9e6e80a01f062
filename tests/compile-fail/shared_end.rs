// what: Request typestate: a shared reference cannot end the request, only its unique owner
// expect: error\[E0599\]: no method named `end` found
fn misuse(rq: ARef<Request<D>>) {
    rq.end(Ok(()));
}
