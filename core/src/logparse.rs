//! Calibration from a pasted training log: the step times and peak memory a run printed, read from
//! the lines Megatron-LM, MindSpeed-LLM, HF Trainer (and LLaMA-Factory, which prints through it, and
//! keeps its own `trainer_log.jsonl`), DeepSpeed, VeRL and MindSpeed-RL write, then fitted with
//! [`crate::calibrate`] (docs/time.md "Calibration").
//!
//! The first step times of a run include start-up work (CUDA/CANN context and kernel compilation,
//! the allocator's first growth, NCCL/HCCL communicator set-up, the data loader's first batches), so
//! the first tenth of the samples, and always the first, are left out when there are two or more;
//! the median of the rest is the step time, robust to the odd slow step (a checkpoint save, an
//! evaluation). The peak is the largest "max allocated" any rank printed.
//!
//! Each pattern names the framework file whose format string prints it.

use std::fmt;

use crate::plan::{CalibrationFile, Framework, Plan};

/// What a pasted log gave.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LogSummary {
    /// Megatron-LM / MindSpeed-LLM iteration lines.
    pub megatron_lines: usize,
    /// Memory reports (Megatron `report_memory`, MindSpeed-LLM FSDP2, VeRL `perf/max_memory_*`).
    pub memory_lines: usize,
    /// HF Trainer log dictionaries (`{'loss': …}`, `{'train_runtime': …}`).
    pub hf_lines: usize,
    /// LLaMA-Factory `trainer_log.jsonl` lines (`{"current_steps": …, "elapsed_time": …}`).
    pub trainer_log_lines: usize,
    /// DeepSpeed's throughput lines (`… CurrSamplesPerSec=…, MaxMemAllocated=…GB`).
    pub deepspeed_lines: usize,
    /// Samples a second from DeepSpeed's throughput lines, the median after warm-up: a step is
    /// the plan's global batch over it ([`parse_for`]).
    pub samples_per_second: Option<f64>,
    /// Progress-bar rates (`2.50s/it`, `1.23it/s`).
    pub progress_lines: usize,
    /// VeRL metrics lines (`step:N - …`).
    pub verl_lines: usize,
    /// MindSpeed-RL metrics lines (`iteration: N / M | timing/all : …`).
    pub mindspeed_rl_lines: usize,
    /// Step times found, warm-up included.
    pub step_samples: usize,
    /// Step times left out as warm-up.
    pub skipped: usize,
    /// The median step time after warm-up, seconds.
    pub step_seconds: Option<f64>,
    /// The largest peak allocation any rank printed, bytes (PyTorch's `max_memory_allocated`).
    pub peak_allocated_bytes: Option<u64>,
    /// Megatron's `throughput per GPU (TFLOP/s/GPU)`, median after warm-up, where printed.
    pub tflops_per_device: Option<f64>,
    /// The RL prompts' mean length, tokens (VeRL's `prompt_length/mean`), the median over the
    /// steps printed.
    pub mean_prompt_tokens: Option<f64>,
    /// The RL responses' mean length, tokens (VeRL's `response_length/mean`), the median over the
    /// steps printed.
    pub mean_response_tokens: Option<f64>,
    /// A step's phases as the run's own timers measured them (VeRL's `timing_s/gen`, …;
    /// Megatron's `forward-backward` and `optimizer`), each the median after warm-up of its timers'
    /// sum a step, seconds; the phases no line timed left out.
    pub phases: Vec<(StepPhase, f64)>,
}

/// A phase of a step as a framework's own timers measure it, and the plan's part it is. VeRL times
/// an RL step's (`marked_timer` in `RayPPOTrainer.fit`, verl/trainer/ppo/ray_trainer.py at verl
/// 0.9.1, printed as `timing_s/{name}` by `compute_timing_metrics`,
/// verl/trainer/ppo/metric_utils.py); Megatron-LM (and MindSpeed-LLM over it) its training step's
/// at `--timing-log-level 1` (`training_log`, megatron/training/training.py at d98e8a6, printed by
/// `Timers.log`, megatron/core/timers.py).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StepPhase {
    /// `gen`: the rollout engine's generation (`time.breakdown.rollout_seconds`).
    Generation,
    /// `old_log_prob` and `ref`: the actor's and the reference's log-probabilities
    /// (`log_prob_seconds`).
    LogProb,
    /// `values` and `update_critic`: PPO's critic (`critic_seconds`).
    Critic,
    /// `update_actor`: the actor's update (the pipeline and the step's tail).
    Update,
    /// `update_weights`: the trained weights handed to the rollout engine (`weight_sync_seconds`).
    WeightSync,
    /// Megatron's `forward-backward`: the pipeline's passes and, at their end, the gradients'
    /// reduction (`finalize_model_grads` runs inside the timer, megatron/core/pipeline_parallel/
    /// schedules.py): the step less its optimizer's.
    ForwardBackward,
    /// Megatron's `optimizer`: the optimizer's step (`optimizer_seconds`).
    Optimizer,
}

impl StepPhase {
    /// Every phase, in a step's order.
    pub const ALL: [StepPhase; 7] = [
        StepPhase::Generation,
        StepPhase::LogProb,
        StepPhase::Critic,
        StepPhase::Update,
        StepPhase::WeightSync,
        StepPhase::ForwardBackward,
        StepPhase::Optimizer,
    ];

