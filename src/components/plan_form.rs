//! The plan's inputs: model, hardware, cluster size and training method.

use leptos::prelude::*;
use trainplan_core::Plan;
use trainplan_core::knobs::{self, Applies, Knob};
use trainplan_core::plan::{
    AttentionImpl, Framework, Fsdp, Method, MoeDispatcher, PipelineSchedule, PlanFile, Precision,
    RecomputeGranularity,
};

use crate::components::hardware_picker::HardwarePicker;
use crate::components::model_picker::ModelPicker;
use crate::components::{TextField, use_lang, use_tr};
use crate::form::{FormError, FormField, NumField, NumKind, PlanForm};
use crate::i18n::{Key, Lang, fill};
use crate::messages;

/// The inputs column.
#[component]
pub fn PlanFormPanel(
    /// The form state, written as the user types.
    form: RwSignal<PlanForm>,
    /// The plan the form describes, or what stops it.
    #[prop(into)]
    plan: Signal<Result<Plan, FormError>>,
) -> impl IntoView {
    let tr = use_tr();
    let bad =
        Signal::derive(move || plan.with(|p| p.as_ref().err().map(|e| e.fields.clone()).unwrap_or_default()));
    let is_bad = move |field| bad.with(|b| b.contains(&field));
    let n_devices =
        move || plan.with(|p| p.as_ref().ok().map(|p| crate::format::count(p.cluster.n_devices())));
    let default_devices = move || {
        plan.with(|p| match p {
            Ok(plan) => fill(
                tr(Key::plan_form_devices_default),
                &[("n", &plan.hardware.hw.devices_per_node.to_string())],
            ),
            Err(_) => String::new(),
        })
    };
    // A labelled number field bound to one of the form's numbers; its message says what it takes.
    let number =
        move |label: Key, testid: &'static str, field: NumField, placeholder: Option<Signal<String>>| {
            let message = match field.kind() {
                NumKind::Count => Key::plan_form_bad_count,
                NumKind::Auto => Key::plan_form_bad_whole,
                NumKind::Fraction => Key::plan_form_bad_fraction,
                NumKind::Factor => Key::plan_form_bad_factor,
            };
            view! {
                <TextField
                    label=Signal::derive(move || tr(label).to_owned())
                    testid=testid
                    value=Signal::derive(move || form.with(|f| f.number(field).to_owned()))
                    invalid=Signal::derive(move || is_bad(FormField::Number(field)))
                    message=Signal::derive(move || tr(message).to_owned())
                    on_input=move |text| form.update(|f| f.set_number(field, text))
                    numeric=true
                    placeholder=placeholder.unwrap_or_default()
                />
            }
        };
    // A labelled switch bound to a boolean of the plan file.
    let check =
        move |label: Key, testid: &'static str, get: fn(&PlanFile) -> bool, set: fn(&mut PlanFile, bool)| {
            view! {
                <label class="check">
                    <input
                        type="checkbox"
                        data-testid=testid
                        prop:checked=move || form.with(|f| get(&f.file))
                        on:change=move |ev| {
                            let on = event_target_checked(&ev);
                            form.update(|f| set(&mut f.file, on));
                        }
                    />
                    <span>{move || tr(label)}</span>
                </label>
            }
        };
    let framework_options = Framework::ALL
        .iter()
        .map(|&fw| {
            view! {
                <option value=fw.wire() selected=move || form.with(|f| f.file.framework == fw)>
                    {Framework::name(fw)}
                </option>
            }
        })
        .collect_view();
    let method_options = Method::ALL
        .iter()
        .map(|&m| {
            view! {
                <option value=m.wire() selected=move || form.with(|f| f.file.method == m)>
                    {move || tr(messages::method_key(m))}
                </option>
            }
        })
        .collect_view();
    let on_framework = move |ev| {
        let wire = event_target_value(&ev);
        if let Some(&fw) = Framework::ALL.iter().find(|fw| fw.wire() == wire) {
            form.update(|f| {
                // VeRL's FSDP actor shards parameters, gradients and optimizer states fully by
                // default (`fsdp_config.fsdp_size: -1`, reshard after forward): ZeRO-3's memory.
                if fw == Framework::Verl
                    && f.file.framework != Framework::Verl
                    && f.file.parallel.zero_stage == 0
                {
                    f.file.parallel.zero_stage = 3;
                }
                f.file.framework = fw;
            });
        }
    };
    let on_method = move |ev| {
        let wire = event_target_value(&ev);
        if let Some(&m) = Method::ALL.iter().find(|m| m.wire() == wire) {
            form.update(|f| f.file.method = m);
        }
    };
    let uses_lora = move || {
        form.with(|f| match f.file.method {
            Method::Lora | Method::Qlora => true,
            Method::Grpo | Method::Ppo => f.file.rl.lora,
            _ => false,
        })
    };
    let is_rl = move || form.with(|f| matches!(f.file.method, Method::Grpo | Method::Ppo));
    let is_moe = move || plan.with(|p| p.as_ref().is_ok_and(|p| p.model.arch.moe.is_some()));
    // Every knob the form would show that the framework or method does not take: hidden unless the
    // switch is on.
    let show_all = RwSignal::new(false);
    let n_hidden = move || {
        form.with(|f| {
            let (fw, m) = (f.file.framework, f.file.method);
            let moe = is_moe();
            Knob::ALL
                .iter()
                .filter(|&&k| !matches!(k, Knob::LoraRank | Knob::SeqLen | Knob::Rl | Knob::RlBlocking))
                .filter(|&&k| moe || !k.path().starts_with("moe."))
                .filter(|&&k| !knobs::applies(fw, m, k).yes())
                .count()
        })
    };
    let hidden_text = move || {
        let framework = form.with(|f| f.file.framework.name());
        fill(tr(Key::knobs_hidden), &[("n", &n_hidden().to_string()), ("framework", framework)])
    };
    let auto = Some(Signal::derive(move || tr(Key::placeholder_auto).to_owned()));
    let all = Some(Signal::derive(move || tr(Key::placeholder_all).to_owned()));

    view! {
        <div class="inputs">
            <ModelPicker form=form />
            <HardwarePicker form=form bad=bad />
            <section class="panel" aria-labelledby="cluster-title">
                <h2 id="cluster-title">{move || tr(Key::cluster_title)}</h2>
                <div class="row">
                    {number(Key::plan_form_nodes, "nodes-input", NumField::Nodes, None)}
                    <span class="times" aria-hidden="true">"×"</span>
                    {number(Key::plan_form_devices_per_node, "devices-input", NumField::DevicesPerNode, Some(Signal::derive(default_devices)))}
                    {number(Key::plan_form_scale_up, "scale-up-input", NumField::ScaleUp, Some(Signal::derive(move || {
                        plan.with(|p| p.as_ref().map(|p| p.cluster.scale_up_domain.to_string()).unwrap_or_default())
                    })))}
                    {number(Key::plan_form_margin, "memory-margin-input", NumField::MemoryMargin, Some(Signal::derive(move || {
                        fill(tr(Key::plan_form_margin_default), &[("frac", &trainplan_core::memory::ALLOCATOR_RESERVE_FRAC.to_string())])
                    })))}
                </div>
                <p class="total-devices">
                    {move || tr(Key::plan_form_n_devices)} ": "
                    <strong data-testid="n-devices">{move || n_devices().unwrap_or_else(|| "–".to_owned())}</strong>
                </p>
            </section>
            <section class="panel" aria-labelledby="training-title">
                <h2 id="training-title">{move || tr(Key::training_title)}</h2>
                <label class="field">
                    <span>{move || tr(Key::training_framework)}</span>
                    <select data-testid="framework-select" on:change=on_framework>{framework_options}</select>
                </label>
                <label class="field">
                    <span>{move || tr(Key::training_method)}</span>
                    <select data-testid="method-select" on:change=on_method>{method_options}</select>
                </label>
                <label class="field">
                    <span>{move || tr(Key::training_precision)}</span>
                    <select data-testid="precision-select" on:change=move |ev| {
                        let wire = event_target_value(&ev);
                        if let Some(&k) = Precision::ALL.iter().find(|k| k.wire() == wire) {
                            form.update(|f| f.file.precision = k);
                        }
                    }>
                        {Precision::ALL.iter().map(|&k| view! {
                            <option value=k.wire() selected=move || form.with(|f| f.file.precision == k)>{k.wire()}</option>
                        }).collect_view()}
                    </select>
                </label>
                <Show when=uses_lora>
                    {number(Key::training_lora_rank, "lora-rank-input", NumField::LoraRank, None)}
                </Show>
                <div class="grid3">
                    {number(Key::batch_micro, "micro-batch-input", NumField::MicroBatch, None)}
                    {number(Key::batch_global, "global-batch-input", NumField::GlobalBatch, None)}
                    // RL sequences are the prompt and response lengths of the RL panel.
                    <Show when=move || !is_rl()>
                        {number(Key::batch_seq, "seq-len-input", NumField::SeqLen, None)}
                    </Show>
                </div>
            </section>
            <section class="panel" aria-labelledby="parallel-title">
                <h2 id="parallel-title">{move || tr(Key::par_title)}</h2>
                // Only what the framework and method take (knobs::applies); the switch shows the rest,
                // disabled, each saying which frameworks or methods take it.
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
                <div class="grid3">
                    {knob_slot(form, show_all, Knob::Tp, move || number(Key::par_tp, "tp-input", NumField::Tp, None))}
                    {knob_slot(form, show_all, Knob::Pp, move || number(Key::par_pp, "pp-input", NumField::Pp, None))}
                    {knob_slot(form, show_all, Knob::Vpp, move || number(Key::par_vpp, "vpp-input", NumField::Vpp, None))}
                    {knob_slot(form, show_all, Knob::Cp, move || number(Key::par_cp, "cp-input", NumField::Cp, None))}
                    {knob_slot(form, show_all, Knob::Ep, move || number(Key::par_ep, "ep-input", NumField::Ep, None))}
                    {knob_slot(form, show_all, Knob::ZeroStage, move || view! {
                        <label class="field">
                            <span>{move || tr(Key::par_zero)}</span>
                            <select data-testid="zero-select" on:change=move |ev| {
                                if let Ok(stage) = event_target_value(&ev).parse::<u8>() {
                                    form.update(|f| f.file.parallel.zero_stage = stage);
                                }
                            }>
                                {(0..=3u8).map(|z| view! {
                                    <option value=z.to_string() selected=move || form.with(|f| f.file.parallel.zero_stage == z)>{z}</option>
                                }).collect_view()}
                            </select>
                        </label>
                    })}
                </div>
                {knob_slot(form, show_all, Knob::Schedule, move || enum_select(form, Key::par_schedule, "schedule-select", PipelineSchedule::ALL, PipelineSchedule::wire,
                    |f| f.parallel.schedule, |f, k| f.parallel.schedule = k, Some((PipelineSchedule::Auto, Key::par_schedule_auto))))}
                {knob_slot(form, show_all, Knob::Fsdp, move || enum_select(form, Key::par_fsdp, "fsdp-select", Fsdp::ALL, Fsdp::wire,
                    |f| f.parallel.fsdp, |f, k| f.parallel.fsdp = k, Some((Fsdp::None, Key::par_fsdp_none))))}
                {knob_slot(form, show_all, Knob::DistributedOptimizer, move || check(Key::par_dist_opt, "dist-opt-check", |f| f.parallel.distributed_optimizer, |f, v| f.parallel.distributed_optimizer = v))}
                {knob_slot(form, show_all, Knob::SequenceParallel, move || check(Key::par_sp, "sp-check", |f| f.parallel.sequence_parallel, |f, v| f.parallel.sequence_parallel = v))}
                {knob_slot(form, show_all, Knob::OffloadOptimizer, move || check(Key::par_offload_opt, "offload-opt-check", |f| f.parallel.offload_optimizer, |f, v| f.parallel.offload_optimizer = v))}
                {knob_slot(form, show_all, Knob::OffloadParams, move || check(Key::par_offload_params, "offload-params-check", |f| f.parallel.offload_params, |f, v| f.parallel.offload_params = v))}
                {knob_slot(form, show_all, Knob::OverlapGradReduce, move || check(Key::par_overlap_grad, "overlap-grad-check", |f| f.parallel.overlap_grad_reduce, |f, v| f.parallel.overlap_grad_reduce = v))}
                {knob_slot(form, show_all, Knob::OverlapParamGather, move || check(Key::par_overlap_param, "overlap-param-check", |f| f.parallel.overlap_param_gather, |f, v| f.parallel.overlap_param_gather = v))}
                {knob_slot(form, show_all, Knob::TpCommOverlap, move || check(Key::par_tp_overlap, "tp-overlap-check", |f| f.parallel.tp_comm_overlap, |f, v| f.parallel.tp_comm_overlap = v))}
                {knob_slot(form, show_all, Knob::SwapOptimizer, move || check(Key::par_swap_opt, "swap-opt-check", |f| f.parallel.swap_optimizer, |f, v| f.parallel.swap_optimizer = v))}
                {knob_slot(form, show_all, Knob::UnevenLayers, move || check(Key::par_uneven, "uneven-check", |f| f.parallel.uneven_layers, |f, v| f.parallel.uneven_layers = v))}
                {knob_slot(form, show_all, Knob::AccountEmbeddingLoss, move || check(Key::par_account, "account-check", |f| f.parallel.account_embedding_loss, |f, v| f.parallel.account_embedding_loss = v))}
                {knob_slot(form, show_all, Knob::FusedKernels, move || check(Key::par_fused, "fused-check", |f| f.parallel.fused_kernels, |f, v| f.parallel.fused_kernels = v))}
                <div class="grid3">
                    {knob_slot(form, show_all, Knob::PipelineLayout, move || view! {
                        <TextField
                            label=Signal::derive(move || tr(Key::par_layout).to_owned())
                            testid="pipeline-layout-input"
                            value=Signal::derive(move || form.with(|f| f.file.parallel.pipeline_layout.clone()))
                            invalid=Signal::derive(move || is_bad(FormField::PipelineLayout))
                            message=Signal::derive(move || tr(Key::par_layout_bad).to_owned())
                            on_input=move |text: String| form.update(|f| f.file.parallel.pipeline_layout = text.trim().to_owned())
                            placeholder="Et|(tt|)*30mL"
                        />
                    })}
                    {knob_slot(form, show_all, Knob::MtpLayers, move || number(Key::mtp_layers, "mtp-layers-input", NumField::MtpLayers, None))}
                </div>
                // The MoE settings matter to models with experts.
                <Show when=is_moe>
                    {knob_slot(form, show_all, Knob::MoeDispatcher, move || enum_select(form, Key::moe_dispatcher, "moe-dispatcher-select", MoeDispatcher::ALL, MoeDispatcher::wire,
                        |f| f.moe.dispatcher, |f, k| f.moe.dispatcher = k, None))}
                    {knob_slot(form, show_all, Knob::MoeGroupedGemm, move || check(Key::moe_grouped_gemm, "moe-grouped-gemm-check", |f| f.moe.grouped_gemm, |f, v| f.moe.grouped_gemm = v))}
                    {knob_slot(form, show_all, Knob::MoePermuteFusion, move || check(Key::moe_permute_fusion, "moe-permute-fusion-check", |f| f.moe.permute_fusion, |f, v| f.moe.permute_fusion = v))}
                    {knob_slot(form, show_all, Knob::MoeOverlapEpComm, move || check(Key::moe_overlap_ep_comm, "moe-overlap-check", |f| f.moe.overlap_ep_comm, |f, v| f.moe.overlap_ep_comm = v))}
                    {knob_slot(form, show_all, Knob::MoePadToCapacity, move || check(Key::moe_pad_to_capacity, "moe-pad-check", |f| f.moe.pad_to_capacity, |f, v| f.moe.pad_to_capacity = v))}
                    <div class="grid3">
                        {knob_slot(form, show_all, Knob::MoeCapacity, move || number(Key::moe_capacity, "moe-capacity-input", NumField::MoeCapacity, Some(Signal::derive(move || tr(Key::moe_dropless).to_owned()))))}
                        {number(Key::moe_imbalance, "moe-imbalance-input", NumField::MoeImbalance, None)}
                    </div>
                </Show>
                <div class="grid3">
                    <label class="field">
                        <span>{move || tr(Key::rc_granularity)}</span>
                        <select data-testid="recompute-select" on:change=move |ev| {
                            let wire = event_target_value(&ev);
                            if let Some(&g) = RecomputeGranularity::ALL.iter().find(|g| g.wire() == wire) {
                                form.update(|f| f.file.recompute.granularity = g);
                            }
                        }>
                            {RecomputeGranularity::ALL.iter().map(|&g| {
                                let key = match g {
                                    RecomputeGranularity::None => Key::rc_none,
                                    RecomputeGranularity::Selective => Key::rc_selective,
                                    RecomputeGranularity::Full => Key::rc_full,
                                };
                                view! {
                                    <option value=g.wire() selected=move || form.with(|f| f.file.recompute.granularity == g)>
                                        {move || tr(key)}
                                    </option>
                                }
                            }).collect_view()}
                        </select>
                    </label>
                    {knob_slot(form, show_all, Knob::RecomputeLayers, move || number(Key::rc_layers, "recompute-layers-input", NumField::RecomputeLayers, None))}
                    {knob_slot(form, show_all, Knob::Attention, move || view! {
                        <label class="field">
                            <span>{move || tr(Key::rc_attention)}</span>
                            <select data-testid="attention-select" on:change=move |ev| {
                                let wire = event_target_value(&ev);
                                if let Some(&a) = AttentionImpl::ALL.iter().find(|a| a.wire() == wire) {
                                    form.update(|f| f.file.attention = a);
                                }
                            }>
                                {AttentionImpl::ALL.iter().map(|&a| view! {
                                    <option value=a.wire() selected=move || form.with(|f| f.file.attention == a)>{a.wire()}</option>
                                }).collect_view()}
                            </select>
                        </label>
                    })}
                </div>
                {knob_slot(form, show_all, Knob::ActivationFunction, move || check(Key::rc_act_fn, "act-fn-check", |f| f.recompute.activation_function, |f, v| f.recompute.activation_function = v))}
                {knob_slot(form, show_all, Knob::SwapAttention, move || check(Key::rc_swap_attn, "swap-attn-check", |f| f.recompute.swap_attention, |f, v| f.recompute.swap_attention = v))}
                {knob_slot(form, show_all, Knob::RecomputeModules, move || view! {
                    {check(Key::rc_modules_mlp, "rc-mlp-check", |f| module_on(f, "mlp"), |f, v| set_module(f, "mlp", v))}
                    {check(Key::rc_modules_layernorm, "rc-layernorm-check", |f| module_on(f, "layernorm"), |f, v| set_module(f, "layernorm", v))}
                    {check(Key::rc_modules_moe, "rc-moe-check", |f| module_on(f, "moe"), |f, v| set_module(f, "moe", v))}
                })}
                <div class="grid3">
                    {knob_slot(form, show_all, Knob::ActivationFunctionLayers, move || number(Key::rc_act_fn_layers, "act-fn-layers-input", NumField::ActFnLayers, all))}
                    {knob_slot(form, show_all, Knob::CpuOffloadLayers, move || number(Key::rc_cpu_offload_layers, "cpu-offload-input", NumField::CpuOffloadLayers, None))}
                    {knob_slot(form, show_all, Knob::LayersRatio, move || number(Key::rc_layers_ratio, "layers-ratio-input", NumField::LayersRatio, None))}
                </div>
            </section>
            <Show when=is_rl>
                <section class="panel" aria-labelledby="rl-title" data-testid="rl-panel">
                    <h2 id="rl-title">{move || tr(Key::rl_title)}</h2>
                    <div class="grid2">
                        {number(Key::rl_rollout_tp, "rollout-tp-input", NumField::RolloutTp, None)}
                        {number(Key::rl_samples, "samples-input", NumField::Samples, None)}
                        {number(Key::rl_mini_batch, "mini-batch-input", NumField::MiniBatch, all)}
                        {number(Key::rl_prompt_len, "prompt-len-input", NumField::PromptLen, None)}
                        {number(Key::rl_response_len, "response-len-input", NumField::ResponseLen, None)}
                        {number(Key::rl_token_budget, "token-budget-input", NumField::TokenBudget, auto)}
                        {number(Key::rl_gpu_mem, "gpu-mem-input", NumField::GpuMemoryUtilization, None)}
                        {number(Key::rl_max_num_seqs, "max-num-seqs-input", NumField::MaxNumSeqs, None)}
                        {number(Key::rl_max_model_len, "max-model-len-input", NumField::MaxModelLen, auto)}
                        {number(Key::rl_batched_tokens, "batched-tokens-input", NumField::BatchedTokens, auto)}
                    </div>
                    {check(Key::rl_dynamic_batch, "dynamic-batch-check", |f| f.rl.dynamic_batch, |f, v| f.rl.dynamic_batch = v)}
                    {check(Key::rl_remove_padding, "remove-padding-check", |f| f.rl.remove_padding, |f, v| f.rl.remove_padding = v)}
                    {check(Key::rl_enforce_eager, "enforce-eager-check", |f| f.rl.enforce_eager, |f, v| f.rl.enforce_eager = v)}
                    {check(Key::rl_lora, "rl-lora-check", |f| f.rl.lora, |f, v| f.rl.lora = v)}
                    {knob_slot(form, show_all, Knob::RlBlocking, move || check(Key::rl_blocking, "blocking-check", |f| f.rl.blocking, |f, v| f.rl.blocking = v))}
                </section>
            </Show>
            <CalibrationPanel form=form plan=plan />
            <crate::components::log_calibration::LogCalibration form=form plan=plan />
        </div>
    }
}

