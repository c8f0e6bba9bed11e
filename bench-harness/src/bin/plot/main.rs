//! Draws the benchmark matrix as an SVG chart (`just bench-plot`).
//!
//! Usage: `cargo run --release -p protolua-bench --bin plot -- [results dir] [out.svg]`;
//! the defaults are `bench-harness/results` and `docs/matrix.svg`, both
//! resolved against this crate's folder (relative arguments are taken from
//! the current directory, as usual).
//!
//! Inputs: the matrix results the runner writes, one JSON file per host:
//! `matrix-luajit.json`, `matrix-lua54.json` and `matrix-tarantool.json`
//! (any other `matrix-*.json` is drawn too, after those, named by its stem).
//! Each is an array of flat objects, one per cell and direction:
//! `message`, `size`, `bytes`, `direction` (`encode`/`decode`), `msgs_per_s`,
//! `mb_per_s`, `spread` ((max-min)/median of the repetitions) and allocation
//! columns, which the chart does not use (so the older `rust_*_per_op` names
//! are as good as the `heap_*_per_op` ones). Optional: `floor_ratio`
//! (protolua time / floor time, lower is better), `floor_ratio_spread`, and
//! `msgpack_ratio` (protolua msgs/s / Tarantool msgpack msgs/s, higher is
//! better) with `msgpack_ratio_spread`. Unknown keys are ignored.
//!
//! Also, where they exist, `peers-<host>.json` (same host stems), written by
//! `just bench-peers` (bench-harness/peers/run.sh lists the keys): the same
//! cell keys and `pb_nodef_ratio` (protolua msgs/s / lua-protobuf msgs/s,
//! pb with `no_default_values`, higher is better) with `pb_nodef_ratio_min`
//! and `pb_nodef_ratio_max` (or `pb_nodef_ratio_spread`). A host with only
//! a peers file gets bars in that row only.
//!
//! Output: one SVG with a row of two panels (encode, decode) of MB/s on a
//! log scale, a bar per host and cell; then, for each optional ratio some
//! file has, a row of two panels of that ratio with its reference line
//! (1.0, lua-protobuf parity; 1.20, the floor target; 1.0, msgpack parity).
//! Whiskers, where non-zero, span the lua-protobuf ratio's min..max, or
//! else `spread x median` centred on the median (the matrix JSON keeps only
//! the relative range). Text is plain SVG `<text>` in `sans-serif`:
//! plotters is built without a font feature, so nothing here reads a font.

use std::error::Error;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use plotters::coord::Shift;
use plotters::coord::combinators::LogCoord;
use plotters::coord::ranged1d::ValueFormatter;
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

mod json;

use json::{Object, Parser, Value};

/// Result type of this binary: any error ends it with a message.
type Res<T> = Result<T, Box<dyn Error>>;

/// Canvas width in pixels.
const WIDTH: u32 = 1200;
/// Height of the title band.
const TITLE_H: u32 = 78;
/// Height of the throughput row.
const MAIN_H: u32 = 622;
/// Height of each ratio row.
const RATIO_H: u32 = 270;
/// Height of the title band's second note line.
const NOTE_H: u32 = 20;
/// The floor-ratio target drawn as the reference line.
const FLOOR_TARGET: f64 = 1.20;
/// Font family of every text (the viewer picks the face).
const FONT: &str = "sans-serif";

/// Host files in drawing order: file stem suffix, label, colour.
const HOSTS: [(&str, &str, RGBColor); 3] = [
    ("luajit", "LuaJIT", RGBColor(31, 119, 180)),
    ("lua54", "Lua 5.4", RGBColor(255, 127, 14)),
    ("tarantool", "Tarantool", RGBColor(44, 160, 44)),
];

/// Colours for hosts not in [`HOSTS`].
const EXTRA_COLOURS: [RGBColor; 3] = [RGBColor(148, 103, 189), RGBColor(140, 86, 75), RGBColor(227, 119, 194)];

/// A bar's value and the ends of its whisker.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Bar {
    /// The median.
    v: f64,
    /// Whisker bottom.
    lo: f64,
    /// Whisker top.
    hi: f64,
}

