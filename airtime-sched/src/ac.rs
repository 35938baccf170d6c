//! Access categories and traffic identifiers, in mac80211's numbering.

use core::fmt;

/// An 802.11e access category, numbered as mac80211 numbers them (VO = 0 .. BK = 3);
/// debugfs files and the `aql_txq_limit` write format use these numbers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(u8)]
pub enum Ac {
    /// Voice: never aggregated by AQL's estimate (`ieee80211_tx_dequeue`).
    Vo = 0,
    /// Video.
    Vi = 1,
    /// Best effort: where bulk TCP lives, and where ath11k charges received airtime.
    Be = 2,
    /// Background.
    Bk = 3,
}

impl Ac {
    /// Number of access categories.
    pub const COUNT: usize = 4;
    /// All access categories in mac80211 order.
    pub const ALL: [Ac; 4] = [Ac::Vo, Ac::Vi, Ac::Be, Ac::Bk];

    /// The AC's mac80211 number (0..4). Per-AC state indexes by the AC itself
    /// ([`PerAc`]).
    #[inline]
    pub const fn index(self) -> usize {
        self as usize
    }

    /// The access category with mac80211 number `n`, if `n < 4`.
    pub const fn from_index(n: usize) -> Option<Ac> {
        if n < Ac::COUNT { Some(Ac::from_low_bits(n as u64)) } else { None }
    }

    /// The access category whose mac80211 number is the two low bits of `n`: how packed
    /// words (a txq's, a round's) store it, decoded without a path that could fail.
    #[inline]
    pub(crate) const fn from_low_bits(n: u64) -> Ac {
        match n & 3 {
            0 => Ac::Vo,
            1 => Ac::Vi,
            2 => Ac::Be,
            _ => Ac::Bk,
        }
    }

    /// Whether AQL prices frames of this AC as aggregated (mainline's proxy: "not VO", E7).
    #[inline]
    pub const fn aggregated(self) -> bool {
        !matches!(self, Ac::Vo)
    }

    /// Short upper-case name as debugfs prints it.
    pub const fn name(self) -> &'static str {
        match self {
            Ac::Vo => "VO",
            Ac::Vi => "VI",
            Ac::Be => "BE",
            Ac::Bk => "BK",
        }
    }
}

/// One `T` per access category, indexed by [`Ac`]: never out of bounds, so per-AC state
/// needs neither a checked lookup nor an index that could panic.
///
/// ```
/// use airtime_sched::{Ac, PerAc};
///
/// let mut pending_us = PerAc::from_fn(|ac| if ac == Ac::Vo { 100u32 } else { 0 });
/// pending_us[Ac::Be] += 300;
/// assert_eq!(pending_us, [100, 0, 300, 0]);
/// assert_eq!(pending_us.each().map(|(_, us)| us).sum::<u32>(), 400);
/// assert_eq!(format!("{pending_us:?}"), "{VO: 100, VI: 0, BE: 300, BK: 0}");
/// ```
#[derive(Clone, Copy, Default, PartialEq, Eq, Hash)]
// `try_alloc::boxed_per_ac` relies on this layout: it views a boxed array as a `PerAc`.
#[repr(transparent)]
pub struct PerAc<T>(pub [T; Ac::COUNT]);

impl<T> PerAc<T> {
    /// Each AC's value, from `f` of the AC.
    pub fn from_fn(mut f: impl FnMut(Ac) -> T) -> PerAc<T> {
        PerAc(Ac::ALL.map(&mut f))
    }

    /// The values, in mac80211 order (VO first).
    pub fn iter(&self) -> core::slice::Iter<'_, T> {
        self.0.iter()
    }

    /// The values, mutable, in mac80211 order (VO first).
    pub fn iter_mut(&mut self) -> core::slice::IterMut<'_, T> {
        self.0.iter_mut()
    }

    /// Each AC's value through `f`.
    pub fn map<U>(self, f: impl FnMut(T) -> U) -> PerAc<U> {
        PerAc(self.0.map(f))
    }

    /// The ACs and their values, in mac80211 order (VO first).
    pub fn each(&self) -> impl Iterator<Item = (Ac, &T)> {
        Ac::ALL.into_iter().zip(&self.0)
    }
}

// Both compile to one indexed access: `Ac`'s discriminants are 0..4, so the compiler
// drops the `get`'s check and its fallback (a `match` on the AC would compile to a jump
// table).
impl<T> core::ops::Index<Ac> for PerAc<T> {
    type Output = T;

    #[inline]
    fn index(&self, ac: Ac) -> &T {
        self.0.get(ac.index()).unwrap_or(&self.0[0])
    }
}

impl<T> core::ops::IndexMut<Ac> for PerAc<T> {
    #[inline]
    fn index_mut(&mut self, ac: Ac) -> &mut T {
        let [vo, rest @ ..] = &mut self.0;
        match ac.index().checked_sub(1) {
            None => vo,
            Some(k) => rest.get_mut(k).unwrap_or(vo),
        }
    }
}

