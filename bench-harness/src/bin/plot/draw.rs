//! The chart's drawing: the title band, then a row of panels per metric
//! (see the crate docs for what each row shows).

use std::path::Path;
use std::time::SystemTime;

use plotters::coord::Shift;
use plotters::coord::combinators::LogCoord;
use plotters::coord::ranged1d::ValueFormatter;
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::{Bar, Cell, FLOOR_TARGET, Host, Metric, Res, cells, date, json_target};

/// Canvas width in pixels.
const WIDTH: u32 = 1200;
/// Height of the title band.
const TITLE_H: u32 = 78;
/// Height of the throughput row.
const MAIN_H: u32 = 622;
/// Height of each ratio row.
const RATIO_H: u32 = 270;
/// Height of each of the title band's further note lines.
const NOTE_H: u32 = 20;
/// Font family of every text (the viewer picks the face).
const FONT: &str = "sans-serif";
/// Colour of the reference lines.
const RED: RGBColor = RGBColor(200, 30, 30);
/// Colour of the ProtoJSON targets.
const PURPLE: RGBColor = RGBColor(118, 42, 131);

/// The drawing area type of every panel.
type Area<'a> = DrawingArea<SVGBackend<'a>, Shift>;

/// The y range of `metric` over all hosts and the row's two panels (so
/// they share a scale: encode and decode, or two JSON methods), with room
/// for the value labels.
fn y_range(metric: Metric, pair: [&str; 2], hosts: &[Host]) -> (f64, f64) {
    let bars: Vec<Bar> = hosts
        .iter()
        .flat_map(|h| &h.rows)
        .filter(|r| pair.contains(&r.direction.as_str()))
        .filter_map(|r| metric.of(r))
        .collect();
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
        // Room above the highest target (2).
        Metric::Json => (0.0, (max * 1.18).max(2.5)),
    }
}

/// A y-axis tick label.
fn tick(v: f64) -> String {
    if (v - v.round()).abs() < 1e-9 { format!("{v:.0}") } else { format!("{v:.2}").trim_end_matches('0').to_owned() }
}

/// One panel's chart: x is the cell index, y the metric.
type Chart<'a, 'b, Y> = ChartContext<'a, SVGBackend<'b>, Cartesian2d<RangedCoordf64, Y>>;

/// Draws one panel of `metric` for `direction` (a row's `direction`:
/// `encode`, `decode`, or a JSON method) into `area` (`root` is the whole
/// canvas, for the labels outside the plot).
fn panel<Y: Ranged<ValueType = f64> + ValueFormatter<f64>>(
    root: &Area<'_>,
    area: &Area<'_>,
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

    references(root, &mut chart, metric, direction, cells)?;
    cell_labels(root, &chart, cells, y_lo)
}

/// Draws the panel's reference line (labelled right of the plot) and, on
/// the ProtoJSON panels, the #29 target over each run of cells sharing one
/// (explained in the title band: labels in the plot would collide with the
/// bars' labels).
fn references<Y: Ranged<ValueType = f64> + ValueFormatter<f64>>(
    root: &Area<'_>,
    chart: &mut Chart<'_, '_, Y>,
    metric: Metric,
    direction: &str,
    cells: &[Cell],
) -> Res<()> {
    let n_cells = cells.len() as f64;
    if let Some((r, text)) = metric.reference() {
        chart.draw_series(DashedLineSeries::new(vec![(-0.5, r), (n_cells - 0.5, r)], 7, 5, RED.stroke_width(2)))?;
        let pos = chart.backend_coord(&(n_cells - 0.5, r));
        root.draw(&Text::new(
            text,
            (pos.0 + 4, pos.1),
            (FONT, 13).into_font().color(&RED).pos(Pos::new(HPos::Left, VPos::Center)),
        ))?;
    }
    if !matches!(metric, Metric::Json) {
        return Ok(());
    }
    let mut start = 0;
    for i in 0..cells.len() {
        let Some(t) = json_target(direction, &cells[i]) else {
            start = i + 1;
            continue;
        };
        if cells.get(i + 1).and_then(|next| json_target(direction, next)) == Some(t) {
            continue;
        }
        let (x0, x1) = (start as f64 - 0.45, i as f64 + 0.45);
        chart.draw_series(DashedLineSeries::new(vec![(x0, t), (x1, t)], 4, 3, PURPLE.stroke_width(2)))?;
        start = i + 1;
    }
    Ok(())
}

