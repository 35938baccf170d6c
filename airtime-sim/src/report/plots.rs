//! SVG figures drawn with plotters: per arm, the RTT CDFs per station (TCP per segment
//! and ping), per-station throughput and airtime-share bars, and time series of run 1
//! (AQL pending, cwnd, ping RTT); for the suite, the first TCP flow's RTT CDF of every
//! arm on one chart.
//!
//! Readability rules: axes take plotters' round-number ticks, shares run 0-100 %, an
//! RTT axis whose values span a decade or more is logarithmic, and legends sit in their
//! own column beside the plot, never over the data. A chart draws at most
//! [`MAX_SERIES`] series (the title says when stations or flows were left out).

use super::summary::ArmSummary;
use crate::metrics::stats::thin;
use crate::sim::run::ArmResult;
use plotters::coord::Shift;
use plotters::prelude::*;
use std::io;
use std::path::Path;

/// Series one chart draws, at most: one per colour of the palette.
pub const MAX_SERIES: usize = 10;
/// Points one series draws, at most (evenly thinned).
const MAX_POINTS: usize = 2000;
const SIZE: (u32, u32) = (900, 480);
/// Width of the legend column, pixels.
const LEGEND_W: i32 = 220;
const FONT: &str = "sans-serif";

/// A named series of (x, y) points.
pub type Series = (String, Vec<(f64, f64)>);

fn err(e: impl std::fmt::Display) -> io::Error {
    io::Error::other(e.to_string())
}

fn color(i: usize) -> RGBColor {
    // Tableau 10, distinguishable in print and by most colour-blind readers.
    const TAB10: [(u8, u8, u8); 10] = [
        (31, 119, 180),
        (255, 127, 14),
        (44, 160, 44),
        (214, 39, 40),
        (148, 103, 189),
        (140, 86, 75),
        (227, 119, 194),
        (127, 127, 127),
        (188, 189, 34),
        (23, 190, 207),
    ];
    let (r, g, b) = TAB10[i % TAB10.len()];
    RGBColor(r, g, b)
}

/// Keeps the first [`MAX_SERIES`] series; returns the title suffix saying what was left.
fn cap(series: &mut Vec<Series>, what: &str) -> String {
    let n = series.len();
    series.retain(|(_, p)| !p.is_empty());
    let kept = series.len().min(MAX_SERIES);
    series.truncate(kept);
    if n > kept { format!(" (first {kept} of {n} {what})") } else { String::new() }
}

/// The legend, in its own column.
fn legend(area: &DrawingArea<SVGBackend<'_>, Shift>, names: &[String]) -> Result<(), io::Error> {
    for (i, name) in names.iter().enumerate() {
        let y = 20 + 20 * i as i32;
        area.draw(&Rectangle::new([(8, y - 2), (28, y + 2)], color(i).filled())).map_err(err)?;
        let label: String = name.chars().take(28).collect();
        area.draw(&Text::new(label, (34, y - 7), (FONT, 16))).map_err(err)?;
    }
    Ok(())
}

/// A tick label: the value with at most 4 significant digits and no trailing zeros
/// (`100`, `0.25`, `12.5`), so round ticks read as round numbers.
pub fn tick(v: f64) -> String {
    if v == 0.0 || !v.is_finite() {
        return if v.is_finite() { "0".into() } else { String::new() };
    }
    let decimals = (3 - v.abs().log10().floor() as i32).clamp(0, 9) as usize;
    let s = format!("{v:.decimals$}");
    if s.contains('.') { s.trim_end_matches('0').trim_end_matches('.').to_string() } else { s }
}

/// A tick label on a log axis: only 1, 2 and 5 times a power of ten are labelled (the
/// others keep their grid line), so labels near a decade's end do not run together.
pub fn log_tick(v: f64) -> String {
    if !(v > 0.0 && v.is_finite()) {
        return String::new();
    }
    let m = v / 10f64.powf(v.log10().floor());
    if [1.0, 2.0, 5.0, 10.0].iter().any(|r| (m - r).abs() < 1e-6 * r) { tick(v) } else { String::new() }
}

/// Whether values from `lo` to `hi` span a decade or more (and can go on a log axis).
fn spans_decades(lo: f64, hi: f64) -> bool {
    lo > 0.0 && hi / lo >= 10.0
}