/// Fits the planner to a measured run: step time (and peak memory) in, factors into the plan.
#[component]
fn CalibrationPanel(
    /// The form state; the fitted factors go into its plan file.
    form: RwSignal<PlanForm>,
    /// The current plan.
    #[prop(into)]
    plan: Signal<Result<Plan, FormError>>,
) -> impl IntoView {
    let tr = use_tr();
    let step = RwSignal::new(String::new());
    let peak = RwSignal::new(String::new());
    let positive = |text: &str| text.trim().parse::<f64>().ok().filter(|x| x.is_finite() && 0.0 < *x);
    let step_bad = move || step.with(|t| !t.trim().is_empty() && positive(t).is_none());
    let peak_bad = move || peak.with(|t| !t.trim().is_empty() && positive(t).is_none());
    let fit = move |_| {
        let (Ok(plan), Some(seconds)) = (plan.get_untracked(), step.with_untracked(|t| positive(t))) else {
            return;
        };
        let peak_bytes = peak.with_untracked(|t| positive(t)).map(|gib| (gib * (1u64 << 30) as f64) as u64);
        let fitted = trainplan_core::calibrate(&plan, Some(seconds), peak_bytes);
        form.update(|f| f.file.calibration = fitted);
    };
    let current = move || {
        form.with(|f| {
            let c = f.file.calibration;
            match (c.efficiency_scale, c.memory_offset_mib) {
                (None, None) => tr(Key::cal_none).to_owned(),
                _ => {
                    let offset = c.memory_offset_mib.unwrap_or(0.0) / 1024.0;
                    fill(
                        tr(Key::cal_current),
                        &[
                            ("scale", &format!("{:.3}", c.efficiency())),
                            ("offset", &format!("{offset:+.2} GiB")),
                        ],
                    )
                }
            }
        })
    };
    view! {
        <section class="panel" aria-labelledby="calibration-title">
            <h2 id="calibration-title">{move || tr(Key::cal_title)}</h2>
            <p class="muted">{move || tr(Key::cal_hint)}</p>
            <div class="row">
                <TextField
                    label=Signal::derive(move || tr(Key::cal_step).to_owned())
                    testid="calibration-step"
                    value=Signal::derive(move || step.get())
                    invalid=Signal::derive(step_bad)
                    message=Signal::derive(move || tr(Key::cal_bad).to_owned())
                    on_input=move |text| step.set(text)
                    numeric=true
                />
                <TextField
                    label=Signal::derive(move || tr(Key::cal_peak).to_owned())
                    testid="calibration-peak"
                    value=Signal::derive(move || peak.get())
                    invalid=Signal::derive(peak_bad)
                    message=Signal::derive(move || tr(Key::cal_bad).to_owned())
                    on_input=move |text| peak.set(text)
                    numeric=true
                />
            </div>
            <div class="row">
                <button data-testid="calibration-fit" on:click=fit>{move || tr(Key::cal_fit)}</button>
                <button class="secondary" data-testid="calibration-reset" on:click=move |_| form.update(|f| f.file.calibration = Default::default())>
                    {move || tr(Key::cal_reset)}
                </button>
            </div>
            <p class="muted" data-testid="calibration-current">{current}</p>
        </section>
    }
}

