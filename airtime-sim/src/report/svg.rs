//! SVG figures written by hand: per arm, the TCP and ping RTT over time, their CDFs, and
//! the airtime share per station.

use super::summary::ArmSummary;
use crate::metrics::RunResult;
use std::fmt::Write;
use std::path::Path;

const W: f32 = 720.0;
const H: f32 = 400.0;
const M: f32 = 60.0;
const COLORS: [&str; 6] = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b"];

fn esc(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
}

/// A line chart of `series` (name, points).
pub fn line_chart(title: &str, x_label: &str, y_label: &str, series: &[(String, Vec<(f32, f32)>)]) -> String {
    let pts = series.iter().flat_map(|(_, p)| p.iter());
    let (mut x0, mut x1, mut y1) = (f32::INFINITY, f32::NEG_INFINITY, 0f32);
    for &(x, y) in pts {
        x0 = x0.min(x);
        x1 = x1.max(x);
        y1 = y1.max(y);
    }
    if !x0.is_finite() || x1 <= x0 {
        (x0, x1) = (0.0, 1.0);
    }
    if y1 <= 0.0 {
        y1 = 1.0;
    }
    y1 *= 1.05;
    let sx = |x: f32| M + (x - x0) / (x1 - x0) * (W - 2.0 * M);
    let sy = |y: f32| H - M - y / y1 * (H - 2.0 * M);
    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" font-family="sans-serif" font-size="12">"#
    );
    let _ = writeln!(s, r#"<rect width="100%" height="100%" fill="white"/>"#);
    let _ = writeln!(s, r#"<text x="{}" y="20" text-anchor="middle" font-size="14">{}</text>"#, W / 2.0, esc(title));
    let _ = writeln!(s, r#"<line x1="{M}" y1="{}" x2="{}" y2="{}" stroke="black"/>"#, H - M, W - M, H - M);
    let _ = writeln!(s, r#"<line x1="{M}" y1="{M}" x2="{M}" y2="{}" stroke="black"/>"#, H - M);
    for i in 0..=5 {
        let fx = x0 + (x1 - x0) * i as f32 / 5.0;
        let fy = y1 * i as f32 / 5.0;
        let _ = writeln!(s, r#"<text x="{}" y="{}" text-anchor="middle">{fx:.1}</text>"#, sx(fx), H - M + 16.0);
        let _ = writeln!(s, r#"<text x="{}" y="{}" text-anchor="end">{fy:.1}</text>"#, M - 4.0, sy(fy) + 4.0);
        let _ = writeln!(s, r##"<line x1="{M}" y1="{0}" x2="{1}" y2="{0}" stroke="#ddd"/>"##, sy(fy), W - M);
    }
    let _ = writeln!(s, r#"<text x="{}" y="{}" text-anchor="middle">{}</text>"#, W / 2.0, H - 15.0, esc(x_label));
    let _ = writeln!(
        s,
        r#"<text x="15" y="{}" text-anchor="middle" transform="rotate(-90 15 {})">{}</text>"#,
        H / 2.0,
        H / 2.0,
        esc(y_label)
    );
    for (i, (name, p)) in series.iter().enumerate() {
        let c = COLORS[i % COLORS.len()];
        let path: Vec<String> = p.iter().map(|&(x, y)| format!("{:.1},{:.1}", sx(x), sy(y))).collect();
        let _ = writeln!(s, r#"<polyline fill="none" stroke="{c}" stroke-width="1" points="{}"/>"#, path.join(" "));
        let _ =
            writeln!(s, r#"<text x="{}" y="{}" fill="{c}">{}</text>"#, W - M - 150.0, M + 14.0 * i as f32, esc(name));
    }
    s.push_str("</svg>\n");
    s
}

/// A bar chart of `bars` (label, value) with values in per cent.
pub fn bar_chart(title: &str, bars: &[(String, f64)]) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" font-family="sans-serif" font-size="12">"#
    );
    let _ = writeln!(s, r#"<rect width="100%" height="100%" fill="white"/>"#);
    let _ = writeln!(s, r#"<text x="{}" y="20" text-anchor="middle" font-size="14">{}</text>"#, W / 2.0, esc(title));
    let n = bars.len().max(1) as f32;
    let bw = (W - 2.0 * M) / n;
    for (i, (label, v)) in bars.iter().enumerate() {
        let h = (*v as f32 / 100.0) * (H - 2.0 * M);
        let x = M + bw * i as f32 + bw * 0.15;
        let c = COLORS[i % COLORS.len()];
        let _ = writeln!(s, r#"<rect x="{x}" y="{}" width="{}" height="{h}" fill="{c}"/>"#, H - M - h, bw * 0.7);
        let _ = writeln!(
            s,
            r#"<text x="{}" y="{}" text-anchor="middle">{} {v:.1} %</text>"#,
            x + bw * 0.35,
            H - M + 16.0,
            esc(label)
        );
    }
    s.push_str("</svg>\n");
    s
}

fn cdf(v: &[f32]) -> Vec<(f32, f32)> {
    let mut v = v.to_vec();
    v.sort_by(f32::total_cmp);
    let n = v.len().max(1) as f32;
    v.iter().enumerate().map(|(i, &x)| (x, (i + 1) as f32 / n)).collect()
}

/// Writes the figures of every arm into `dir`, and `suite-tcp-rtt-cdf.svg`: the first
/// TCP flow's RTT CDF of every arm on one chart (run 1), the figure that shows at a glance
/// what each arm does to latency.
pub fn write_all(dir: &Path, arms: &[(ArmSummary, Vec<RunResult>)]) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let suite: Vec<(String, Vec<(f32, f32)>)> = arms
        .iter()
        .filter_map(|(summary, runs)| {
            let flow = runs.first()?.flows.first()?;
            Some((summary.name.clone(), cdf(&flow.rtt_cdf).into_iter().map(|(x, y)| (x, y * 100.0)).collect()))
        })
        .collect();
    std::fs::write(
        dir.join("suite-tcp-rtt-cdf.svg"),
        line_chart("TCP RTT CDF by arm, run 1", "RTT (ms)", "per cent", &suite),
    )?;
    for (summary, runs) in arms {
        let Some(r) = runs.first() else { continue };
        let mut time = Vec::new();
        let mut dist = Vec::new();
        for (i, f) in r.flows.iter().enumerate() {
            time.push((format!("TCP flow {i}"), f.rtt_series.clone()));
            dist.push((format!("TCP flow {i}"), cdf(&f.rtt_cdf)));
        }
        for st in &r.stations {
            time.push((format!("ping {}", st.name), st.ping_series.clone()));
            let p: Vec<f32> = st.ping_series.iter().map(|&(_, y)| y).collect();
            dist.push((format!("ping {}", st.name), cdf(&p)));
        }
        let name = &summary.name;
        std::fs::write(
            dir.join(format!("{name}-rtt.svg")),
            line_chart(&format!("{name}: RTT, run 1"), "time (s)", "RTT (ms)", &time),
        )?;
        let dist: Vec<(String, Vec<(f32, f32)>)> =
            dist.into_iter().map(|(n, p)| (n, p.into_iter().map(|(x, y)| (x, y * 100.0)).collect())).collect();
        std::fs::write(
            dir.join(format!("{name}-rtt-cdf.svg")),
            line_chart(&format!("{name}: RTT CDF, run 1"), "RTT (ms)", "per cent", &dist),
        )?;
        let bars: Vec<(String, f64)> = r.stations.iter().map(|s| (s.name.clone(), s.airtime_share_pct)).collect();
        std::fs::write(
            dir.join(format!("{name}-airtime.svg")),
            bar_chart(&format!("{name}: downlink airtime share"), &bars),
        )?;
    }
    Ok(())
}
