// what: A1: a refusal hands back an owned request; one the driver shares (an ARef, perhaps of another request) cannot be refused
// expect: error\[E0308\]: mismatched types
fn misuse(other: ARef<Request<D>>) -> Refused<D> {
    Refused::started(other, EIO)
}