/// A knob of the form, shown when the plan's framework and method take it (`knobs::applies`); with
/// `show_all`, the others too, disabled, each saying who takes it.
fn knob_slot<V, F>(form: RwSignal<PlanForm>, show_all: RwSignal<bool>, knob: Knob, control: F) -> AnyView
where
    V: IntoView + 'static,
    F: Fn() -> V + Send + Sync + 'static,
{
    // The control's view type erased here, so what follows is built once for every knob (one
    // copy in the wasm, not one per control).
    knob_slot_erased(form, show_all, knob, std::sync::Arc::new(move || control().into_any()))
}

fn knob_slot_erased(
    form: RwSignal<PlanForm>,
    show_all: RwSignal<bool>,
    knob: Knob,
    control: std::sync::Arc<dyn Fn() -> AnyView + Send + Sync>,
) -> AnyView {
    let tr = use_tr();
    let lang = use_lang();
    let applies = move || form.with(|f| knobs::applies(f.file.framework, f.file.method, knob));
    let why = move || {
        let sep = match lang.get() {
            Lang::En => ", ",
            Lang::Zh => "、",
        };
        form.with(|f| match applies() {
            Applies::Yes => String::new(),
            Applies::Frameworks(list) => {
                let names: Vec<_> = list.iter().map(|fw| fw.name()).collect();
                fill(
                    tr(Key::knobs_not_framework),
                    &[("framework", f.file.framework.name()), ("frameworks", &names.join(sep))],
                )
            }
            Applies::Methods(list) => {
                let names: Vec<_> = list.iter().map(|&m| tr(messages::method_key(m))).collect();
                fill(
                    tr(Key::knobs_not_method),
                    &[("method", tr(messages::method_key(f.file.method))), ("methods", &names.join(sep))],
                )
            }
        })
    };
    view! {
        <Show when=move || show_all.get() || applies().yes()>
            <fieldset class="knob" disabled=move || !applies().yes() data-knob=knob.path()>
                {control()}
                <Show when=move || !applies().yes()>
                    <p class="knob-why" data-testid=format!("knob-why-{}", knob.path())>{why}</p>
                </Show>
            </fieldset>
        </Show>
    }
    .into_any()
}

