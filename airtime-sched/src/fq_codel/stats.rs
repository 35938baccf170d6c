//! Statistics of one FQ-CoDel txq, printed like mac80211's per-TID `aqm` debugfs file.

use core::fmt;

/// A snapshot of an [`FqCodelTxq`](super::FqCodelTxq)'s counters.
///
/// Counters of frames satisfy, at any time:
/// `enqueued = tx_packets + dropped() + backlog_packets`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct FqCodelStats {
    /// CoDel target, in us (printed in the header, as mac80211 does).
    pub codel_target_us: u64,
    /// CoDel interval, in us.
    pub codel_interval_us: u64,
    /// Whether CoDel marks ECN-capable frames instead of dropping them.
    pub ecn: bool,
    /// Frames queued now.
    pub backlog_packets: u64,
    /// Bytes queued now (sum of frame lengths).
    pub backlog_bytes: u64,
    /// Memory queued now (sum of truesizes), counted against the memory limit.
    pub memory_usage: u64,
    /// Flows holding frames now.
    pub flows_active: u32,
    /// Times a flow became backlogged and joined the new-flows list (mac80211's
    /// `new-flows` column).
    pub new_flows: u64,
    /// Frames enqueued (offered), including those dropped at once.
    pub enqueued: u64,
    /// Frames CoDel dropped.
    pub codel_drops: u64,
    /// Frames CoDel marked CE instead of dropping (they were sent).
    pub codel_ce_marks: u64,
    /// Frames dropped because the txq was over its packet limit (and not over its
    /// memory limit). mac80211 counts batches here; this counts frames.
    pub overlimit_drops: u64,
    /// Frames dropped because the txq was over its memory limit (whether or not it was
    /// also over its packet limit).
    pub overmemory_drops: u64,
    /// Frames dropped because they could not be stored (allocation failure).
    pub alloc_drops: u64,
    /// Frames removed by `purge`.
    pub purged: u64,
    /// Frames whose hash differed from the hash of the backlogged flow they joined
    /// (two transport flows sharing a bucket).
    pub collisions: u64,
    /// Dropped frames that were released at once although kept drops were asked for,
    /// because the drop buffer could not grow (they are still counted above).
    pub unkept_drops: u64,
    /// Frames dequeued.
    pub tx_packets: u64,
    /// Bytes dequeued.
    pub tx_bytes: u64,
}

impl FqCodelStats {
    /// Every frame dropped, for any reason (marks are not drops).
    pub fn dropped(&self) -> u64 {
        self.codel_drops
            .saturating_add(self.overlimit_drops)
            .saturating_add(self.overmemory_drops)
            .saturating_add(self.alloc_drops)
            .saturating_add(self.purged)
    }
}

impl FqCodelStats {
    /// Adds `other`'s counters to these, saturating: a radio-wide total of txqs, live
    /// or retired (see [`FqCodelTxq::retire`](super::FqCodelTxq::retire)), for which
    /// `enqueued = tx_packets + dropped() + backlog_packets` still holds. The CoDel
    /// parameters are left as they are.
    pub fn accumulate(&mut self, other: &FqCodelStats) {
        let FqCodelStats {
            codel_target_us: _,
            codel_interval_us: _,
            ecn: _,
            backlog_packets,
            backlog_bytes,
            memory_usage,
            flows_active,
            new_flows,
            enqueued,
            codel_drops,
            codel_ce_marks,
            overlimit_drops,
            overmemory_drops,
            alloc_drops,
            purged,
            collisions,
            unkept_drops,
            tx_packets,
            tx_bytes,
        } = *other;
        let sums = [
            (&mut self.backlog_packets, backlog_packets),
            (&mut self.backlog_bytes, backlog_bytes),
            (&mut self.memory_usage, memory_usage),
            (&mut self.new_flows, new_flows),
            (&mut self.enqueued, enqueued),
            (&mut self.codel_drops, codel_drops),
            (&mut self.codel_ce_marks, codel_ce_marks),
            (&mut self.overlimit_drops, overlimit_drops),
            (&mut self.overmemory_drops, overmemory_drops),
            (&mut self.alloc_drops, alloc_drops),
            (&mut self.purged, purged),
            (&mut self.collisions, collisions),
            (&mut self.unkept_drops, unkept_drops),
            (&mut self.tx_packets, tx_packets),
            (&mut self.tx_bytes, tx_bytes),
        ];
        for (sum, add) in sums {
            *sum = sum.saturating_add(add);
        }
        self.flows_active = self.flows_active.saturating_add(flows_active);
    }
}

impl fmt::Display for FqCodelStats {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "target {}us interval {}us ecn {}",
            self.codel_target_us,
            self.codel_interval_us,
            if self.ecn { "yes" } else { "no" }
        )?;
        writeln!(
            f,
            "backlog-bytes backlog-packets memory-usage flows new-flows drops marks overlimit overmemory \
             collisions tx-bytes tx-packets"
        )?;
        writeln!(
            f,
            "{} {} {} {} {} {} {} {} {} {} {} {}",
            self.backlog_bytes,
            self.backlog_packets,
            self.memory_usage,
            self.flows_active,
            self.new_flows,
            self.codel_drops,
            self.codel_ce_marks,
            self.overlimit_drops,
            self.overmemory_drops,
            self.collisions,
            self.tx_bytes,
            self.tx_packets
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::ToString;

    #[test]
    fn display_has_a_parameter_line_a_header_and_one_row() {
        let s = FqCodelStats {
            codel_target_us: 20_000,
            codel_interval_us: 100_000,
            ecn: true,
            backlog_bytes: 3000,
            backlog_packets: 2,
            tx_packets: 7,
            ..FqCodelStats::default()
        };
        let text = s.to_string();
        let lines: alloc::vec::Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "target 20000us interval 100000us ecn yes");
        assert_eq!(lines[1].split(' ').count(), lines[2].split(' ').count());
        assert_eq!(lines[2], "3000 2 0 0 0 0 0 0 0 0 0 7");
    }

    #[test]
    fn dropped_sums_every_drop_reason_but_not_marks() {
        let s = FqCodelStats {
            codel_drops: 1,
            codel_ce_marks: 100,
            overlimit_drops: 2,
            overmemory_drops: 4,
            alloc_drops: 8,
            purged: 16,
            ..FqCodelStats::default()
        };
        assert_eq!(s.dropped(), 31);
    }
}
