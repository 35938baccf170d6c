//! A small set of access categories.

use airtime_sched::Ac;
use core::fmt;

/// A set of access categories (one bit each), e.g. the ACs a completion pass reaped.
#[derive(Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct AcSet(u8);

impl AcSet {
    /// The empty set.
    pub const EMPTY: AcSet = AcSet(0);

    /// Adds `ac`.
    #[inline]
    pub fn insert(&mut self, ac: Ac) {
        self.0 |= 1 << ac.index();
    }

    /// Removes `ac`.
    #[inline]
    pub fn remove(&mut self, ac: Ac) {
        self.0 &= !(1 << ac.index());
    }

    /// Whether `ac` is in the set.
    #[inline]
    pub const fn contains(self, ac: Ac) -> bool {
        self.0 & (1 << ac.index()) != 0
    }

    /// Whether the set is empty.
    #[inline]
    pub const fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// Both sets together.
    #[inline]
    pub const fn union(self, other: AcSet) -> AcSet {
        AcSet(self.0 | other.0)
    }

    /// The members, in mac80211's AC order (VO, VI, BE, BK).
    pub fn iter(self) -> impl Iterator<Item = Ac> {
        Ac::ALL.into_iter().filter(move |ac| self.contains(*ac))
    }

    /// The set as bits (bit `ac.index()`), for the C API.
    #[inline]
    pub const fn bits(self) -> u8 {
        self.0
    }
}

impl FromIterator<Ac> for AcSet {
    fn from_iter<I: IntoIterator<Item = Ac>>(iter: I) -> Self {
        let mut s = AcSet::EMPTY;
        for ac in iter {
            s.insert(ac);
        }
        s
    }
}

impl fmt::Debug for AcSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_set().entries(self.iter()).finish()
    }
}