    /// The phase a VeRL timer's name belongs to.
    fn of_verl_timer(name: &str) -> Option<StepPhase> {
        Some(match name {
            "gen" => StepPhase::Generation,
            "old_log_prob" | "ref" => StepPhase::LogProb,
            "values" | "update_critic" => StepPhase::Critic,
            "update_actor" => StepPhase::Update,
            "update_weights" => StepPhase::WeightSync,
            _ => return None,
        })
    }

    /// Whether an RL step's phase (VeRL's), which a plan that is not RL has no figure for.
    fn rl(self) -> bool {
        !matches!(self, StepPhase::ForwardBackward | StepPhase::Optimizer)
    }

    /// The plan's seconds for this phase, from its step's time.
    fn planned(self, time: &crate::report::TimeReport) -> f64 {
        let b = &time.breakdown;
        let update = time.step_seconds
            - b.rollout_seconds
            - b.log_prob_seconds
            - b.critic_seconds
            - b.weight_sync_seconds;
        match self {
            StepPhase::Generation => b.rollout_seconds,
            StepPhase::LogProb => b.log_prob_seconds,
            StepPhase::Critic => b.critic_seconds,
            StepPhase::Update => update,
            StepPhase::WeightSync => b.weight_sync_seconds,
            StepPhase::ForwardBackward => update - b.optimizer_seconds,
            StepPhase::Optimizer => b.optimizer_seconds,
        }
    }
}

/// One phase of a step as a log measured it beside the plan's figure.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PhaseCheck {
    /// The phase.
    pub phase: StepPhase,
    /// What the log's timers measured, seconds.
    pub logged_seconds: f64,
    /// What the plan predicts, seconds.
    pub planned_seconds: f64,
}

impl PhaseCheck {
    /// How many times the plan's figure the log's is; `None` where the plan predicts none.
    pub fn ratio(&self) -> Option<f64> {
        (0.0 < self.planned_seconds).then(|| self.logged_seconds / self.planned_seconds)
    }
}

/// The phases a log timed beside what the plan predicts for them, as modelled: the plan with the
/// log's mean lengths ([`logged_means`]) and no calibration, so that each phase's figure is the
/// model's own. Empty for a log that timed no phase the plan has (VeRL's RL phases where the plan
/// is not RL).
pub fn phase_check(plan: &Plan, log: &LogSummary) -> Vec<PhaseCheck> {
    let rl = is_rl(plan);
    let phases: Vec<(StepPhase, f64)> = log.phases.iter().copied().filter(|&(p, _)| rl || !p.rl()).collect();
    if phases.is_empty() {
        return Vec::new();
    }
    let mut modelled = plan.clone();
    let (prompt, response) = logged_means(plan, log);
    modelled.rl.mean_prompt_length = prompt.unwrap_or(plan.rl.mean_prompt_length);
    modelled.rl.mean_response_length = response.unwrap_or(plan.rl.mean_response_length);
    modelled.calibration = CalibrationFile::default();
    let time = crate::evaluate(&modelled).time;
    phases
        .into_iter()
        .map(|(phase, logged_seconds)| PhaseCheck {
            phase,
            logged_seconds,
            planned_seconds: phase.planned(&time),
        })
        .collect()
}

/// Why a log gives nothing to fit.
#[derive(Clone, Debug, PartialEq)]
pub enum LogError {
    /// Occurs when no line is one of the formats this reader knows.
    Unrecognized,
    /// Occurs when lines were recognized (say, HF loss lines) but none gives a step time or a peak
    /// memory; the summary says what was found.
    NothingToFit(Box<LogSummary>),
}

impl fmt::Display for LogError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LogError::Unrecognized => write!(
                f,
                "no training log lines recognized: paste Megatron-LM or MindSpeed-LLM `iteration … | elapsed time per iteration (ms): …` lines, HF Trainer or LLaMA-Factory output (`{{'train_runtime': …}}`, a progress bar's `s/it`, trainer_log.jsonl), DeepSpeed's `CurrSamplesPerSec=…` lines, VeRL `step:N - timing_s/step:…` lines, or MindSpeed-RL `iteration: N / M | timing/all : …` lines"
            ),
            LogError::NothingToFit(s) => write!(
                f,
                "recognized {} but no step time or peak memory: paste the lines with `elapsed time per iteration`, `s/it`, `train_runtime`, `timing_s/step` or `max allocated`",
                s.recognized()
            ),
        }
    }
}

impl std::error::Error for LogError {}

impl LogSummary {
    /// The figures read, in words: `step 6.100 s (from 2, 1 left out as warm-up), peak
    /// allocated 61.88 GiB, 231.4 TFLOP/s per device`.
    pub fn figures(&self) -> String {
        let mut parts = Vec::new();
        if let Some(t) = self.step_seconds {
            let used = self.steps_used();
            parts.push(format!("step {t:.3} s (from {used}, {} left out as warm-up)", self.skipped));
        }
        if let Some(rate) = self.samples_per_second {
            parts.push(format!("{rate:.2} samples/s"));
        }
        if let Some(bytes) = self.peak_allocated_bytes {
            parts.push(format!("peak allocated {:.2} GiB", bytes as f64 / GIB));
        }
        if let Some(t) = self.tflops_per_device {
            parts.push(format!("{t:.1} TFLOP/s per device"));
        }
        if let Some(n) = self.mean_prompt_tokens {
            parts.push(format!("prompts of {n:.0} tokens on average"));
        }
        if let Some(n) = self.mean_response_tokens {
            parts.push(format!("responses of {n:.0} tokens on average"));
        }
        parts.join(", ")
    }

