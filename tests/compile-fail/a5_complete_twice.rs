// what: A5: complete consumes the unique owner, so a request cannot be completed twice
// expect: error\[E0382\]: use of moved value: `rq`
fn misuse(rq: Owned<Request<D>>) {
    rq.complete();
    rq.complete();
}