impl Bar {
    /// `v` with a whisker spanning `spread x v`, centred on `v`.
    fn spread(v: f64, spread: f64) -> Bar {
        Bar { v, lo: v * (1.0 - spread / 2.0), hi: v * (1.0 + spread / 2.0) }
    }
}

/// One result row (a cell and direction of one host), the fields the chart uses.
#[derive(Debug, Clone)]
struct Row {
    /// Full message name, e.g. `hello.Person`.
    message: String,
    /// Size label, e.g. `10B` or `min`.
    size: String,
    /// `encode` or `decode`.
    direction: String,
    /// Throughput, MB/s (10^6 bytes per second); `None` in a row only a
    /// peers file gave.
    mb_per_s: Option<f64>,
    /// (max-min)/median of the throughput repetitions.
    spread: f64,
    /// protolua time / floor time.
    floor_ratio: Option<f64>,
    /// Spread of `floor_ratio`.
    floor_ratio_spread: Option<f64>,
    /// protolua msgs/s / Tarantool msgpack msgs/s.
    msgpack_ratio: Option<f64>,
    /// Spread of `msgpack_ratio`.
    msgpack_ratio_spread: Option<f64>,
    /// protolua msgs/s / lua-protobuf msgs/s (`no_default_values`), with
    /// the rounds' range.
    pb_ratio: Option<Bar>,
}

/// A number of a parsed object, if finite.
fn num(o: &Object, k: &str) -> Option<f64> {
    match o.get(k) {
        Some(Value::Num(v)) if v.is_finite() => Some(*v),
        _ => None,
    }
}

/// A string of a parsed object.
fn text(o: &Object, k: &str) -> Option<String> {
    match o.get(k) {
        Some(Value::Str(v)) => Some(v.clone()),
        _ => None,
    }
}

impl Row {
    /// The row of a parsed object, or `None` if it lacks the cell fields or
    /// a throughput (`mb_per_s`, or `msgs_per_s` with `bytes`).
    fn from_object(o: &Object) -> Option<Row> {
        let (s, n) = (|k: &str| text(o, k), |k: &str| num(o, k));
        let mb_per_s = n("mb_per_s").or_else(|| Some(n("msgs_per_s")? * n("bytes")? / 1e6))?;
        Some(Row {
            message: s("message")?,
            size: s("size")?,
            direction: s("direction")?,
            mb_per_s: Some(mb_per_s),
            spread: n("spread").unwrap_or(0.0),
            floor_ratio: n("floor_ratio"),
            floor_ratio_spread: n("floor_ratio_spread"),
            msgpack_ratio: n("msgpack_ratio"),
            msgpack_ratio_spread: n("msgpack_ratio_spread"),
            pb_ratio: None,
        })
    }

    /// The cell (message, size, direction) and lua-protobuf ratio of a
    /// peers object, or `None` if it lacks them.
    fn peer(o: &Object) -> Option<(Cell, String, Bar)> {
        let v = num(o, "pb_nodef_ratio")?;
        let bar = match (num(o, "pb_nodef_ratio_min"), num(o, "pb_nodef_ratio_max")) {
            (Some(lo), Some(hi)) => Bar { v, lo, hi },
            _ => Bar::spread(v, num(o, "pb_nodef_ratio_spread").unwrap_or(0.0)),
        };
        Some((Cell { message: text(o, "message")?, size: text(o, "size")? }, text(o, "direction")?, bar))
    }
}

/// One host's results files.
struct Host {
    /// Legend label.
    label: String,
    /// Bar colour.
    colour: RGBColor,
    /// Its rows.
    rows: Vec<Row>,
}

impl Host {
    /// The row for cell `cell` and `direction`, if any.
    fn row(&self, cell: &Cell, direction: &str) -> Option<&Row> {
        self.rows.iter().find(|r| r.message == cell.message && r.size == cell.size && r.direction == direction)
    }
}

/// One matrix cell: an x position.
#[derive(Debug, Clone, PartialEq)]
struct Cell {
    /// Full message name.
    message: String,
    /// Size label.
    size: String,
}

/// Which value of a row a panel draws.
#[derive(Clone, Copy)]
enum Metric {
    /// `mb_per_s` on a log scale.
    Throughput,
    /// `floor_ratio`, reference line at [`FLOOR_TARGET`].
    Floor,
    /// `msgpack_ratio`, reference line at 1.
    Msgpack,
    /// `pb_nodef_ratio` of the peers files, reference line at 1.
    Pb,
}

