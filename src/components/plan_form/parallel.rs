//! The form's parallelism and memory knobs: the switch that shows every knob, then the parallel
//! layout and sharding, the MoE settings (`moe.rs`) and recomputation (`recompute.rs`).

use leptos::prelude::*;
use trainplan_core::choices;
use trainplan_core::knobs::{self, Knob};
use trainplan_core::plan::{
    CpAlgo, Fsdp, NVME_READ_GB_PER_S_DEFAULT, NVME_WRITE_GB_PER_S_DEFAULT, OffloadDevice, PipelineSchedule,
};

use super::FormCtx;
use super::controls::{ReadBool, WriteBool, check, enum_select, enum_select_among, knob_slot, number};
use super::moe::MoeKnobs;
use super::recompute::RecomputeKnobs;
use crate::components::{TextField, use_tr};
use crate::form::{FormField, NumField};
use crate::i18n::{Key, fill};
use crate::messages;

/// The parallelism section: only what the framework and method take (`knobs::applies`); the switch
/// shows the rest, disabled, each saying which frameworks or methods take it.
#[component]
pub fn ParallelSection(
    /// The form's shared state.
    ctx: FormCtx,
) -> impl IntoView {
    let tr = use_tr();
    let show_all = ctx.show_all;
    // Every knob this section would show that the framework or method does not take: hidden
    // unless the switch is on. (The LoRA settings, the trained layers, the optimizer and its
    // low-rank settings, the sequence length and the RL settings have sections of their own; the
    // MoE settings show for models with experts.)
    let n_hidden = move || {
        let moe = ctx.is_moe();
        // A knob read on another vendor's devices only is hidden too.
        let vendor = ctx.vendor();
        let (fw, m) = ctx.training();
        Knob::ALL
            .iter()
            .filter(|&&k| {
                !matches!(
                    k,
                    Knob::LoraRank
                        | Knob::LoraDropout
                        | Knob::LoraDora
                        | Knob::PureBf16
                        | Knob::Optimizer
                        | Knob::LowRankRank
                        | Knob::LowRankLayerwise
                        | Knob::FreezeLayers
                        | Knob::SeqLen
                        | Knob::MeanSeqLen
                        | Knob::Rl
                        | Knob::RlBlocking
                )
            })
            .filter(|&&k| moe || !k.path().starts_with("moe."))
            .filter(|&&k| !knobs::takes(fw, m, k, vendor))
            .count()
    };
    let hidden_text = move || {
        let framework = ctx.training().0.name();
        fill(tr(Key::knobs_hidden), &[("n", &n_hidden().to_string()), ("framework", framework)])
    };
    view! {
        <section class="panel" aria-labelledby="parallel-title">
            <h2 id="parallel-title">{move || tr(Key::par_title)}</h2>
            <label class="check knobs-switch">
                <input
                    type="checkbox"
                    data-testid="show-all-knobs"
                    prop:checked=move || show_all.get()
                    on:change=move |ev| show_all.set(event_target_checked(&ev))
                />
                <span>{move || tr(Key::knobs_show_all)}</span>
            </label>
            <Show when=move || !show_all.get() && 0 < n_hidden()>
                <p class="muted knobs-hidden" data-testid="knobs-hidden">{hidden_text}</p>
            </Show>
            <ParallelKnobs ctx=ctx />
            // The MoE settings matter to models with experts.
            <Show when=move || ctx.is_moe()>
                <MoeKnobs ctx=ctx />
            </Show>
            <RecomputeKnobs ctx=ctx />
        </section>
    }
}

/// The ZeRO stage: the stages the plan's framework shards by (`choices::zero_offered`: VeRL's
/// engine has no ZeRO-1); the others stay in the list, hidden, so a stage a plan file sets still
/// shows, and rule verl.zero_stage names it.
fn zero_select(ctx: FormCtx) -> impl IntoView {
    let tr = use_tr();
    let form = ctx.form;
    let stage = Memo::new(move |_| form.with(|f| f.file.parallel.zero_stage));
    let offered = Memo::new(move |_| form.with(|f| choices::zero_offered(f.file.framework)));
    view! {
        <label class="field">
            <span>{move || tr(Key::par_zero)}</span>
            <select data-testid="zero-select" on:change=move |ev| {
                if let Ok(stage) = event_target_value(&ev).parse::<u8>() {
                    form.update(|f| f.file.parallel.zero_stage = stage);
                }
            }>
                {(0..=3u8).map(|z| view! {
                    <option
                        value=z.to_string()
                        selected=move || stage.get() == z
                        hidden=move || !offered.get().iter().any(|s| s.get() == z)
                    >
                        {z}
                    </option>
                }).collect_view()}
            </select>
        </label>
    }
}