/// Whether `recompute.modules` names `module`.
fn module_on(file: &PlanFile, module: &str) -> bool {
    file.recompute.modules.iter().any(|m| m == module)
}

/// Adds `module` to `recompute.modules` or takes it out.
fn set_module(file: &mut PlanFile, module: &str, on: bool) {
    let modules = &mut file.recompute.modules;
    modules.retain(|m| m != module);
    if on {
        modules.push(module.to_owned());
    }
}

/// A labelled picker bound to one wire enum of the plan file; `special` is the one value shown in
/// words rather than by its wire name (`auto`, `none`).
#[allow(clippy::too_many_arguments)]
fn enum_select<T: Copy + PartialEq + Send + Sync + 'static>(
    form: RwSignal<PlanForm>,
    label: Key,
    testid: &'static str,
    all: &'static [T],
    wire: fn(T) -> &'static str,
    get: fn(&PlanFile) -> T,
    set: fn(&mut PlanFile, T),
    special: Option<(T, Key)>,
) -> impl IntoView {
    let tr = use_tr();
    view! {
        <label class="field">
            <span>{move || tr(label)}</span>
            <select data-testid=testid on:change=move |ev| {
                let value = event_target_value(&ev);
                if let Some(&k) = all.iter().find(|&&k| wire(k) == value) {
                    form.update(|f| set(&mut f.file, k));
                }
            }>
                {all.iter().map(|&k| view! {
                    <option value=wire(k) selected=move || form.with(|f| get(&f.file) == k)>
                        {move || match special {
                            Some((value, key)) if value == k => tr(key),
                            _ => wire(k),
                        }}
                    </option>
                }).collect_view()}
            </select>
        </label>
    }
}
