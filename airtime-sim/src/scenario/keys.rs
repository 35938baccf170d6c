//! Every key a scenario file may hold, in one table ([`KEYS`]).
//!
//! The parser walks a file against this table (an unknown key is refused with its line),
//! records which keys the file sets, and after deserialising asks each key's [`UsedBy`]
//! whether the chosen configuration uses it. A key that does nothing is never passed over
//! in silence: it is refused, or, where it is harmless, warned about by name
//! ([`Unused`]). The same table renders the reference page (`airtime-sim --keys-md`,
//! checked in as `airtime-sim/docs/scenario-keys.md`; a test fails when the page and the
//! table differ), so the documentation cannot drift from the parser.

use super::{Protocol, Scenario, Stack};
use crate::ap::Design;
use std::fmt::Write;

/// What a key's value is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A table of further keys (`[ap]`).
    Table,
    /// An array of tables (`[[stations]]`).
    ArrayOfTables,
    /// A value, with its type as the reference page writes it.
    Value(&'static str),
}

/// A key's default.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Default {
    /// The file must set it.
    Required,
    /// The value taken when the key is absent, as a TOML literal.
    Value(&'static str),
    /// Absent means the model's own value, given as a TOML literal (the key is an
    /// `Option` in the parsed scenario).
    Implied(&'static str),
    /// Absent means something the table cannot write as a literal.
    Derived(&'static str),
    /// Absent means none.
    None,
}

impl Default {
    /// The default as a TOML literal, where it has one.
    pub fn literal(self) -> Option<&'static str> {
        match self {
            Default::Value(v) | Default::Implied(v) => Some(v),
            _ => None,
        }
    }
}

/// What happens when a file sets a key its configuration does not use.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unused {
    /// Refused when the value differs from the default (the file asks for something the
    /// configuration does not do); warned about when it equals the default (harmless,
    /// but the reader should know the line does nothing).
    RefuseUnlessDefault,
    /// Always a warning: the key describes the world (a station's reported rate, which
    /// station a seed figure is about), not a mechanism, and a design that does not read
    /// it is not contradicted by it.
    Warn,
}

/// The designs with mac80211 txqs under the scheduler (not the qdisc designs).
pub const TXQ_DESIGNS: &[Design] = &[
    Design::Stock,
    Design::Ath11kSeries,
    Design::Ath11kAdapter,
    Design::Mac80211Rr,
    Design::Mac80211Atf,
    Design::Mac80211Aql,
];
/// The designs that register airtime with the scheduler (airtime fairness).
pub const ATF_DESIGNS: &[Design] =
    &[Design::Ath11kSeries, Design::Ath11kAdapter, Design::Mac80211Atf, Design::Mac80211Aql];
/// The designs with Airtime Queue Limits.
pub const AQL_DESIGNS: &[Design] = &[Design::Ath11kSeries, Design::Ath11kAdapter, Design::Mac80211Aql];
/// The designs whose driver runs a round on tx completion, in NAPI budgets.
pub const ROUND_DESIGNS: &[Design] = &[Design::Ath11kSeries, Design::Ath11kAdapter];
/// The designs of an ath11k radio, whose firmware forms the aggregates from TCL rings
/// and whose tx completion ring is interrupt-moderated; the host-aggregating
/// (ath9k-shaped) designs have neither rings nor firmware queues.
pub const ATH11K_DESIGNS: &[Design] = &[Design::Stock, Design::Ath11kSeries, Design::Ath11kAdapter];
/// What the host-aggregating designs lack.
const HOST_AGGREGATES: &str = "forms its aggregates in the driver (ath9k: two in the hardware queue, 4 ms, half the \
                               BlockAck window)";

/// Why a scenario's AP has no AQL on a downlink access category other than BE, or
/// `None` when it has (the AQL designs, without the BE-only MU path).
fn no_ac_aql(sc: &Scenario) -> Option<String> {
    if !AQL_DESIGNS.contains(&sc.ap.design) {
        return Some(format!(
            "design `{}` {NO_AQL}; only {} use it",
            design_key(sc.ap.design),
            design_list(AQL_DESIGNS)
        ));
    }
    sc.ap.hardware.ofdma.then(|| "`ap.hardware.ofdma`: the MU path's downlink is best effort only".into())
}

/// The `aql_txq_limit` key of access category `ac` (mac80211 starts every access
/// category at `IEEE80211_DEFAULT_AQL_TXQ_LIMIT_L`/`_H`, 5000/12000 µs, in
/// `ieee80211_alloc_hw_nm`, and `sta_info_alloc` copies them to each station).
const fn aql_ac_key(path: &'static str, ac: &'static str) -> KeyDef {
    let description = match ac.as_bytes()[1] {
        b'K' => "BK `aql_txq_limit` low and high: as `ap.aql_be_us`, for the downlink's background access category.",
        b'I' => "VI `aql_txq_limit` low and high: as `ap.aql_be_us`, for the downlink's video access category.",
        _ => "VO `aql_txq_limit` low and high: as `ap.aql_be_us`, for the downlink's voice access category.",
    };
    key(path, "[integer, integer]", "µs", Default::Implied("[5000, 12000]"), description).used_by(UsedBy::If(
        no_ac_aql,
        "`ath11k_series` and `ath11k_adapter` without `ap.hardware.ofdma`, `mac80211_aql`",
    ))
}

/// A kind of flow, for keys of `[[flows]]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FlowKind {
    /// TCP flows.
    Tcp,
    /// UDP flows.
    Udp,
    /// TCP flows on the Linux-like stack.
    LinuxTcp,
    /// TCP flows on smoltcp.
    SmoltcpTcp,
    /// UDP flows and TCP flows on the Linux-like stack.
    NotSmoltcp,
}

