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
//! and `pb_nodef_ratio_max` (or `pb_nodef_ratio_spread`).
//!
//! And `json-<host>.json`, written by `just bench-json`
//! (bench-harness/json/run.sh lists the keys): the same cell keys, `method`
//! (`encode_json`, `decode_json`, `binary_to_json`, `json_to_binary`) and
//! `speedup` (the host's JSON codec's time / protolua's, higher is better)
//! with `speedup_min` and `speedup_max` (or `speedup_spread`). A host with
//! only a peers or JSON file gets bars in those rows only.
//!
//! Output: one SVG with a row of two panels (encode, decode) of MB/s on a
//! log scale, a bar per host and cell; then, for each optional ratio some
//! file has, a row of two panels of that ratio with its reference line
//! (1.0, lua-protobuf parity; 1.20, the floor target; 1.0, msgpack parity),
//! the JSON speedups taking two rows (encode_json, decode_json;
//! binary_to_json, json_to_binary) with 1.0 and issue #29's targets
//! ([`json_target`]). Whiskers, where non-zero, span the rounds' min..max
//! (peers and JSON files), or else `spread x median` centred on the median
//! (the matrix JSON keeps only the relative range). Text is plain SVG
//! `<text>` in `sans-serif`: plotters is built without a font feature, so
//! nothing here reads a font.

use std::error::Error;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use plotters::style::RGBColor;

mod draw;
mod json;

use json::{Object, Parser, Value};

/// Result type of this binary: any error ends it with a message.
type Res<T> = Result<T, Box<dyn Error>>;

/// The floor-ratio target drawn as the reference line.
const FLOOR_TARGET: f64 = 1.20;

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
    /// The host's JSON codec's time / protolua's for the JSON method named
    /// by `direction`, with the rounds' range.
    json_ratio: Option<Bar>,
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
            json_ratio: None,
        })
    }

    /// A row of `cell` and `direction` with no values yet.
    fn bare(cell: Cell, direction: String) -> Row {
        Row {
            message: cell.message,
            size: cell.size,
            direction,
            mb_per_s: None,
            spread: 0.0,
            floor_ratio: None,
            floor_ratio_spread: None,
            msgpack_ratio: None,
            msgpack_ratio_spread: None,
            pb_ratio: None,
            json_ratio: None,
        }
    }

    /// The cell (message, size), the direction (the `direction` key of a
    /// peers object, the `method` of a JSON one) and the ratio `metric`
    /// (`Pb` or `Json`) reads of a peers or JSON object, or `None` if it
    /// lacks them.
    fn ratio(o: &Object, metric: Metric) -> Option<(Cell, String, Bar)> {
        let (key, direction) = match metric {
            Metric::Json => ("speedup", "method"),
            _ => ("pb_nodef_ratio", "direction"),
        };
        let v = num(o, key)?;
        let bar = match (num(o, &format!("{key}_min")), num(o, &format!("{key}_max"))) {
            (Some(lo), Some(hi)) => Bar { v, lo, hi },
            _ => Bar::spread(v, num(o, &format!("{key}_spread")).unwrap_or(0.0)),
        };
        Some((Cell { message: text(o, "message")?, size: text(o, "size")? }, text(o, direction)?, bar))
    }

    /// How many of the peers and JSON ratios the row has.
    fn ratios(&self) -> usize {
        usize::from(self.pb_ratio.is_some()) + usize::from(self.json_ratio.is_some())
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
#[derive(Debug, Clone, Copy)]
enum Metric {
    /// `mb_per_s` on a log scale.
    Throughput,
    /// `floor_ratio`, reference line at [`FLOOR_TARGET`].
    Floor,
    /// `msgpack_ratio`, reference line at 1.
    Msgpack,
    /// `pb_nodef_ratio` of the peers files, reference line at 1.
    Pb,
    /// `speedup` of the JSON files, reference line at 1 and the targets of
    /// [`json_target`].
    Json,
}

/// The JSON methods in panel order, each with what the host's JSON codec
/// (`json`: lua-cjson or Tarantool's) does in its place.
const JSON_METHODS: [(&str, &str); 4] = [
    ("encode_json", "encode_json(t) vs json.encode(t)"),
    ("decode_json", "decode_json(s) vs json.decode(s)"),
    ("binary_to_json", "binary_to_json(b) vs json.encode(Msg:decode(b))"),
    ("json_to_binary", "json_to_binary(s) vs Msg:encode(json.decode(s'))"),
];

/// Issue #29's speed target for JSON `method` in `cell`: `encode_json` and
/// `decode_json` 1.2x in every cell and 2x from 1 KB up (a size label in
/// KB or MB: Person 1KB..100KB; BenchPayload mid is 600 bytes),
/// `binary_to_json` and `json_to_binary` 2x everywhere; `None` for another
/// method.
fn json_target(method: &str, cell: &Cell) -> Option<f64> {
    let kb_up = cell.size.ends_with("KB") || cell.size.ends_with("MB");
    match method {
        "encode_json" | "decode_json" => Some(if kb_up { 2.0 } else { 1.2 }),
        "binary_to_json" | "json_to_binary" => Some(2.0),
        _ => None,
    }
}

impl Metric {
    /// The value and its whisker for `row`, if it has one.
    fn of(self, row: &Row) -> Option<Bar> {
        match self {
            Metric::Throughput => row.mb_per_s.map(|v| Bar::spread(v, row.spread)),
            Metric::Floor => row.floor_ratio.map(|v| Bar::spread(v, row.floor_ratio_spread.unwrap_or(0.0))),
            Metric::Msgpack => row.msgpack_ratio.map(|v| Bar::spread(v, row.msgpack_ratio_spread.unwrap_or(0.0))),
            Metric::Pb => row.pb_ratio,
            Metric::Json => row.json_ratio,
        }
    }

    /// The directions of its panels, a row of two per pair.
    fn panels(self) -> &'static [[&'static str; 2]] {
        match self {
            Metric::Json => &[[JSON_METHODS[0].0, JSON_METHODS[1].0], [JSON_METHODS[2].0, JSON_METHODS[3].0]],
            _ => &[["encode", "decode"]],
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
            Metric::Json => match JSON_METHODS.iter().find(|m| m.0 == direction) {
                Some((_, versus)) => format!("{versus}: speedup"),
                None => format!("{direction}: speedup over json"),
            },
        }
    }

    /// The reference line and its label (drawn right of the plot), if the
    /// metric has one.
    fn reference(self) -> Option<(f64, &'static str)> {
        match self {
            Metric::Throughput => None,
            Metric::Floor => Some((FLOOR_TARGET, "1.20")),
            Metric::Msgpack | Metric::Pb | Metric::Json => Some((1.0, "1.00")),
        }
    }

    /// A bar's value label.
    fn label(self, v: f64) -> String {
        match self {
            Metric::Throughput if v >= 100.0 => format!("{v:.0}"),
            Metric::Throughput if v >= 10.0 => format!("{v:.1}"),
            Metric::Throughput => format!("{v:.2}"),
            Metric::Floor | Metric::Msgpack | Metric::Pb | Metric::Json => format!("{v:.2}"),
        }
    }
}

