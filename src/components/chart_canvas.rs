//! What every chart shares: a `<canvas>` whose backing store is its CSS box times the device's
//! pixel ratio (crisp on any screen), drawn by plotters through plotters-canvas in the next
//! animation frame after its inputs change (several changes in one frame draw once), and redrawn
//! when the window is resized or zoomed. Sizes here are CSS pixels; [`Frame::px`] converts.

use std::cell::Cell;
use std::rc::Rc;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use leptos::html::Canvas;
use leptos::prelude::*;
use plotters::prelude::*;
use plotters::style::{FontFamily, FontStyle};
use plotters_backend::{BackendColor, BackendCoord, BackendStyle, BackendTextStyle, DrawingErrorKind};
use plotters_canvas::CanvasBackend;

/// plotters-canvas's error, which it does not name.
type CanvasError = <CanvasBackend as DrawingBackend>::ErrorType;
use send_wrapper::SendWrapper;
use wasm_bindgen::JsCast;
use wasm_bindgen::closure::Closure;

use crate::chart::{Rgb, palette};

/// The page's fonts, as the canvas's `font` names them: the same stack as style/main.css, so
/// Chinese labels find the same CJK face.
pub const FONT: &str = r#"system-ui, -apple-system, "Segoe UI", "Noto Sans", "Noto Sans CJK SC", "PingFang SC", "Microsoft YaHei", sans-serif"#;
/// The labels' size, CSS pixels: readable on a phone (at least 11).
pub const LABEL_CSS_PX: f64 = 12.0;
/// Muted text and axes (`--muted` in style/main.css).
pub const MUTED: RGBColor = color(palette::MUTED);
/// Grid lines behind every chart.
pub const GRID: RGBColor = color(palette::GRID);
/// Axes of every chart.
pub const AXIS: RGBColor = color(palette::AXIS);
/// Names and outlines.
pub const INK: RGBColor = color(palette::INK);

/// A colour of the palette as plotters takes it.
pub const fn color(rgb: Rgb) -> RGBColor {
    RGBColor(rgb.0, rgb.1, rgb.2)
}

/// About how wide `text` is at `size` CSS pixels, without asking the browser to lay it out (which
/// would cost a layout of the whole page per label): Latin letters and digits some 0.55 em, CJK
/// characters 1 em.
pub fn text_width_css(text: &str, size: f64) -> f64 {
    text.chars().map(|c| if c.is_ascii() { 0.55 } else { 1.0 }).sum::<f64>() * size
}

/// One frame to draw: the canvas's root area and its scale.
pub struct Frame {
    /// The whole canvas, in device pixels.
    pub root: DrawingArea<Canvas2d, plotters::coord::Shift>,
    /// Device pixels per CSS pixel.
    pub scale: f64,
    /// The canvas's width, CSS pixels.
    pub width_css: f64,
    /// The canvas's context, for pictures put as pixels ([`Frame::put`]).
    context: web_sys::CanvasRenderingContext2d,
}

impl Frame {
    /// A length in CSS pixels as device pixels.
    pub fn px(&self, css: f64) -> i32 {
        (css * self.scale).round() as i32
    }

    /// The label font at `css` pixels, in `color`.
    pub fn font(&self, css: f64, color: RGBColor) -> TextStyle<'static> {
        let mut res = TextStyle::from((FontFamily::Name(FONT), css * self.scale, FontStyle::Normal));
        res.color = color.to_backend_color();
        res
    }

    /// Puts `raster`'s pixels with their top left at (`x`, `y`) device pixels, over whatever was
    /// there: one call however many rectangles it holds.
    pub fn put(&self, raster: &Raster, (x, y): (i32, i32)) {
        let data = wasm_bindgen::Clamped(&raster.rgba[..]);
        if let Ok(image) =
            web_sys::ImageData::new_with_u8_clamped_array_and_sh(data, raster.width, raster.height)
        {
            let _ = self.context.put_image_data(&image, f64::from(x), f64::from(y));
        }
    }
}

/// A picture as opaque pixels, drawn in memory and put on the canvas at once ([`Frame::put`]): a
/// timeline's thousands of rectangles cost the browser one image instead of a rasterised call each.
pub struct Raster {
    width: u32,
    height: u32,
    /// Red, green, blue and alpha per pixel, row by row.
    rgba: Vec<u8>,
}

