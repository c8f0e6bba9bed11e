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
//! Output: one SVG with a row of two panels (encode, decode) of MB/s on a
//! log scale, a bar per host and cell; then, for each optional ratio some
//! file has, a row of two panels of that ratio with its reference line
//! (1.20, the floor target; 1.0, msgpack parity). Whiskers, where a spread
//! is non-zero, span `spread x median` centred on the median (the JSON keeps
//! only the relative range). Text is plain SVG `<text>` in `sans-serif`:
//! plotters is built without a font feature, so nothing here reads a font.

use std::collections::BTreeMap;
use std::error::Error;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use plotters::coord::Shift;
use plotters::coord::combinators::LogCoord;
use plotters::coord::ranged1d::ValueFormatter;
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

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

/// One JSON value of the flat result format.
#[derive(Debug, Clone, PartialEq)]
enum Value {
    /// A string.
    Str(String),
    /// A number.
    Num(f64),
    /// `true`, `false` or `null`: accepted, never used.
    Other,
}

/// One JSON object: key to value.
type Object = BTreeMap<String, Value>;

/// A minimal parser for an array of flat objects with string, number,
/// boolean and null values: exactly the runner's output format.
struct Parser<'a> {
    /// The text.
    s: &'a [u8],
    /// Current byte offset.
    i: usize,
}

impl<'a> Parser<'a> {
    /// A parser at the start of `text`.
    fn new(text: &'a str) -> Self {
        Parser { s: text.as_bytes(), i: 0 }
    }

    /// An error naming the offset.
    fn err(&self, what: &str) -> Box<dyn Error> {
        format!("JSON: {what} at byte {}", self.i).into()
    }

    /// Skips whitespace.
    fn ws(&mut self) {
        while self.i < self.s.len() && self.s[self.i].is_ascii_whitespace() {
            self.i += 1;
        }
    }

    /// Skips whitespace and consumes `c`, or fails.
    fn expect(&mut self, c: u8) -> Res<()> {
        self.ws();
        if self.s.get(self.i) == Some(&c) {
            self.i += 1;
            Ok(())
        } else {
            Err(self.err(&format!("expected '{}'", c as char)))
        }
    }

    /// Skips whitespace and consumes `c` if it is next.
    fn eat(&mut self, c: u8) -> bool {
        self.ws();
        if self.s.get(self.i) == Some(&c) {
            self.i += 1;
            true
        } else {
            false
        }
    }

    /// The whole document: `[ {..}, ... ]`.
    fn array(&mut self) -> Res<Vec<Object>> {
        let mut rows = Vec::new();
        self.expect(b'[')?;
        if !self.eat(b']') {
            loop {
                rows.push(self.object()?);
                if self.eat(b']') {
                    break;
                }
                self.expect(b',')?;
            }
        }
        self.ws();
        if self.i != self.s.len() {
            return Err(self.err("trailing data"));
        }
        Ok(rows)
    }

    /// One flat object.
    fn object(&mut self) -> Res<Object> {
        let mut obj = Object::new();
        self.expect(b'{')?;
        if self.eat(b'}') {
            return Ok(obj);
        }
        loop {
            self.ws();
            let key = self.string()?;
            self.expect(b':')?;
            let value = self.value()?;
            obj.insert(key, value);
            if self.eat(b'}') {
                return Ok(obj);
            }
            self.expect(b',')?;
        }
    }