/// Which configurations use a key.
#[derive(Clone, Copy, Debug)]
pub enum UsedBy {
    /// Every configuration.
    All,
    /// These designs; the text says what the others lack.
    Designs(&'static [Design], &'static str),
    /// Flows of this kind; the text says why the others ignore it.
    Flows(FlowKind, &'static str),
    /// Only when this other key is set (`airtime_share_pct` of `[seed_figures]`), or
    /// true (`ofdma` of `[ap.hardware]`).
    WithKey(&'static str),
    /// Where the check finds no reason not to (`None`); the text describes where.
    If(fn(&Scenario) -> Option<String>, &'static str),
}

impl UsedBy {
    /// Why the scenario does not use the key (`entry`: the index in its array of
    /// tables), or `None` when it does.
    pub fn unused_because(self, sc: &Scenario, entry: Option<usize>) -> Option<String> {
        match self {
            UsedBy::All => None,
            UsedBy::Designs(list, lacks) => (!list.contains(&sc.ap.design))
                .then(|| format!("design `{}` {lacks}; only {} use it", design_key(sc.ap.design), design_list(list))),
            UsedBy::Flows(kind, why) => {
                let flow = sc.flows.get(entry?)?;
                let udp = flow.protocol == Protocol::Udp;
                let on_stack = |s: Stack| format!("the flow runs on stack `{}`: {why}", stack_key(s));
                match kind {
                    FlowKind::Tcp => udp.then(|| format!("the flow is UDP: {why}")),
                    FlowKind::Udp => (!udp).then(|| format!("the flow is TCP: {why}")),
                    FlowKind::LinuxTcp | FlowKind::SmoltcpTcp if udp => Some("the flow is UDP".into()),
                    FlowKind::LinuxTcp => (flow.stack != Stack::Linux).then(|| on_stack(flow.stack)),
                    FlowKind::SmoltcpTcp => (flow.stack != Stack::Smoltcp).then(|| on_stack(flow.stack)),
                    FlowKind::NotSmoltcp => (!udp && flow.stack == Stack::Smoltcp).then(|| on_stack(flow.stack)),
                }
            }
            UsedBy::WithKey("ofdma") => {
                (!sc.ap.hardware.ofdma).then(|| "`ap.hardware.ofdma` is false: no MU PPDU is sent".to_string())
            }
            UsedBy::WithKey(other) => {
                let sf = sc.seed_figures.as_ref()?;
                let set = match other {
                    "airtime_share_pct" => sf.airtime_share_pct.is_some(),
                    _ => true,
                };
                (!set).then(|| format!("`seed_figures.{other}` is not set"))
            }
            UsedBy::If(check, _) => check(sc),
        }
    }

    fn describe(self) -> String {
        match self {
            UsedBy::All => "all".into(),
            UsedBy::Designs(list, _) => design_list(list),
            UsedBy::Flows(FlowKind::Tcp, _) => "TCP flows".into(),
            UsedBy::Flows(FlowKind::Udp, _) => "UDP flows".into(),
            UsedBy::Flows(FlowKind::LinuxTcp, _) => "TCP flows with `stack = \"linux\"`".into(),
            UsedBy::Flows(FlowKind::SmoltcpTcp, _) => "TCP flows with `stack = \"smoltcp\"`".into(),
            UsedBy::Flows(FlowKind::NotSmoltcp, _) => "UDP flows, TCP flows with `stack = \"linux\"`".into(),
            UsedBy::WithKey("ofdma") => "with `ap.hardware.ofdma = true`".into(),
            UsedBy::WithKey(k) => format!("with `{k}`"),
            UsedBy::If(_, text) => text.into(),
        }
    }
}

/// A design's name as a scenario writes it.
pub fn design_key(d: Design) -> &'static str {
    match d {
        Design::Stock => "stock",
        Design::Ath11kSeries => "ath11k_series",
        Design::Ath11kAdapter => "ath11k_adapter",
        Design::Mac80211Rr => "mac80211_rr",
        Design::Mac80211Atf => "mac80211_atf",
        Design::Mac80211Aql => "mac80211_aql",
        Design::QdiscPfifo => "qdisc_pfifo",
        Design::QdiscFqCodel => "qdisc_fq_codel",
    }
}

fn stack_key(s: Stack) -> &'static str {
    match s {
        Stack::Linux => "linux",
        Stack::Smoltcp => "smoltcp",
    }
}

fn design_list(list: &[Design]) -> String {
    list.iter().map(|d| format!("`{}`", design_key(*d))).collect::<Vec<_>>().join(", ")
}

/// One key.
#[derive(Clone, Copy, Debug)]
pub struct KeyDef {
    /// Its path: `ap.aql_be_us`; keys of an array of tables are written `flows[].cc`.
    pub path: &'static str,
    /// Its kind and type.
    pub kind: Kind,
    /// Its unit, or "".
    pub unit: &'static str,
    /// Its default.
    pub default: Default,
    /// The values it takes, when it is one of a few names.
    pub choices: &'static [&'static str],
    /// What it models.
    pub models: &'static str,
    /// Which configurations use it.
    pub used_by: UsedBy,
    /// What happens when it is set and unused.
    pub unused: Unused,
}

const fn key(
    path: &'static str,
    ty: &'static str,
    unit: &'static str,
    default: Default,
    models: &'static str,
) -> KeyDef {
    KeyDef {
        path,
        kind: Kind::Value(ty),
        unit,
        default,
        choices: &[],
        models,
        used_by: UsedBy::All,
        unused: Unused::RefuseUnlessDefault,
    }
}

const fn table(path: &'static str, kind: Kind, default: Default, models: &'static str) -> KeyDef {
    KeyDef {
        path,
        kind,
        unit: "",
        default,
        choices: &[],
        models,
        used_by: UsedBy::All,
        unused: Unused::RefuseUnlessDefault,
    }
}

impl KeyDef {
    const fn used_by(mut self, u: UsedBy) -> KeyDef {
        self.used_by = u;
        self
    }
    const fn choices(mut self, c: &'static [&'static str]) -> KeyDef {
        self.choices = c;
        self
    }
    const fn warn_when_unused(mut self) -> KeyDef {
        self.unused = Unused::Warn;
        self
    }
}

const NO_AQL: &str = "has no Airtime Queue Limits";
const NO_ATF: &str = "registers no airtime, so its deficit round robin never weighs stations";
const NO_CALIBRATION: &str = "is not the ath11k adapter, whose PPDU stats feed the calibration";
const NO_TXQS: &str = "has no mac80211 txqs (a qdisc sits in front of the driver)";