    /// The step times the step was taken from: those read, less the warm-up's.
    pub fn steps_used(&self) -> usize {
        self.step_samples.saturating_sub(self.skipped)
    }

    /// What was recognized, in words: `3 Megatron iteration lines, 1 memory report`.
    pub fn recognized(&self) -> String {
        let parts: Vec<String> = [
            (self.megatron_lines, "Megatron iteration line"),
            (self.memory_lines, "memory report"),
            (self.hf_lines, "HF Trainer log line"),
            (self.trainer_log_lines, "LLaMA-Factory trainer_log.jsonl line"),
            (self.deepspeed_lines, "DeepSpeed throughput line"),
            (self.progress_lines, "progress-bar rate"),
            (self.verl_lines, "VeRL metrics line"),
            (self.mindspeed_rl_lines, "MindSpeed-RL metrics line"),
        ]
        .into_iter()
        .filter(|&(n, _)| 0 < n)
        .map(|(n, what)| format!("{n} {what}{}", if n == 1 { "" } else { "s" }))
        .collect();
        match parts.is_empty() {
            true => "nothing".to_owned(),
            false => parts.join(", "),
        }
    }
}

/// Reads a pasted log.
///
/// # Errors
///
/// [`LogError::Unrecognized`] when no line is a known format; [`LogError::NothingToFit`] when
/// the recognized lines give neither a step time nor a peak memory.
///
/// ```
/// let log = "\
///  [2025-01-01 10:00:00] iteration       10/     500 | consumed samples:          640 | elapsed time per iteration (ms): 9100.0 |
///  [2025-01-01 10:01:00] iteration       20/     500 | consumed samples:         1280 | elapsed time per iteration (ms): 6200.0 |
///  [2025-01-01 10:02:00] iteration       30/     500 | consumed samples:         1920 | elapsed time per iteration (ms): 6000.0 |";
/// let s = trainplan_core::logparse::parse(log)?;
/// // The first interval is warm-up; the median of the other two.
/// assert_eq!((s.skipped, s.step_seconds), (1, Some(6.1)));
/// # Ok::<(), trainplan_core::logparse::LogError>(())
/// ```
// Long: one pass over the lines, a block for each framework's format, each citing the file that
// prints it.
pub fn parse(text: &str) -> Result<LogSummary, LogError> {
    let mut res = LogSummary::default();
    // Per-step times (Megatron, VeRL), progress-bar rates, and HF's whole-run average.
    let (mut steps, mut rates, mut run_average) = (Vec::new(), Vec::new(), None);
    // Each phase's seconds, a sample a line that timed it (VeRL) or a timers' line (Megatron).
    let mut phases: [Vec<f64>; StepPhase::ALL.len()] = Default::default();
    let (mut tflops, mut prompts, mut responses) = (Vec::new(), Vec::new(), Vec::new());
    let mut peak: Option<f64> = None;
    // LLaMA-Factory's trainer_log.jsonl: (steps, seconds since training began) a line, from the
    // start of training on.
    let mut trainer_log = vec![(0.0, 0.0)];
    let mut deepspeed_rates = Vec::new();
    let mut note_peak = |bytes: f64| {
        if bytes.is_finite() && 0.0 < bytes {
            peak = Some(peak.map_or(bytes, |p: f64| p.max(bytes)));
        }
    };
    // Progress bars redraw with carriage returns: each redraw is its own line.
    for line in text.split(['\n', '\r']) {
        // Megatron-LM `megatron/training/training.py` `training_log` (core_v0.19.0):
        // ' iteration {:8d}/{:8d} |' … ' elapsed time per iteration (ms): {:.1f} |' and, with
        // --log-throughput, ' throughput per GPU (TFLOP/s/GPU): {throughput:.1f} |'. MindSpeed-LLM
        // prints the same (`mindspeed_llm/training/training.py` at c77308a1), its FSDP2 trainer with two
        // decimals (`mindspeed_llm/fsdp2/utils/train_monitor.py`).
        if line.contains("iteration")
            && let Some(ms) = after(line, "elapsed time per iteration (ms):")
        {
            res.megatron_lines += 1;
            steps.push(ms / 1000.0);
            if let Some(t) = after(line, "throughput per GPU (TFLOP/s/GPU):") {
                tflops.push(t);
            }
        }
        if let Some((phase, seconds)) = megatron_timer(line) {
            phases[phase as usize].push(seconds);
        }
        // Megatron-LM `megatron/training/utils/common_utils.py` `report_memory` (core_v0.19.0):
        // '[Rank {}] (after {n} iterations) memory (MB) | allocated: … | max allocated: … | …'.
        if line.contains("memory (MB)")
            && let Some(mib) = after(line, "max allocated:")
        {
            res.memory_lines += 1;
            note_peak(mib * MIB);
        }
        // MindSpeed-LLM FSDP2 `train_monitor.py`: ' max_memory_allocated(GB): {:.2f} |' (bytes / 1024^3).
        if let Some(gib) = after(line, "max_memory_allocated(GB):") {
            res.memory_lines += 1;
            note_peak(gib * GIB);
        }
        // HF transformers `trainer_callback.py` `ProgressCallback.on_log`: the logs dictionary as
        // Python prints it, `{'loss': 1.23, 'grad_norm': …, 'learning_rate': …, 'epoch': …}`; at the
        // end `Trainer.train`'s `speed_metrics("train", …)`: `{'train_runtime': …,
        // 'train_samples_per_second': …, 'train_steps_per_second': …, …}`. LLaMA-Factory prints
        // through the same callback.
        if line.contains("{'") {
            let loss = after(line, "'loss':").is_some();
            let per_second = after(line, "'train_steps_per_second':");
            if loss || per_second.is_some() || after(line, "'train_runtime':").is_some() {
                res.hf_lines += 1;
            }
            if let Some(rate) = per_second.filter(|&r| 0.0 < r) {
                run_average = Some(1.0 / rate);
            }
        }
        // HF transformers `TrainerState.save_to_json` (trainer_state.json, its `log_history`) and
        // `Trainer.save_metrics` (train_results.json, all_results.json) keep the same speed metric
        // as JSON, a key a line.
        if let Some(rate) = after(line, "\"train_steps_per_second\":").filter(|&r| 0.0 < r) {
            res.hf_lines += 1;
            run_average = Some(1.0 / rate);
        }
        if let Some(entry) = trainer_log_entry(line) {
            res.trainer_log_lines += 1;
            trainer_log.push((entry.steps, entry.seconds));
            if let Some(gib) = entry.vram_allocated_gib {
                res.memory_lines += 1;
                note_peak(gib * GIB);
            }
        }
        // DeepSpeed 0.19.8 `ThroughputTimer.stop` (deepspeed/utils/timer.py), every
        // `steps_per_print` steps on rank 0: 'epoch={}/micro_step={}/global_step={},
        // RunningAvgSamplesPerSec={}, CurrSamplesPerSec={}, MemAllocated={}GB,
        // MaxMemAllocated={}GB', the current rate `train_batch_size` over that step's seconds (its
        // micro-batches' forward to optimizer step), the memory in bytes / 1024^3.
        if line.contains("RunningAvgSamplesPerSec=")
            && let Some(rate) = after(line, "CurrSamplesPerSec=")
        {
            res.deepspeed_lines += 1;
            deepspeed_rates.push(rate);
            if let Some(gib) = after(line, "MaxMemAllocated=") {
                note_peak(gib * GIB);
            }
        }
        // tqdm's progress bar (HF Trainer's `ProgressCallback`, one tick per optimizer step):
        // `{rate_fmt}` is '{:5.2f}s/it' below one step per second, '{:5.2f}it/s' above.
        if let Some(seconds) = progress_rate(line) {
            res.progress_lines += 1;
            rates.push(seconds);
        }
        // VeRL (at b178a3cd) `verl/utils/logger/aggregate_logger.py` `concat_dict_to_str`: 'step:{step}' then
        // '{k}:{pprint.pformat(v)}' joined by ' - '; `timing_s/step` from
        // `verl/trainer/ppo/metric_utils.py` `compute_timing_metrics`, the peak from
        // `verl/workers/fsdp_workers.py` (`perf/max_memory_allocated_gb`, bytes / 1024^3).
        // Under Ray each line comes after its actor's name (`(TaskRunner pid=16292) step:2 - …`,
        // verl-project/verl#1208), and newer releases name the role before the peak's key
        // (`actor/perf/max_memory_allocated_gb`, verl-project/verl#7412).
        // MindSpeed-RL (05a90d7) `Loggers.handle_msg`, mindspeed_rl/utils/loggers.py: each
        // iteration's metrics as '{key} : {value:.4f} | ' after 'iteration: {n} / {steps} | '.
        if let Some(m) = mindspeed_rl_metrics(line) {
            res.mindspeed_rl_lines += 1;
            steps.extend(m.step);
            prompts.extend(m.prompt);
            responses.extend(m.response);
            phases.iter_mut().zip(m.phases).for_each(|(samples, seconds)| samples.extend(seconds));
        }
        if let Some(metrics) = verl_metrics(line) {
            res.verl_lines += 1;
            for (samples, seconds) in phases.iter_mut().zip(timed_phases(metrics)) {
                samples.extend(seconds);
            }
            for item in metrics.split(" - ") {
                let Some((key, value)) = item.trim().split_once(':') else { continue };
                match key {
                    "timing_s/step" => steps.extend(number(value)),
                    // `metric_utils.py` `compute_data_metrics`: the step's prompts and responses,
                    // their mean lengths (some releases name them under `tokens/`).
                    key if key.ends_with("response_length/mean") => responses.extend(number(value)),
                    key if key.ends_with("prompt_length/mean") => prompts.extend(number(value)),
                    key if key.ends_with("perf/max_memory_allocated_gb") => {
                        if let Some(gib) = number(value) {
                            res.memory_lines += 1;
                            note_peak(gib * GIB);
                        }
                    }
                    _ => {}
                }
            }
        }
    }
    res.phases =
        StepPhase::ALL.into_iter().zip(&phases).filter_map(|(p, xs)| Some((p, after_warm_up(xs)?))).collect();
    let samples = match (steps.is_empty(), rates.is_empty()) {
        (false, _) => steps,
        (true, false) => rates,
        (true, true) => run_average.into_iter().collect(),
    };
    let samples: Vec<f64> = samples.into_iter().filter(|x| x.is_finite() && 0.0 < *x).collect();
    res.step_samples = samples.len();
    res.skipped = warm_up(samples.len());
    res.step_seconds = median(&samples[res.skipped..]);
    // The step times a line prints (Megatron, VeRL, MindSpeed-RL) come first; trainer_log.jsonl's
    // seconds over many steps then outdo a progress bar's rate and the run's average.
    if res.megatron_lines + res.verl_lines + res.mindspeed_rl_lines == 0
        && let Some(fit) = trainer_log_step(&trainer_log)
    {
        (res.step_seconds, res.step_samples, res.skipped) = (Some(fit.seconds), fit.steps, fit.skipped);
    }
    // DeepSpeed's rates, a step each, when nothing else timed the steps: the step itself needs
    // the plan's global batch.
    let deepspeed_rates: Vec<f64> =
        deepspeed_rates.into_iter().filter(|x| x.is_finite() && 0.0 < *x).collect();
    if res.step_seconds.is_none() && !deepspeed_rates.is_empty() {
        res.step_samples = deepspeed_rates.len();
        res.skipped = warm_up(deepspeed_rates.len());
        res.samples_per_second = median(&deepspeed_rates[res.skipped..]);
    }
    res.tflops_per_device = median(&tflops[warm_up(tflops.len())..]);
    res.mean_prompt_tokens = median(&prompts).filter(|&n| 0.0 < n);
    res.mean_response_tokens = median(&responses).filter(|&n| 0.0 < n);
    res.peak_allocated_bytes = peak.map(|b| b.min(u64::MAX as f64 / 2.0) as u64);
    let recognized = res.megatron_lines
        + res.memory_lines
        + res.hf_lines
        + res.trainer_log_lines
        + res.deepspeed_lines
        + res.progress_lines
        + res.verl_lines
        + res.mindspeed_rl_lines;
    match (recognized, res.step_seconds.or(res.samples_per_second), res.peak_allocated_bytes) {
        (0, _, _) => Err(LogError::Unrecognized),
        (_, None, None) => Err(LogError::NothingToFit(Box::new(res))),
        _ => Ok(res),
    }
}