impl Metric {
    /// The value and its whisker for `row`, if it has one.
    fn of(self, row: &Row) -> Option<Bar> {
        match self {
            Metric::Throughput => row.mb_per_s.map(|v| Bar::spread(v, row.spread)),
            Metric::Floor => row.floor_ratio.map(|v| Bar::spread(v, row.floor_ratio_spread.unwrap_or(0.0))),
            Metric::Msgpack => row.msgpack_ratio.map(|v| Bar::spread(v, row.msgpack_ratio_spread.unwrap_or(0.0))),
            Metric::Pb => row.pb_ratio,
        }
    }

    /// The panel caption for `direction`.
    fn caption(self, direction: &str) -> String {
        match self {
            Metric::Throughput => format!("{direction}: throughput, MB/s (log scale, higher is better)"),
            Metric::Floor => {
                format!("{direction}: protolua time / floor time (lower is better, target {FLOOR_TARGET:.2})")
            }
            Metric::Msgpack => format!("{direction}: protolua / Tarantool msgpack msgs/s (higher is better)"),
            Metric::Pb => format!("{direction}: protolua / lua-protobuf msgs/s (higher is better)"),
        }
    }

    /// The reference line and its label (drawn right of the plot), if the
    /// metric has one.
    fn reference(self) -> Option<(f64, &'static str)> {
        match self {
            Metric::Throughput => None,
            Metric::Floor => Some((FLOOR_TARGET, "1.20")),
            Metric::Msgpack | Metric::Pb => Some((1.0, "1.00")),
        }
    }

    /// A bar's value label.
    fn label(self, v: f64) -> String {
        match self {
            Metric::Throughput if v >= 100.0 => format!("{v:.0}"),
            Metric::Throughput if v >= 10.0 => format!("{v:.1}"),
            Metric::Throughput => format!("{v:.2}"),
            Metric::Floor | Metric::Msgpack | Metric::Pb => format!("{v:.2}"),
        }
    }
}

/// The objects of one results file.
fn read_objects(path: &Path) -> Res<Vec<Object>> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(Parser::new(&text).array().map_err(|e| format!("{}: {e}", path.display()))?)
}

/// Reads every `matrix-*.json` and `peers-*.json` in `dir`, one host per
/// stem: the known hosts first, in [`HOSTS`] order, then the others by
/// name; a peers file's ratios join the matrix rows of their cells. Also
/// returns the newest modification time among the files.
fn load(dir: &Path) -> Res<(Vec<Host>, Option<SystemTime>)> {
    let mut stems: Vec<String> = std::fs::read_dir(dir)
        .map_err(|e| format!("{}: {e}", dir.display()))?
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter_map(|n| {
            let rest = n.strip_prefix("matrix-").or_else(|| n.strip_prefix("peers-"))?;
            Some(rest.strip_suffix(".json")?.to_owned())
        })
        .collect();
    stems.sort_by_key(|s| (HOSTS.iter().position(|h| h.0 == s).unwrap_or(HOSTS.len()), s.clone()));
    stems.dedup();
    let mut hosts = Vec::new();
    let mut newest = None;
    let mut extra = EXTRA_COLOURS.iter().cycle();
    for stem in stems {
        let mut rows: Vec<Row> = Vec::new();
        for prefix in ["matrix", "peers"] {
            let path = dir.join(format!("{prefix}-{stem}.json"));
            if !path.exists() {
                continue;
            }
            let objects = read_objects(&path)?;
            let before = (rows.len(), rows.iter().filter(|r| r.pb_ratio.is_some()).count());
            if prefix == "matrix" {
                rows.extend(objects.iter().filter_map(Row::from_object));
            } else {
                for (cell, direction, bar) in objects.iter().filter_map(Row::peer) {
                    join_peer(&mut rows, cell, direction, bar);
                }
            }
            if (rows.len(), rows.iter().filter(|r| r.pb_ratio.is_some()).count()) == before {
                eprintln!("plot: {} has no usable rows, skipped", path.display());
                continue;
            }
            if let Ok(t) = std::fs::metadata(&path).and_then(|m| m.modified()) {
                newest = newest.max(Some(t));
            }
        }
        if rows.is_empty() {
            continue;
        }
        let (label, colour) = match HOSTS.iter().find(|h| h.0 == stem) {
            Some(&(_, label, colour)) => (label.to_owned(), colour),
            None => (stem.clone(), *extra.next().expect("cycle")),
        };
        hosts.push(Host { label, colour, rows });
    }
    Ok((hosts, newest))
}

