//! Prints the airtime of one frame at every MCS (or legacy rate) of a PHY, as a table.
//!
//! ```text
//! cargo run --release -p airtime-est --example airtime_table -- [PHY] [STREAMS] [GI] [LEN]
//!   PHY      legacy | cck | ofdm | ht20 | ht40 | vht20..vht160 | he20..he160 | eht20..eht320
//!            (default vht80)
//!   STREAMS  spatial streams, 1..=8 (HT: 1..=4; legacy: 1)           (default 1)
//!   GI       HT/VHT: lgi | sgi; HE/EHT: 0.8 | 1.6 | 3.2;
//!            legacy/CCK: long | short (preamble); "-" for the default  (default sgi / 0.8 / long)
//!   LEN      frame length in bytes, before the +38 of the estimate   (default 1500)
//! ```

use std::process::ExitCode;

use airtime_est::{Bandwidth, HeGi, Rate, RateError, aql_charge_us, expected_tx_airtime_us};

const USAGE: &str = "usage: airtime_table [PHY] [STREAMS] [GI] [LEN]
  PHY      legacy | cck | ofdm | ht20 | ht40 | vht20 | vht40 | vht80 | vht160 |
           he20 | he40 | he80 | he160 | eht20 | eht40 | eht80 | eht160 | eht320  (default vht80)
  STREAMS  spatial streams: 1-8 (HT 1-4, legacy 1)                             (default 1)
  GI       HT/VHT: lgi | sgi; HE/EHT: 0.8 | 1.6 | 3.2; legacy: long | short;
           - for the default                                   (default sgi, 0.8 or long)
  LEN      frame length in bytes (the estimate adds 38)                      (default 1500)";

/// The PHY family chosen on the command line.
#[derive(Copy, Clone)]
enum Family {
    Legacy { cck: bool, ofdm: bool },
    Ht(Bandwidth),
    Vht(Bandwidth),
    He(Bandwidth),
    Eht(Bandwidth),
}

fn parse_family(s: &str) -> Result<Family, String> {
    let s = s.to_ascii_lowercase();
    match s.as_str() {
        "legacy" => return Ok(Family::Legacy { cck: true, ofdm: true }),
        "cck" => return Ok(Family::Legacy { cck: true, ofdm: false }),
        "ofdm" => return Ok(Family::Legacy { cck: false, ofdm: true }),
        _ => {}
    }
    let split = s.find(|c: char| c.is_ascii_digit()).ok_or_else(|| format!("unknown PHY '{s}'"))?;
    let (name, mhz) = s.split_at(split);
    let bw = match mhz {
        "20" => Bandwidth::Mhz20,
        "40" => Bandwidth::Mhz40,
        "80" => Bandwidth::Mhz80,
        "160" => Bandwidth::Mhz160,
        "320" => Bandwidth::Mhz320,
        _ => return Err(format!("unknown bandwidth '{mhz}' in PHY '{s}'")),
    };
    match name {
        "ht" => Ok(Family::Ht(bw)),
        "vht" => Ok(Family::Vht(bw)),
        "he" => Ok(Family::He(bw)),
        "eht" => Ok(Family::Eht(bw)),
        _ => Err(format!("unknown PHY '{s}'")),
    }
}