impl Raster {
    /// `width` × `height` pixels of `rgb`.
    pub fn new(width: u32, height: u32, (r, g, b): (u8, u8, u8)) -> Raster {
        let rgba = [r, g, b, 0xff].repeat(width as usize * height as usize);
        Raster { width, height, rgba }
    }

    /// Fills the pixels from (`x0`, `y0`) up to but not including (`x1`, `y1`), as a canvas's
    /// `fillRect` does, clipped to the picture.
    pub fn fill(&mut self, (x0, y0): (i32, i32), (x1, y1): (i32, i32), (r, g, b): (u8, u8, u8)) {
        let clip = |v: i32, max: u32| v.clamp(0, max as i32) as usize;
        let (x0, x1) = (clip(x0, self.width), clip(x1, self.width));
        let (y0, y1) = (clip(y0, self.height), clip(y1, self.height));
        if x1 <= x0 {
            return;
        }
        let stride = self.width as usize * 4;
        for row in self.rgba[y0 * stride..y1 * stride].chunks_exact_mut(stride) {
            for px in row[x0 * 4..x1 * 4].chunks_exact_mut(4) {
                px.copy_from_slice(&[r, g, b, 0xff]);
            }
        }
    }
}

/// The height of a memory chart in CSS pixels for a canvas `width_css` wide: lower on a phone.
pub fn gib_chart_height(width_css: f64) -> f64 {
    if width_css < 480.0 { 220.0 } else { 260.0 }
}

/// A plot over `x` whose axis counts GiB from 0 to `top_gib`: five labelled grid lines, the unit at
/// the top left, `x_labels_css` pixels below the plot for the caller's names. The memory charts'
/// frame (the plan's stages and phases, the comparison's stages).
pub fn gib_plot(
    frame: &Frame,
    x: std::ops::Range<f64>,
    top_gib: f64,
    x_labels_css: f64,
) -> Option<
    ChartContext<
        '_,
        Canvas2d,
        Cartesian2d<plotters::coord::types::RangedCoordf64, plotters::coord::types::RangedCoordf64>,
    >,
> {
    let mut plot = ChartBuilder::on(&frame.root)
        .margin_top(frame.px(16.0))
        .margin_right(frame.px(6.0))
        .y_label_area_size(frame.px(36.0))
        .x_label_area_size(frame.px(x_labels_css))
        .build_cartesian_2d(x, 0.0..top_gib)
        .ok()?;
    let label_font = frame.font(LABEL_CSS_PX, MUTED);
    plot.configure_mesh()
        .disable_x_mesh()
        .x_labels(0)
        .y_labels(5)
        .y_label_formatter(&|gib| crate::format::tick(*gib))
        .y_label_style(label_font.clone())
        .bold_line_style(GRID)
        .light_line_style(TRANSPARENT)
        .axis_style(AXIS)
        .draw()
        .ok()?;
    let _ = frame.root.draw(&Text::new(crate::format::GIB, (frame.px(4.0), frame.px(2.0)), label_font));
    Some(plot)
}

/// Whether `canvas` is on screen or within half a screen of it, as an `IntersectionObserver`
/// reports it; `true` until the first report, so every chart is drawn when it is mounted. A chart
/// off screen need not be redrawn per keystroke: [`draw_on`] keeps its height and paints it when it
/// comes near, and a chart whose data costs more than its picture (the timeline) computes it then.
pub fn on_screen(canvas: NodeRef<Canvas>) -> Signal<bool> {
    let shown = RwSignal::new(true);
    Effect::new(move |_| {
        let Some(canvas) = canvas.get() else { return };
        let report = Closure::<dyn Fn(js_sys::Array)>::new(move |entries: js_sys::Array| {
            // Several reports in one batch: the last is the latest.
            let latest =
                entries.iter().last().and_then(|e| e.dyn_into::<web_sys::IntersectionObserverEntry>().ok());
            if let Some(entry) = latest {
                shown.set(entry.is_intersecting());
            }
        });
        let options = web_sys::IntersectionObserverInit::new();
        options.set_root_margin("50% 0px");
        let Ok(observer) =
            web_sys::IntersectionObserver::new_with_options(report.as_ref().unchecked_ref(), &options)
        else {
            return;
        };
        observer.observe(&canvas);
        let kept = SendWrapper::new((observer, report));
        on_cleanup(move || {
            let (observer, _report) = kept.take();
            observer.disconnect();
        });
    });
    shown.into()
}

