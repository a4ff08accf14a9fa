//! What every chart's figure holds around its canvas: the canvas that reads out what lies under the
//! pointer ([`HoverCanvas`], for the charts of bars and points; the timeline has gestures of its
//! own) and the chart's figures as a table, folded away ([`ChartData`]).

use leptos::html::Canvas;
use leptos::prelude::*;
use wasm_bindgen::JsCast;

use crate::components::chart_canvas::PlotBox;
use crate::components::use_tr;
use crate::i18n::Key;

/// A chart's canvas, the plot's box as last drawn, and the bar or point under the pointer.
#[derive(Clone, Copy)]
pub struct Hover {
    /// The canvas, drawn by [`super::chart_canvas::draw_on`].
    pub canvas: NodeRef<Canvas>,
    /// The plot's box as last drawn, for the hit tests.
    pub plot: StoredValue<PlotBox>,
    /// The bar or point under the pointer, by index.
    pub hovered: RwSignal<Option<usize>>,
}

impl Default for Hover {
    /// A canvas not drawn yet, nothing under the pointer.
    fn default() -> Hover {
        Hover {
            canvas: NodeRef::new(),
            plot: StoredValue::new(PlotBox::default()),
            hovered: RwSignal::new(None),
        }
    }
}

/// A chart's canvas and, below it, what lies under the pointer in words (the hint while nothing
/// does). A pointer moving over it or a tap sets what is under it; leaving clears it.
#[component]
pub fn HoverCanvas(
    /// The canvas and what is under the pointer.
    hover: Hover,
    /// What the chart shows, for screen readers.
    label: Key,
    /// Sets `hover.hovered` from a pointer's position.
    on_move: impl Fn(leptos::ev::PointerEvent) + Copy + 'static,
    /// The readout's `data-testid`.
    readout_testid: &'static str,
    /// What lies under the pointer, in words.
    readout: impl Fn() -> Option<String> + Send + Sync + 'static,
) -> impl IntoView {
    let tr = use_tr();
    view! {
        <canvas node_ref=hover.canvas role="img" aria-label=move || tr(label)
            on:pointermove=on_move on:pointerdown=on_move on:pointerleave=move |_| hover.hovered.set(None)></canvas>
        <p class="chart-readout muted" data-testid=readout_testid aria-live="polite">
            {move || readout().unwrap_or_else(|| tr(Key::chart_hint).to_owned())}
        </p>
    }
}

/// A chart's figures as a table, folded away under "Chart data" (where the browser tests read them,
/// unfolded). The table is built while it is unfolded only: folded, an edit would rebuild it
/// unseen, and the tables are most of what an edit changes in the page (Llama 3.1 405B on PP 16,
/// a keystroke in the global batch: some 365 of the 650 attributes it set again, docs/DESIGN.md).
#[component]
pub fn ChartData(children: ChildrenFn) -> impl IntoView {
    let tr = use_tr();
    let open = RwSignal::new(false);
    let toggled = move |ev: leptos::ev::Event| {
        let details = ev.target().and_then(|t| t.dyn_into::<web_sys::Element>().ok());
        open.set(details.is_some_and(|d| d.has_attribute("open")));
    };
    view! {
        <details class="chart-data" on:toggle=toggled>
            <summary>{move || tr(Key::chart_data)}</summary>
            {move || open.get().then(|| children())}
        </details>
    }
}
