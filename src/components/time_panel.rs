//! Speed: step time, throughput, MFU and HFU, where the time goes (a chart), and the whole step
//! along its time axis, pass by pass (the timeline chart).

use leptos::prelude::*;

use crate::components::breakdown_chart::BreakdownChart;
use crate::components::results::use_results;
use crate::components::timeline_chart::StepTimelineChart;
use crate::format;
use crate::i18n::{Key, fill};

/// The speed panel.
#[component]
pub fn TimePanel() -> impl IntoView {
    let ctx = use_results();
    let time = move || ctx.report.with(|r| r.as_ref().map(|r| r.time.clone()));
    let facts = move || {
        time().map(|t| {
            let per_device = fill(
                ctx.tr(Key::time_per_device),
                &[("n", &format::count_short(t.tokens_per_second_per_device as u64, ctx.lang()))],
            );
            view! {
                <dl class="facts">
                    <div><dt>{ctx.tr(Key::time_step)}</dt><dd data-testid="step-time">{format::seconds(t.step_seconds)}</dd></div>
                    <div>
                        <dt>{ctx.tr(Key::time_tokens)}</dt>
                        <dd data-testid="tokens-per-second">
                            {format::count_short(t.tokens_per_second as u64, ctx.lang())}
                            <span class="muted">" · " {per_device}</span>
                        </dd>
                    </div>
                    <div title=ctx.tr(Key::time_mfu_how)>
                        <dt>{ctx.tr(Key::time_mfu)}</dt>
                        <dd data-testid="mfu">{format::percent(t.mfu)}</dd>
                    </div>
                    <div title=ctx.tr(Key::time_hfu_how)>
                        <dt>{ctx.tr(Key::time_hfu)}</dt>
                        <dd data-testid="hfu">{format::percent(t.hfu)}</dd>
                    </div>
                    <div><dt>{ctx.tr(Key::time_days)}</dt><dd>{format::amount(t.days_per_trillion_tokens)}</dd></div>
                </dl>
            }
        })
    };
    let title = move || {
        ctx.report.with(|r| {
            r.as_ref().map(|r| {
                let name = crate::messages::schedule_name(ctx.lang(), r.schedule.name);
                fill(
                    ctx.tr(Key::gantt_title),
                    &[("name", &name), ("bubble", &format::percent(r.schedule.bubble_fraction))],
                )
            })
        })
    };

    view! {
        <h2>{move || ctx.tr(Key::time_title)}</h2>
        {facts}
        <BreakdownChart />
        <h3 data-testid="gantt-title">{title}</h3>
        <StepTimelineChart />
    }
}