/// Sets the lua-protobuf ratio of the row of `cell` and `direction`,
/// adding a row without throughput if the matrix file had none.
fn join_peer(rows: &mut Vec<Row>, cell: Cell, direction: String, bar: Bar) {
    if let Some(row) =
        rows.iter_mut().find(|r| r.message == cell.message && r.size == cell.size && r.direction == direction)
    {
        row.pb_ratio = Some(bar);
        return;
    }
    rows.push(Row {
        message: cell.message,
        size: cell.size,
        direction,
        mb_per_s: None,
        spread: 0.0,
        floor_ratio: None,
        floor_ratio_spread: None,
        msgpack_ratio: None,
        msgpack_ratio_spread: None,
        pb_ratio: Some(bar),
    });
}

/// The cells in the order first seen across the hosts' rows.
fn cells(hosts: &[Host]) -> Vec<Cell> {
    let mut cells: Vec<Cell> = Vec::new();
    for row in hosts.iter().flat_map(|h| &h.rows) {
        let cell = Cell { message: row.message.clone(), size: row.size.clone() };
        if !cells.contains(&cell) {
            cells.push(cell);
        }
    }
    cells
}

/// `YYYY-MM-DD` (UTC) of `t` (days-to-civil, proleptic Gregorian).
fn date(t: SystemTime) -> String {
    let days = t.duration_since(UNIX_EPOCH).map(|d| d.as_secs() / 86_400).unwrap_or(0) as i64;
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}-{m:02}-{d:02}")
}

/// The y range of `metric` over all hosts and both directions (so encode
/// and decode panels share a scale), with room for the value labels.
fn y_range(metric: Metric, hosts: &[Host]) -> (f64, f64) {
    let bars: Vec<Bar> = hosts.iter().flat_map(|h| &h.rows).filter_map(|r| metric.of(r)).collect();
    let max = bars.iter().map(|b| b.hi.max(b.v)).fold(0.0, f64::max);
    match metric {
        Metric::Throughput => {
            let min = bars.iter().map(|b| b.lo.min(b.v)).filter(|v| *v > 0.0).fold(f64::INFINITY, f64::min);
            let lo = if min.is_finite() { 10f64.powf(min.log10().floor()) } else { 1.0 };
            // Up to the next decade when that leaves the bars most of the height.
            let decade = 10f64.powf((max * 1.5).log10().ceil());
            let hi = if decade <= max * 4.0 { decade } else { max * 2.2 };
            (lo, hi.max(lo * 10.0))
        }
        Metric::Floor => (0.0, (max * 1.18).max(FLOOR_TARGET * 1.25)),
        Metric::Msgpack | Metric::Pb => (0.0, (max * 1.18).max(1.25)),
    }
}

/// A y-axis tick label.
fn tick(v: f64) -> String {
    if (v - v.round()).abs() < 1e-9 { format!("{v:.0}") } else { format!("{v:.2}").trim_end_matches('0').to_owned() }
}