/// [`parse`] for `plan`: a log that gives its steps as DeepSpeed's samples a second gets the step
/// that rate takes for the plan's global batch (DeepSpeed's `train_batch_size`, which the plan's
/// launch file writes).
pub fn parse_for(plan: &Plan, text: &str) -> Result<LogSummary, LogError> {
    let mut res = parse(text)?;
    if res.step_seconds.is_none() {
        res.step_seconds = res.samples_per_second.map(|rate| f64::from(plan.batch.global_batch.get()) / rate);
    }
    Ok(res)
}

/// The plan's calibration fitted to the log: the efficiency that gives its step time, and the
/// memory offset that gives its peak. PyTorch's `max_memory_allocated` does not count the CUDA or
/// CANN context, which the plan's peak does (docs/memory.md, `overheads.runtime_context_mib`), so
/// the plan's context is added to the log's peak before fitting. An RL plan is fitted with the
/// prompts' and responses' mean lengths the log gives ([`logged_means`]), which the plan should
/// take with it: the step's length is the data's, not the hardware's efficiency.
pub fn calibrate(plan: &Plan, log: &LogSummary) -> CalibrationFile {
    let peak = log.peak_allocated_bytes.map(|b| b.saturating_add(plan.overheads().runtime_context_bytes));
    let (prompt, response) = logged_means(plan, log);
    let mut logged = plan.clone();
    logged.rl.mean_prompt_length = prompt.unwrap_or(plan.rl.mean_prompt_length);
    logged.rl.mean_response_length = response.unwrap_or(plan.rl.mean_response_length);
    let generation = log.phases.iter().find(|(p, _)| *p == StepPhase::Generation).map(|&(_, s)| s);
    let rl = is_rl(plan);
    let Some(generation) = generation.filter(|s| rl && 0.0 < *s) else {
        return crate::calibrate(&logged, log.step_seconds, peak);
    };
    // The generation timed apart (`timing_s/gen`) fits the rollout's own factor, and the
    // training's efficiency the rest of the step. The rollout's prefill runs at the GEMMs'
    // efficiency, so each fit moves the other a little: three rounds settle both.
    let mut fitted = CalibrationFile { rollout_scale: None, ..plan.calibration };
    for _ in 0..3 {
        logged.calibration = CalibrationFile { rollout_scale: None, ..fitted };
        let modelled = crate::evaluate(&logged).time.breakdown.rollout_seconds;
        fitted.rollout_scale = (0.0 < modelled).then(|| (generation / modelled).clamp(0.05, 20.0));
        logged.calibration = fitted;
        fitted = crate::calibrate(&logged, log.step_seconds, peak);
    }
    fitted
}