/// The parallel sizes, ZeRO, the schedule, sharding and overlap switches, the pipeline layout and
/// the MTP layers.
#[component]
fn ParallelKnobs(
    /// The form's shared state.
    ctx: FormCtx,
) -> impl IntoView {
    let tr = use_tr();
    let form = ctx.form;
    let slot_number = move |knob: Knob, label: Key, testid: &'static str, field: NumField| {
        knob_slot(ctx, knob, move || number(ctx, label, testid, field, None))
    };
    let slot_check = move |knob: Knob, label: Key, testid: &'static str, get: ReadBool, set: WriteBool| {
        knob_slot(ctx, knob, move || check(ctx, label, testid, get, set))
    };
    let zero = move || zero_select(ctx);
    let schedule = move || {
        enum_select(
            ctx,
            (Key::par_schedule, "schedule-select"),
            PipelineSchedule::ALL,
            PipelineSchedule::wire,
            |k, lang| messages::schedule_choice(lang, k),
            |f| f.parallel.schedule,
            |f, k| f.parallel.schedule = k,
        )
    };
    // How CP exchanges: it matters only where the plan splits the sequence (CP above 1).
    let cp_algo = move || {
        enum_select(
            ctx,
            (Key::par_cp_algo, "cp-algo-select"),
            CpAlgo::ALL,
            CpAlgo::wire,
            |k, lang| messages::cp_algo_choice(lang, k),
            |f| f.parallel.cp_algo,
            |f, k| f.parallel.cp_algo = k,
        )
    };
    // ZeRO++ acts under ZeRO-3 alone (rule zero.zeropp_stage names a plan file's set below it).
    let zero3 = move || form.with(|f| f.file.parallel.zero_stage == 3);
    let splits_sequence = move || ctx.plan.with(|p| p.as_ref().is_ok_and(|p| 1 < p.parallel.cp.get()));
    // The choices the plan's framework has (`choices::fsdp_offered`); rule fsdp.framework names one a
    // plan file sets.
    let fsdp = move || {
        enum_select_among(
            ctx,
            (Key::par_fsdp, "fsdp-select"),
            (Fsdp::ALL, Some(|f| choices::fsdp_offered(f.framework))),
            Fsdp::wire,
            |k, lang| messages::fsdp_choice(lang, k),
            |f| f.parallel.fsdp,
            |f, k| f.parallel.fsdp = k,
        )
    };
    let layout = move || {
        view! {
            <TextField
                label=Signal::derive(move || tr(Key::par_layout).to_owned())
                testid="pipeline-layout-input"
                value=Memo::new(move |_| form.with(|f| f.file.parallel.pipeline_layout.clone()))
                invalid=Signal::derive(move || ctx.is_bad(FormField::PipelineLayout))
                message=Signal::derive(move || tr(Key::par_layout_bad).to_owned())
                on_input=move |text: String| form.update(|f| f.file.parallel.pipeline_layout = text.trim().to_owned())
                placeholder="Et|(tt|)*30mL"
            />
        }
    };
    view! {
        <div class="grid3">
            {slot_number(Knob::Tp, Key::par_tp, "tp-input", NumField::Tp)}
            {slot_number(Knob::Pp, Key::par_pp, "pp-input", NumField::Pp)}
            {slot_number(Knob::Vpp, Key::par_vpp, "vpp-input", NumField::Vpp)}
            {slot_number(Knob::Cp, Key::par_cp, "cp-input", NumField::Cp)}
            {slot_number(Knob::Ep, Key::par_ep, "ep-input", NumField::Ep)}
            {knob_slot(ctx, Knob::ZeroStage, zero)}
        </div>
        <Show when=splits_sequence>
            {knob_slot(ctx, Knob::CpAlgo, cp_algo)}
        </Show>
        {knob_slot(ctx, Knob::Schedule, schedule)}
        {knob_slot(ctx, Knob::Fsdp, fsdp)}
        {slot_check(Knob::DistributedOptimizer, Key::par_dist_opt, "dist-opt-check", |f| f.parallel.distributed_optimizer, |f, v| f.parallel.distributed_optimizer = v)}
        {slot_check(Knob::SequenceParallel, Key::par_sp, "sp-check", |f| f.parallel.sequence_parallel, |f, v| f.parallel.sequence_parallel = v)}
        {slot_check(Knob::OffloadOptimizer, Key::par_offload_opt, "offload-opt-check", |f| f.parallel.offload_optimizer, |f, v| f.parallel.offload_optimizer = v)}
        {slot_check(Knob::OffloadParams, Key::par_offload_params, "offload-params-check", |f| f.parallel.offload_params, |f, v| f.parallel.offload_params = v)}
        {offload_device(ctx)}
        {slot_check(Knob::OverlapGradReduce, Key::par_overlap_grad, "overlap-grad-check", |f| f.parallel.overlap_grad_reduce, |f, v| f.parallel.overlap_grad_reduce = v)}
        {slot_check(Knob::OverlapParamGather, Key::par_overlap_param, "overlap-param-check", |f| f.parallel.overlap_param_gather, |f, v| f.parallel.overlap_param_gather = v)}
        {slot_check(Knob::GradReduceBf16, Key::par_grad_bf16, "grad-bf16-check", |f| f.parallel.grad_reduce_bf16, |f, v| f.parallel.grad_reduce_bf16 = v)}
        <Show when=zero3>
            <div class="grid3">
                {slot_number(Knob::ZeroHpz, Key::par_zero_hpz, "zero-hpz-input", NumField::ZeroHpz)}
            </div>
            {slot_check(Knob::ZeroQuantizedWeights, Key::par_zero_qw, "zero-qw-check", |f| f.parallel.zero_quantized_weights, |f, v| f.parallel.zero_quantized_weights = v)}
            {slot_check(Knob::ZeroQuantizedGradients, Key::par_zero_qg, "zero-qg-check", |f| f.parallel.zero_quantized_gradients, |f, v| f.parallel.zero_quantized_gradients = v)}
        </Show>
        {slot_check(Knob::NoSyncAccumulation, Key::par_no_sync, "no-sync-check", |f| f.parallel.no_sync_accumulation, |f, v| f.parallel.no_sync_accumulation = v)}
        {slot_check(Knob::OffloadPolicy, Key::par_offload_policy, "offload-policy-check", |f| f.parallel.offload_policy, |f, v| f.parallel.offload_policy = v)}
        {slot_check(Knob::Fp8ParamGather, Key::par_fp8_params, "fp8-params-check", |f| f.parallel.fp8_param_gather, |f, v| f.parallel.fp8_param_gather = v)}
        {slot_check(Knob::TpCommOverlap, Key::par_tp_overlap, "tp-overlap-check", |f| f.parallel.tp_comm_overlap, |f, v| f.parallel.tp_comm_overlap = v)}
        {slot_check(Knob::SwapOptimizer, Key::par_swap_opt, "swap-opt-check", |f| f.parallel.swap_optimizer, |f, v| f.parallel.swap_optimizer = v)}
        {slot_check(Knob::UnevenLayers, Key::par_uneven, "uneven-check", |f| f.parallel.uneven_layers, |f, v| f.parallel.uneven_layers = v)}
        {slot_check(Knob::AccountEmbeddingLoss, Key::par_account, "account-check", |f| f.parallel.account_embedding_loss, |f, v| f.parallel.account_embedding_loss = v)}
        {slot_check(Knob::FusedKernels, Key::par_fused, "fused-check", |f| f.parallel.fused_kernels, |f, v| f.parallel.fused_kernels = v)}
        <div class="grid3">
            {knob_slot(ctx, Knob::PipelineLayout, layout)}
            {slot_number(Knob::MtpLayers, Key::mtp_layers, "mtp-layers-input", NumField::MtpLayers)}
        </div>
    }
}