/// Draws on `canvas` whenever what `track` reads changes (and on resize), in the next animation
/// frame, while `shown` (else sizes it only, and draws it when it comes on screen): `height` gives
/// the canvas's CSS height for its CSS width, `draw` the picture. `draw` runs untracked, so it
/// reads signals with `with_untracked`.
pub fn draw_on(
    canvas: NodeRef<Canvas>,
    shown: Signal<bool>,
    track: impl Fn() + 'static,
    height: impl Fn(f64) -> f64 + 'static,
    draw: impl Fn(&Frame) + 'static,
) {
    let pending = Rc::new(Cell::new(false));
    // A frame asked for just before the chart went away draws nothing.
    let alive = Arc::new(AtomicBool::new(true));
    let live = alive.clone();
    on_cleanup(move || live.store(false, Ordering::Relaxed));
    // The canvas's CSS height for what it shows now, set on its style; with its width. Cheap, so
    // kept up to date off screen too (in the animation frame, not drawn): a chart that took its
    // height only when scrolled near would move the page under the reader.
    let size = move || {
        let canvas: web_sys::HtmlCanvasElement = canvas.try_get_untracked().flatten()?.unchecked_into();
        let width_css = f64::from(canvas.client_width());
        if width_css <= 0.0 {
            return None;
        }
        let height_css = height(width_css).clamp(1.0, 4000.0);
        // Setting the same height again would still make the browser lay the page out again.
        let style = web_sys::HtmlElement::style(&canvas);
        let css = format!("{height_css}px");
        if style.get_property_value("height").ok().as_deref() != Some(css.as_str()) {
            let _ = style.set_property("height", &css);
        }
        Some((canvas, width_css, height_css))
    };
    let paint = Rc::new(move || {
        if !alive.load(Ordering::Relaxed) {
            return;
        }
        let Some((canvas, width_css, height_css)) = size() else { return };
        if !shown.get_untracked() {
            return;
        }
        let scale = window().device_pixel_ratio();
        let scale = if scale.is_finite() && 0.0 < scale { scale.min(4.0) } else { 1.0 };
        let (w, h) = ((width_css * scale).round() as u32, (height_css * scale).round() as u32);
        // Setting a size clears the canvas; keeping it, the fill below clears it.
        if canvas.width() != w {
            canvas.set_width(w);
        }
        if canvas.height() != h {
            canvas.set_height(h);
        }
        let Some(backend) = Canvas2d::new(canvas) else { return };
        let context = backend.context.clone();
        let root = backend.into_drawing_area();
        let _ = root.fill(&WHITE);
        draw(&Frame { root, scale, width_css, context });
    });
    let schedule = {
        let pending = pending.clone();
        move || {
            if pending.replace(true) {
                return;
            }
            let (pending, paint) = (pending.clone(), paint.clone());
            request_animation_frame(move || {
                pending.set(false);
                untrack(|| paint());
            });
        }
    };
    let again = schedule.clone();
    Effect::new(move |_| {
        canvas.track();
        track();
        // On screen it is drawn; off screen only sized, and drawn when it comes near.
        shown.track();
        schedule();
    });
    let resize = window_event_listener(leptos::ev::resize, move |_| again());
    on_cleanup(move || resize.remove());
}

/// Where a pointer event falls on its canvas, CSS pixels from the canvas's top left.
pub fn pointer_at(ev: &web_sys::MouseEvent) -> Option<(f64, f64)> {
    let target: web_sys::Element = ev.current_target()?.dyn_into().ok()?;
    let rect = target.get_bounding_client_rect();
    Some((f64::from(ev.client_x()) - rect.left(), f64::from(ev.client_y()) - rect.top()))
}

/// The plot's rectangle in CSS pixels: left, top, width, height (from a chart's plotting area), for
/// the pointer's hit tests.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct PlotBox {
    /// Left edge.
    pub left: f64,
    /// Top edge.
    pub top: f64,
    /// Width.
    pub width: f64,
    /// Height.
    pub height: f64,
}