/// The range of `v` padded a little; a flat or empty range becomes a unit one.
fn bounds(v: impl Iterator<Item = f64>) -> (f64, f64) {
    let (lo, hi) =
        v.filter(|x| x.is_finite()).fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), x| (a.min(x), b.max(x)));
    if !lo.is_finite() {
        return (0.0, 1.0);
    }
    if hi - lo < 1e-9 { (lo - 0.5f64.max(lo.abs() * 0.05), hi + 0.5f64.max(hi.abs() * 0.05)) } else { (lo, hi) }
}

/// A line chart. `log_x`/`log_y` ask for a log axis, taken when the data spans a
/// decade and is positive; `y_pct` fixes the y axis at 0-100.
pub struct Lines<'a> {
    /// Title.
    pub title: &'a str,
    /// X axis label with unit.
    pub x: &'a str,
    /// Y axis label with unit.
    pub y: &'a str,
    /// Log x axis where the data allows.
    pub log_x: bool,
    /// Log y axis where the data allows.
    pub log_y: bool,
    /// Y axis is a percentage, 0-100.
    pub y_pct: bool,
}

impl Lines<'_> {
    /// The chart of `series` as an SVG document.
    pub fn render(&self, series: &[Series]) -> Result<String, io::Error> {
        let mut svg = String::new();
        {
            let root = SVGBackend::with_string(&mut svg, SIZE).into_drawing_area();
            root.fill(&WHITE).map_err(err)?;
            // The title spans the whole width, above the plot and the legend column.
            let body = root.titled(self.title, (FONT, 20)).map_err(err)?;
            let (plot, side) = body.split_horizontally(SIZE.0 as i32 - LEGEND_W);
            let pts = || series.iter().flat_map(|(_, p)| p.iter()).filter(|(x, y)| x.is_finite() && y.is_finite());
            let (x0, x1) = bounds(pts().map(|p| p.0));
            let (y0, y1) = if self.y_pct { (0.0, 100.0) } else { bounds(pts().map(|p| p.1)) };
            let log_x = self.log_x && spans_decades(x0, x1);
            let log_y = self.log_y && spans_decades(y0, y1);
            // A linear axis of non-negative data starts at 0, so heights compare.
            let y0 = if !log_y && y0 >= 0.0 { 0.0 } else { y0 };
            // Headroom above the highest point, so a flat-topped line is not the frame.
            let y1 = if !log_y && !self.y_pct { y1 + 0.05 * (y1 - y0) } else { y1 };
            // A log axis starts at a round number (1, 2 or 5 times a power of ten), where
            // its first labelled tick is.
            let decade = |v: f64| {
                let p = 10f64.powf(v.log10().floor());
                [5.0, 2.0, 1.0].into_iter().map(|m| m * p).find(|&r| r <= v).unwrap_or(p)
            };
            let x0 = if log_x { decade(x0) } else { x0 };
            let y0 = if log_y { decade(y0) } else { y0 };
            let mut b = ChartBuilder::on(&plot);
            b.margin(12).x_label_area_size(42).y_label_area_size(64);
            macro_rules! draw {
                ($xr:expr, $yr:expr) => {{
                    let mut chart = b.build_cartesian_2d($xr, $yr).map_err(err)?;
                    chart
                        .configure_mesh()
                        .x_desc(self.x)
                        .y_desc(self.y)
                        .label_style((FONT, 16))
                        .axis_desc_style((FONT, 16))
                        .x_label_formatter(&|v| if log_x { log_tick(*v) } else { tick(*v) })
                        .y_label_formatter(&|v| if log_y { log_tick(*v) } else { tick(*v) })
                        .light_line_style(WHITE.mix(0.0))
                        .draw()
                        .map_err(err)?;
                    for (i, (_, p)) in series.iter().enumerate() {
                        let p: Vec<(f64, f64)> = thin(p, MAX_POINTS)
                            .into_iter()
                            .filter(|&(x, y)| {
                                x.is_finite() && y.is_finite() && (!log_x || x > 0.0) && (!log_y || y > 0.0)
                            })
                            .collect();
                        chart.draw_series(LineSeries::new(p, color(i).stroke_width(2))).map_err(err)?;
                    }
                }};
            }
            match (log_x, log_y) {
                (false, false) => draw!(x0..x1, y0..y1),
                (true, false) => draw!((x0..x1).log_scale(), y0..y1),
                (false, true) => draw!(x0..x1, (y0..y1).log_scale()),
                (true, true) => draw!((x0..x1).log_scale(), (y0..y1).log_scale()),
            }
            legend(&side, &series.iter().map(|(n, _)| n.clone()).collect::<Vec<_>>())?;
            root.present().map_err(err)?;
        }
        Ok(svg)
    }
}