/// Keyed by the ACs' names: `{VO: 0, VI: 0, BE: 12, BK: 0}`.
impl<T: fmt::Debug> fmt::Debug for PerAc<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.each().map(|(ac, v)| (DebugName(ac), v))).finish()
    }
}

/// An AC as its bare name in a `Debug` map.
struct DebugName(Ac);

impl fmt::Debug for DebugName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0.name())
    }
}

/// From an array in mac80211 order (VO first).
impl<T> From<[T; Ac::COUNT]> for PerAc<T> {
    fn from(values: [T; Ac::COUNT]) -> PerAc<T> {
        PerAc(values)
    }
}

/// To an array in mac80211 order (VO first).
impl<T> From<PerAc<T>> for [T; Ac::COUNT] {
    fn from(values: PerAc<T>) -> [T; Ac::COUNT] {
        values.0
    }
}

/// Compares with an array in mac80211 order (VO first).
impl<T: PartialEq> PartialEq<[T; Ac::COUNT]> for PerAc<T> {
    fn eq(&self, other: &[T; Ac::COUNT]) -> bool {
        self.0 == *other
    }
}

impl<T: PartialEq> PartialEq<PerAc<T>> for [T; Ac::COUNT] {
    fn eq(&self, other: &PerAc<T>) -> bool {
        *self == other.0
    }
}

impl<T> IntoIterator for PerAc<T> {
    type Item = T;
    type IntoIter = core::array::IntoIter<T, { Ac::COUNT }>;

    fn into_iter(self) -> Self::IntoIter {
        self.0.into_iter()
    }
}

impl<'a, T> IntoIterator for &'a PerAc<T> {
    type Item = &'a T;
    type IntoIter = core::slice::Iter<'a, T>;

    fn into_iter(self) -> Self::IntoIter {
        self.0.iter()
    }
}

impl<'a, T> IntoIterator for &'a mut PerAc<T> {
    type Item = &'a mut T;
    type IntoIter = core::slice::IterMut<'a, T>;

    fn into_iter(self) -> Self::IntoIter {
        self.0.iter_mut()
    }
}

impl fmt::Display for Ac {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A traffic identifier: 0..=15 for data, or [`Tid::MGMT`] (16) for the per-station
/// management (MMPDU) queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Tid(u8);

/// A TID outside 0..=16.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct InvalidTid(pub u8);

impl fmt::Display for InvalidTid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "TID {} is outside 0..=16", self.0)
    }
}

impl core::error::Error for InvalidTid {}

impl Tid {
    /// TID 0, user priority 0: best effort (BE), on [`Ac::Be`].
    pub const BE: Tid = Tid(0);
    /// TID 1, user priority 1: background (BK), on [`Ac::Bk`].
    pub const BK: Tid = Tid(1);
    /// TID 2, user priority 2: spare (802.1D's unnamed background priority), on [`Ac::Bk`].
    pub const SPARE: Tid = Tid(2);
    /// TID 3, user priority 3: excellent effort (EE), on [`Ac::Be`].
    pub const EE: Tid = Tid(3);
    /// TID 4, user priority 4: controlled load (CL), on [`Ac::Vi`].
    pub const CL: Tid = Tid(4);
    /// TID 5, user priority 5: video (VI), on [`Ac::Vi`].
    pub const VI: Tid = Tid(5);
    /// TID 6, user priority 6: voice (VO), on [`Ac::Vo`].
    pub const VO: Tid = Tid(6);
    /// TID 7, user priority 7: network control (NC), on [`Ac::Vo`].
    pub const NC: Tid = Tid(7);
    /// TID 8, the first of the eight TIDs 802.11 keeps for traffic streams (TSPEC);
    /// mac80211 maps 8..=15 onto the ACs as it maps 0..=7 (masked with 7): BE.
    pub const TS8: Tid = Tid(8);
    /// TID 9, traffic stream: on [`Ac::Bk`], as TID 1.
    pub const TS9: Tid = Tid(9);
    /// TID 10, traffic stream: on [`Ac::Bk`], as TID 2.
    pub const TS10: Tid = Tid(10);
    /// TID 11, traffic stream: on [`Ac::Be`], as TID 3.
    pub const TS11: Tid = Tid(11);
    /// TID 12, traffic stream: on [`Ac::Vi`], as TID 4.
    pub const TS12: Tid = Tid(12);
    /// TID 13, traffic stream: on [`Ac::Vi`], as TID 5.
    pub const TS13: Tid = Tid(13);
    /// TID 14, traffic stream: on [`Ac::Vo`], as TID 6.
    pub const TS14: Tid = Tid(14);
    /// TID 15, traffic stream: on [`Ac::Vo`], as TID 7.
    pub const TS15: Tid = Tid(15);
    /// The per-station management-frame TID (mac80211's TID 16), on [`Ac::Vo`].
    pub const MGMT: Tid = Tid(16);
    /// The eight user-priority TIDs, 0..=7, in number order.
    pub const USER_PRIORITIES: [Tid; 8] = [Tid::BE, Tid::BK, Tid::SPARE, Tid::EE, Tid::CL, Tid::VI, Tid::VO, Tid::NC];
    /// The eight traffic-stream TIDs, 8..=15, in number order.
    pub const TRAFFIC_STREAMS: [Tid; 8] =
        [Tid::TS8, Tid::TS9, Tid::TS10, Tid::TS11, Tid::TS12, Tid::TS13, Tid::TS14, Tid::TS15];
    /// Every TID a txq may have, 0..=16, in number order: the sixteen data TIDs, then
    /// [`Tid::MGMT`].
    pub const ALL: [Tid; 17] = [
        Tid::BE,
        Tid::BK,
        Tid::SPARE,
        Tid::EE,
        Tid::CL,
        Tid::VI,
        Tid::VO,
        Tid::NC,
        Tid::TS8,
        Tid::TS9,
        Tid::TS10,
        Tid::TS11,
        Tid::TS12,
        Tid::TS13,
        Tid::TS14,
        Tid::TS15,
        Tid::MGMT,
    ];

