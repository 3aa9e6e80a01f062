// what: IdleRequest typestate: a request not started cannot be ended or completed
// expect: error\[E0599\]: no method named `end_ok` found
fn misuse(rq: Owned<IdleRequest<D>>) {
    rq.end_ok();
}