/// A bar chart of `bars` (label, value): one bar per label; `pct` fixes the axis at
/// 0-100 %.
pub fn bars(title: &str, y: &str, bars: &[(String, f64)], pct: bool) -> Result<String, io::Error> {
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, SIZE).into_drawing_area();
        root.fill(&WHITE).map_err(err)?;
        let n = bars.len().max(1);
        let top = if pct { 100.0 } else { bounds(bars.iter().map(|b| b.1)).1.max(0.0) * 1.1 };
        let top = if top > 0.0 { top } else { 1.0 };
        let mut chart = ChartBuilder::on(&root)
            .caption(title, (FONT, 22))
            .margin(12)
            .x_label_area_size(42)
            .y_label_area_size(64)
            // A segmented 0..=n-1 axis: one segment per bar.
            .build_cartesian_2d((0..n - 1).into_segmented(), 0.0..top)
            .map_err(err)?;
        let names: Vec<String> = bars.iter().map(|b| b.0.clone()).collect();
        let label = move |v: &SegmentValue<usize>| match v {
            SegmentValue::CenterOf(i) => names.get(*i).cloned().unwrap_or_default(),
            _ => String::new(),
        };
        chart
            .configure_mesh()
            .disable_x_mesh()
            .x_labels(n.min(16))
            .x_label_formatter(&label)
            .y_desc(y)
            .y_label_formatter(&|v| tick(*v))
            .label_style((FONT, 16))
            .axis_desc_style((FONT, 16))
            .light_line_style(WHITE.mix(0.0))
            .draw()
            .map_err(err)?;
        chart
            .draw_series(
                Histogram::vertical(&chart)
                    .style(color(0).filled())
                    .margin(if n > 64 { 0 } else { 6 })
                    .data(bars.iter().enumerate().map(|(i, b)| (i, b.1))),
            )
            .map_err(err)?;
        root.present().map_err(err)?;
    }
    Ok(svg)
}

/// The empirical CDF of `v` in per cent.
fn cdf(v: &[f32]) -> Vec<(f64, f64)> {
    let mut v: Vec<f64> = v.iter().map(|&x| f64::from(x)).filter(|x| x.is_finite()).collect();
    v.sort_by(f64::total_cmp);
    let n = v.len().max(1) as f64;
    v.iter().enumerate().map(|(i, &x)| (x, 100.0 * (i + 1) as f64 / n)).collect()
}

fn write(dir: &Path, name: &str, svg: String) -> io::Result<()> {
    std::fs::write(dir.join(name), svg)
}

const RTT_CDF: Lines<'static> =
    Lines { title: "", x: "RTT (ms)", y: "cumulative share (%)", log_x: true, log_y: false, y_pct: true };

/// The files [`write_all`] writes for arm `name` (those whose data the arm has).
pub fn arm_files(name: &str) -> [String; 6] {
    ["rtt-cdf", "throughput", "airtime", "aql", "cwnd", "ping"].map(|k| format!("{name}-{k}.svg"))
}

/// Writes every arm's figures into `dir`, and `suite-tcp-rtt-cdf.svg`.
pub fn write_all(dir: &Path, summaries: &[ArmSummary], arms: &[ArmResult]) -> io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let mut suite: Vec<Series> = arms
        .iter()
        .filter_map(|a| {
            let f = a.runs.first()?.flows.iter().find(|f| f.protocol == "tcp")?;
            Some((a.scenario.spec.name.clone(), cdf(&f.rtt_cdf)))
        })
        .collect();
    let more = cap(&mut suite, "arms");
    if !suite.is_empty() {
        let title = format!("TCP per-segment RTT CDF, first TCP flow, run 1{more}");
        write(dir, "suite-tcp-rtt-cdf.svg", Lines { title: &title, ..RTT_CDF }.render(&suite)?)?;
    }
    for (summary, arm) in summaries.iter().zip(arms) {
        write_arm(dir, summary, arm)?;
    }
    Ok(())
}