impl PlotBox {
    /// The box of a plotting area drawn in `frame`.
    pub fn of(frame: &Frame, (x, y): (std::ops::Range<i32>, std::ops::Range<i32>)) -> PlotBox {
        let s = frame.scale;
        PlotBox {
            left: f64::from(x.start) / s,
            top: f64::from(y.start) / s,
            width: f64::from(x.end - x.start) / s,
            height: f64::from(y.end - y.start) / s,
        }
    }
}

/// plotters-canvas's backend, but a fill colour, font, alignment or baseline the same as the last
/// one set is not set again (the browser parses each colour and font string it is given): a
/// chart's labels and rectangles, drawn style by style, cost a call each.
pub struct Canvas2d {
    inner: CanvasBackend,
    context: web_sys::CanvasRenderingContext2d,
    /// The fill style last set, as colour and alpha.
    fill: Option<((u8, u8, u8), f64)>,
    /// The text style last set: font, alignment and baseline.
    text: Option<(String, &'static str, &'static str)>,
}

impl Canvas2d {
    fn new(canvas: web_sys::HtmlCanvasElement) -> Option<Canvas2d> {
        let context = canvas.get_context("2d").ok()??.dyn_into().ok()?;
        Some(Canvas2d { inner: CanvasBackend::with_canvas_object(canvas)?, context, fill: None, text: None })
    }

    /// Sets the fill colour unless it is the one set last.
    fn set_fill(&mut self, color: BackendColor) {
        let key = (color.rgb, color.alpha);
        if self.fill != Some(key) {
            let (r, g, b) = color.rgb;
            self.context.set_fill_style_str(&format!("rgba({r},{g},{b},{})", color.alpha));
            self.fill = Some(key);
        }
    }
}

impl DrawingBackend for Canvas2d {
    type ErrorType = CanvasError;

    fn get_size(&self) -> (u32, u32) {
        self.inner.get_size()
    }

    fn ensure_prepared(&mut self) -> Result<(), DrawingErrorKind<CanvasError>> {
        self.inner.ensure_prepared()
    }

    fn present(&mut self) -> Result<(), DrawingErrorKind<CanvasError>> {
        self.inner.present()
    }

    fn draw_pixel(
        &mut self,
        point: BackendCoord,
        color: BackendColor,
    ) -> Result<(), DrawingErrorKind<CanvasError>> {
        self.fill = None;
        self.inner.draw_pixel(point, color)
    }

    fn draw_line<S: BackendStyle>(
        &mut self,
        from: BackendCoord,
        to: BackendCoord,
        style: &S,
    ) -> Result<(), DrawingErrorKind<CanvasError>> {
        self.inner.draw_line(from, to, style)
    }

    fn draw_rect<S: BackendStyle>(
        &mut self,
        upper_left: BackendCoord,
        bottom_right: BackendCoord,
        style: &S,
        fill: bool,
    ) -> Result<(), DrawingErrorKind<CanvasError>> {
        let color = style.color();
        if !fill || color.alpha == 0.0 {
            // An outline (or nothing) as plotters-canvas draws it: it sets only the stroke style.
            return self.inner.draw_rect(upper_left, bottom_right, style, fill);
        }
        self.set_fill(color);
        let (x, y) = (f64::from(upper_left.0), f64::from(upper_left.1));
        self.context.fill_rect(x, y, f64::from(bottom_right.0) - x, f64::from(bottom_right.1) - y);
        Ok(())
    }

    fn draw_path<S: BackendStyle, I: IntoIterator<Item = BackendCoord>>(
        &mut self,
        path: I,
        style: &S,
    ) -> Result<(), DrawingErrorKind<CanvasError>> {
        self.inner.draw_path(path, style)
    }

    fn draw_circle<S: BackendStyle>(
        &mut self,
        center: BackendCoord,
        radius: u32,
        style: &S,
        fill: bool,
    ) -> Result<(), DrawingErrorKind<CanvasError>> {
        self.fill = None;
        self.inner.draw_circle(center, radius, style, fill)
    }

    fn fill_polygon<S: BackendStyle, I: IntoIterator<Item = BackendCoord>>(
        &mut self,
        vert: I,
        style: &S,
    ) -> Result<(), DrawingErrorKind<CanvasError>> {
        self.fill = None;
        self.inner.fill_polygon(vert, style)
    }

