//! The sets a message object keeps while its members are read: the
//! fields given (a key given twice, in either spelling, is refused), those
//! given as `null` (absent for the required check), and the oneofs set
//! (a second member is refused). Most messages have at most 64 fields and
//! keep each set in a word ([`Small`]); the others in words of a pool the
//! parser keeps between calls ([`Big`]).

use super::tables::MsgInfo;
use crate::plan::MessagePlan;

/// The sets of one message object.
pub trait Marks: Sized {
    /// Empty sets for a message object of `m`.
    fn begin(m: &MessagePlan, pool: &mut Vec<u64>) -> Self;
    /// Field `fi` was given (with a value or `null`).
    fn given(&self, pool: &[u64], fi: usize) -> bool;
    /// Field `fi` is given with a value.
    fn set(&mut self, pool: &mut [u64], fi: usize);
    /// Field `fi` is given as `null`.
    fn set_null(&mut self, pool: &mut [u64], fi: usize);
    /// Oneof `o` is set; whether it was before.
    fn set_oneof(&mut self, pool: &mut [u64], o: usize) -> bool;
    /// Field `fi` was given with a value.
    fn has(&self, pool: &[u64], fi: usize) -> bool;
    /// Every `required` field of `m` was given with a value.
    fn required_given(&self, pool: &[u64], m: &MessagePlan, info: &MsgInfo) -> bool;
    /// Give the pool's words back.
    fn end(self, pool: &mut Vec<u64>);
}

/// At most 64 fields and 64 oneofs: a word per set.
pub struct Small {
    given: u64,
    nulls: u64,
    oneofs: u64,
}

impl Marks for Small {
    #[inline(always)]
    fn begin(_: &MessagePlan, _: &mut Vec<u64>) -> Self {
        Small { given: 0, nulls: 0, oneofs: 0 }
    }
    #[inline(always)]
    fn given(&self, _: &[u64], fi: usize) -> bool {
        self.given >> fi & 1 != 0
    }
    #[inline(always)]
    fn set(&mut self, _: &mut [u64], fi: usize) {
        self.given |= 1 << fi;
    }
    #[inline(always)]
    fn set_null(&mut self, _: &mut [u64], fi: usize) {
        self.given |= 1 << fi;
        self.nulls |= 1 << fi;
    }
    #[inline(always)]
    fn set_oneof(&mut self, _: &mut [u64], o: usize) -> bool {
        let was = self.oneofs >> o & 1 != 0;
        self.oneofs |= 1 << o;
        was
    }
    #[inline(always)]
    fn has(&self, _: &[u64], fi: usize) -> bool {
        (self.given & !self.nulls) >> fi & 1 != 0
    }
    #[inline(always)]
    fn required_given(&self, _: &[u64], _: &MessagePlan, info: &MsgInfo) -> bool {
        self.given & !self.nulls & info.required == info.required
    }
    #[inline(always)]
    fn end(self, _: &mut Vec<u64>) {}
}

/// Any size: the sets in the pool from `base`, `words` words each for
/// the given and null fields, then the oneofs'.
pub struct Big {
    base: usize,
    words: usize,
}

impl Big {
    fn bit(i: usize) -> (usize, u64) {
        (i / 64, 1 << (i % 64))
    }
}

impl Marks for Big {
    fn begin(m: &MessagePlan, pool: &mut Vec<u64>) -> Self {
        let base = pool.len();
        let words = m.fields.len().div_ceil(64);
        pool.resize(base + 2 * words + m.oneofs.len().div_ceil(64), 0);
        Big { base, words }
    }
    fn given(&self, pool: &[u64], fi: usize) -> bool {
        let (w, b) = Self::bit(fi);
        pool[self.base + w] & b != 0
    }
    fn set(&mut self, pool: &mut [u64], fi: usize) {
        let (w, b) = Self::bit(fi);
        pool[self.base + w] |= b;
    }
    fn set_null(&mut self, pool: &mut [u64], fi: usize) {
        let (w, b) = Self::bit(fi);
        pool[self.base + w] |= b;
        pool[self.base + self.words + w] |= b;
    }
    fn set_oneof(&mut self, pool: &mut [u64], o: usize) -> bool {
        let (w, b) = Self::bit(o);
        let word = &mut pool[self.base + 2 * self.words + w];
        let was = *word & b != 0;
        *word |= b;
        was
    }
    fn has(&self, pool: &[u64], fi: usize) -> bool {
        let (w, b) = Self::bit(fi);
        pool[self.base + w] & !pool[self.base + self.words + w] & b != 0
    }
    fn required_given(&self, pool: &[u64], m: &MessagePlan, _: &MsgInfo) -> bool {
        m.required.iter().all(|&i| self.has(pool, usize::from(i)))
    }
    fn end(self, pool: &mut Vec<u64>) {
        pool.truncate(self.base);
    }
}
