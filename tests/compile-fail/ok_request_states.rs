// what: control: every legal move between the request states compiles
// expect: ok
fn serve(rq: Owned<IdleRequest<D>>, busy: bool) -> Result<(), Refused<D>> {
    if busy {
        return Err(Refused::new(rq, EBUSY));
    }
    let rq = rq.start();
    let shared = Request::into_shared(rq);
    let again = shared.clone();
    drop(again);
    match Request::try_from_shared(shared) {
        Ok(rq) => rq.complete(),
        Err(shared) => drop(shared),
    }
    Ok(())
}

fn refuse_started(rq: Owned<IdleRequest<D>>) -> Refused<D> {
    Refused::started(rq.start(), ENOMEM)
}

fn requeue(rq: Owned<IdleRequest<D>>, started: bool) {
    if started {
        rq.start().requeue();
    } else {
        rq.requeue();
    }
}