/// Draws one panel of `metric` for `direction` into `area` (`root` is the
/// whole canvas, for the cell labels under the plot).
fn panel<Y: Ranged<ValueType = f64> + ValueFormatter<f64>>(
    root: &DrawingArea<SVGBackend<'_>, Shift>,
    area: &DrawingArea<SVGBackend<'_>, Shift>,
    metric: Metric,
    direction: &str,
    hosts: &[Host],
    cells: &[Cell],
    y: Y,
) -> Res<()> {
    let (y_lo, y_hi) = (y.range().start, y.range().end);
    let n_cells = cells.len() as f64;
    let mut chart = ChartBuilder::on(area)
        .caption(metric.caption(direction), (FONT, 19))
        .margin_top(6)
        .margin_left(8)
        .margin_right(if metric.reference().is_some() { 44 } else { 22 })
        .x_label_area_size(46)
        .y_label_area_size(52)
        .build_cartesian_2d(RangedCoordf64::from(-0.5..n_cells - 0.5), y)?;
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(0)
        .y_labels(8)
        .y_label_formatter(&|v| tick(*v))
        .y_label_style((FONT, 14))
        .y_max_light_lines(if matches!(metric, Metric::Throughput) { 9 } else { 1 })
        .light_line_style(RGBColor(238, 238, 238))
        .bold_line_style(RGBColor(205, 205, 205))
        .axis_style(RGBColor(90, 90, 90))
        .draw()?;

    // Separators between messages.
    for i in 1..cells.len() {
        if cells[i].message != cells[i - 1].message {
            let x = i as f64 - 0.5;
            chart.draw_series(std::iter::once(PathElement::new(
                vec![(x, y_lo), (x, y_hi)],
                RGBColor(150, 150, 150).stroke_width(1),
            )))?;
        }
    }

    // Bars: one group per cell, one bar per host that has the value.
    let drawn: Vec<&Host> = hosts.iter().filter(|h| h.rows.iter().any(|r| metric.of(r).is_some())).collect();
    let group = 0.82;
    let bar = group / drawn.len().max(1) as f64;
    let label_font = (FONT, if drawn.len() > 2 { 11 } else { 13 }).into_font().color(&RGBColor(40, 40, 40));
    for (j, host) in drawn.iter().enumerate() {
        for (i, cell) in cells.iter().enumerate() {
            let Some(Bar { v, lo, hi }) = host.row(cell, direction).and_then(|r| metric.of(r)) else { continue };
            let x0 = i as f64 - group / 2.0 + j as f64 * bar;
            let (x1, xm) = (x0 + bar * 0.9, x0 + bar * 0.45);
            let top = v.max(y_lo);
            chart.draw_series(std::iter::once(Rectangle::new([(x0, y_lo), (x1, top)], host.colour.filled())))?;
            let mut label_at = top;
            if hi > lo {
                let (lo, hi) = (lo.max(y_lo), hi.max(v));
                let w = bar * 0.2;
                let style = BLACK.stroke_width(1);
                chart.draw_series([
                    PathElement::new(vec![(xm, lo), (xm, hi)], style),
                    PathElement::new(vec![(xm - w, lo), (xm + w, lo)], style),
                    PathElement::new(vec![(xm - w, hi), (xm + w, hi)], style),
                ])?;
                label_at = hi;
            }
            let pos = chart.backend_coord(&(xm, label_at));
            root.draw(&Text::new(
                metric.label(v),
                (pos.0, pos.1 - 2),
                label_font.clone().pos(Pos::new(HPos::Center, VPos::Bottom)),
            ))?;
        }
    }

    // Reference line.
    if let Some((r, text)) = metric.reference() {
        let red = RGBColor(200, 30, 30);
        chart.draw_series(DashedLineSeries::new(vec![(-0.5, r), (n_cells - 0.5, r)], 7, 5, red.stroke_width(2)))?;
        let pos = chart.backend_coord(&(n_cells - 0.5, r));
        root.draw(&Text::new(
            text,
            (pos.0 + 4, pos.1),
            (FONT, 13).into_font().color(&red).pos(Pos::new(HPos::Left, VPos::Center)),
        ))?;
    }

    // Cell labels: the size under each group, the message (without its
    // package) under its run.
    let size_font = (FONT, 14).into_font().color(&BLACK).pos(Pos::new(HPos::Center, VPos::Top));
    let msg_font = (FONT, 13).into_font().color(&RGBColor(90, 90, 90)).pos(Pos::new(HPos::Center, VPos::Top));
    let mut start = 0;
    for i in 0..cells.len() {
        let (x, y_px) = chart.backend_coord(&(i as f64, y_lo));
        root.draw(&Text::new(cells[i].size.clone(), (x, y_px + 7), size_font.clone()))?;
        if i + 1 == cells.len() || cells[i + 1].message != cells[i].message {
            let (x_first, _) = chart.backend_coord(&(start as f64, y_lo));
            let short = cells[i].message.rsplit('.').next().unwrap_or_default().to_owned();
            root.draw(&Text::new(short, ((x_first + x) / 2, y_px + 26), msg_font.clone()))?;
            start = i + 1;
        }
    }
    Ok(())
}