/// The prompts' and the responses' mean lengths, whole tokens, that an RL plan takes from the log;
/// `None` for a plan that is not RL or a log without them.
pub fn logged_means(plan: &Plan, log: &LogSummary) -> (Option<u32>, Option<u32>) {
    let rl = is_rl(plan);
    let whole = |mean: Option<f64>| {
        mean.filter(|_| rl).map(|mean| mean.round().clamp(1.0, f64::from(u32::MAX)) as u32)
    };
    (whole(log.mean_prompt_tokens), whole(log.mean_response_tokens))
}

/// Whether the plan trains by RL (GRPO, PPO): a log's RL phases and mean lengths are its own.
fn is_rl(plan: &Plan) -> bool {
    matches!(plan.method, crate::plan::Method::Grpo | crate::plan::Method::Ppo)
}

/// Whose log a pasted one reads as, by the lines only one family of frameworks prints.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LogSource {
    /// Megatron's iteration lines (`training_log`: Megatron-LM, MindSpeed-LLM, MindSpeed-RL).
    Megatron,
    /// The HF Trainer's log dictionaries (LLaMA-Factory, a DeepSpeed script through transformers).
    HfTrainer,
    /// VeRL's `step:N - …` metrics (either engine).
    Verl,
    /// MindSpeed-RL's `iteration: N / M | timing/all : …` metrics.
    MindSpeedRl,
    /// DeepSpeed's throughput lines (a DeepSpeed script, LLaMA-Factory on DeepSpeed).
    DeepSpeed,
}