    /// A scalar value.
    fn value(&mut self) -> Res<Value> {
        self.ws();
        match self.s.get(self.i) {
            Some(b'"') => Ok(Value::Str(self.string()?)),
            Some(b't') => self.word("true"),
            Some(b'f') => self.word("false"),
            Some(b'n') => self.word("null"),
            Some(c) if *c == b'-' || c.is_ascii_digit() => {
                let start = self.i;
                while self.i < self.s.len() && matches!(self.s[self.i], b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E')
                {
                    self.i += 1;
                }
                let text = std::str::from_utf8(&self.s[start..self.i])?;
                text.parse().map(Value::Num).map_err(|_| self.err("bad number"))
            }
            _ => Err(self.err("expected a string, number, true, false or null (nested values are not supported)")),
        }
    }

    /// The literal `w`.
    fn word(&mut self, w: &str) -> Res<Value> {
        if self.s[self.i..].starts_with(w.as_bytes()) {
            self.i += w.len();
            Ok(Value::Other)
        } else {
            Err(self.err("bad literal"))
        }
    }

    /// A string with the usual escapes (`\uXXXX` outside the BMP as a pair).
    fn string(&mut self) -> Res<String> {
        if self.s.get(self.i) != Some(&b'"') {
            return Err(self.err("expected a string"));
        }
        self.i += 1;
        let mut out = Vec::new();
        loop {
            let Some(&c) = self.s.get(self.i) else { return Err(self.err("unterminated string")) };
            self.i += 1;
            match c {
                b'"' => return Ok(String::from_utf8(out)?),
                b'\\' => {
                    let Some(&e) = self.s.get(self.i) else { return Err(self.err("unterminated escape")) };
                    self.i += 1;
                    let ch = match e {
                        b'"' => '"',
                        b'\\' => '\\',
                        b'/' => '/',
                        b'b' => '\u{8}',
                        b'f' => '\u{c}',
                        b'n' => '\n',
                        b'r' => '\r',
                        b't' => '\t',
                        b'u' => {
                            let hi = self.hex4()?;
                            let code = if (0xD800..0xDC00).contains(&hi) && self.s[self.i..].starts_with(b"\\u") {
                                self.i += 2;
                                let lo = self.hex4()?;
                                0x10000 + ((hi - 0xD800) << 10) + (lo.wrapping_sub(0xDC00) & 0x3FF)
                            } else {
                                hi
                            };
                            char::from_u32(code).unwrap_or('\u{FFFD}')
                        }
                        _ => return Err(self.err("bad escape")),
                    };
                    out.extend_from_slice(ch.encode_utf8(&mut [0; 4]).as_bytes());
                }
                _ => out.push(c),
            }
        }
    }

    /// Four hex digits of a `\u` escape.
    fn hex4(&mut self) -> Res<u32> {
        let digits = self.s.get(self.i..self.i + 4).ok_or_else(|| self.err("short \\u escape"))?;
        let v = u32::from_str_radix(std::str::from_utf8(digits)?, 16).map_err(|_| self.err("bad \\u escape"))?;
        self.i += 4;
        Ok(v)
    }
}

/// One matrix result row, the fields the chart uses.
#[derive(Debug, Clone)]
struct Row {
    /// Full message name, e.g. `hello.Person`.
    message: String,
    /// Size label, e.g. `10B` or `min`.
    size: String,
    /// `encode` or `decode`.
    direction: String,
    /// Throughput, MB/s (10^6 bytes per second).
    mb_per_s: f64,
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
}

impl Row {
    /// The row of a parsed object, or `None` if it lacks the cell fields or
    /// a throughput (`mb_per_s`, or `msgs_per_s` with `bytes`).
    fn from_object(o: &Object) -> Option<Row> {
        let s = |k: &str| match o.get(k) {
            Some(Value::Str(v)) => Some(v.clone()),
            _ => None,
        };
        let n = |k: &str| match o.get(k) {
            Some(Value::Num(v)) if v.is_finite() => Some(*v),
            _ => None,
        };
        let mb_per_s = n("mb_per_s").or_else(|| Some(n("msgs_per_s")? * n("bytes")? / 1e6))?;
        Some(Row {
            message: s("message")?,
            size: s("size")?,
            direction: s("direction")?,
            mb_per_s,
            spread: n("spread").unwrap_or(0.0),
            floor_ratio: n("floor_ratio"),
            floor_ratio_spread: n("floor_ratio_spread"),
            msgpack_ratio: n("msgpack_ratio"),
            msgpack_ratio_spread: n("msgpack_ratio_spread"),
        })
    }
}

/// One host's results file.
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
}

impl Metric {
    /// The value and its relative spread for `row`, if it has one.
    fn of(self, row: &Row) -> Option<(f64, f64)> {
        match self {
            Metric::Throughput => Some((row.mb_per_s, row.spread)),
            Metric::Floor => row.floor_ratio.map(|v| (v, row.floor_ratio_spread.unwrap_or(0.0))),
            Metric::Msgpack => row.msgpack_ratio.map(|v| (v, row.msgpack_ratio_spread.unwrap_or(0.0))),
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
        }
    }

    /// The reference line and its label (drawn right of the plot), if the
    /// metric has one.
    fn reference(self) -> Option<(f64, &'static str)> {
        match self {
            Metric::Throughput => None,
            Metric::Floor => Some((FLOOR_TARGET, "1.20")),
            Metric::Msgpack => Some((1.0, "1.00")),
        }
    }

    /// A bar's value label.
    fn label(self, v: f64) -> String {
        match self {
            Metric::Throughput if v >= 100.0 => format!("{v:.0}"),
            Metric::Throughput if v >= 10.0 => format!("{v:.1}"),
            Metric::Throughput => format!("{v:.2}"),
            Metric::Floor | Metric::Msgpack => format!("{v:.2}"),
        }
    }
}

