//! A peer, as the scheduler needs it: who it is, and the price of a frame sent to it.

use crate::{Ac, StationId};
use airtime_est::Rate;
use core::fmt::Debug;

/// Error kinds a [`Station`] can report when asked to price a frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum StationErrorKind {
    /// No tx rate has been reported for this station yet (mainline then charges
    /// nothing, E1; the scheduler charges `Config::unknown_rate_charge_us`).
    NoRate,
    /// Anything else; the scheduler also falls back to the conservative charge.
    Other,
}

/// An error a [`Station`] reports.
pub trait StationError: Debug {
    /// The generic kind of this error.
    fn kind(&self) -> StationErrorKind;
}

impl StationError for StationErrorKind {
    fn kind(&self) -> StationErrorKind {
        *self
    }
}

/// A peer the driver transmits to.
///
/// Implement [`station_id`](Station::station_id) and
/// [`last_tx_rate`](Station::last_tx_rate); the default
/// [`expected_airtime_us`](Station::expected_airtime_us) prices frames from that rate.
/// A driver that prices frames itself (from its rate table, or per MCS) overrides it.
/// The station's airtime weight is not asked here: it is given to
/// [`Scheduler::add_station`](crate::Scheduler::add_station) and changed with
/// [`Scheduler::set_weight`](crate::Scheduler::set_weight).
pub trait Station {
    /// The error type of [`Station::expected_airtime_us`]; [`StationErrorKind`] will do.
    /// It converts from [`StationErrorKind`] so that the default pricing can say
    /// [`StationErrorKind::NoRate`].
    type Error: StationError + From<StationErrorKind>;

    /// The scheduler's handle for this station.
    fn station_id(&self) -> StationId;

    /// The rate its frames are sent at, as last reported (mac80211's `last_rate_info`
    /// from tx status), if any.
    fn last_tx_rate(&self) -> Option<Rate>;

    /// Expected airtime of one frame of `frame_len` bytes on `ac`, in us, which the
    /// scheduler charges (`ieee80211_calc_expected_tx_airtime`). By default
    /// [`price_from_rate`] at [`last_tx_rate`](Station::last_tx_rate): `airtime-est`'s
    /// estimate, as aggregated unless `ac` is VO (mainline's proxy), and
    /// [`StationErrorKind::NoRate`] before the first rate report, for which the
    /// scheduler charges [`Config::unknown_rate_charge_us`](crate::Config::unknown_rate_charge_us).
    fn expected_airtime_us(&self, frame_len: u32, ac: Ac) -> Result<u32, Self::Error> {
        price_from_rate(self.last_tx_rate(), frame_len, ac).map_err(Self::Error::from)
    }
}

impl<S: Station + ?Sized> Station for &S {
    type Error = S::Error;

    fn station_id(&self) -> StationId {
        (**self).station_id()
    }

    fn last_tx_rate(&self) -> Option<Rate> {
        (**self).last_tx_rate()
    }

    fn expected_airtime_us(&self, frame_len: u32, ac: Ac) -> Result<u32, Self::Error> {
        (**self).expected_airtime_us(frame_len, ac)
    }
}

/// Prices a frame from a rate as [`Station::expected_airtime_us`] does by default:
/// `airtime-est`'s expected airtime in us, aggregated unless VO; `NoRate` without a
/// rate.
pub fn price_from_rate(rate: Option<Rate>, frame_len: u32, ac: Ac) -> Result<u32, StationErrorKind> {
    match rate {
        Some(rate) => Ok(airtime_est::expected_tx_airtime_us(rate, frame_len, ac.aggregated())),
        None => Err(StationErrorKind::NoRate),
    }
}