/// Draws the cell labels under the plot: the size under each group, the
/// message (without its package) under its run.
fn cell_labels<Y: Ranged<ValueType = f64> + ValueFormatter<f64>>(
    root: &Area<'_>,
    chart: &Chart<'_, '_, Y>,
    cells: &[Cell],
    y_lo: f64,
) -> Res<()> {
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

/// The title band's note lines for the rows drawn.
fn notes(rows: &[Metric]) -> Vec<&'static str> {
    let mut notes = vec![
        "Median of the repetitions per cell; whiskers (when non-zero) span spread = (max-min)/median; \
         one bar per host (results file matrix-<host>.json).",
    ];
    if rows.iter().any(|m| matches!(m, Metric::Pb)) {
        notes.push(
            "lua-protobuf: pb.encode / pb.decode with pb.option('no_default_values'), timed in the same \
             process in interleaved rounds (peers-<host>.json); whiskers: the rounds' min..max.",
        );
    }
    if rows.iter().any(|m| matches!(m, Metric::Json)) {
        notes.push(
            "ProtoJSON: json = lua-cjson (LuaJIT, Lua 5.4) or Tarantool's json; speedup = its time / protolua's \
             (higher is better), interleaved rounds (json-<host>.json); purple dashes: issue #29's targets.",
        );
    }
    notes
}

/// Draws the title band: heading, notes and the hosts' legend.
fn title(area: &Area<'_>, hosts: &[Host], newest: Option<SystemTime>, notes: &[&str]) -> Res<()> {
    let heading = match newest {
        Some(t) => format!("protolua benchmark matrix, results of {}", date(t)),
        None => "protolua benchmark matrix".to_owned(),
    };
    area.draw(&Text::new(heading, (20, 12), (FONT, 26).into_font().style(FontStyle::Bold).color(&BLACK)))?;
    let note_font = (FONT, 14).into_font().color(&RGBColor(80, 80, 80));
    for (k, note) in notes.iter().enumerate() {
        area.draw(&Text::new(*note, (20, 48 + k as i32 * NOTE_H as i32), note_font.clone()))?;
    }
    let mut x = WIDTH as i32 - 20 - 125 * hosts.len() as i32;
    for host in hosts {
        area.draw(&Rectangle::new([(x, 16), (x + 18, 32)], host.colour.filled()))?;
        area.draw(&Text::new(host.label.clone(), (x + 25, 15), (FONT, 17).into_font().color(&BLACK)))?;
        x += 125;
    }
    Ok(())
}

/// Draws the whole chart to `out`.
pub(crate) fn draw(hosts: &[Host], newest: Option<SystemTime>, out: &Path) -> Res<()> {
    let cells = cells(hosts);
    let rows: Vec<Metric> = [Metric::Throughput, Metric::Pb, Metric::Json, Metric::Floor, Metric::Msgpack]
        .into_iter()
        .filter(|m| hosts.iter().flat_map(|h| &h.rows).any(|r| m.of(r).is_some()))
        .collect();
    // One row of two panels per pair of directions.
    let panel_rows: Vec<(Metric, [&str; 2])> =
        rows.iter().flat_map(|m| m.panels().iter().map(move |pair| (*m, *pair))).collect();
    let row_h = |m: Metric| if matches!(m, Metric::Throughput) { MAIN_H } else { RATIO_H };
    let notes = notes(&rows);
    let title_h = TITLE_H + NOTE_H * (notes.len() as u32 - 1);
    let height = title_h + panel_rows.iter().map(|(m, _)| row_h(*m)).sum::<u32>();
    let root = SVGBackend::new(out, (WIDTH, height)).into_drawing_area();
    root.fill(&WHITE)?;
    let (band, mut body) = root.split_vertically(title_h);
    title(&band, hosts, newest, &notes)?;

    for (k, (metric, pair)) in panel_rows.iter().enumerate() {
        let (row, rest) = if k + 1 == panel_rows.len() {
            (body.clone(), body.clone())
        } else {
            body.split_vertically(row_h(*metric))
        };
        body = rest;
        let (left, right) = row.split_horizontally(WIDTH / 2);
        let (lo, hi) = y_range(*metric, *pair, hosts);
        for (area, direction) in [(&left, pair[0]), (&right, pair[1])] {
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