/// Reads every `matrix-*.json` in `dir`: the known hosts first, in
/// [`HOSTS`] order, then the others by name. Also returns the newest
/// modification time among them.
fn load(dir: &Path) -> Res<(Vec<Host>, Option<SystemTime>)> {
    let mut stems: Vec<String> = std::fs::read_dir(dir)
        .map_err(|e| format!("{}: {e}", dir.display()))?
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter_map(|n| Some(n.strip_prefix("matrix-")?.strip_suffix(".json")?.to_owned()))
        .collect();
    stems.sort_by_key(|s| (HOSTS.iter().position(|h| h.0 == s).unwrap_or(HOSTS.len()), s.clone()));
    let mut hosts = Vec::new();
    let mut newest = None;
    let mut extra = EXTRA_COLOURS.iter().cycle();
    for stem in stems {
        let path = dir.join(format!("matrix-{stem}.json"));
        let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        let objects = Parser::new(&text).array().map_err(|e| format!("{}: {e}", path.display()))?;
        let rows: Vec<Row> = objects.iter().filter_map(Row::from_object).collect();
        if rows.is_empty() {
            eprintln!("plot: {} has no usable rows, skipped", path.display());
            continue;
        }
        if let Ok(t) = std::fs::metadata(&path).and_then(|m| m.modified()) {
            newest = newest.max(Some(t));
        }
        let (label, colour) = match HOSTS.iter().find(|h| h.0 == stem) {
            Some(&(_, label, colour)) => (label.to_owned(), colour),
            None => (stem.clone(), *extra.next().expect("cycle")),
        };
        hosts.push(Host { label, colour, rows });
    }
    Ok((hosts, newest))
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
    let values: Vec<f64> =
        hosts.iter().flat_map(|h| &h.rows).filter_map(|r| metric.of(r)).map(|(v, s)| v * (1.0 + s / 2.0)).collect();
    let max = values.iter().copied().fold(0.0, f64::max);
    match metric {
        Metric::Throughput => {
            let min = hosts
                .iter()
                .flat_map(|h| &h.rows)
                .map(|r| r.mb_per_s * (1.0 - r.spread / 2.0))
                .filter(|v| *v > 0.0)
                .fold(f64::INFINITY, f64::min);
            let lo = if min.is_finite() { 10f64.powf(min.log10().floor()) } else { 1.0 };
            // Up to the next decade when that leaves the bars most of the height.
            let decade = 10f64.powf((max * 1.5).log10().ceil());
            let hi = if decade <= max * 4.0 { decade } else { max * 2.2 };
            (lo, hi.max(lo * 10.0))
        }
        Metric::Floor => (0.0, (max * 1.18).max(FLOOR_TARGET * 1.25)),
        Metric::Msgpack => (0.0, (max * 1.18).max(1.25)),
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
            let Some((v, spread)) = host.row(cell, direction).and_then(|r| metric.of(r)) else { continue };
            let x0 = i as f64 - group / 2.0 + j as f64 * bar;
            let (x1, xm) = (x0 + bar * 0.9, x0 + bar * 0.45);
            let top = v.max(y_lo);
            chart.draw_series(std::iter::once(Rectangle::new([(x0, y_lo), (x1, top)], host.colour.filled())))?;
            let mut label_at = top;
            if spread > 0.0 {
                let (lo, hi) = ((v * (1.0 - spread / 2.0)).max(y_lo), v * (1.0 + spread / 2.0));
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
    let mut rows = vec![Metric::Throughput];
    for m in [Metric::Floor, Metric::Msgpack] {
        if hosts.iter().flat_map(|h| &h.rows).any(|r| m.of(r).is_some()) {
            rows.push(m);
        }
    }
    let height = TITLE_H + MAIN_H + RATIO_H * (rows.len() as u32 - 1);
    let root = SVGBackend::new(out, (WIDTH, height)).into_drawing_area();
    root.fill(&WHITE)?;

    // Title, subtitle and legend.
    let (title, mut body) = root.split_vertically(TITLE_H);
    let heading = match newest {
        Some(t) => format!("protolua benchmark matrix, results of {}", date(t)),
        None => "protolua benchmark matrix".to_owned(),
    };
    title.draw(&Text::new(heading, (20, 12), (FONT, 26).into_font().style(FontStyle::Bold).color(&BLACK)))?;
    let note = "Median of the repetitions per cell; whiskers (when non-zero) span spread = (max-min)/median; \
                one bar per host (results file matrix-<host>.json).";
    title.draw(&Text::new(note, (20, 48), (FONT, 14).into_font().color(&RGBColor(80, 80, 80))))?;
    let mut x = WIDTH as i32 - 20 - 125 * hosts.len() as i32;
    for host in hosts {
        title.draw(&Rectangle::new([(x, 16), (x + 18, 32)], host.colour.filled()))?;
        title.draw(&Text::new(host.label.clone(), (x + 25, 15), (FONT, 17).into_font().color(&BLACK)))?;
        x += 125;
    }

    for (k, metric) in rows.iter().enumerate() {
        let (row, rest) = if k + 1 == rows.len() {
            (body.clone(), body.clone())
        } else {
            body.split_vertically(if k == 0 { MAIN_H } else { RATIO_H })
        };
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
        return Err(format!("no matrix-*.json with rows in {}", dir.display()).into());
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
        assert_eq!(rows[0].mb_per_s, 33.833);
        assert_eq!(rows[1].mb_per_s, 10.0);
        assert_eq!(rows[1].floor_ratio, Some(1.1));
        assert!(Parser::new("[{\"a\": [1]}]").array().is_err());
        assert!(Parser::new("[] x").array().is_err());
    }

    #[test]
    fn dates() {
        assert_eq!(date(UNIX_EPOCH), "1970-01-01");
        assert_eq!(date(UNIX_EPOCH + std::time::Duration::from_secs(951_782_400)), "2000-02-29");
    }
}