/// Every scenario key, in the order the reference page lists them.
pub const KEYS: &[KeyDef] = &[
    key("name", "string", "", Default::Required, "Short identifier of the arm, in tables, JSON and CSV."),
    key("title", "string", "", Default::Value("\"\""), "What the arm is, for tables."),
    key("group", "string", "", Default::Value("\"\""), "The table section the arm is printed under."),
    key("duration_s", "float", "s", Default::Value("20.0"), "Simulated seconds per run (`--duration` overrides)."),
    // Flent's standard tests (`scenario::preset`).
    key(
        "preset",
        "string",
        "",
        Default::None,
        "A Flent test that brings its flows, for every station, instead of `[[flows]]`: `tcp_download`, \
         `tcp_upload` (one TCP flow, unmarked), `rrul_be` (4 TCP down + 4 up, unmarked), `rrul` (the same marked \
         CS0, CS1, CS5, EF: DSCP 0, 8, 40, 46, so BE, BK, VI, VO; it needs a downlink with access categories, \
         see `flows[].dscp`), `rtt_fair_var_up`/`_down` (one TCP upload or \
         download per station). Flent's times: load from 5 s for 60 s, ping every 0.2 s; `duration_s` 70, \
         `warmup_s` 5 and `ping.rate_hz` 5 unless the file sets them. No UDP_RR pings (ICMP only).",
    )
    .choices(&["tcp_download", "tcp_upload", "rrul_be", "rrul", "rtt_fair_var_up", "rtt_fair_var_down"]),
    key(
        "warmup_s",
        "float",
        "s",
        Default::Value("2.0"),
        "Seconds at the start left out of every figure (slow start, queues filling).",
    ),
    key("runs", "integer", "", Default::Value("3"), "Runs of the arm, each with its own seed (`--runs` overrides)."),
    key(
        "seed",
        "integer",
        "",
        Default::Value("1"),
        "Seed of the first run; run `r` uses a seed derived from it (`--seed` overrides).",
    ),
    // Time series (report: `--plot`, JSON).
    key(
        "sample_interval_ms",
        "float",
        "ms",
        Default::Value("100.0"),
        "Interval of the recorded time series: per-station AQL pending, per-flow cwnd and throughput (1 to 60000).",
    ),
    table("wired", Kind::Table, Default::Derived("all defaults"), "The wired link between the wired host and the AP."),
    key("wired.rate_mbps", "float", "Mbit/s", Default::Value("1000.0"), "Rate of the wired link, each direction."),
    key("wired.delay_us", "integer", "µs", Default::Value("250"), "One-way propagation delay of the wired link."),
    table("ap", Kind::Table, Default::Required, "The access point."),
    key(
        "ap.design",
        "string",
        "",
        Default::Required,
        "The AP's queueing design: `stock` (upstream ath11k, mac80211's default wake handler, no AQL), \
         `ath11k_series` (the AQL series driving the scheduler directly), `ath11k_adapter` (the same through the \
         `airtime-ath11k` crate), `mac80211_rr` / `mac80211_atf` / `mac80211_aql` (ath9k over mac80211 \
         txqs, forming A-MPDUs per txq into a hardware queue of two: round robin, airtime fairness, airtime fairness \
         and AQL), `qdisc_pfifo` / `qdisc_fq_codel` (a qdisc over ath9k's per-TID buffers, no mac80211 txqs).",
    )
    .choices(&[
        "stock",
        "ath11k_series",
        "ath11k_adapter",
        "mac80211_rr",
        "mac80211_atf",
        "mac80211_aql",
        "qdisc_pfifo",
        "qdisc_fq_codel",
    ]),
    key(
        "ap.aql_be_us",
        "[integer, integer]",
        "µs",
        Default::Implied("[5000, 12000]"),
        "BE `aql_txq_limit` low and high: the airtime a station may have queued below mac80211 before its txq is \
         held back (the high limit applies while the interface's total is below its threshold). They also set \
         the AC's PHY-wide limit, as mac80211's `ieee80211_txq_schedule_airtime_check` derives it: (n - 1) x low / 2 \
         + high for n listed txqs, above which no round starts on the AC.",
    )
    .used_by(UsedBy::Designs(AQL_DESIGNS, NO_AQL)),
    aql_ac_key("ap.aql_bk_us", "BK"),
    aql_ac_key("ap.aql_vi_us", "VI"),
    aql_ac_key("ap.aql_vo_us", "VO"),
    key(
        "ap.tx_no_pushback",
        "bool",
        "",
        Default::Value("false"),
        "Scale each station's AQL limits by weight/256 (the proposed TX_NO_PUSHBACK), so weights reach the air \
         where the firmware picks the transmitter.",
    )
    .used_by(UsedBy::Designs(AQL_DESIGNS, NO_AQL)),
    // Adaptive AQL (airtime-sched's `Config::adaptive_aql`): one setting for every arm.
    key(
        "ap.aql_adaptive",
        "bool",
        "",
        Default::Value("false"),
        "Learn each station's AQL limit from its completions (airtime-sched's adaptive AQL), between 500 µs and \
         the configured limits: it grows when the station's pending airtime runs out while its txq is held back, \
         and shrinks by the slack its completions leave. Mainline has no such mode.",
    )
    .used_by(UsedBy::Designs(AQL_DESIGNS, NO_AQL)),
    key(
        "ap.round_policy",
        "string",
        "",
        Default::Value("\"fixed\""),
        "What a closed scheduling round does to its number: `fixed` keeps it (the seed's fix), `reset_on_close` \
         resets it (mac80211 before the fix, which skips txqs).",
    )
    .choices(&["fixed", "reset_on_close"])
    .used_by(UsedBy::Designs(TXQ_DESIGNS, NO_TXQS)),
    key(
        "ap.codel_target_us",
        "integer",
        "µs",
        Default::Value("20000"),
        "CoDel target of the mac80211 txqs' FQ-CoDel (mac80211: 20 ms).",
    )
    .used_by(UsedBy::Designs(TXQ_DESIGNS, NO_TXQS)),
    key(
        "ap.mu_charging",
        "string",
        "",
        Default::Value("\"whole_ppdu\""),
        "What each user of an MU PPDU is charged: `whole_ppdu` the PPDU's duration (ath11k's report, the series), \
         `ru_share` the PPDU times its RU's tones over all users' tones, `own_duration` its own data duration at its \
         RU rate. Refused on a design that registers no airtime.",
    )
    .choices(&["whole_ppdu", "ru_share", "own_duration"])
    .used_by(UsedBy::WithKey("ofdma")),
    key(
        "ap.calibrate",
        "bool",
        "",
        Default::Implied("false"),
        "Calibrate each station's AQL estimate against the airtime PPDU stats report (the adapter's \
         `Config::calibration`: a per-station average of measured over charged airtime, prices scaled by it after \
         16 samples; the series' cover letter measured the estimate at about 1/1.85 of the air). Set either way, \
         the run also reports what AQL charged per MSDU against what an MSDU took on the air.",
    )
    .used_by(UsedBy::Designs(&[Design::Ath11kAdapter], NO_CALIBRATION)),
    table(
        "ap.hardware",
        Kind::Table,
        Default::Derived("all defaults"),
        "The timed model of the radio below the driver.",
    ),
    key(
        "ap.hardware.rings",
        "integer",
        "rings",
        Default::Value("3"),
        "TCL data rings; the sending CPU picks the ring (ath11k: 3). At least 1.",
    )
    .used_by(UsedBy::Designs(ATH11K_DESIGNS, HOST_AGGREGATES)),
    key(
        "ap.hardware.ring_entries",
        "integer",
        "descriptors",
        Default::Value("32768"),
        "Descriptors per ring, held from push to reaped completion (ath11k's `DP_TX_IDR_SIZE`: the descriptor \
         ids `ath11k_dp_tx` allocates per ring).",
    )
    .used_by(UsedBy::Designs(ATH11K_DESIGNS, HOST_AGGREGATES)),
    key(
        "ap.hardware.msdu_budget",
        "integer",
        "frames",
        Default::Value("2500"),
        "Frames the radio holds at once, all rings together, from push to reaped completion: the hardware \
         queue a stock driver fills (ath11k's `TARGET_NUM_MSDU_DESC`, the `num_msdu_desc` of its WMI resource \
         config). At least 1.",
    )
    .used_by(UsedBy::Designs(ATH11K_DESIGNS, HOST_AGGREGATES)),
    key(
        "ap.hardware.fw_queue_aggregates",
        "integer",
        "aggregates",
        Default::Value("1"),
        "Firmware per-station queue, in full-sized aggregates at the station's rate, that ring heads are \
         admitted into (`tcl_admission = \"ring_heads\"`).",
    )
    .used_by(UsedBy::If(
        |sc| {
            if !ATH11K_DESIGNS.contains(&sc.ap.design) {
                return UsedBy::Designs(ATH11K_DESIGNS, HOST_AGGREGATES).unused_because(sc, None);
            }
            (sc.ap.hardware.tcl_admission == crate::ap::hardware::TclAdmission::Direct).then(|| {
                "descriptors go to the firmware's queues as they are written (`tcl_admission = \"direct\"`)".into()
            })
        },
        "`tcl_admission = \"ring_heads\"` on `stock`, `ath11k_series`, `ath11k_adapter`",
    )),
    key(
        "ap.hardware.tcl_admission",
        "`\"ring_heads\"` \\| `\"direct\"`",
        "",
        Default::Value("\"ring_heads\""),
        "How descriptors move from the TCL rings into the firmware's per-station queues. `ring_heads`, the seed's \
         explanation of its ping: frames wait in their ring and the firmware admits ring heads, round robin over \
         rings, into queues of `fw_queue_aggregates`; a ring blocks at its head across stations and flows sharing \
         a ring share its turn. `direct`, ath11k's comment in `ath11k_dp_tx` (the descriptor \"is directly \
         enqueued onto hw queue\"): a frame joins its station's queue when written, so identical flows get \
         identical service, but the seed's stock ping waits behind the download (docs/mechanisms.md).",
    )
    .used_by(UsedBy::Designs(ATH11K_DESIGNS, HOST_AGGREGATES)),
    key(
        "ap.hardware.max_ppdu_us",
        "float",
        "µs",
        Default::Value("5484.0"),
        "Longest PPDU the firmware builds (the 802.11 PPDU time limit): above 0, at most 5484 (aPPDUMaxTime).",
    )
    .used_by(UsedBy::Designs(ATH11K_DESIGNS, HOST_AGGREGATES)),
    key(
        "ap.hardware.tx_completion_irq",
        "`\"srng\"` \\| `\"fixed\"`",
        "",
        Default::Value("\"fixed\""),
        "How tx completions reach the host on ath11k: `fixed` reaps each exchange's completions \
         `tx_completion_delay_us` after it; `srng` is the driver's interrupt moderation of the tx completion \
         ring (an interrupt once 256 entries wait or 1000 µs after the first, ath11k's \
         `HAL_SRNG_INT_BATCH_THRESHOLD_TX` and `HAL_SRNG_INT_TIMER_THRESHOLD_TX`), so the turnaround from a \
         BlockAck to the next push comes out of the traffic. Off by default: it brings the MCS0 BE 500/1000 \
         throughput into range but takes the VHT80 500/1000 arms out (docs/mechanisms.md).",
    )
    .used_by(UsedBy::Designs(ATH11K_DESIGNS, "is not ath11k (its completions arrive after a fixed delay)")),
    key(
        "ap.hardware.tx_completion_delay_us",
        "integer",
        "µs",
        Default::Value("500"),
        "From the end of the BlockAck to the host reaping the completion, where completions arrive after \
         a fixed delay.",
    )
    .used_by(UsedBy::If(
        |sc| {
            (ATH11K_DESIGNS.contains(&sc.ap.design)
                && sc.ap.hardware.tx_completion_irq == crate::ap::completion_irq::CompletionIrq::Srng)
                .then(|| {
                    "completions follow the tx completion ring's interrupt moderation (`tx_completion_irq = \"srng\"`)"
                        .into()
                })
        },
        "`tx_completion_irq = \"fixed\"`, designs other than `stock`, `ath11k_series`, `ath11k_adapter`",
    )),
    key(
        "ap.hardware.ppdu_stats_delay_us",
        "integer",
        "µs",
        Default::Value("1000"),
        "From the end of the exchange to the PPDU-stats report that registers its airtime.",
    )
    .used_by(UsedBy::Designs(ATF_DESIGNS, "registers no airtime")),
    key(
        "ap.hardware.napi_budget",
        "integer",
        "completions",
        Default::Value("64"),
        "Completions handled per NAPI poll, one driver round per budget (the series' patch 9).",
    )
    .used_by(UsedBy::Designs(ROUND_DESIGNS, "runs no driver round on completion")),
    key(
        "ap.hardware.ofdma",
        "bool",
        "",
        Default::Value("false"),
        "Downlink OFDMA: the firmware sends HE stations of one channel width that have frames in one MU PPDU, up \
         to `ofdma_max_users`, each on an equal RU (802.11ax-2021 Table 27-7: 484 tones each for two users, 242 for \
         three or four on 80 MHz) at its HE-MCS with the RU's data subcarriers; the PPDU lasts as long as its \
         longest user. Off: every PPDU is SU.",
    )
    .used_by(UsedBy::Designs(ATH11K_DESIGNS, "is an 802.11n driver (no OFDMA)")),
    key(
        "ap.hardware.ofdma_max_users",
        "integer",
        "users",
        Default::Value("4"),
        "Most users in one MU PPDU (1 to 8, the users of one PPDU-stats record).",
    )
    .used_by(UsedBy::WithKey("ofdma")),
    table("stations", Kind::ArrayOfTables, Default::Required, "The stations, at least one."),
    key("stations[].name", "string", "", Default::Required, "The station's name, which flows refer to."),
    key(
        "stations[].rate",
        "string",
        "",
        Default::Required,
        "The rate its frames take on the air: `vht80-1ss-mcs9-sgi`, `he80-2ss-mcs11`, `ht20-mcs15`, \
         `he80-1ss-mcs11-gi1.6` (family ht/vht/he and bandwidth 20/40/80/160, streams, MCS, guard interval), or a \
         legacy rate in Mbit/s: `cck-1` (long preamble), `ofdm-6`. HT numbers its streams in the MCS (0-31), so \
         an `Nss` part on HT is refused; HT/VHT take `sgi`/`lgi` and HE `gi0.8`/`gi1.6`/`gi3.2`, the other \
         family's is refused.",
    ),
    key(
        "stations[].reported_rate",
        "string",
        "",
        Default::Derived("`rate`"),
        "The rate the driver reports to mac80211, at which AQL prices frames. Rate control reports its best rate \
         while retries and probes make the real airtime longer (the seed: 47-51 µs charged per MSDU against 91 µs \
         measured).",
    )
    .used_by(UsedBy::Designs(AQL_DESIGNS, "prices no frames (no AQL)"))
    .warn_when_unused(),
    key(
        "stations[].weight",
        "integer",
        "",
        Default::Value("256"),
        "Airtime weight, 1..=65535 (mac80211: 256): the station's share in the deficit round robin, and the \
         scale of its AQL limits under `tx_no_pushback`.",
    )
    .used_by(UsedBy::Designs(ATF_DESIGNS, NO_ATF)),
    // The channel and rate control (`wifi::link`, `wifi::minstrel`); all off by default.
    key(
        "stations[].rate_schedule",
        "[[float, string]]",
        "s, rate",
        Default::Value("[]"),
        "The channel's best rate from a time on: `[[5.0, \"vht80-1ss-mcs4-sgi\"], [9.0, \"vht80-1ss-mcs9-sgi\"]]` \
         (same family, streams and width as `rate`, which holds until the first step). A subframe sent above the \
         channel's rate is lost; under `rate_control = \"fixed\"` both ends switch at once, under `minstrel_ht` \
         they learn it. Refused with `reported_rate`.",
    ),
    key(
        "stations[].walk_away",
        "[float, float, integer]",
        "s, s, MCS",
        Default::None,
        "`[from_s, to_s, to_mcs]`: the station walks away, its channel stepping down one MCS at a time, evenly \
         spaced, from its rate's MCS at `from_s` to `to_mcs` by `to_s`. Instead of `rate_schedule`.",
    ),
    key(
        "stations[].frame_error_rate",
        "float",
        "",
        Default::Value("0.0"),
        "Probability (0 to 0.9) that a subframe sent at or below the channel's rate is lost, independently, both \
         directions. A lost subframe is resent in a later A-MPDU (the BlockAck names it) up to 30 attempts \
         (ath9k's `ATH_MAX_SW_RETRIES`), then dropped; every attempt costs its share of a full PPDU on the air. \
         The run then prints, per station, the airtime spent against the estimator's price.",
    ),
    key(
        "stations[].rate_control",
        "string",
        "",
        Default::Value("\"fixed\""),
        "`fixed`: both ends send at the channel's rate and report it at once. `minstrel_ht`: each end learns the \
         rate as mac80211's Minstrel-HT does (EWMA of success 75 % old, statistics every 50 ms, throughput = \
         probability capped at 90 % × rate, 10 % of exchanges sampling, retry chain max_tp, max_tp2, max_prob, \
         lowest); the rate the AP's driver reports to mac80211 (AQL's price) is its best-throughput rate, so the \
         price lags the rate the air takes. Refused with `reported_rate`.",
    )
    .choices(&["fixed", "minstrel_ht"]),
    key(
        "stations[].queue",
        "string",
        "",
        Default::Value("\"fq_codel\""),
        "What holds the station's own packets (uploads, TCP ACKs, ping replies) per access category before its \
         driver sends them. `fq_codel`: a Linux client's mac80211 txq (no qdisc; FQ-CoDel with mac80211's \
         parameters, target 20 ms, interval 100 ms, 8192 packets); the driver pulls an A-MPDU's worth when the \
         station wins an access. `fifo`: one unbounded FIFO, no drops (the earlier model, for ablation).",
    )
    .choices(&["fq_codel", "fifo"]),
    table("flows", Kind::ArrayOfTables, Default::None, "Flows: bulk TCP transfers and constant-bit-rate UDP streams."),
    key("flows[].station", "string", "", Default::Required, "The station at the flow's wireless end."),
    key(
        "flows[].protocol",
        "string",
        "",
        Default::Value("\"tcp\""),
        "`tcp`: a bulk transfer that sends as fast as its congestion control lets it; `udp`: a stream of \
         `packet_bytes` packets at `rate_mbps`, with no feedback (what the queues drop is lost).",
    )
    .choices(&["tcp", "udp"]),
    key(
        "flows[].rate_mbps",
        "float",
        "Mbit/s",
        Default::Derived("required for UDP"),
        "The UDP stream's sending rate, counted in IPv4 packets (its throughput is counted the same way).",
    )
    .used_by(UsedBy::Flows(FlowKind::Udp, "its rate is what congestion control finds")),
    key(
        "flows[].packet_bytes",
        "integer",
        "bytes",
        Default::Value("1500"),
        "The IPv4 length of each UDP packet, 28..=1500 (a video stream: 1344, seven MPEG-TS packets).",
    )
    .used_by(UsedBy::Flows(FlowKind::Udp, "TCP sends full-sized segments (1500-byte packets)")),
    key(
        "flows[].dscp",
        "integer",
        "",
        Default::Value("0"),
        "The DSCP marking, which picks the access category as Linux does (`cfg80211_classify8021d`: the \
         precedence bits, except RFC 8325's codepoints, e.g. CS3 to VI and EF to VO; then `ieee802_1d_to_ac`). \
         Packets carry it both ways (a TCP flow's ACKs too, as Linux stamps a socket's TOS on every segment). \
         A station sends each access category through its own EDCA function (AIFSN, CW and TXOP of 802.11-2020 \
         Table 9-155) and queue, so an upload may take any marking. The access point's downlink has every \
         access category on every design (a txq or TID buffer per TID, rounds per access category, hardware or \
         firmware queues per access category, one EDCA function each with hostapd's AP parameters; under a \
         qdisc, `mq` with one child per access category), except with `ap.hardware.ofdma` (its MU PPDUs are \
         best effort only): there a download must map to BE (0-7, AF11-AF23, CS2, AF31-AF33) and any other is \
         refused rather than sent as BE, and the ACKs of a marked TCP upload go down as BE.",
    ),
    key("flows[].start_s", "float", "s", Default::Value("0.0"), "When the flow starts sending.")
        .used_by(UsedBy::Flows(FlowKind::NotSmoltcp, "smoltcp flows start at once and run to the end")),
    key(
        "flows[].stop_s",
        "float",
        "s",
        Default::Derived("the end of the run"),
        "When the flow stops sending new data (a TCP flow still repairs losses). Throughput is counted over \
         the flow's active time after the warm-up.",
    )
    .used_by(UsedBy::Flows(FlowKind::NotSmoltcp, "smoltcp flows start at once and run to the end")),
    key(
        "flows[].direction",
        "string",
        "",
        Default::Value("\"download\""),
        "`download` to the station or `upload` from it.",
    )
    .choices(&["download", "upload"]),
    key(
        "flows[].endpoint",
        "string",
        "",
        Default::Value("\"wired\""),
        "The flow's other end: `wired` (the host behind the AP; the AP forwards) or `ap` (the AP itself, paced \
         by TCP small queues; TCP downloads only).",
    )
    .choices(&["wired", "ap"]),
    key(
        "flows[].stack",
        "string",
        "",
        Default::Value("\"linux\""),
        "The TCP: `linux` (the compact Linux-like TCP: CUBIC, HyStart, SACK recovery, 200 ms minimum RTO) or \
         `smoltcp` (smoltcp 0.14: CUBIC or Reno, no SACK recovery, 1 s minimum RTO).",
    )
    .choices(&["linux", "smoltcp"])
    .used_by(UsedBy::Flows(FlowKind::Tcp, "it has no TCP stack")),
    key("flows[].cc", "string", "", Default::Value("\"cubic\""), "Congestion control of a smoltcp flow.")
        .choices(&["cubic", "reno"])
        .used_by(UsedBy::Flows(FlowKind::SmoltcpTcp, "the Linux-like TCP always runs CUBIC")),
    key(
        "flows[].cpu",
        "integer",
        "",
        Default::Derived("the flow's index modulo `ap.hardware.rings`"),
        "The AP CPU that handles the flow's packets, which picks its TCL ring: below `ap.hardware.rings`.",
    )
    .used_by(UsedBy::Designs(ATH11K_DESIGNS, HOST_AGGREGATES)),
    key(
        "flows[].rwnd_bytes",
        "integer",
        "bytes",
        Default::Value("3800000"),
        "Receive window cap (Linux: 6 MiB `tcp_rmem` at its default scaling ratio).",
    )
    .used_by(UsedBy::Flows(FlowKind::LinuxTcp, "smoltcp's window is its socket buffer")),
    key(
        "flows[].hystart",
        "bool",
        "",
        Default::Value("true"),
        "HyStart, Linux's delay-based exit from slow start (on in Linux).",
    )
    .used_by(UsedBy::Flows(FlowKind::LinuxTcp, "smoltcp has no HyStart")),
    table("ping", Kind::Table, Default::Derived("all defaults"), "The ping from the wired host to every station."),
    key(
        "ping.rate_hz",
        "float",
        "Hz",
        Default::Value("20.0"),
        "Pings per second per station (0: none; at most 1000, one a millisecond).",
    ),
    table(
        "seed_figures",
        Kind::Table,
        Default::None,
        "The seed document's measured figures for the same arm, printed beside ours; report only, no effect on the \
         run.",
    ),
    key("seed_figures.source", "string", "", Default::Value("\"\""), "Where the figures come from."),
    key("seed_figures.throughput_mbps", "[float, float]", "Mbit/s", Default::None, "Flow 0's rate, as a range."),
    key("seed_figures.tcp_rtt_mean_ms", "[float, float]", "ms", Default::None, "Flow 0's mean TCP RTT (srtt)."),
    key("seed_figures.tcp_rtt_max_ms", "[float, float]", "ms", Default::None, "Flow 0's largest TCP RTT (srtt)."),
    key("seed_figures.ping_ms", "[float, float]", "ms", Default::None, "Median ping RTT of station 0."),
    key(
        "seed_figures.aql_pending_us",
        "[float, float]",
        "µs",
        Default::None,
        "Median BE AQL pending airtime of station 0 (its `aql` debugfs file).",
    ),
    key("seed_figures.airtime_share_pct", "[float, float]", "%", Default::None, "Airtime share of `share_station`."),
    key(
        "seed_figures.share_station",
        "string",
        "",
        Default::Derived("the first station"),
        "The station whose airtime share `airtime_share_pct` gives.",
    )
    .used_by(UsedBy::WithKey("airtime_share_pct"))
    .warn_when_unused(),
    key(
        "seed_figures.skipped_selections",
        "[float, float]",
        "selections",
        Default::None,
        "Skipped txq selections per run (the round bug's signature).",
    ),
    key(
        "seed_figures.calibrated",
        "[string]",
        "",
        Default::Value("[]"),
        "The figures (by key) that depend on a choice fitted to the seed (a model constant or a scenario value \
         chosen to meet a seed figure, whose alternative moves the figure by more than 10 %, 5 points for a \
         share, or across its target); printed C. Each must be a figure set in this table. The others are \
         printed as predictions (P).",
    ),
    key("seed_figures.note", "string", "", Default::None, "What the model lacks where a prediction misses."),
];