impl LogSource {
    /// The frameworks whose runs print such lines.
    fn printed_by(self, framework: Framework) -> bool {
        match self {
            LogSource::Megatron => {
                matches!(framework, Framework::Megatron | Framework::MindSpeedLlm | Framework::MindSpeedRl)
            }
            LogSource::HfTrainer => matches!(framework, Framework::LlamaFactory | Framework::DeepSpeed),
            LogSource::Verl => framework.is_verl(),
            LogSource::MindSpeedRl => framework == Framework::MindSpeedRl,
            LogSource::DeepSpeed => matches!(framework, Framework::LlamaFactory | Framework::DeepSpeed),
        }
    }
}

/// The family a log's own lines name when the plan's framework prints none of them: a log of
/// another run, which calibrating this plan from would fit the wrong run's figures. `None` when
/// the log has a line the plan's framework prints, or only lines any framework's run may
/// (memory reports, progress bars).
///
/// ```
/// use trainplan_core::{Plan, logparse::{self, LogSource}};
/// let log = logparse::parse("step:1 - timing_s/step:19.5 - perf/max_memory_allocated_gb:40.1")?;
/// let plan = Plan::from_json(r#"{"model": "qwen2.5-7b"}"#).unwrap();
/// assert_eq!(logparse::another_frameworks_log(&plan, &log), Some(LogSource::Verl));
/// # Ok::<(), logparse::LogError>(())
/// ```
pub fn another_frameworks_log(plan: &Plan, log: &LogSummary) -> Option<LogSource> {
    let sources = [
        (log.megatron_lines, LogSource::Megatron),
        (log.hf_lines + log.trainer_log_lines, LogSource::HfTrainer),
        (log.verl_lines, LogSource::Verl),
        (log.mindspeed_rl_lines, LogSource::MindSpeedRl),
        (log.deepspeed_lines, LogSource::DeepSpeed),
    ];
    let present = || sources.iter().filter(|&&(n, _)| 0 < n).map(|&(_, source)| source);
    match present().any(|source| source.printed_by(plan.framework)) {
        true => None,
        false => present().next(),
    }
}

const MIB: f64 = (1u64 << 20) as f64;
const GIB: f64 = (1u64 << 30) as f64;

/// Step-time samples left out as warm-up: none of one, else the first tenth and at least the first.
fn warm_up(n: usize) -> usize {
    match n {
        0 | 1 => 0,
        n => (n / 10).max(1),
    }
}

/// The median of samples in order, those of the warm-up left out ([`warm_up`]).
fn after_warm_up(xs: &[f64]) -> Option<f64> {
    median(&xs[warm_up(xs.len())..])
}

fn median(xs: &[f64]) -> Option<f64> {
    let mut v = xs.to_vec();
    crate::sort::sort_by(&mut v, f64::total_cmp);
    match v.len() {
        0 => None,
        n if n % 2 == 1 => Some(v[n / 2]),
        n => Some(0.5 * (v[n / 2 - 1] + v[n / 2])),
    }
}

/// The number after `key` in `line`.
fn after(line: &str, key: &str) -> Option<f64> {
    let start = line.find(key)? + key.len();
    number(&line[start..])
}

/// The number a text starts with (after spaces), as Python prints it: `1234.5`, `1e-05`, NumPy 2's
/// `np.float64(1234.5)` from `pprint.pformat`, and a number in quotes.
fn number(text: &str) -> Option<f64> {
    // transformers 5's `ProgressCallback.on_log` prints floats as strings (`'train_runtime': '2219'`).
    let text = text.trim_start();
    let text = text.strip_prefix(['\'', '"']).unwrap_or(text);
    let text = match text.strip_prefix("np.") {
        Some(rest) => &rest[rest.find('(')? + 1..],
        None => text,
    };
    let end = text
        .char_indices()
        .find(|&(_, c)| !(c.is_ascii_digit() || matches!(c, '.' | 'e' | 'E' | '+' | '-')))
        .map_or(text.len(), |(i, _)| i);
    text[..end].parse::<f64>().ok().filter(|x| x.is_finite())
}

