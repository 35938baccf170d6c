//! Airtime fairness under downlink OFDMA, at short durations (the full arms are the
//! `ofdma` suite; `docs/ofdma-fairness.md` has their numbers). Airtime shares count each
//! MU user its RU's share of the exchange.

use airtime_sim::metrics::RunResult;
use airtime_sim::scenario::{self, Resolved};
use airtime_sim::sim::run::{Overrides, run_one};

fn arm(name: &str, duration_s: f64) -> Resolved {
    let mut a = scenario::suite::named("ofdma").unwrap().into_iter().find(|a| a.spec.name == name).unwrap();
    // The warm-up the runs had when `--duration` still shrank it (a quarter, at most 2 s).
    let warmup_s = Some((duration_s / 4.0).min(2.0));
    Overrides { seed: Some(7), duration_s: Some(duration_s), warmup_s, runs: Some(1) }.apply(&mut a).unwrap();
    a
}

fn shares(r: &RunResult) -> Vec<f64> {
    r.stations.iter().map(|s| s.airtime_share_pct).collect()
}

#[test]
fn without_ofdma_tx_no_pushback_takes_weights_2_1_1_1_to_the_air() {
    // The firmware serves stations round robin, one A-MPDU each; TX_NO_PUSHBACK acts
    // only through the weight-2 station's doubled AQL limit, i.e. through how full its
    // TCP flow keeps its firmware queue, so how far the share goes towards 40 % follows
    // the flows' ACK timing. With replies arriving on the idle medium (the stations'
    // ACKs at AIFS after each downlink exchange, no backoff drawn) the station holds
    // less than its limit more often (AQL p50 1488 against 2000 us, A-MPDU p50 129
    // against 250) and gets 34.9 % over 5 runs of 20 s (39.0 % before); with saturating
    // UDP, which keeps every queue full, the split is 28.5/26.2/22.6/22.7 on either
    // rule. So the test holds what TX_NO_PUSHBACK gives here: the weight-2 station above
    // an equal quarter by more than the 5-point tolerance, the weight-1 stations within
    // 5 points of their fifth.
    let s = shares(&run_one(&arm("ofdma-weighted-su", 4.0), 0).unwrap());
    assert!(s[0] > 25.0 + 5.0 && s[1..].iter().all(|x| (x - 20.0).abs() < 5.0), "{s:?}");
}

fn near(s: &[f64], want: [f64; 4]) -> bool {
    s.iter().zip(want).all(|(share, want)| (share - want).abs() < 5.0)
}

#[test]
fn host_scheduled_ru_share_charging_takes_weights_2_1_1_1_to_the_air_and_whole_ppdu_overshoots() {
    // The series' driver rounds over one shallow TCL ring: the host's deficit round
    // robin decides who has frames for the next MU PPDU, so what it is charged decides
    // the split. RU shares charge what each user had; the whole PPDU charges every user
    // as much as a station alone, and the weight-2 station, present in most PPDUs, ends
    // above its 40 %. Saturating UDP streams: TCP's loss recovery can, in a few
    // seconds, leave one flow short of data and hand its air to the others.
    let ru = shares(&run_one(&arm("ofdma-fifo-udp-weighted-ru-share", 3.0), 0).unwrap());
    assert!(near(&ru, [40.0, 20.0, 20.0, 20.0]), "ru_share {ru:?}");
    let whole = shares(&run_one(&arm("ofdma-fifo-udp-weighted-whole-ppdu", 3.0), 0).unwrap());
    assert!(whole[0] > ru[0] + 3.0, "whole_ppdu {whole:?} against ru_share {ru:?}");
}

#[test]
fn firmware_scheduled_with_equal_rus_every_user_gets_a_quarter_whatever_the_weights_and_the_charging() {
    // The firmware (ath11k adapter, TX_NO_PUSHBACK) puts every station with frames into each PPDU on an equal RU; the
    // host's weights only decide who has frames, and a station of weight 1 is never
    // kept out long enough to miss a PPDU. RU-share charging makes the scheduler's
    // accounting true, but cannot give the weight-2 station more than its RU.
    for name in ["ofdma-weighted-whole-ppdu", "ofdma-weighted-ru-share"] {
        let s = shares(&run_one(&arm(name, 3.0), 0).unwrap());
        assert!(s.iter().all(|x| (x - 25.0).abs() < 5.0), "{name}: {s:?}");
    }
}

/// Two HE80 2SS MCS11 stations each with a saturating TCP download, both with
/// `station` lines, downlink OFDMA `ofdma`.
fn lossy_pair(ofdma: bool, station: &str) -> RunResult {
    let text = format!(
        "name = \"mu\"\nduration_s = 3.0\nwarmup_s = 1.0\nruns = 1\nseed = 3\n[ap]\ndesign = \"ath11k_series\"\n\
         [ap.hardware]\nofdma = {ofdma}\n\
         [[stations]]\nname = \"a\"\nrate = \"he80-2ss-mcs11\"\n{station}\n\
         [[stations]]\nname = \"b\"\nrate = \"he80-2ss-mcs11\"\n{station}\n\
         [[flows]]\nstation = \"a\"\n[[flows]]\nstation = \"b\"\n"
    );
    let sc = scenario::parse(&text, "mu.toml").unwrap_or_else(|e| panic!("{e}\n{text}"));
    run_one(&sc, 0).unwrap()
}

#[test]
fn mu_users_over_a_lossy_link_pass_its_block_ack_and_reorder_buffer_and_keep_their_throughput() {
    // Before, an MU user's frames were delivered whole, past the reorder buffer: one
    // subframe lost in an SU A-MPDU and resent in an MU PPDU never reached it, the
    // buffer waited for it for ever and both downloads stopped at 0 Mbit/s.
    for station in ["frame_error_rate = 0.5", "frame_error_rate = 0.01", "rate_control = \"minstrel_ht\""] {
        let (mu, su) = (lossy_pair(true, station), lossy_pair(false, station));
        let total = |r: &RunResult| r.flows.iter().map(|f| f.throughput_mbps).sum::<f64>();
        eprintln!(
            "{station}: MU {:?}, SU {:?}",
            mu.flows.iter().map(|f| f.throughput_mbps).collect::<Vec<_>>(),
            total(&su)
        );
        // Each keeps a share well clear of the stall (0 Mbit/s): two TCP flows over 2 s
        // split the air unevenly from seed to seed (before post-backoff: 178/488 and
        // 514/134 Mbit/s in two of six seeds with Minstrel; with replies on the idle
        // medium 530/116 against an SU total of 866 at this seed), so the bound is not a
        // fair share but a tenth of the SU total, far above a stall.
        for f in &mu.flows {
            assert!(
                f.throughput_mbps > 0.1 * total(&su),
                "{station}: {} Mbit/s, SU total {}",
                f.throughput_mbps,
                total(&su)
            );
        }
        // The losses are the link's: MU users' subframes count in it.
        let l = mu.stations[0].link.as_ref().unwrap();
        assert!(l.subframes_sent > l.subframes_acked || !station.starts_with("frame"), "{l:?}");
    }
}