/// The figure keys of `[seed_figures]` that `calibrated` may name.
pub const FIGURE_KEYS: &[&str] = &[
    "throughput_mbps",
    "tcp_rtt_mean_ms",
    "tcp_rtt_max_ms",
    "ping_ms",
    "aql_pending_us",
    "airtime_share_pct",
    "skipped_selections",
];

/// The definition of `path`.
pub fn find(path: &str) -> Option<&'static KeyDef> {
    KEYS.iter().find(|k| k.path == path)
}

/// The keys directly under `prefix` (`""`, `"ap."`, `"flows[]."`), for error messages.
pub fn children(prefix: &str) -> Vec<&'static str> {
    KEYS.iter()
        .filter_map(|k| k.path.strip_prefix(prefix))
        .filter(|rest| !rest.contains('.'))
        .map(|rest| rest.trim_end_matches("[]"))
        .filter(|rest| !rest.is_empty())
        .collect()
}

fn escape(s: &str) -> String {
    s.replace('|', "\\|")
}

/// The reference page, in Markdown.
pub fn reference_markdown() -> String {
    let mut out = String::new();
    out.push_str(
        "# Scenario keys\n\n\
         <!-- Generated by `cargo run -p airtime-sim -- --keys-md` from the key table in \
         `airtime-sim/src/scenario/keys.rs`, which the parser checks every file against. Do not edit by hand: \
         a test fails when this page and the table differ. -->\n\n\
         Every key a scenario file (TOML) may hold. A key not listed here is refused with its line. \
         A key that the file's configuration does not use (see *used by*) is never ignored in silence:\n\n\
         * **refused** when its value differs from the default, because the file then asks for something the \
         configuration does not do (`cc = \"reno\"` on the Linux-like TCP, which only runs CUBIC; \
         `aql_be_us` on a design without AQL; a weight of 1024 on a design that never weighs stations);\n\
         * **warned about** (on stderr, by key and line) when it equals the default, because the line is \
         harmless but still does nothing;\n\
         * **always warned about**, never refused, for the keys marked *warn*: they describe the world (the rate \
         a station's driver reports, the station a seed figure is about) rather than ask for a mechanism, so a \
         design that does not read them is not contradicted by them.\n\n\
         Keys of an array of tables are written `flows[].cc`; errors and warnings name the entry, `flows[1].cc`.\n\n",
    );
    let sections: [(&str, &str); 8] = [
        ("", "Top level"),
        ("wired.", "`[wired]`"),
        ("ap.", "`[ap]`"),
        ("ap.hardware.", "`[ap.hardware]`"),
        ("stations[].", "`[[stations]]`"),
        ("flows[].", "`[[flows]]`"),
        ("ping.", "`[ping]`"),
        ("seed_figures.", "`[seed_figures]`"),
    ];
    for (prefix, title) in sections {
        let _ = writeln!(out, "## {title}\n");
        out.push_str("| key | type | unit | default | used by | models |\n|---|---|---|---|---|---|\n");
        for k in KEYS.iter().filter(|k| k.path.strip_prefix(prefix).is_some_and(|r| !r.contains('.'))) {
            let ty = match k.kind {
                Kind::Table => "table".to_string(),
                Kind::ArrayOfTables => "array of tables".to_string(),
                Kind::Value(t) if k.choices.is_empty() => t.to_string(),
                Kind::Value(_) => k.choices.iter().map(|c| format!("`\"{c}\"`")).collect::<Vec<_>>().join(" \\| "),
            };
            let default = match k.default {
                Default::Required => "required".to_string(),
                Default::Value(v) | Default::Implied(v) => format!("`{}`", escape(v)),
                Default::Derived(d) => d.to_string(),
                Default::None => "none".to_string(),
            };
            let used = match k.unused {
                Unused::Warn if !matches!(k.used_by, UsedBy::All) => format!("{} (*warn*)", k.used_by.describe()),
                _ => k.used_by.describe(),
            };
            let _ = writeln!(
                out,
                "| `{}` | {ty} | {} | {default} | {used} | {} |",
                k.path,
                if k.unit.is_empty() { "" } else { k.unit },
                escape(k.models)
            );
        }
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::{deserialise, equals_literal};
    use super::*;

    /// A value for every key without a literal default, to build a file that sets all.
    fn example(k: &KeyDef) -> &'static str {
        match k.path {
            "name" => "\"x\"",
            "ap.design" => "\"ath11k_series\"",
            "stations[].name" | "flows[].station" | "seed_figures.share_station" => "\"a\"",
            "stations[].rate" | "stations[].reported_rate" => "\"vht80-1ss-mcs9-sgi\"",
            "flows[].cpu" => "1",
            "flows[].rate_mbps" => "10.0",
            "flows[].stop_s" => "5.0",
            "stations[].walk_away" => "[1.0, 2.0, 3]",
            "preset" => "\"rrul_be\"",
            "seed_figures.note" => "\"n\"",
            p if p.starts_with("seed_figures.") && k.default == Default::None => "[1.0, 2.0]",
            _ => k.default.literal().unwrap_or_else(|| panic!("no example for `{}`", k.path)),
        }
    }

    /// A file that sets every key of the table.
    fn every_key() -> String {
        let mut out = String::new();
        let mut section = "";
        for k in KEYS {
            let Kind::Value(_) = k.kind else { continue };
            let (prefix, leaf) = k.path.rsplit_once('.').unwrap_or(("", k.path));
            if prefix != section {
                section = prefix;
                match prefix.strip_suffix("[]") {
                    Some(array) => out.push_str(&format!("[[{array}]]\n")),
                    None => out.push_str(&format!("[{prefix}]\n")),
                }
            }
            out.push_str(&format!("{leaf} = {}\n", example(k)));
        }
        out
    }

    /// The value paths of a parsed scenario, serialised back, with their values.
    fn paths(v: &toml::Value, prefix: &str, out: &mut Vec<(String, toml::Value)>) {
        match v {
            toml::Value::Table(t) => {
                for (k, v) in t {
                    let path = format!("{prefix}{k}");
                    match v {
                        toml::Value::Table(_) => paths(v, &format!("{path}."), out),
                        toml::Value::Array(a) if a.first().is_some_and(toml::Value::is_table) => {
                            paths(&a[0], &format!("{path}[]."), out)
                        }
                        _ => out.push((path, v.clone())),
                    }
                }
            }
            _ => out.push((prefix.to_string(), v.clone())),
        }
    }

    #[test]
    fn the_table_and_the_parsed_scenario_have_the_same_keys() {
        let text = every_key();
        let (spec, present) = deserialise(&text, "all.toml").unwrap_or_else(|e| panic!("{e}\n{text}"));
        let mut got = Vec::new();
        paths(&toml::Value::try_from(&spec).unwrap(), "", &mut got);
        for (p, _) in &got {
            assert!(find(p).is_some(), "the parser has `{p}`, the key table does not");
        }
        for k in KEYS.iter().filter(|k| matches!(k.kind, Kind::Value(_))) {
            assert!(got.iter().any(|(p, _)| p == k.path), "the key table has `{}`, the parser does not", k.path);
            assert!(present.iter().any(|p| p.def.path == k.path), "the walk missed `{}`", k.path);
        }
    }

    #[test]
    fn the_table_gives_the_defaults_the_parser_takes() {
        let text = "name = \"x\"\n[ap]\ndesign = \"stock\"\n[[stations]]\nname = \"a\"\nrate = \"ht20-mcs0\"\n\
                    [[flows]]\nstation = \"a\"\n[seed_figures]\n";
        let (spec, _) = deserialise(text, "min.toml").unwrap();
        let mut got = Vec::new();
        paths(&toml::Value::try_from(&spec).unwrap(), "", &mut got);
        for k in KEYS {
            if let Default::Value(lit) = k.default {
                let v = got.iter().find(|(p, _)| p == k.path).map(|(_, v)| v);
                assert!(
                    v.is_some_and(|v| equals_literal(v, lit)),
                    "`{}`: table says {lit}, parser takes {v:?}",
                    k.path
                );
            }
        }
        let aql = airtime_sched::AqlLimits::DEFAULT;
        assert_eq!(find("ap.aql_be_us").unwrap().default, Default::Implied("[5000, 12000]"));
        assert_eq!((aql.low_us(), aql.high_us()), (5000, 12000));
    }

    #[test]
    fn every_listed_choice_parses_and_nothing_else_does() {
        for k in KEYS.iter().filter(|k| !k.choices.is_empty()) {
            let leaf = k.path.rsplit_once('.').map_or(k.path, |(_, l)| l);
            for value in k.choices.iter().copied().chain(["no_such_choice"]) {
                let line = format!("{leaf} = \"{value}\"");
                let text = every_key()
                    .lines()
                    .scan("", |section, l| {
                        if l.starts_with('[') {
                            *section = l;
                        }
                        let prefix = match section.strip_prefix("[[") {
                            Some(array) => format!("{}[].", array.trim_end_matches(']')),
                            None if section.is_empty() => String::new(),
                            None => format!("{}.", section.trim_matches(['[', ']'])),
                        };
                        let ours = k.path == format!("{prefix}{leaf}");
                        Some(if ours && l.starts_with(&format!("{leaf} =")) { line.clone() } else { l.to_string() })
                    })
                    .collect::<Vec<_>>()
                    .join("\n");
                let r = deserialise(&text, "c.toml");
                assert_eq!(r.is_ok(), value != "no_such_choice", "`{}` = {value}: {:?}", k.path, r.err());
                if k.path == "ap.design"
                    && let Ok((spec, _)) = r
                {
                    assert_eq!(design_key(spec.ap.design), value);
                }
            }
        }
    }

    #[test]
    fn the_checked_in_reference_page_is_the_table() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/scenario-keys.md");
        let got = reference_markdown();
        if std::env::var_os("UPDATE_SNAPSHOTS").is_some() {
            std::fs::write(path, &got).unwrap();
        }
        let want = std::fs::read_to_string(path).unwrap_or_default();
        assert!(
            got == want,
            "airtime-sim/docs/scenario-keys.md differs from the key table: regenerate it with \
             `cargo run -p airtime-sim -- --keys-md > airtime-sim/docs/scenario-keys.md`"
        );
    }
}