    fn draw_text<S: BackendTextStyle>(
        &mut self,
        text: &str,
        style: &S,
        pos: BackendCoord,
    ) -> Result<(), DrawingErrorKind<CanvasError>> {
        let color = style.color();
        if color.alpha == 0.0 {
            return Ok(());
        }
        // Turned text (none of the page's charts) as plotters-canvas draws it, which sets every style.
        if !matches!(style.transform(), plotters_backend::FontTransform::None) {
            self.fill = None;
            self.text = None;
            return self.inner.draw_text(text, style, pos);
        }
        // As plotters-canvas sets them, each only when it changes.
        let anchor = style.anchor();
        let baseline = match anchor.v_pos {
            plotters_backend::text_anchor::VPos::Top => "top",
            plotters_backend::text_anchor::VPos::Center => "middle",
            plotters_backend::text_anchor::VPos::Bottom => "bottom",
        };
        let align = match anchor.h_pos {
            plotters_backend::text_anchor::HPos::Left => "start",
            plotters_backend::text_anchor::HPos::Right => "end",
            plotters_backend::text_anchor::HPos::Center => "center",
        };
        let font = format!("{} {}px {}", style.style().as_str(), style.size(), style.family().as_str());
        let (font_was, align_was, baseline_was) = self.text.take().unwrap_or_default();
        if baseline != baseline_was {
            self.context.set_text_baseline(baseline);
        }
        if align != align_was {
            self.context.set_text_align(align);
        }
        if font != font_was {
            self.context.set_font(&font);
        }
        self.text = Some((font, align, baseline));
        self.set_fill(color);
        // A canvas that cannot draw text loses a label, not the chart.
        let _ = self.context.fill_text(text, f64::from(pos.0), f64::from(pos.1));
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::Raster;

    /// The pixel at (`x`, `y`) as red, green, blue.
    fn at(r: &Raster, x: usize, y: usize) -> (u8, u8, u8) {
        let i = (y * r.width as usize + x) * 4;
        (r.rgba[i], r.rgba[i + 1], r.rgba[i + 2])
    }

    #[test]
    fn a_raster_fills_as_fill_rect_does_and_clips_to_itself() {
        let (white, red) = ((255, 255, 255), (200, 0, 0));
        let mut r = Raster::new(4, 3, white);
        assert_eq!(r.rgba.len(), 4 * 3 * 4);
        assert!(r.rgba.chunks(4).all(|p| p == [255, 255, 255, 255]));
        // From (1, 1) up to, not including, (3, 2): two pixels of row 1.
        r.fill((1, 1), (3, 2), red);
        let filled: Vec<(usize, usize)> =
            (0..3).flat_map(|y| (0..4).map(move |x| (x, y))).filter(|&(x, y)| at(&r, x, y) == red).collect();
        assert_eq!(filled, [(1, 1), (2, 1)]);
        // Several rows: each row of the rectangle, and nothing beside it.
        let blue = (0, 0, 200);
        r.fill((2, 0), (4, 3), blue);
        let filled: Vec<(usize, usize)> =
            (0..3).flat_map(|y| (0..4).map(move |x| (x, y))).filter(|&(x, y)| at(&r, x, y) == blue).collect();
        assert_eq!(filled, [(2, 0), (3, 0), (2, 1), (3, 1), (2, 2), (3, 2)]);
        assert_eq!((at(&r, 1, 1), at(&r, 1, 2), at(&r, 0, 0)), (red, white, white));
        r = Raster::new(4, 3, white);
        r.fill((1, 1), (3, 2), red);
        // Past every edge: clipped to the picture, nothing written outside it, opaque.
        r.fill((-5, -5), (99, 1), red);
        assert!((0..4).all(|x| at(&r, x, 0) == red));
        assert_eq!(at(&r, 0, 2), white);
        assert!(r.rgba.chunks(4).all(|p| p[3] == 255));
        // Empty and reversed rectangles draw nothing.
        let before = r.rgba.clone();
        r.fill((3, 2), (3, 3), red);
        r.fill((3, 2), (1, 3), red);
        assert_eq!(r.rgba, before);
    }
}