/// Where DeepSpeed offloads (`parallel.offload_device`): asked only once something is offloaded,
/// and NVMe's bandwidths once it goes there.
fn offload_device(ctx: FormCtx) -> impl IntoView {
    let form = ctx.form;
    let select = move || {
        enum_select(
            ctx,
            (Key::par_offload_device, "offload-device-select"),
            OffloadDevice::ALL,
            OffloadDevice::wire,
            |k, lang| messages::offload_device_choice(lang, k),
            |f| f.parallel.offload_device,
            |f, k| f.parallel.offload_device = k,
        )
    };
    let offloads = move || form.with(|f| f.file.parallel.offload_optimizer || f.file.parallel.offload_params);
    let to_nvme = move || {
        let (fw, m) = ctx.training();
        offloads()
            && form.with(|f| f.file.parallel.offload_device == OffloadDevice::Nvme)
            && knobs::applies(fw, m, Knob::OffloadDevice).yes()
    };
    let default_rate = |x: f64| Some(Signal::derive(move || x.to_string()));
    view! {
        <Show when=offloads>
            {knob_slot(ctx, Knob::OffloadDevice, select)}
        </Show>
        <Show when=to_nvme>
            <div class="grid3">
                {number(ctx, Key::par_nvme_read, "nvme-read-input", NumField::NvmeRead, default_rate(NVME_READ_GB_PER_S_DEFAULT))}
                {number(ctx, Key::par_nvme_write, "nvme-write-input", NumField::NvmeWrite, default_rate(NVME_WRITE_GB_PER_S_DEFAULT))}
            </div>
        </Show>
    }
}
