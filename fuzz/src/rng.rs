//! The fuzzer's random numbers: xoshiro256** seeded through SplitMix64, so a
//! seed gives the same sequence on every build (no crate's algorithm can
//! change under us).

pub struct Rng {
    s: [u64; 4],
}

fn splitmix(x: &mut u64) -> u64 {
    *x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *x;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

impl Rng {
    /// The stream of thread `stream` of run `seed`.
    pub fn new(seed: u64, stream: u64) -> Self {
        let mut x = seed ^ stream.wrapping_mul(0xd1b5_4a32_d192_ed03);
        Rng {
            s: [
                splitmix(&mut x),
                splitmix(&mut x),
                splitmix(&mut x),
                splitmix(&mut x),
            ],
        }
    }

    pub fn next(&mut self) -> u64 {
        let r = self.s[1].wrapping_mul(5).rotate_left(7).wrapping_mul(9);
        let t = self.s[1] << 17;
        self.s[2] ^= self.s[0];
        self.s[3] ^= self.s[1];
        self.s[1] ^= self.s[2];
        self.s[0] ^= self.s[3];
        self.s[2] ^= t;
        self.s[3] = self.s[3].rotate_left(45);
        r
    }

    /// Uniform in `0..n` (`n` > 0).
    pub fn below(&mut self, n: u64) -> u64 {
        ((self.next() as u128 * n as u128) >> 64) as u64
    }

    /// Uniform in `lo..=hi`.
    pub fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.below(hi - lo + 1)
    }

    /// True with probability `pct` percent.
    pub fn pct(&mut self, pct: u64) -> bool {
        self.below(100) < pct
    }

    pub fn pick<'a, T>(&mut self, v: &'a [T]) -> &'a T {
        &v[self.below(v.len() as u64) as usize]
    }

    /// An index into `weights`, chosen in proportion to them.
    pub fn weighted(&mut self, weights: impl Iterator<Item = u32> + Clone) -> usize {
        let total: u64 = weights.clone().map(u64::from).sum();
        let mut x = self.below(total);
        for (i, w) in weights.enumerate() {
            if x < w as u64 {
                return i;
            }
            x -= w as u64;
        }
        unreachable!()
    }
}

#[cfg(test)]
mod tests {
    use super::Rng;

    #[test]
    fn same_seed_same_stream() {
        let (mut a, mut b) = (Rng::new(7, 1), Rng::new(7, 1));
        for _ in 0..1000 {
            assert_eq!(a.next(), b.next());
        }
        assert_ne!(Rng::new(7, 1).next(), Rng::new(7, 2).next());
    }

    #[test]
    fn ranges() {
        let mut r = Rng::new(1, 0);
        for _ in 0..10000 {
            let x = r.range(3, 5);
            assert!((3..=5).contains(&x));
        }
        let w = [0u32, 5, 0, 1];
        for _ in 0..1000 {
            let i = r.weighted(w.iter().copied());
            assert!(i == 1 || i == 3);
        }
    }
}