/// Draws the whole chart to `out`.
fn draw(hosts: &[Host], newest: Option<SystemTime>, out: &Path) -> Res<()> {
    let cells = cells(hosts);
    let rows: Vec<Metric> = [Metric::Throughput, Metric::Pb, Metric::Floor, Metric::Msgpack]
        .into_iter()
        .filter(|m| hosts.iter().flat_map(|h| &h.rows).any(|r| m.of(r).is_some()))
        .collect();
    let row_h = |m: &Metric| if matches!(m, Metric::Throughput) { MAIN_H } else { RATIO_H };
    let has_pb = rows.iter().any(|m| matches!(m, Metric::Pb));
    let title_h = if has_pb { TITLE_H + NOTE_H } else { TITLE_H };
    let height = title_h + rows.iter().map(row_h).sum::<u32>();
    let root = SVGBackend::new(out, (WIDTH, height)).into_drawing_area();
    root.fill(&WHITE)?;

    // Title, subtitle and legend.
    let (title, mut body) = root.split_vertically(title_h);
    let heading = match newest {
        Some(t) => format!("protolua benchmark matrix, results of {}", date(t)),
        None => "protolua benchmark matrix".to_owned(),
    };
    title.draw(&Text::new(heading, (20, 12), (FONT, 26).into_font().style(FontStyle::Bold).color(&BLACK)))?;
    let note_font = (FONT, 14).into_font().color(&RGBColor(80, 80, 80));
    let note = "Median of the repetitions per cell; whiskers (when non-zero) span spread = (max-min)/median; \
                one bar per host (results file matrix-<host>.json).";
    title.draw(&Text::new(note, (20, 48), note_font.clone()))?;
    if has_pb {
        let note = "lua-protobuf: pb.encode / pb.decode with pb.option('no_default_values'), timed in the same \
                    process in interleaved rounds (peers-<host>.json); whiskers: the rounds' min..max.";
        title.draw(&Text::new(note, (20, 48 + NOTE_H as i32), note_font))?;
    }
    let mut x = WIDTH as i32 - 20 - 125 * hosts.len() as i32;
    for host in hosts {
        title.draw(&Rectangle::new([(x, 16), (x + 18, 32)], host.colour.filled()))?;
        title.draw(&Text::new(host.label.clone(), (x + 25, 15), (FONT, 17).into_font().color(&BLACK)))?;
        x += 125;
    }

    for (k, metric) in rows.iter().enumerate() {
        let (row, rest) =
            if k + 1 == rows.len() { (body.clone(), body.clone()) } else { body.split_vertically(row_h(metric)) };
        body = rest;
        let (left, right) = row.split_horizontally(WIDTH / 2);
        let (lo, hi) = y_range(*metric, hosts);
        for (area, direction) in [(&left, "encode"), (&right, "decode")] {
            match metric {
                Metric::Throughput => {
                    panel(&root, area, *metric, direction, hosts, &cells, LogCoord::from((lo..hi).log_scale()))?
                }
                _ => panel(&root, area, *metric, direction, hosts, &cells, RangedCoordf64::from(lo..hi))?,
            }
        }
    }
    root.present()?;
    Ok(())
}