/// One row of the table: label, rate.
fn rows(family: Family, nss: u8, gi: &str) -> Result<Vec<(String, Rate)>, String> {
    let err = |e: RateError| e.to_string();
    let mut out = Vec::new();
    match family {
        Family::Legacy { cck, ofdm } => {
            if nss != 1 {
                return Err("legacy rates have exactly 1 stream".into());
            }
            let short = match gi {
                "-" | "long" => false,
                "short" => true,
                _ => return Err(format!("GI for legacy must be long or short, not '{gi}'")),
            };
            if cck {
                for r in [10u16, 20, 55, 110] {
                    out.push(("CCK".to_string(), Rate::legacy_cck(r, short).map_err(err)?));
                }
            }
            if ofdm {
                for r in [60u16, 90, 120, 180, 240, 360, 480, 540] {
                    out.push(("OFDM".to_string(), Rate::legacy_ofdm(r).map_err(err)?));
                }
            }
        }
        Family::Ht(bw) | Family::Vht(bw) => {
            let sgi = match gi {
                "-" | "sgi" | "0.4" => true,
                "lgi" | "0.8" => false,
                _ => return Err(format!("GI for HT/VHT must be lgi or sgi, not '{gi}'")),
            };
            if let Family::Ht(_) = family {
                if !(1..=4).contains(&nss) {
                    return Err(format!("HT has 1 to 4 streams, not {nss}"));
                }
                for m in 0..8 {
                    let mcs = (nss - 1) * 8 + m;
                    out.push((mcs.to_string(), Rate::ht(mcs, bw, sgi).map_err(err)?));
                }
            } else {
                for mcs in 0..=9 {
                    out.push((mcs.to_string(), Rate::vht(mcs, nss, bw, sgi).map_err(err)?));
                }
            }
        }
        Family::He(bw) | Family::Eht(bw) => {
            let he_gi = match gi {
                "-" | "0.8" => HeGi::Gi0_8,
                "1.6" => HeGi::Gi1_6,
                "3.2" => HeGi::Gi3_2,
                _ => return Err(format!("GI for HE/EHT must be 0.8, 1.6 or 3.2, not '{gi}'")),
            };
            let (eht, top) = match family {
                Family::Eht(_) => (true, 13),
                _ => (false, 11),
            };
            for mcs in 0..=top {
                let rate = if eht { Rate::eht(mcs, nss, bw, he_gi) } else { Rate::he(mcs, nss, bw, he_gi) };
                out.push((mcs.to_string(), rate.map_err(err)?));
            }
        }
    }
    Ok(out)
}

/// kbit/s as "Mbit/s" with one decimal, integer formatting only.
fn mbps(kbps: u32) -> String {
    format!("{}.{}", kbps / 1000, (kbps % 1000) / 100)
}

fn run(args: &[String]) -> Result<(), String> {
    if args.iter().any(|a| a == "-h" || a == "--help") {
        println!("{USAGE}");
        return Ok(());
    }
    if args.len() > 4 {
        return Err(format!("too many arguments ({})", args.len()));
    }
    let arg = |i: usize, default: &str| args.get(i).cloned().unwrap_or_else(|| default.into());
    let family = parse_family(&arg(0, "vht80"))?;
    let nss_arg = arg(1, "1");
    let nss: u8 = nss_arg.parse().map_err(|_| format!("STREAMS must be a number from 1 to 8, not '{nss_arg}'"))?;
    let gi = arg(2, "-").to_ascii_lowercase();
    let len_arg = arg(3, "1500");
    let len: u32 =
        len_arg.parse().map_err(|_| format!("LEN must be a byte count (0 to {}), not '{len_arg}'", u32::MAX))?;

    let rows = rows(family, nss, &gi)?;
    let first = rows.first().map(|(_, r)| *r).ok_or("no rates")?;
    let legacy = first.mcs().is_none();
    let phy = match (first.he_gi(), legacy) {
        (_, true) if first.short_preamble() || gi == "short" => "legacy, short preamble".to_string(),
        (_, true) => "legacy, long preamble".to_string(),
        (Some(g), _) => format!("{}{} {}SS {}", first.encoding(), first.bandwidth().mhz(), nss, g),
        (None, _) => format!(
            "{}{} {}SS {}",
            first.encoding(),
            first.bandwidth().mhz(),
            nss,
            if first.short_gi() { "SGI" } else { "LGI" }
        ),
    };
    println!("{phy}, {len}-byte frame (the estimate adds 38 bytes)");
    println!(
        "{:>5} {:>11} {:>14} {:>10} {:>14} {:>13}",
        if legacy { "mode" } else { "MCS" },
        "PHY Mbit/s",
        "aggregated us",
        "single us",
        "AQL charge us",
        "VO charge us"
    );
    for (label, rate) in rows {
        let agg = expected_tx_airtime_us(rate, len, true);
        let single = expected_tx_airtime_us(rate, len, false);
        println!(
            "{:>5} {:>11} {:>14} {:>10} {:>14} {:>13}",
            label,
            mbps(rate.phy_rate_kbps()),
            agg,
            single,
            aql_charge_us(agg),
            aql_charge_us(single)
        );
    }
    Ok(())
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}\n\n{USAGE}");
            ExitCode::from(2)
        }
    }
}