/// A VeRL metrics line from its `step:N - ` on, whatever comes before it (a Ray actor's name, its
/// colour codes); `None` for any other line.
fn verl_metrics(line: &str) -> Option<&str> {
    let at = line.match_indices("step:").map(|(i, _)| i).find(|&i| {
        let before = line[..i].chars().next_back();
        let starts_word = before.is_none_or(|c| c.is_whitespace() || c == ')');
        starts_word && line[i + 5..].starts_with(|c: char| c.is_ascii_digit())
    })?;
    let metrics = &line[at..];
    metrics.contains(" - ").then_some(metrics)
}

/// A Megatron timers' line of a timer this reader keeps (`forward-backward`, `optimizer`): its
/// phase and the slowest rank's seconds. `Timers.log` (megatron/core/timers.py at d98e8a6) prints
/// each under `(min, max) time across ranks (ms):` as `'    {}: ({:.2f}, {:.2f})'` with the name
/// and a space padded with dots to 48 characters, or as `': {:.2f}'`, the maximum alone, under
/// `max time across ranks (ms):`; per iteration (its `normalizer` is the log interval).
fn megatron_timer(line: &str) -> Option<(StepPhase, f64)> {
    let (phase, at) =
        [("forward-backward .", StepPhase::ForwardBackward), ("optimizer .", StepPhase::Optimizer)]
            .into_iter()
            .find_map(|(name, phase)| {
                let at = line.find(name)?;
                // A name of its own: `optimizer` alone, not `…-optimizer`.
                let own =
                    line[..at].chars().next_back().is_none_or(|c| c.is_whitespace() || c == ':' || c == ']');
                own.then_some((phase, at + name.len()))
            })?;
    let value = line[at..].trim_start_matches('.').strip_prefix(':')?.trim();
    let ms = match value.strip_prefix('(') {
        Some(pair) => pair.strip_suffix(')')?.split_once(',')?.1.trim().parse::<f64>().ok()?,
        None => value.parse::<f64>().ok()?,
    };
    (ms.is_finite() && 0.0 <= ms).then_some((phase, ms / 1000.0))
}

/// A LLaMA-Factory `trainer_log.jsonl` line: the optimizer steps done, the whole seconds since
/// training began, the peak allocated so far where the run records it.
struct TrainerLogEntry {
    steps: f64,
    seconds: f64,
    vram_allocated_gib: Option<f64>,
}

/// A line of LLaMA-Factory's `trainer_log.jsonl` (`LogCallback.on_log`,
/// src/llamafactory/train/callbacks.py at 0583d066: `json.dumps` of `current_steps`,
/// `total_steps`, `loss`, …, `elapsed_time` as `str(timedelta(seconds=int(elapsed)))`, a line
/// each time the trainer logs, an evaluation's too; with `RECORD_VRAM=1`, `vram_allocated`, the
/// rank's `max_memory_allocated` in GiB (`get_peak_memory`, src/llamafactory/extras/misc.py at
/// 00577a85)).
fn trainer_log_entry(line: &str) -> Option<TrainerLogEntry> {
    let steps = after(line, "\"current_steps\":")?;
    let elapsed = &line[line.find("\"elapsed_time\": \"")? + 17..];
    let elapsed = &elapsed[..elapsed.find('"')?];
    // `str(timedelta)`: "H:MM:SS", after "D day, " or "D days, " past a day.
    let (days, clock) = match elapsed.split_once(", ") {
        Some((days, clock)) => (days.split(' ').next()?.parse::<f64>().ok()?, clock),
        None => (0.0, elapsed),
    };
    let mut hms = clock.split(':').map(|x| x.parse::<f64>().ok());
    let (h, m, s) = (hms.next()??, hms.next()??, hms.next()??);
    let seconds = ((days * 24.0 + h) * 60.0 + m) * 60.0 + s;
    let vram_allocated_gib = after(line, "\"vram_allocated\":");
    (hms.next().is_none() && 0.0 <= steps && seconds.is_finite()).then_some(TrainerLogEntry {
        steps,
        seconds,
        vram_allocated_gib,
    })
}

/// The step time a `trainer_log.jsonl` gives, the steps it stands for and those left out.
struct TrainerLogStep {
    seconds: f64,
    steps: usize,
    skipped: usize,
}

/// The step time from `trainer_log.jsonl`'s lines (steps, seconds), the start of training first:
/// the seconds over the steps between lines, the first tenth of the intervals left out as warm-up
/// (the first always, [`warm_up`]), their sum over their steps, not a median, since each line's
/// seconds are cut to a whole second (which the sum cancels). An evaluation's line, at the step
/// the training line before it logged, takes its time out of the count; a run resumed into the
/// same file, its clock started again, starts nothing counted either.
fn trainer_log_step(lines: &[(f64, f64)]) -> Option<TrainerLogStep> {
    let intervals: Vec<(f64, f64)> = lines
        .windows(2)
        .map(|w| (w[1].0 - w[0].0, w[1].1 - w[0].1))
        .filter(|&(steps, seconds)| 0.0 < steps && 0.0 <= seconds)
        .collect();
    let (skipped, kept) = intervals.split_at(warm_up(intervals.len()));
    let steps: f64 = kept.iter().map(|&(n, _)| n).sum();
    let seconds: f64 = kept.iter().map(|&(_, t)| t).sum();
    let left_out: f64 = skipped.iter().map(|&(n, _)| n).sum();
    let per_step = seconds / steps;
    (per_step.is_finite() && 0.0 < per_step).then_some(TrainerLogStep {
        seconds: per_step,
        steps: (steps + left_out) as usize,
        skipped: left_out as usize,
    })
}

