//! A peer, as the scheduler needs it: who it is, its starting weight, and the price of
//! a frame sent to it.

use crate::{Ac, StationId, Weight};
use airtime_est::Rate;
use core::fmt::Debug;

/// Error kinds a [`Station`] can report when asked to price a frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum StationErrorKind {
    /// No tx rate has been reported for this station yet (mainline then charges
    /// nothing, reference E1; the scheduler charges `Config::unknown_rate_charge_us`).
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
pub trait Station {
    /// The error type of [`Station::expected_airtime_us`].
    type Error: StationError;

    /// The scheduler's handle for this station.
    fn station_id(&self) -> StationId;

    /// The weight the station starts with when registered (changed later with
    /// [`Scheduler::set_weight`](crate::Scheduler::set_weight)).
    fn airtime_weight(&self) -> Weight {
        Weight::DEFAULT
    }

    /// The last reported tx rate (mac80211's `last_rate_info`), if any.
    fn last_tx_rate(&self) -> Option<Rate>;

    /// Expected airtime of one frame of `frame_len` bytes on `ac`, in us. The default
    /// prices it with `airtime-est` from [`last_tx_rate`](Station::last_tx_rate), as
    /// aggregated unless `ac` is VO (mainline's proxy, reference 3.8).
    fn expected_airtime_us(&self, frame_len: u32, ac: Ac) -> Result<u32, Self::Error>;
}

impl<S: Station + ?Sized> Station for &S {
    type Error = S::Error;

    fn station_id(&self) -> StationId {
        (**self).station_id()
    }

    fn airtime_weight(&self) -> Weight {
        (**self).airtime_weight()
    }

    fn last_tx_rate(&self) -> Option<Rate> {
        (**self).last_tx_rate()
    }

    fn expected_airtime_us(&self, frame_len: u32, ac: Ac) -> Result<u32, Self::Error> {
        (**self).expected_airtime_us(frame_len, ac)
    }
}

/// Prices a frame from a rate the way [`Station::expected_airtime_us`] should by
/// default: `airtime-est`'s expected airtime, aggregated unless VO; `NoRate` without a
/// rate. Implementations call this unless they price frames themselves.
pub fn price_from_rate(rate: Option<Rate>, frame_len: u32, ac: Ac) -> Result<u32, StationErrorKind> {
    match rate {
        Some(rate) => Ok(airtime_est::expected_tx_airtime_us(rate, frame_len, ac.aggregated())),
        None => Err(StationErrorKind::NoRate),
    }
}