fn write_arm(dir: &Path, summary: &ArmSummary, arm: &ArmResult) -> io::Result<()> {
    let name = &summary.name;
    let [f_cdf, f_tput, f_air, f_aql, f_cwnd, f_ping] = arm_files(name);
    let Some(r) = arm.runs.first() else { return Ok(()) };
    let stations: Vec<String> = r.stations.iter().map(|s| s.name.clone()).collect();
    let sta = |s: u16| stations.get(usize::from(s)).cloned().unwrap_or_default();
    // RTT CDFs per station: its TCP flows' per-segment RTT and its ping.
    let mut dist: Vec<Series> = Vec::new();
    for (s, st) in r.stations.iter().enumerate() {
        for (i, f) in r.flows.iter().enumerate().filter(|(_, f)| usize::from(f.station) == s && f.protocol == "tcp") {
            let dir = if f.direction == "download" { "to" } else { "from" };
            dist.push((format!("TCP flow {i} {dir} {}", sta(f.station)), cdf(&f.rtt_cdf)));
        }
        let ping: Vec<f32> = st.ping_series.iter().map(|&(_, y)| y).collect();
        dist.push((format!("ping {}", st.name), cdf(&ping)));
    }
    let more = cap(&mut dist, "series");
    if !dist.is_empty() {
        let title = format!("{name}: RTT CDF per station, run 1{more}");
        write(dir, &f_cdf, Lines { title: &title, ..RTT_CDF }.render(&dist)?)?;
    }
    // Bars per station, means over runs.
    let runs = arm.runs.len();
    let tput: Vec<(String, f64)> = summary.stations.iter().map(|s| (s.name.clone(), s.throughput_mbps)).collect();
    let title = format!("{name}: throughput per station, mean of {runs} run(s)");
    write(dir, &f_tput, bars(&title, "Mbit/s", &tput, false)?)?;
    let air: Vec<(String, f64)> = summary.stations.iter().map(|s| (s.name.clone(), s.airtime_share_pct)).collect();
    let title = format!("{name}: share of the AP's downlink airtime, mean of {runs} run(s)");
    write(dir, &f_air, bars(&title, "airtime share (%)", &air, true)?)?;
    // Time series of run 1.
    let t = &r.sample_times_s;
    let along =
        |v: &[f32]| -> Vec<(f64, f64)> { t.iter().zip(v).map(|(&x, &y)| (f64::from(x), f64::from(y))).collect() };
    let mut aql: Vec<Series> = r.stations.iter().map(|s| (s.name.clone(), along(&s.aql_pending_series_us))).collect();
    if aql.iter().any(|(_, p)| p.iter().any(|&(_, y)| y > 0.0)) {
        let more = cap(&mut aql, "stations");
        let title = format!("{name}: BE AQL pending per station, run 1{more}");
        let chart =
            Lines { title: &title, x: "time (s)", y: "AQL pending (µs)", log_x: false, log_y: false, y_pct: false };
        write(dir, &f_aql, chart.render(&aql)?)?;
    }
    let mut cwnd: Vec<Series> = r
        .flows
        .iter()
        .enumerate()
        .filter(|(_, f)| f.cwnd_series_segments.iter().any(|c| c.is_finite()))
        .map(|(i, f)| (format!("flow {i} ({})", sta(f.station)), along(&f.cwnd_series_segments)))
        .collect();
    if !cwnd.is_empty() {
        let more = cap(&mut cwnd, "flows");
        let title = format!("{name}: congestion window per flow, run 1{more}");
        let chart =
            Lines { title: &title, x: "time (s)", y: "cwnd (segments)", log_x: false, log_y: false, y_pct: false };
        write(dir, &f_cwnd, chart.render(&cwnd)?)?;
    }
    let mut ping: Vec<Series> = r
        .stations
        .iter()
        .map(|s| (s.name.clone(), s.ping_series.iter().map(|&(x, y)| (f64::from(x), f64::from(y))).collect()))
        .collect();
    let more = cap(&mut ping, "stations");
    if !ping.is_empty() {
        let title = format!("{name}: ping RTT per station, run 1{more}");
        let chart = Lines { title: &title, x: "time (s)", y: "ping RTT (ms)", log_x: false, log_y: true, y_pct: false };
        write(dir, &f_ping, chart.render(&ping)?)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_read_as_round_numbers() {
        assert_eq!(tick(100.0), "100");
        assert_eq!(tick(0.30000000000000004), "0.3");
        assert_eq!(tick(12.5), "12.5");
        assert_eq!(tick(2500.0), "2500");
        assert_eq!(tick(0.0), "0");
        assert_eq!(tick(-20.0), "-20");
        assert_eq!((log_tick(50.0), log_tick(200.0), log_tick(1.0)), ("50".into(), "200".into(), "1".into()));
        assert_eq!((log_tick(80.0), log_tick(30.0)), (String::new(), String::new()));
    }

    #[test]
    fn only_data_spanning_a_decade_goes_on_a_log_axis() {
        assert!(spans_decades(1.5, 40.0));
        assert!(!spans_decades(20.0, 45.0));
        assert!(!spans_decades(0.0, 45.0));
    }
}