/// What a MindSpeed-RL metrics line gives: the step's seconds, the mean lengths, each phase's.
struct MindSpeedRlLine {
    step: Option<f64>,
    prompt: Option<f64>,
    response: Option<f64>,
    phases: [Option<f64>; StepPhase::ALL.len()],
}

/// A MindSpeed-RL metrics line (`Loggers.handle_msg`, mindspeed_rl/utils/loggers.py at 05a90d7:
/// `'iteration: {iteration} / {steps} | '`, then `'{key} : {value:.4f} | '` for each metric, the last
/// separator dropped), if the line is one with its timers (`timing/all`, the iteration's seconds:
/// `metrics_sort`, mindspeed_rl/utils/utils.py). Its timers by phase: `rollout` the generation;
/// `old_log_p`, `reference_model` and the reference's `ref_onload`, `ref_offload` the
/// log-probabilities; `critic_model` and `update_critic` the critic; `update` and
/// `resharding_to_train` (the states brought back for it) the update; `resharding_to_infer` the
/// weights handed to the engine. The mean lengths as `compute_grpo_data_metrics` names them
/// (mindspeed_rl/trainer/utils/compute_utils.py).
fn mindspeed_rl_metrics(line: &str) -> Option<MindSpeedRlLine> {
    let at = line.find("iteration: ")?;
    let mut res =
        MindSpeedRlLine { step: None, prompt: None, response: None, phases: [None; StepPhase::ALL.len()] };
    for item in line[at..].split(" | ").skip(1) {
        let Some((key, value)) = item.split_once(" : ") else { continue };
        let value = number(value).filter(|s| s.is_finite() && 0.0 <= *s);
        let phase = match key.trim() {
            "timing/all" => {
                res.step = value;
                continue;
            }
            "prompt_length/mean" => {
                res.prompt = value;
                continue;
            }
            "response_length/mean" => {
                res.response = value;
                continue;
            }
            "timing/rollout" => StepPhase::Generation,
            "timing/old_log_p" | "timing/reference_model" | "timing/ref_onload" | "timing/ref_offload" => {
                StepPhase::LogProb
            }
            "timing/critic_model" | "timing/update_critic" => StepPhase::Critic,
            "timing/update" | "timing/resharding_to_train" => StepPhase::Update,
            "timing/resharding_to_infer" => StepPhase::WeightSync,
            _ => continue,
        };
        if let Some(seconds) = value {
            let slot = &mut res.phases[phase as usize];
            *slot = Some(slot.unwrap_or(0.0) + seconds);
        }
    }
    res.step.is_some().then_some(res)
}

/// A VeRL metrics line's seconds by RL phase: each phase's `timing_s/…` timers summed, `None` for a
/// phase the line timed no timer of.
fn timed_phases(metrics: &str) -> [Option<f64>; StepPhase::ALL.len()] {
    let mut timed = [None; StepPhase::ALL.len()];
    for item in metrics.split(" - ") {
        let Some((key, value)) = item.trim().split_once(':') else { continue };
        let phase = key.strip_prefix("timing_s/").and_then(StepPhase::of_verl_timer);
        if let (Some(phase), Some(seconds)) = (phase, number(value).filter(|s| s.is_finite() && 0.0 <= *s)) {
            let at = phase as usize;
            timed[at] = Some(timed[at].unwrap_or(0.0) + seconds);
        }
    }
    timed
}

/// Seconds per step from a tqdm bar's rate (`…, 2.50s/it]`, `…,  1.23it/s]`), if the line has one.
/// A bar with a description is not the Trainer's (which has none): loading the checkpoint's shards
/// (`Loading checkpoint shards:  29%|██▉ | 5/17 [00:17<00:43,  3.65s/it]`, hiyouga/LlamaFactory#8439),
/// writing them, mapping the dataset; a log prefix such as `[rank0]:` is no description.
fn progress_rate(line: &str) -> Option<f64> {
    if let Some(bar) = line.find("%|") {
        let head = line[..bar].trim_end_matches(|c: char| c.is_ascii_digit() || c == '.').trim_end();
        if head.ends_with(':') && !head.ends_with("]:") {
            return None;
        }
    }
    for (unit, invert) in [("s/it", false), ("it/s", true)] {
        let Some(end) = line.find(unit) else { continue };
        let head = &line[..end];
        let start = head
            .char_indices()
            .rev()
            .find(|&(_, c)| !(c.is_ascii_digit() || c == '.'))
            .map_or(0, |(i, c)| i + c.len_utf8());
        let Some(x) = head[start..].parse::<f64>().ok().filter(|x| x.is_finite() && 0.0 < *x) else {
            continue;
        };
        return Some(if invert { 1.0 / x } else { x });
    }
    None
}