    /// A TID from its number; 0..=15 are data TIDs, 16 is [`Tid::MGMT`].
    pub const fn new(tid: u8) -> Result<Tid, InvalidTid> {
        if tid <= 16 { Ok(Tid(tid)) } else { Err(InvalidTid(tid)) }
    }

    /// The TID number.
    #[inline]
    pub const fn get(self) -> u8 {
        self.0
    }

    /// Whether this is the management TID.
    #[inline]
    pub const fn is_mgmt(self) -> bool {
        self.0 == 16
    }

    /// The access category: TIDs 6,7 → VO; 4,5 → VI; 0,3 → BE; 1,2 → BK, after masking
    /// with 7 (so 8..=15 map like 0..=7); the management TID → VO (as mac80211 queues management frames).
    pub const fn ac(self) -> Ac {
        if self.is_mgmt() {
            return Ac::Vo;
        }
        match self.0 & 7 {
            6 | 7 => Ac::Vo,
            4 | 5 => Ac::Vi,
            1 | 2 => Ac::Bk,
            _ => Ac::Be,
        }
    }
}

impl fmt::Display for Tid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_mgmt() { f.write_str("mgmt") } else { write!(f, "{}", self.0) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tid_to_ac_follows_mac80211() {
        let expect = [Ac::Be, Ac::Bk, Ac::Bk, Ac::Be, Ac::Vi, Ac::Vi, Ac::Vo, Ac::Vo];
        for tid in 0..16u8 {
            assert_eq!(Tid::new(tid).unwrap().ac(), expect[usize::from(tid & 7)], "tid {tid}");
        }
        assert_eq!(Tid::MGMT.ac(), Ac::Vo);
        assert_eq!(Tid::new(17), Err(InvalidTid(17)));
    }

    #[test]
    fn every_named_tid_has_its_user_priority_number_and_802_11_access_category() {
        let named = [
            (Tid::BE, 0, Ac::Be),
            (Tid::BK, 1, Ac::Bk),
            (Tid::SPARE, 2, Ac::Bk),
            (Tid::EE, 3, Ac::Be),
            (Tid::CL, 4, Ac::Vi),
            (Tid::VI, 5, Ac::Vi),
            (Tid::VO, 6, Ac::Vo),
            (Tid::NC, 7, Ac::Vo),
            (Tid::TS8, 8, Ac::Be),
            (Tid::TS9, 9, Ac::Bk),
            (Tid::TS10, 10, Ac::Bk),
            (Tid::TS11, 11, Ac::Be),
            (Tid::TS12, 12, Ac::Vi),
            (Tid::TS13, 13, Ac::Vi),
            (Tid::TS14, 14, Ac::Vo),
            (Tid::TS15, 15, Ac::Vo),
            (Tid::MGMT, 16, Ac::Vo),
        ];
        for (tid, number, ac) in named {
            assert_eq!((tid.get(), tid.ac()), (number, ac), "{tid}");
            assert_eq!(Tid::new(number), Ok(tid));
        }
        for (i, tid) in Tid::USER_PRIORITIES.iter().enumerate() {
            assert_eq!(usize::from(tid.get()), i);
        }
        for (i, tid) in Tid::TRAFFIC_STREAMS.iter().enumerate() {
            assert_eq!(usize::from(tid.get()), 8 + i);
        }
        for (i, tid) in Tid::ALL.iter().enumerate() {
            assert_eq!(usize::from(tid.get()), i);
        }
    }

    #[test]
    fn only_vo_is_priced_unaggregated() {
        assert!(!Ac::Vo.aggregated());
        assert!(Ac::Vi.aggregated() && Ac::Be.aggregated() && Ac::Bk.aggregated());
        for ac in Ac::ALL {
            assert_eq!(Ac::from_index(ac.index()), Some(ac));
        }
        assert_eq!(Ac::from_index(4), None);
    }
}
