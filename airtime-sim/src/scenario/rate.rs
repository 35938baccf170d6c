//! Rates as scenario files write them: `vht80-1ss-mcs9-sgi`, `he80-2ss-mcs11`,
//! `ht20-mcs15`, `ht40-mcs7-sgi`, `he80-1ss-mcs11-gi1.6`, and the legacy rates in Mbit/s:
//! `cck-1`, `cck-11`, `ofdm-6`, `ofdm-54`.

use airtime_est::{Bandwidth, HeGi, Rate};

/// Parses a rate; the error says what was wrong.
pub fn parse_rate(s: &str) -> Result<Rate, String> {
    let lower = s.trim().to_ascii_lowercase();
    if let Some(legacy) = parse_legacy(s, &lower) {
        return legacy;
    }
    let mut parts = lower.split('-');
    let head = parts.next().unwrap_or_default();
    let (family, bw) = head.split_at(head.find(|c: char| c.is_ascii_digit()).unwrap_or(head.len()));
    let bandwidth = match bw {
        "20" => Bandwidth::Mhz20,
        "40" => Bandwidth::Mhz40,
        "80" => Bandwidth::Mhz80,
        "160" => Bandwidth::Mhz160,
        _ => return Err(format!("rate `{s}`: bandwidth `{bw}` is not 20, 40, 80 or 160")),
    };
    let (mut nss, mut mcs, mut sgi, mut gi) = (None, None, false, HeGi::Gi0_8);
    // The guard-interval part written, if any: HT and VHT take `sgi`/`lgi`, HE `giN.N`.
    let (mut legacy_gi, mut he_gi) = (None, None);
    for p in parts {
        if let Some(n) = p.strip_suffix("ss") {
            nss = Some(n.parse::<u8>().map_err(|_| format!("rate `{s}`: bad stream count `{p}`"))?);
        } else if let Some(n) = p.strip_prefix("mcs") {
            mcs = Some(n.parse::<u8>().map_err(|_| format!("rate `{s}`: bad MCS `{p}`"))?);
        } else if p == "sgi" {
            sgi = true;
            legacy_gi = Some(p);
        } else if p == "lgi" {
            sgi = false;
            legacy_gi = Some(p);
        } else if let Some(g) = p.strip_prefix("gi") {
            he_gi = Some(p);
            gi = match g {
                "0.8" => HeGi::Gi0_8,
                "1.6" => HeGi::Gi1_6,
                "3.2" => HeGi::Gi3_2,
                _ => return Err(format!("rate `{s}`: guard interval `{p}` is not gi0.8, gi1.6 or gi3.2")),
            };
        } else {
            return Err(format!("rate `{s}`: unknown part `{p}`"));
        }
    }
    let mcs = mcs.ok_or_else(|| format!("rate `{s}`: no `mcsN` part"))?;
    // A part of another family would be ignored: refused instead.
    match (family, legacy_gi, he_gi) {
        ("ht" | "vht", _, Some(p)) => {
            return Err(format!("rate `{s}`: `{p}` is an HE guard interval; {family} takes `sgi` or `lgi`"));
        }
        ("he", Some(p), _) => {
            return Err(format!("rate `{s}`: `{p}` is an HT/VHT guard interval; HE takes gi0.8, gi1.6 or gi3.2"));
        }
        _ => {}
    }
    let r = match family {
        "ht" => {
            // HT numbers streams in the MCS (0-7 one stream, 8-15 two, ...): a stream
            // count beside it would be ignored, so it is refused.
            if let Some(n) = nss {
                return Err(format!(
                    "rate `{s}`: HT numbers its streams in the MCS (0-7 one stream, 8-15 two, 16-23 three, \
                     24-31 four); write `ht{bw}-mcs{}` rather than `{n}ss`",
                    u16::from(mcs % 8) + 8 * u16::from(n.saturating_sub(1))
                ));
            }
            Rate::ht(mcs, bandwidth, sgi)
        }
        "vht" => Rate::vht(mcs, nss.unwrap_or(1), bandwidth, sgi),
        "he" => Rate::he(mcs, nss.unwrap_or(1), bandwidth, gi),
        _ => return Err(format!("rate `{s}`: family `{family}` is not ht, vht or he")),
    };
    r.map_err(|e| format!("rate `{s}`: {e:?}"))
}

/// `cck-<Mbit/s>` (long preamble) or `ofdm-<Mbit/s>`; `None` if `lower` is neither.
fn parse_legacy(s: &str, lower: &str) -> Option<Result<Rate, String>> {
    let (cck, mbps) = match lower.split_once('-')? {
        ("cck", m) => (true, m),
        ("ofdm", m) => (false, m),
        _ => return None,
    };
    let Ok(mbps) = mbps.parse::<f64>() else {
        return Some(Err(format!("rate `{s}`: `{mbps}` is not a rate in Mbit/s")));
    };
    let rate_100kbps = (mbps * 10.0).round() as u16;
    let r = if cck { Rate::legacy_cck(rate_100kbps, false) } else { Rate::legacy_ofdm(rate_100kbps) };
    Some(r.map_err(|e| format!("rate `{s}`: {e:?}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_seed_rates_parse() {
        let v = parse_rate("vht80-1ss-mcs9-sgi").unwrap();
        assert_eq!((v.mcs(), v.nss(), v.short_gi()), (Some(9), 1, true));
        let h = parse_rate("he80-2ss-mcs11").unwrap();
        assert_eq!((h.mcs(), h.nss()), (Some(11), 2));
        assert_eq!(parse_rate("ht20-mcs15").unwrap().nss(), 2);
        assert_eq!(parse_rate("cck-1").unwrap().legacy_rate_100kbps(), Some(10));
        assert_eq!(parse_rate("ofdm-6").unwrap().legacy_rate_100kbps(), Some(60));
        assert!(parse_rate("cck-3").is_err() && parse_rate("ofdm-x").is_err());
    }

    #[test]
    fn a_part_another_family_would_ignore_is_refused_not_dropped() {
        // `ht20-2ss-mcs7` ran one stream, `-gi3.2` on VHT and `-sgi` on HE were ignored.
        let e = parse_rate("ht20-2ss-mcs7").unwrap_err();
        assert!(e.contains("ht20-mcs15"), "{e}");
        assert!(parse_rate("ht20-1ss-mcs7").unwrap_err().contains("ht20-mcs7"));
        assert!(parse_rate("vht80-1ss-mcs9-gi3.2").unwrap_err().contains("sgi"));
        assert!(parse_rate("ht20-mcs7-gi0.8").is_err());
        assert!(parse_rate("he80-1ss-mcs11-sgi").unwrap_err().contains("gi0.8"));
        assert!(parse_rate("he80-1ss-mcs11-lgi").is_err());
        assert!(parse_rate("he80-1ss-mcs11-gi3.2").is_ok() && parse_rate("vht80-2ss-mcs9-lgi").is_ok());
    }

    #[test]
    fn bad_rates_say_what_is_wrong() {
        assert!(parse_rate("vht80-1ss").unwrap_err().contains("mcs"));
        assert!(parse_rate("vht90-mcs1").unwrap_err().contains("bandwidth"));
        assert!(parse_rate("xx80-mcs1").unwrap_err().contains("family"));
    }
}