fn main() -> Res<()> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let mut args = std::env::args_os().skip(1);
    let dir = args.next().map(PathBuf::from).unwrap_or_else(|| root.join("results"));
    let out = args.next().map(PathBuf::from).unwrap_or_else(|| root.parent().unwrap_or(&root).join("docs/matrix.svg"));
    let (hosts, newest) = load(&dir)?;
    if hosts.is_empty() {
        return Err(format!("no matrix-*.json or peers-*.json with rows in {}", dir.display()).into());
    }
    draw(&hosts, newest, &out)?;
    let names: Vec<&str> = hosts.iter().map(|h| h.label.as_str()).collect();
    println!("wrote {} ({})", out.display(), names.join(", "));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_runner_format() {
        let text = r#"[
  {"message": "hello.Person", "size": "10B", "bytes": 10, "direction": "encode", "msgs_per_s": 3383284.1,
   "mb_per_s": 33.833, "spread": 0.0000, "rust_allocs_per_op": 1.031, "ok": true, "x": null, "s": "a\"\u00e9"},
  {"message": "m", "size": "min", "bytes": 5, "direction": "decode", "msgs_per_s": 2e6, "floor_ratio": 1.1}
]"#;
        let objects = Parser::new(text).array().unwrap();
        assert_eq!(objects.len(), 2);
        assert_eq!(objects[0]["s"], Value::Str("a\"é".into()));
        let rows: Vec<Row> = objects.iter().filter_map(Row::from_object).collect();
        assert_eq!(rows[0].mb_per_s, Some(33.833));
        assert_eq!(rows[1].mb_per_s, Some(10.0));
        assert_eq!(rows[1].floor_ratio, Some(1.1));
        assert!(Parser::new("[{\"a\": [1]}]").array().is_err());
        assert!(Parser::new("[] x").array().is_err());
    }

    #[test]
    fn peers_files_join_the_hosts_and_get_a_row() {
        let dir = std::env::temp_dir().join(format!("protolua-plot-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let cell = |dir: &str, extra: &str| {
            format!(r#"{{"message": "hello.Person", "size": "10B", "bytes": 10, "direction": "{dir}"{extra}}}"#)
        };
        let matrix =
            format!("[{}, {}]", cell("encode", r#", "mb_per_s": 30.0"#), cell("decode", r#", "mb_per_s": 40.0"#));
        std::fs::write(dir.join("matrix-luajit.json"), matrix).unwrap();
        let peers = format!(
            "[{}, {}]",
            cell("encode", r#", "pb_nodef_ratio": 2.0, "pb_nodef_ratio_min": 1.9, "pb_nodef_ratio_max": 2.3"#),
            cell("decode", r#", "pb_nodef_ratio": 3.0, "pb_nodef_ratio_spread": 0.2, "pb_default_ratio": 5.0"#)
        );
        std::fs::write(dir.join("peers-luajit.json"), &peers).unwrap();
        // A host with only a peers file, and a cell the matrix file lacks.
        let lone = format!("[{}]", cell("encode", r#", "pb_nodef_ratio": 1.5"#).replace("10B", "1KB"));
        std::fs::write(dir.join("peers-lua54.json"), lone).unwrap();
        std::fs::write(dir.join("cells-peers-luajit.json"), "not json").unwrap();

        let (hosts, newest) = load(&dir).unwrap();
        assert!(newest.is_some());
        let labels: Vec<&str> = hosts.iter().map(|h| h.label.as_str()).collect();
        assert_eq!(labels, ["LuaJIT", "Lua 5.4"]);
        let luajit = &hosts[0].rows;
        assert_eq!(luajit.len(), 2);
        assert_eq!(luajit[0].mb_per_s, Some(30.0));
        assert_eq!(luajit[0].pb_ratio, Some(Bar { v: 2.0, lo: 1.9, hi: 2.3 }));
        assert_eq!(luajit[1].pb_ratio, Some(Bar::spread(3.0, 0.2)));
        let lua54 = &hosts[1].rows;
        assert_eq!((lua54[0].size.as_str(), lua54[0].mb_per_s), ("1KB", None));
        assert_eq!(Metric::Pb.of(&lua54[0]).map(|b| b.v), Some(1.5));
        assert_eq!(cells(&hosts).len(), 2);

        let out = dir.join("chart.svg");
        draw(&hosts, newest, &out).unwrap();
        let svg = std::fs::read_to_string(&out).unwrap();
        assert!(svg.contains("decode: protolua / lua-protobuf msgs/s (higher is better)"));
        assert!(svg.contains("no_default_values"));
        assert!(svg.contains(">2.00<") || svg.contains("2.00"));
        assert!(!svg.contains("floor time"), "no floor row without floor ratios");

        // Peers files alone draw the ratio row only.
        std::fs::remove_file(dir.join("matrix-luajit.json")).unwrap();
        let (hosts, newest) = load(&dir).unwrap();
        draw(&hosts, newest, &out).unwrap();
        let svg = std::fs::read_to_string(&out).unwrap();
        assert!(svg.contains("lua-protobuf msgs/s") && !svg.contains("throughput"));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn dates() {
        assert_eq!(date(UNIX_EPOCH), "1970-01-01");
        assert_eq!(date(UNIX_EPOCH + std::time::Duration::from_secs(951_782_400)), "2000-02-29");
    }
}
