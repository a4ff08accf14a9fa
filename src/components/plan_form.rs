//! The plan's inputs: model, hardware, cluster size and training method.

use leptos::prelude::*;
use trainplan_core::Plan;
use trainplan_core::plan::{
    AttentionImpl, Framework, Fsdp, Method, MoeDispatcher, PipelineSchedule, PlanFile, Precision,
    RecomputeGranularity,
};

use crate::components::hardware_picker::HardwarePicker;
use crate::components::model_picker::ModelPicker;
use crate::components::{TextField, use_tr};
use crate::form::{FormError, FormField, NumField, NumKind, PlanForm};
use crate::i18n::{Key, fill};

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
                    {move || tr(method_key(m))}
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
    let is_llamafactory = move || form.with(|f| f.file.framework == Framework::LlamaFactory);
    let is_mindspeed_rl = move || form.with(|f| f.file.framework == Framework::MindSpeedRl);
    let is_verl = move || form.with(|f| f.file.framework == Framework::Verl);
    let megatron_path = move || form.with(|f| trainplan_core::layout::model_parallel(f.file.framework));
    // The MoE settings matter to models with experts on the Megatron path.
    let moe_megatron =
        move || megatron_path() && plan.with(|p| p.as_ref().is_ok_and(|p| p.model.arch.moe.is_some()));
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
                <div class="grid3">
                    // What the chosen framework has: TP, PP, VPP and EP on the Megatron path, CP
                    // there and in VeRL (Ulysses), ZeRO on the HF path.
                    <Show when=megatron_path>
                        {number(Key::par_tp, "tp-input", NumField::Tp, None)}
                        {number(Key::par_pp, "pp-input", NumField::Pp, None)}
                        {number(Key::par_vpp, "vpp-input", NumField::Vpp, None)}
                    </Show>
                    <Show when=move || megatron_path() || is_verl()>
                        {number(Key::par_cp, "cp-input", NumField::Cp, None)}
                    </Show>
                    <Show when=megatron_path>
                        {number(Key::par_ep, "ep-input", NumField::Ep, None)}
                    </Show>
                    <Show when=move || !megatron_path()>
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
                    </Show>
                </div>
                <Show when=megatron_path>
                {enum_select(form, Key::par_schedule, "schedule-select", PipelineSchedule::ALL, PipelineSchedule::wire,
                    |f| f.parallel.schedule, |f, k| f.parallel.schedule = k, Some((PipelineSchedule::Auto, Key::par_schedule_auto)))}
                {enum_select(form, Key::par_fsdp, "fsdp-select", Fsdp::ALL, Fsdp::wire,
                    |f| f.parallel.fsdp, |f, k| f.parallel.fsdp = k, Some((Fsdp::None, Key::par_fsdp_none)))}
                {check(Key::par_dist_opt, "dist-opt-check", |f| f.parallel.distributed_optimizer, |f, v| f.parallel.distributed_optimizer = v)}
                {check(Key::par_sp, "sp-check", |f| f.parallel.sequence_parallel, |f, v| f.parallel.sequence_parallel = v)}
                </Show>
                {check(Key::par_offload_opt, "offload-opt-check", |f| f.parallel.offload_optimizer, |f, v| f.parallel.offload_optimizer = v)}
                {check(Key::par_offload_params, "offload-params-check", |f| f.parallel.offload_params, |f, v| f.parallel.offload_params = v)}
                {check(Key::par_overlap_grad, "overlap-grad-check", |f| f.parallel.overlap_grad_reduce, |f, v| f.parallel.overlap_grad_reduce = v)}
                <Show when=megatron_path>
                {check(Key::par_overlap_param, "overlap-param-check", |f| f.parallel.overlap_param_gather, |f, v| f.parallel.overlap_param_gather = v)}
                {check(Key::par_tp_overlap, "tp-overlap-check", |f| f.parallel.tp_comm_overlap, |f, v| f.parallel.tp_comm_overlap = v)}
                {check(Key::par_swap_opt, "swap-opt-check", |f| f.parallel.swap_optimizer, |f, v| f.parallel.swap_optimizer = v)}
                {check(Key::par_uneven, "uneven-check", |f| f.parallel.uneven_layers, |f, v| f.parallel.uneven_layers = v)}
                {check(Key::par_account, "account-check", |f| f.parallel.account_embedding_loss, |f, v| f.parallel.account_embedding_loss = v)}
                <div class="grid3">
                    <TextField
                        label=Signal::derive(move || tr(Key::par_layout).to_owned())
                        testid="pipeline-layout-input"
                        value=Signal::derive(move || form.with(|f| f.file.parallel.pipeline_layout.clone()))
                        invalid=Signal::derive(move || is_bad(FormField::PipelineLayout))
                        message=Signal::derive(move || tr(Key::par_layout_bad).to_owned())
                        on_input=move |text: String| form.update(|f| f.file.parallel.pipeline_layout = text.trim().to_owned())
                        placeholder="Et|(tt|)*30mL"
                    />
                    {number(Key::mtp_layers, "mtp-layers-input", NumField::MtpLayers, None)}
                </div>
                // MindSpeed's switch: shown on its frameworks, or wherever it is off so it can be
                // turned back on (rule parallel.fused_kernels_framework).
                <Show when=move || form.with(|f| {
                    matches!(f.file.framework, Framework::MindSpeedLlm | Framework::MindSpeedRl)
                        || !f.file.parallel.fused_kernels
                })>
                {check(Key::par_fused, "fused-check", |f| f.parallel.fused_kernels, |f, v| f.parallel.fused_kernels = v)}
                </Show>
                </Show>
                <Show when=moe_megatron>
                {enum_select(form, Key::moe_dispatcher, "moe-dispatcher-select", MoeDispatcher::ALL, MoeDispatcher::wire,
                    |f| f.moe.dispatcher, |f, k| f.moe.dispatcher = k, None)}
                {check(Key::moe_grouped_gemm, "moe-grouped-gemm-check", |f| f.moe.grouped_gemm, |f, v| f.moe.grouped_gemm = v)}
                {check(Key::moe_permute_fusion, "moe-permute-fusion-check", |f| f.moe.permute_fusion, |f, v| f.moe.permute_fusion = v)}
                {check(Key::moe_overlap_ep_comm, "moe-overlap-check", |f| f.moe.overlap_ep_comm, |f, v| f.moe.overlap_ep_comm = v)}
                {check(Key::moe_pad_to_capacity, "moe-pad-check", |f| f.moe.pad_to_capacity, |f, v| f.moe.pad_to_capacity = v)}
                <div class="grid3">
                    {number(Key::moe_capacity, "moe-capacity-input", NumField::MoeCapacity, Some(Signal::derive(move || tr(Key::moe_dropless).to_owned())))}
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
                    {number(Key::rc_layers, "recompute-layers-input", NumField::RecomputeLayers, None)}
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
                </div>
                {check(Key::rc_act_fn, "act-fn-check", |f| f.recompute.activation_function, |f, v| f.recompute.activation_function = v)}
                {check(Key::rc_swap_attn, "swap-attn-check", |f| f.recompute.swap_attention, |f, v| f.recompute.swap_attention = v)}
                {check(Key::rc_modules_mlp, "rc-mlp-check", |f| module_on(f, "mlp"), |f, v| set_module(f, "mlp", v))}
                {check(Key::rc_modules_layernorm, "rc-layernorm-check", |f| module_on(f, "layernorm"), |f, v| set_module(f, "layernorm", v))}
                {check(Key::rc_modules_moe, "rc-moe-check", |f| module_on(f, "moe"), |f, v| set_module(f, "moe", v))}
                <div class="grid3">
                    {number(Key::rc_act_fn_layers, "act-fn-layers-input", NumField::ActFnLayers, all)}
                    {number(Key::rc_cpu_offload_layers, "cpu-offload-input", NumField::CpuOffloadLayers, None)}
                    <Show when=is_llamafactory>
                        {number(Key::rc_layers_ratio, "layers-ratio-input", NumField::LayersRatio, None)}
                    </Show>
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
                    <Show when=is_mindspeed_rl>
                        {check(Key::rl_blocking, "blocking-check", |f| f.rl.blocking, |f, v| f.rl.blocking = v)}
                    </Show>
                </section>
            </Show>
            <CalibrationPanel form=form plan=plan />
            <crate::components::log_calibration::LogCalibration form=form plan=plan />
        </div>
    }
}

/// The words for a method.
pub fn method_key(m: Method) -> Key {
    match m {
        Method::Pretrain => Key::method_pretrain,
        Method::SftFull => Key::method_sft_full,
        Method::Lora => Key::method_lora,
        Method::Qlora => Key::method_qlora,
        Method::Dpo => Key::method_dpo,
        Method::Grpo => Key::method_grpo,
        Method::Ppo => Key::method_ppo,
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