/// The objects of one results file.
fn read_objects(path: &Path) -> Res<Vec<Object>> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(Parser::new(&text).array().map_err(|e| format!("{}: {e}", path.display()))?)
}

/// The results file prefixes: the matrix, then the ratio files and the
/// metric each gives.
const FILES: [(&str, Option<Metric>); 3] =
    [("matrix", None), ("peers", Some(Metric::Pb)), ("json", Some(Metric::Json))];

/// Reads every `matrix-*.json`, `peers-*.json` and `json-*.json` in `dir`,
/// one host per stem: the known hosts first, in [`HOSTS`] order, then the
/// others by name; a peers or JSON file's ratios join the matrix rows of
/// their cells. Also returns the newest modification time among the files.
fn load(dir: &Path) -> Res<(Vec<Host>, Option<SystemTime>)> {
    let mut stems: Vec<String> = std::fs::read_dir(dir)
        .map_err(|e| format!("{}: {e}", dir.display()))?
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter_map(|n| {
            let rest = FILES.iter().find_map(|f| n.strip_prefix(f.0)?.strip_prefix('-'))?;
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
        for (prefix, metric) in FILES {
            let path = dir.join(format!("{prefix}-{stem}.json"));
            if !path.exists() {
                continue;
            }
            let objects = read_objects(&path)?;
            let count = |rows: &[Row]| (rows.len(), rows.iter().map(Row::ratios).sum::<usize>());
            let before = count(&rows);
            match metric {
                None => rows.extend(objects.iter().filter_map(Row::from_object)),
                Some(metric) => {
                    for (cell, direction, bar) in objects.iter().filter_map(|o| Row::ratio(o, metric)) {
                        join_ratio(&mut rows, cell, direction, metric, bar);
                    }
                }
            }
            if count(&rows) == before {
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

/// Sets the ratio `metric` (`Pb` or `Json`) reads of the row of `cell`
/// and `direction`, adding a row without throughput if there was none.
fn join_ratio(rows: &mut Vec<Row>, cell: Cell, direction: String, metric: Metric, bar: Bar) {
    let at = rows.iter().position(|r| r.message == cell.message && r.size == cell.size && r.direction == direction);
    let row = match at {
        Some(k) => &mut rows[k],
        None => {
            rows.push(Row::bare(cell, direction));
            rows.last_mut().expect("pushed")
        }
    };
    match metric {
        Metric::Json => row.json_ratio = Some(bar),
        _ => row.pb_ratio = Some(bar),
    }
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

fn main() -> Res<()> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let mut args = std::env::args_os().skip(1);
    let dir = args.next().map(PathBuf::from).unwrap_or_else(|| root.join("results"));
    let out = args.next().map(PathBuf::from).unwrap_or_else(|| root.parent().unwrap_or(&root).join("docs/matrix.svg"));
    let (hosts, newest) = load(&dir)?;
    if hosts.is_empty() {
        return Err(format!("no matrix-*.json, peers-*.json or json-*.json with rows in {}", dir.display()).into());
    }
    draw::draw(&hosts, newest, &out)?;
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
        draw::draw(&hosts, newest, &out).unwrap();
        let svg = std::fs::read_to_string(&out).unwrap();
        assert!(svg.contains("decode: protolua / lua-protobuf msgs/s (higher is better)"));
        assert!(svg.contains("no_default_values"));
        assert!(svg.contains(">2.00<") || svg.contains("2.00"));
        assert!(!svg.contains("floor time"), "no floor row without floor ratios");

        // Peers files alone draw the ratio row only.
        std::fs::remove_file(dir.join("matrix-luajit.json")).unwrap();
        let (hosts, newest) = load(&dir).unwrap();
        draw::draw(&hosts, newest, &out).unwrap();
        let svg = std::fs::read_to_string(&out).unwrap();
        assert!(svg.contains("lua-protobuf msgs/s") && !svg.contains("throughput"));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn json_files_join_the_hosts_and_get_two_rows() {
        let dir = std::env::temp_dir().join(format!("protolua-plot-json-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let obj = |size: &str, method: &str, extra: &str| {
            format!(
                r#"{{"message": "hello.Person", "size": "{size}", "bytes": 10, "json_bytes": 30, "method": "{method}", "peer": "cjson"{extra}}}"#
            )
        };
        let matrix =
            r#"[{"message": "hello.Person", "size": "10B", "bytes": 10, "direction": "encode", "mb_per_s": 30.0}]"#;
        std::fs::write(dir.join("matrix-luajit.json"), matrix).unwrap();
        let json = format!(
            "[{}, {}, {}]",
            obj("10B", "encode_json", r#", "speedup": 1.5, "speedup_min": 1.4, "speedup_max": 1.7"#),
            obj("10B", "json_to_binary", r#", "speedup": 2.5, "speedup_spread": 0.2"#),
            obj("1KB", "decode_json", r#", "speedup": 3.25"#)
        );
        std::fs::write(dir.join("json-luajit.json"), &json).unwrap();
        // A restricted run's file is not read; a host with only a JSON file.
        std::fs::write(dir.join("cells-json-luajit.json"), "not json").unwrap();
        let lone = format!("[{}]", obj("10B", "binary_to_json", r#", "speedup": 0.8"#));
        std::fs::write(dir.join("json-tarantool.json"), lone).unwrap();

        let (hosts, newest) = load(&dir).unwrap();
        let labels: Vec<&str> = hosts.iter().map(|h| h.label.as_str()).collect();
        assert_eq!(labels, ["LuaJIT", "Tarantool"]);
        let luajit = &hosts[0];
        let person = |size: &str| Cell { message: "hello.Person".into(), size: size.into() };
        assert_eq!(luajit.row(&person("10B"), "encode").and_then(|r| r.mb_per_s), Some(30.0));
        assert_eq!(
            luajit.row(&person("10B"), "encode_json").and_then(|r| Metric::Json.of(r)),
            Some(Bar { v: 1.5, lo: 1.4, hi: 1.7 })
        );
        assert_eq!(
            luajit.row(&person("10B"), "json_to_binary").and_then(|r| r.json_ratio),
            Some(Bar::spread(2.5, 0.2))
        );
        assert_eq!(luajit.row(&person("1KB"), "decode_json").and_then(|r| r.mb_per_s), None);
        assert_eq!(cells(&hosts).len(), 2);

        assert_eq!(json_target("encode_json", &person("100B")), Some(1.2));
        assert_eq!(json_target("decode_json", &person("1KB")), Some(2.0));
        assert_eq!(json_target("json_to_binary", &person("10B")), Some(2.0));
        let mid = Cell { message: "proto2_basic.BenchPayload".into(), size: "mid".into() };
        assert_eq!(json_target("encode_json", &mid), Some(1.2));
        assert_eq!(json_target("encode", &mid), None);

        let out = dir.join("chart.svg");
        draw::draw(&hosts, newest, &out).unwrap();
        let svg = std::fs::read_to_string(&out).unwrap();
        for (_, caption) in JSON_METHODS {
            assert!(svg.contains(&caption.replace('\'', "&apos;")) || svg.contains(caption), "{caption}");
        }
        assert!(svg.contains("purple dashes: issue #29"));
        assert!(svg.contains("3.25") && svg.contains("0.80"));
        assert!(svg.contains("json-&lt;host&gt;.json") || svg.contains("json-<host>.json"));
        assert!(!svg.contains("lua-protobuf msgs/s"), "no peers row without peers files");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn dates() {
        assert_eq!(date(UNIX_EPOCH), "1970-01-01");
        assert_eq!(date(UNIX_EPOCH + std::time::Duration::from_secs(951_782_400)), "2000-02-29");
    }
}
