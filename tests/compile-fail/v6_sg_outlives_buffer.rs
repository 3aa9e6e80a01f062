// what: V6: a one-entry scatterlist borrows the buffer it describes, so it cannot outlive it
// expect: error\[E0597\]: `buf` does not live long enough
use kernel::scatterlist::SingleSg;

fn misuse() -> Result {
    let sg;
    {
        let buf = KVec::from_elem(0u8, 16, GFP_KERNEL)?;
        sg = SingleSg::new(&buf)?;
    }
    let _entry = sg.entry();
    Ok(())
}
