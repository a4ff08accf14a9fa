//! Reading pasted training logs: lines written here with the frameworks' own format strings
//! (cited in core/src/logparse.rs), and the calibration they give.

use trainplan_core::logparse::{self, LogError};
use trainplan_core::{Plan, evaluate};

/// Megatron-LM `training_log`: `' iteration {:8d}/{:8d} |'`, `' consumed samples: {:12d} |'`,
/// `' elapsed time per iteration (ms): {:.1f} |'`, `' throughput per GPU (TFLOP/s/GPU): {:.1f} |'`.
fn megatron_line(iteration: u64, ms: f64, tflops: f64) -> String {
    format!(
        " [2025-06-01 12:00:00.000000] iteration {iteration:8}/{:8} | consumed samples: {:12} | elapsed time per iteration (ms): {ms:.1} | throughput per GPU (TFLOP/s/GPU): {tflops:.1} | learning rate: 3.000000E-04 | global batch size:   512 | lm loss: 2.345678E+00 | loss scale: 1.0 | grad norm: 0.812 | number of skipped iterations:   0 | number of nan iterations:   0 |",
        500,
        iteration * 512
    )
}

/// Megatron-LM `report_memory`: `'[Rank {}] {}'` of `'(after {n} iterations) memory (MB)'` and
/// `f" | allocated: {…:.2f}"` … for allocated, max allocated, reserved, max reserved.
fn memory_line(rank: u32, max_allocated_mib: f64) -> String {
    format!(
        "[Rank {rank}] (after 10 iterations) memory (MB) | allocated: {:.2} | max allocated: {max_allocated_mib:.2} | reserved: {:.2} | max reserved: {:.2}",
        max_allocated_mib * 0.6,
        max_allocated_mib * 1.05,
        max_allocated_mib * 1.08
    )
}

#[test]
fn megatron_lines_give_the_median_after_warm_up_and_the_largest_peak() {
    let mut log = String::from("using world size: 64, data-parallel size: 8\n");
    // The first interval carries start-up; the rest vary around 6.2 s.
    for (i, ms) in [21_034.5, 6_250.1, 6_190.7, 6_201.3, 6_305.9, 6_188.2].into_iter().enumerate() {
        log += &megatron_line(10 * (i as u64 + 1), ms, 180.0 + i as f64);
        log.push('\n');
        if i == 0 {
            // Ranks of other pipeline stages print their own memory.
            for (rank, mib) in [(0, 61_234.56), (8, 70_001.25), (16, 65_000.0)] {
                log += &memory_line(rank, mib);
                log.push('\n');
            }
        }
    }
    let s = logparse::parse(&log).unwrap();
    assert_eq!((s.megatron_lines, s.memory_lines, s.step_samples, s.skipped), (6, 3, 6, 1));
    // Median of 6250.1, 6190.7, 6201.3, 6305.9, 6188.2.
    assert_eq!(s.step_seconds, Some(6.2013));
    // The largest "max allocated", MiB (PyTorch's MB are 2^20 bytes).
    assert_eq!(s.peak_allocated_bytes, Some((70_001.25 * (1u64 << 20) as f64) as u64));
    assert_eq!(s.tflops_per_device, Some(183.0));
}

#[test]
fn mindspeed_fsdp2_lines_are_read() {
    // MindSpeed-LLM `fsdp2/utils/train_monitor.py`: '… elapsed time per iteration (ms): {:.2f} |' and
    // ' max_memory_allocated(GB): {:.2f} | max_memory_reserved(GB): {:.2f} |'.
    let log = [(1, 10_520.60, 19.07), (2, 1_879.90, 19.65), (3, 1_861.20, 19.65), (4, 1_870.00, 19.66)]
        .map(|(i, ms, gb)| {
            format!(
                "INFO [2026-06-22 19:28:40] >>  iteration {i:8}/{:8} | consumed samples: {:10} | consumed tokens: {:10} | elapsed time per iteration (ms): {ms:.2} | learning rate: 9.999994E-06 | global batch size:     8 | lm loss: 1.304194E+00 | grad norm: 8.515 | max_memory_allocated(GB): {gb:.2} | max_memory_reserved(GB): {:.2} |",
                2000,
                i * 8,
                i * 32768,
                gb + 1.8
            )
        })
        .join("\n");
    let s = logparse::parse(&log).unwrap();
    assert_eq!((s.skipped, s.step_seconds), (1, Some(1.8700)));
    assert_eq!(s.peak_allocated_bytes, Some((19.66 * (1u64 << 30) as f64) as u64));
}

#[test]
fn hf_trainer_progress_bar_and_summary() {
    // tqdm redraws with carriage returns; HF prints its log dictionaries with `str(logs)`.
    let bar = [(1, "?it/s"), (2, "12.10s/it"), (3, "8.40s/it"), (4, "8.31s/it"), (5, "8.35s/it")]
        .map(|(i, rate)| format!("  {}%|██        | {i}/100 [00:{:02}<13:20, {rate}]", i, i * 8))
        .join("\r");
    let log =
        format!("{bar}\n{{'loss': 1.4142, 'grad_norm': 0.7071, 'learning_rate': 1e-05, 'epoch': 0.05}}\n");
    let s = logparse::parse(&log).unwrap();
    // Four rates (the first bar has none); the first left out; median of 8.40, 8.31, 8.35.
    assert_eq!((s.progress_lines, s.hf_lines, s.skipped), (4, 1, 1));
    assert_eq!(s.step_seconds, Some(8.35));
    // A fast run prints it/s: 2.5 it/s is 0.4 s a step. Without a bar, the summary's average.
    let fast = logparse::parse(" 50%|█████     | 50/100 [00:20<00:20,  2.50it/s]").unwrap();
    assert_eq!(fast.step_seconds, Some(0.4));
    let summary = "{'train_runtime': 3601.2, 'train_samples_per_second': 17.77, 'train_steps_per_second': 0.278, 'train_loss': 1.02, 'epoch': 3.0}";
    let s = logparse::parse(summary).unwrap();
    assert_eq!(s.step_seconds, Some(1.0 / 0.278));
}

/// LLaMA-Factory `LogCallback.on_log` (src/llamafactory/train/callbacks.py): `json.dumps` of the
/// step, its loss and learning rate, `elapsed_time` as `str(timedelta(seconds=int(elapsed)))`,
/// and with `RECORD_VRAM=1` the peak allocated in GiB, two decimals.
fn trainer_log_line(steps: u32, seconds: u32, loss: Option<f64>, vram_gib: f64) -> String {
    let (h, m, s) = (seconds / 3600, seconds / 60 % 60, seconds % 60);
    let elapsed = match h / 24 {
        0 => format!("{h}:{m:02}:{s:02}"),
        1 => format!("1 day, {}:{m:02}:{s:02}", h % 24),
        d => format!("{d} days, {}:{m:02}:{s:02}", h % 24),
    };
    let loss = match loss {
        Some(loss) => format!(r#""loss": {loss}, "lr": 9.5e-05, "epoch": 0.12, "#),
        None => r#""eval_loss": 1.25, "epoch": 0.12, "#.to_owned(),
    };
    format!(
        r#"{{"current_steps": {steps}, "total_steps": 9000, {loss}"percentage": {:.2}, "elapsed_time": "{elapsed}", "remaining_time": "1 day, 2:00:00", "throughput": 5123.45, "total_tokens": 123456, "vram_allocated": {vram_gib}, "vram_reserved": 70.5}}"#,
        f64::from(steps) / 90.0
    )
}

#[test]
fn llamafactory_trainer_log_jsonl() {
    // Every 10 steps from the start: 95 s for the first ten (warm-up), then 61, 62, 61 and 62 s;
    // an evaluation at step 30 takes 300 s before the next ten steps start; a day passes.
    let lines = [
        trainer_log_line(10, 95, Some(1.9), 60.25),
        trainer_log_line(20, 156, Some(1.7), 61.5),
        trainer_log_line(30, 218, Some(1.6), 61.5),
        trainer_log_line(30, 518, None, 62.75),
        trainer_log_line(40, 579, Some(1.5), 61.5),
        trainer_log_line(50, 641, Some(1.4), 61.5),
    ];
    let s = logparse::parse(&lines.join("\n")).unwrap();
    assert_eq!((s.trainer_log_lines, s.memory_lines), (6, 6));
    // Five intervals of ten steps (the evaluation's counts none): the first left out, then
    // (61 + 62 + 61 + 62) s over 40 steps.
    assert_eq!((s.step_samples, s.skipped), (50, 10));
    assert_eq!(s.step_seconds, Some(246.0 / 40.0));
    assert_eq!(s.peak_allocated_bytes, Some(62.75 * (1u64 << 30) as f64).map(|b| b as u64));
    // Past a day `timedelta` prints its days; a run resumed into the same file starts its clock
    // again, and the step back in time counts nothing.
    let long = [
        trainer_log_line(100, 86_000, Some(1.2), 60.0),
        trainer_log_line(110, 86_620, Some(1.2), 60.0),
        trainer_log_line(120, 2 * 86_400 + 40, Some(1.2), 60.0),
        trainer_log_line(130, 35, Some(1.1), 60.0),
        trainer_log_line(140, 97, Some(1.1), 60.0),
    ];
    assert!(long[2].contains(r#""elapsed_time": "2 days, 0:00:40""#), "{}", long[2]);
    let s = logparse::parse(&long.join("\n")).unwrap();
    // From the start: 100 steps (left out), 10 in 620 s, 10 in 86,220 s, 10 in 62 s.
    assert_eq!((s.step_samples, s.skipped), (130, 100));
    assert_eq!(s.step_seconds, Some((620.0 + 86_220.0 + 62.0) / 30.0));
    // HF's trainer_state.json and all_results.json keep the run's average as JSON, a key a line.
    let state = "  \"log_history\": [\n    {\n      \"epoch\": 3.0,\n      \"step\": 1800,\n      \"total_flos\": 1.2e+18,\n      \"train_loss\": 1.02,\n      \"train_runtime\": 6480.0,\n      \"train_samples_per_second\": 8.889,\n      \"train_steps_per_second\": 0.278\n    }\n  ],";
    let s = logparse::parse(state).unwrap();
    assert_eq!((s.hf_lines, s.step_seconds), (1, Some(1.0 / 0.278)));
}

#[test]
fn deepspeed_throughput_lines() {
    // DeepSpeed `ThroughputTimer.stop` on rank 0 every `steps_per_print` steps, after the
    // logger's prefix: the current rate is `train_batch_size` over that step's seconds.
    let line = |step: u32, current: f64, max_gib: f64| {
        format!(
            "[2026-11-30 10:00:00,000] [INFO] [timer.py:264:stop] epoch=0/micro_step={}/global_step={step}, RunningAvgSamplesPerSec=30.871234567, CurrSamplesPerSec={current}, MemAllocated=15.4GB, MaxMemAllocated={max_gib}GB",
            step * 8
        )
    };
    let log = [line(10, 21.5, 40.21), line(20, 32.0, 40.25), line(30, 31.0, 40.25), line(40, 32.5, 40.3)]
        .join("\n");
    let s = logparse::parse(&log).unwrap();
    assert_eq!((s.deepspeed_lines, s.step_samples, s.skipped), (4, 4, 1));
    // The median of 32.0, 31.0 and 32.5; no step without a batch.
    assert_eq!((s.samples_per_second, s.step_seconds), (Some(32.0), None));
    assert_eq!(s.peak_allocated_bytes, Some((40.3 * (1u64 << 30) as f64) as u64));
    // For a plan of 256 sequences a step (its DeepSpeed JSON's train_batch_size): 256 / 32 s.
    let plan = Plan::from_json(
        r#"{"model": "llama-3-8b", "framework": "deepspeed", "method": "sft-full", "batch": {"global_batch": 256}}"#,
    )
    .unwrap();
    let s = logparse::parse_for(&plan, &log).unwrap();
    assert_eq!(s.step_seconds, Some(8.0));
    assert!(
        s.figures().starts_with("step 8.000 s (from 3, 1 left out as warm-up), 32.00 samples/s"),
        "{}",
        s.figures()
    );
    // DeepSpeed's own lines for a DeepSpeed plan; for a Megatron one, named.
    assert_eq!(logparse::another_frameworks_log(&plan, &s), None);
    let megatron =
        Plan::from_json(r#"{"model": "llama-3-8b", "framework": "megatron", "method": "pretrain"}"#).unwrap();
    assert_eq!(logparse::another_frameworks_log(&megatron, &s), Some(logparse::LogSource::DeepSpeed));
    // A run 1.3 × slower than the plan predicts: fitted, the plan predicts the logged step.
    let measured = 1.3 * evaluate(&plan).time.step_seconds;
    let rate = 256.0 / measured;
    let log = [line(10, 0.5 * rate, 40.0), line(20, rate, 40.0), line(30, rate, 40.0)].join("\n");
    let s = logparse::parse_for(&plan, &log).unwrap();
    let mut fitted = plan.clone();
    fitted.calibration = logparse::calibrate(&plan, &s);
    let step = evaluate(&fitted).time.step_seconds;
    assert!((step / measured - 1.0).abs() < 1e-3, "{step} against {measured}");
}

#[test]
fn verl_metrics_lines() {
    // VeRL `concat_dict_to_str`: 'step:{step}' and '{k}:{pprint.pformat(v)}' joined by ' - '; NumPy 2
    // scalars print as `np.float64(…)`.
    let log = [(1, "95.2", "40.5"), (2, "61.0", "52.25"), (3, "np.float64(60.0)", "np.float64(52.0)"), (4, "62.5", "51.0")]
        .map(|(step, t, gb)| {
            format!(
                "step:{step} - actor/pg_loss:-0.0123 - actor/grad_norm:0.31 - timing_s/gen:30.1 - timing_s/step:{t} - perf/max_memory_allocated_gb:{gb} - perf/throughput:1520.3"
            )
        })
        .join("\n");
    let s = logparse::parse(&log).unwrap();
    assert_eq!((s.verl_lines, s.memory_lines, s.skipped), (4, 4, 1));
    assert_eq!(s.step_seconds, Some(61.0));
    assert_eq!(s.peak_allocated_bytes, Some((52.25 * (1u64 << 30) as f64) as u64));
}

/// Lines as today's releases print them (the values here are the test's, the formats the logs'
/// quoted in the frameworks' issues): VeRL under Ray, with the actor's name before each line
/// (verl-project/verl#1208) and the role before the peak's key (verl-project/verl#7412);
/// transformers 5's log dictionaries, floats printed as strings (`ProgressCallback.on_log`:
/// `f"{v:.4g}"`, as LLaMA-Factory shows them today); and the bars of loading and writing a
/// checkpoint's shards beside the Trainer's own (hiyouga/LlamaFactory#8439), which are no steps.
#[test]
fn lines_as_todays_releases_print_them() {
    let ray = (1..=4)
        .map(|step| {
            format!(
                "\u{1b}[36m(TaskRunner pid=16292)\u{1b}[0m step:{step} - actor/pg_loss:-0.01 - timing_s/gen:30.1 - \
                 timing_s/step:{} - actor/perf/max_memory_allocated_gb:{} - perf/throughput:1520.3",
                [96.5, 61.0, 60.0, 62.5][step - 1],
                [24.5, 25.0, 25.5, 25.25][step - 1]
            )
        })
        .collect::<Vec<_>>()
        .join("\n");
    let s = logparse::parse(&ray).unwrap();
    assert_eq!((s.verl_lines, s.memory_lines, s.skipped), (4, 4, 1));
    assert_eq!(s.step_seconds, Some(61.0));
    assert_eq!(s.peak_allocated_bytes, Some((25.5 * (1u64 << 30) as f64) as u64));
    // A key ending in `step:` is not a line's step (`timing_s/step:` alone is no VeRL line).
    assert!(logparse::parse("timing_s/step:96.5 - x:1").is_err());

    let quoted = "{'loss': '1.414', 'grad_norm': '0.7071', 'learning_rate': '1e-05', 'epoch': '0.05'}\n\
                  {'train_runtime': '2219', 'train_samples_per_second': '1.474', 'train_steps_per_second': '0.185', 'train_loss': '0.7228', 'epoch': '3'}";
    let s = logparse::parse(quoted).unwrap();
    assert_eq!(s.hf_lines, 2);
    assert_eq!(s.step_seconds, Some(1.0 / 0.185));

    let shards = (1..=17).map(|i| {
        format!("Loading checkpoint shards:  {}%|██▉ | {i}/17 [00:17<00:43,  3.65s/it]", i * 100 / 17)
    });
    let mapped = " Map (num_proc=16): 100%|██████████| 1000/1000 [00:02<00:00, 412.50it/s]".to_owned();
    let training = [(56, "8.70s/it"), (57, "7.95s/it"), (58, "8.27s/it"), (59, "8.31s/it"), (60, "8.20s/it")]
        .map(|(i, rate)| format!("[rank0]:   0%|          | {i}/13080 [08:13<28:44:51, {rate}]"));
    let log = shards.chain([mapped]).chain(training).collect::<Vec<_>>().join("\n");
    let s = logparse::parse(&log).unwrap();
    // The Trainer's five rates alone, the first left out: the median of 7.95, 8.27, 8.31, 8.20.
    assert_eq!((s.progress_lines, s.skipped), (5, 1));
    assert_eq!(s.step_seconds, Some(0.5 * (8.20 + 8.27)));
}

#[test]
fn unknown_text_says_what_was_recognized() {
    let err = logparse::parse("hello\nworld 42 | 3.14").unwrap_err();
    assert_eq!(err, LogError::Unrecognized);
    assert!(err.to_string().contains("elapsed time per iteration"), "{err}");
    // Loss lines alone give neither a step time nor a peak, and the message says what was seen.
    let err = logparse::parse("{'loss': 2.0, 'epoch': 0.1}\n{'loss': 1.9, 'epoch': 0.2}").unwrap_err();
    match &err {
        LogError::NothingToFit(s) => assert_eq!(s.hf_lines, 2),
        other => panic!("{other:?}"),
    }
    assert!(err.to_string().contains("2 HF Trainer log lines"), "{err}");
    assert_eq!(logparse::parse(""), Err(LogError::Unrecognized));
}

#[test]
fn garbage_never_panics() {
    for text in [
        "iteration elapsed time per iteration (ms): nan |",
        "elapsed time per iteration (ms): -5 iteration",
        "step: - timing_s/step:np.float64( - x",
        "s/it it/s 1e999s/it",
        "memory (MB) | max allocated: 1e300",
        "{'train_steps_per_second': 0}",
        "\u{0}\r\r\n\u{feff}",
        r#"{"current_steps": 1e308, "elapsed_time": "1e308 days, 1e308:0:0"}"#,
        r#"{"current_steps": 5, "elapsed_time": "inf:0:0"} {"current_steps": 10, "elapsed_time": "0:0:"}"#,
        "{\"current_steps\": 1e300, \"elapsed_time\": \"0:0:1\"}\n{\"current_steps\": 1e308, \"elapsed_time\": \"1e300 days, 0:0:1\"}",
    ] {
        if let Ok(s) = logparse::parse(text) {
            assert!(s.step_seconds.is_none_or(|x| x.is_finite() && 0.0 < x), "{text}");
        }
    }
}

#[test]
fn a_pasted_log_calibrates_the_plan_to_its_figures() {
    let plan = Plan::from_json(
        r#"{"model": "llama-3-8b", "framework": "megatron", "method": "pretrain", "cluster": {"nodes": 4},
            "parallel": {"tp": 2, "distributed_optimizer": true}, "batch": {"global_batch": 512, "seq_len": 8192}}"#,
    )
    .unwrap();
    let before = evaluate(&plan);
    // A run 30 % slower than predicted, with 3 GiB more memory than the plan counts.
    let measured_seconds = before.time.step_seconds * 1.3;
    let context = plan.overheads().runtime_context_bytes;
    let measured_peak = before.memory.peak_bytes + (3 << 30);
    let allocated_mib = (measured_peak - context) as f64 / (1u64 << 20) as f64;
    let log = [10, 20, 30, 40]
        .map(|i| megatron_line(i, measured_seconds * 1000.0 * if i == 10 { 3.0 } else { 1.0 }, 300.0))
        .join("\n")
        + "\n"
        + &memory_line(0, allocated_mib);
    let summary = logparse::parse(&log).unwrap();
    // The figures read, as the command line prints them: three steps after the first.
    assert!(summary.figures().contains("(from 3, 1 left out as warm-up)"), "{}", summary.figures());
    assert!(summary.figures().ends_with("300.0 TFLOP/s per device"), "{}", summary.figures());
    let mut fitted = plan.clone();
    fitted.calibration = logparse::calibrate(&plan, &summary);
    let after = evaluate(&fitted);
    // Megatron prints the step to 0.1 ms and the memory to 0.01 MiB.
    assert!((after.time.step_seconds / measured_seconds - 1.0).abs() < 1e-3, "{}", after.time.step_seconds);
    assert!((after.memory.peak_bytes as f64 / measured_peak as f64 - 1.0).abs() < 1e-6);
}

#[test]
fn an_rl_log_gives_the_plan_its_mean_response_and_the_fit_the_rest() {
    // VeRL `metric_utils.py` `compute_data_metrics` logs each step's `response_length/mean` (and its
    // max, min and clip ratio) beside the timings: the median over the steps is the plan's mean
    // response, and the step time is fitted with it, not with every response at the longest.
    // Eight responses a micro-batch: at one, each micro-batch's parameter gathers alone
    // (time/sharded.rs) would take longer than the log's step at any efficiency.
    let plan = Plan::from_json(
        r#"{"model": "qwen2.5-7b", "framework": "verl", "method": "grpo", "parallel": {"zero_stage": 3},
            "batch": {"global_batch": 512, "micro_batch": 8}}"#,
    )
    .unwrap();
    let log = [(1, "120.0", "301.2"), (2, "80.0", "288.5"), (3, "82.0", "296.0"), (4, "79.0", "310.4")]
        .map(|(step, t, mean)| {
            format!(
                "(TaskRunner pid=16292) step:{step} - response_length/mean:{mean} - response_length/max:1024.0 - response_length/clip_ratio:0.02 - prompt_length/mean:{} - timing_s/gen:30.1 - timing_s/step:{t}",
                100 + step
            )
        })
        .join("\n");
    let s = logparse::parse(&log).unwrap();
    // The median of 288.5, 296.0, 301.2 and 310.4.
    assert_eq!(s.mean_response_tokens, Some(0.5 * (296.0 + 301.2)));
    assert!(s.figures().contains("responses of 299 tokens on average"), "{}", s.figures());
    // Prompts of 101 to 104 tokens: the median 102.5, taken as 103 (round half away from zero).
    assert_eq!(s.mean_prompt_tokens, Some(102.5));
    assert_eq!(logparse::logged_means(&plan, &s), (Some(103), Some(299)));
    // The plan with that mean and the fitted calibration predicts the log's step (the median of
    // 80, 82 and 79 after the first).
    let mut fitted = plan.clone();
    (fitted.rl.mean_prompt_length, fitted.rl.mean_response_length) = (103, 299);
    fitted.calibration = logparse::calibrate(&plan, &s);
    let step = evaluate(&fitted).time.step_seconds;
    assert!((step / 80.0 - 1.0).abs() < 1e-6, "{step}");
    // Fitted with every response at the longest instead, the efficiency would have to rise further
    // to make up for the longer responses.
    let longest = trainplan_core::calibrate(&plan, s.step_seconds, None);
    assert!(fitted.calibration.efficiency_scale < longest.efficiency_scale);
    // Releases that name them under `tokens/` read alike; the non-aborted responses' own mean
    // (`response_length_non_aborted/mean`) is another figure, left alone.
    let tokens = "step:1 - tokens/prompt_length/mean:90.0 - tokens/response_length/mean:410.0 - response_length_non_aborted/mean:500.0 - timing_s/step:50.0";
    let t = logparse::parse(tokens).unwrap();
    assert_eq!((t.mean_prompt_tokens, t.mean_response_tokens), (Some(90.0), Some(410.0)));
    // A plan that is not RL takes no response length from it.
    let sft = Plan::from_json(r#"{"model": "qwen2.5-7b"}"#).unwrap();
    assert_eq!(logparse::logged_means(&sft, &s), (None, None));
}

/// Qwen2.5-7B GRPO on VeRL's FSDP engine at ZeRO-3, 8 H100.
fn verl_grpo() -> Plan {
    Plan::from_json(
        r#"{"model": "qwen2.5-7b", "framework": "verl", "method": "grpo", "parallel": {"zero_stage": 3}}"#,
    )
    .unwrap()
}

/// VeRL times each phase of a step (`marked_timer` in `RayPPOTrainer.fit`, printed as
/// `timing_s/{name}`, verl 0.9.1): each phase's figure is its timers' sum a step (the actor's
/// `old_log_prob` and the reference's `ref` are one phase of the plan's), the median after the
/// warm-up step as the step time's is; a phase no line timed is left out, and a timer the plan has
/// no phase for (`adv`, `reward`) is no phase. Beside them the plan's own figures as modelled, with
/// the log's mean lengths and no calibration: its breakdown's, the update the step less the others.
#[test]
fn an_rl_log_times_each_phase_beside_the_plans() {
    use logparse::StepPhase;
    let plan = verl_grpo();
    let steps = [(1, 60.0, 9.0, 3.0), (2, 30.0, 8.0, 2.0), (3, 32.0, 7.5, 2.5), (4, 31.0, 8.5, 2.0)];
    let log = steps
        .map(|(step, generation, old, reference)| {
            format!(
                "step:{step} - response_length/mean:400.0 - timing_s/gen:{generation} - timing_s/old_log_prob:{old} - timing_s/ref:{reference} - timing_s/adv:0.1 - timing_s/update_actor:20.0 - timing_s/update_weights:1.5 - timing_s/step:70.0"
            )
        })
        .join("\n");
    let s = logparse::parse(&log).unwrap();
    // After the first step: generation 30, 32, 31 → 31; log-prob 8 + 2, 7.5 + 2.5, 8.5 + 2 → 10.
    assert_eq!(
        s.phases,
        [
            (StepPhase::Generation, 31.0),
            (StepPhase::LogProb, 10.0),
            (StepPhase::Update, 20.0),
            (StepPhase::WeightSync, 1.5)
        ]
    );
    let checks = logparse::phase_check(&plan, &s);
    let mut modelled = plan.clone();
    modelled.rl.mean_response_length = 400;
    let t = evaluate(&modelled).time;
    let b = &t.breakdown;
    let planned: Vec<(StepPhase, f64, f64)> =
        checks.iter().map(|c| (c.phase, c.logged_seconds, c.planned_seconds)).collect();
    let update =
        t.step_seconds - b.rollout_seconds - b.log_prob_seconds - b.critic_seconds - b.weight_sync_seconds;
    assert_eq!(
        planned,
        [
            (StepPhase::Generation, 31.0, b.rollout_seconds),
            (StepPhase::LogProb, 10.0, b.log_prob_seconds),
            (StepPhase::Update, 20.0, update),
            (StepPhase::WeightSync, 1.5, b.weight_sync_seconds),
        ]
    );
    assert!(0.0 < update && 0.0 < b.weight_sync_seconds);
    assert_eq!(checks[3].ratio(), Some(1.5 / b.weight_sync_seconds));
    let none = logparse::PhaseCheck { phase: StepPhase::Critic, logged_seconds: 2.0, planned_seconds: 0.0 };
    assert_eq!(none.ratio(), None);
    // A plan that is not RL, or a log without the timers, compares nothing.
    let sft = Plan::from_json(r#"{"model": "qwen2.5-7b"}"#).unwrap();
    assert!(logparse::phase_check(&sft, &s).is_empty());
    let plain = logparse::parse("step:1 - timing_s/step:50.0").unwrap();
    assert!(plain.phases.is_empty() && logparse::phase_check(&plan, &plain).is_empty());
}

/// A VeRL log that times its generation apart (`timing_s/gen`) fits the rollout's own factor
/// (`calibration.rollout_scale`) and the training's efficiency to the rest of the step, so the fitted
/// plan predicts both the log's generation and its step; a plan file with the factor reads back the
/// same, and one out of its range is refused with the field named.
#[test]
fn a_timed_generation_fits_the_rollout_apart() {
    let plan = verl_grpo();
    let modelled = evaluate(&plan).time;
    // A run whose generation takes 1.8 × the model's and whose step 1.3 ×.
    let (generation, step) = (1.8 * modelled.breakdown.rollout_seconds, 1.3 * modelled.step_seconds);
    let log = (1..=4)
        .map(|k| format!("step:{k} - timing_s/gen:{generation} - timing_s/step:{step}"))
        .collect::<Vec<_>>()
        .join("\n");
    let fitted = logparse::calibrate(&plan, &logparse::parse(&log).unwrap());
    let rollout = fitted.rollout_scale.expect("the generation fitted");
    let mut calibrated = plan.clone();
    calibrated.calibration = fitted;
    let t = evaluate(&calibrated).time;
    assert!(
        (t.breakdown.rollout_seconds / generation - 1.0).abs() < 1e-3,
        "{} against {generation}",
        t.breakdown.rollout_seconds
    );
    assert!((t.step_seconds / step - 1.0).abs() < 1e-3, "{} against {step}", t.step_seconds);
    // The rest of the step was 1.3 × · step − 1.8 × · generation of the model's: slower than modelled.
    assert!(1.5 < rollout && fitted.efficiency() < 1.0, "{fitted:?}");
    assert_eq!(Plan::from_file(&calibrated.to_file()).unwrap(), calibrated);
    assert_eq!(evaluate(&calibrated).calibration.rollout_scale, rollout);
    let out =
        Plan::from_json(r#"{"model": "qwen2.5-7b", "calibration": {"rollout_scale": 50}}"#).unwrap_err();
    assert!(out.to_string().contains("calibration.rollout_scale"), "{out}");
    // Without a timed generation, or for a plan that is not RL, no rollout factor.
    let untimed =
        logparse::parse(&format!("step:1 - timing_s/step:{step}\nstep:2 - timing_s/step:{step}")).unwrap();
    assert_eq!(logparse::calibrate(&plan, &untimed).rollout_scale, None);
    let sft = Plan::from_json(r#"{"model": "qwen2.5-7b"}"#).unwrap();
    assert_eq!(logparse::calibrate(&sft, &logparse::parse(&log).unwrap()).rollout_scale, None);
}

/// MindSpeed-RL's metrics lines (`Loggers.handle_msg`: `'iteration: {n} / {steps} | '`, then
/// `'{key} : {value:.4f} | '` for each metric, `metrics_sort`'s timers first): `timing/all` is the
/// step, the mean lengths set the plan's, and each timer its phase (the actor's and the reference's
/// log-probabilities and the reference's moves one phase, the update and the states brought back
/// for it another, the resharding to the engine the hand-over). A MindSpeed-RL plan reads its own
/// run's lines; another framework's plan is told whose they are.
#[test]
fn mindspeed_rl_metrics_lines() {
    use logparse::{LogSource, StepPhase};
    let line = |n: u32, all: f64| {
        format!(
            "2026-11-30 10:00:00,000 - INFO - [2026-11-30 10:00:00] iteration: {n} / 100 | timing/all : {all:.4} | timing/update : 20.0000 | timing/rollout : 30.0000 | timing/old_log_p : 5.0000 | timing/reference_model : 4.0000 | timing/resharding_to_infer : 2.5000 | timing/resharding_to_train : 1.5000 | timing/adv : 0.1000 | timing/ref_onload : 0.5000 | timing/ref_offload : 0.5000 | actor/pg_loss : 0.0123 | grpo/lr : 1.000000e-06 | response_length/mean : 512.0000 | prompt_length/mean : 128.0000 | e2e_tps : 1234.5678"
        )
    };
    let log = [(1, 90.0), (2, 61.0), (3, 60.0), (4, 62.0)].map(|(n, t)| line(n, t)).join("\n");
    let s = logparse::parse(&log).unwrap();
    assert_eq!((s.mindspeed_rl_lines, s.skipped, s.step_seconds), (4, 1, Some(61.0)));
    assert_eq!((s.mean_prompt_tokens, s.mean_response_tokens), (Some(128.0), Some(512.0)));
    assert_eq!(
        s.phases,
        [
            (StepPhase::Generation, 30.0),
            (StepPhase::LogProb, 10.0),
            (StepPhase::Update, 21.5),
            (StepPhase::WeightSync, 2.5)
        ]
    );
    let plan = Plan::from_json(
        r#"{"model": "qwen2.5-7b", "hardware": "ascend-910b2", "framework": "mindspeed-rl", "method": "grpo",
            "cluster": {"nodes": 2}}"#,
    )
    .unwrap();
    assert_eq!(logparse::another_frameworks_log(&plan, &s), None);
    assert_eq!(logparse::phase_check(&plan, &s).len(), 4);
    assert_eq!(logparse::another_frameworks_log(&verl_grpo(), &s), Some(LogSource::MindSpeedRl));
    assert!(s.recognized().contains("4 MindSpeed-RL metrics lines"), "{}", s.recognized());
}

/// Megatron's timers at `--timing-log-level 1` (`Timers.log`: under `(min, max) time across ranks
/// (ms):` each timer as `'    {}: ({:.2f}, {:.2f})'`, its name and a space padded with dots to 48
/// characters; under `max time across ranks (ms):` the maximum alone): `forward-backward` and
/// `optimizer` are the step's two phases, each the slowest rank's, the median after the warm-up
/// block; the optimizer's inner timers (`optimizer-inner-step`) are not the optimizer's. Beside
/// them the plan's: the step less its optimizer, and its optimizer.
#[test]
fn megatron_timers_time_the_steps_phases() {
    let timer = |name: &str, min: f64, max: f64| {
        format!("    {name} {}: ({min:.2}, {max:.2})", ".".repeat(47 - name.len()))
    };
    let mut log = String::new();
    for (i, (fb, opt)) in
        [(9000.0, 900.0), (6000.0, 310.0), (6100.0, 300.0), (5900.0, 305.0)].into_iter().enumerate()
    {
        log += &megatron_line(10 * (i as u64 + 1), fb + opt, 400.0);
        log += "\n(min, max) time across ranks (ms):\n";
        log += &timer("forward-backward", fb - 50.0, fb);
        log += "\n";
        log += &timer("optimizer-inner-step", 1.0, 200.0);
        log += "\n";
        log += &timer("optimizer", opt - 5.0, opt);
        log += "\n";
    }
    // The maximum alone, in a line of its own prefix.
    log += "max time across ranks (ms):\n[default0]:    forward-backward ................................: 6050.00\n";
    let s = logparse::parse(&log).unwrap();
    use logparse::StepPhase;
    // forward-backward: 9.0 s left out, the median of 6.0, 6.1, 5.9 and 6.05; optimizer: 0.9 s
    // left out, the median of 0.31, 0.30 and 0.305.
    assert_eq!(s.phases, [(StepPhase::ForwardBackward, 6.025), (StepPhase::Optimizer, 0.305)]);
    let plan = Plan::from_json(
        r#"{"model": "llama-3.1-8b", "framework": "megatron", "method": "pretrain", "parallel": {"tp": 2}}"#,
    )
    .unwrap();
    let t = evaluate(&plan).time;
    let checks = logparse::phase_check(&plan, &s);
    let planned: Vec<f64> = checks.iter().map(|c| c.planned_seconds).collect();
    let optimizer = t.breakdown.optimizer_seconds;
    assert_eq!(planned, [t.step_seconds - optimizer, optimizer]);
    assert!(0.0 < optimizer);
}

/// A log of another framework's run is named, so the page can say so before it fits this plan to
/// it: Megatron's iteration lines for a LLaMA-Factory plan, the HF Trainer's dictionaries or
/// VeRL's metrics for a Megatron one. Lines every run may print (memory reports, progress bars)
/// name nobody, and a log with one line the plan's framework prints passes.
#[test]
fn a_log_of_another_frameworks_run_is_named() {
    use logparse::LogSource;
    let plan = |framework: &str| {
        Plan::from_json(&format!(r#"{{"model": "qwen2.5-7b", "framework": "{framework}"}}"#)).unwrap()
    };
    let megatron = [megatron_line(10, 9100.0, 200.0), megatron_line(20, 6200.0, 210.0)].join("\n");
    let hf = "{'loss': 1.4142, 'grad_norm': 0.7071, 'learning_rate': 1e-05, 'epoch': 0.05}\n{'train_runtime': 3601.2, 'train_samples_per_second': 17.77, 'train_steps_per_second': 0.278, 'train_loss': 1.02, 'epoch': 3.0}";
    let verl = "step:1 - timing_s/step:61.0 - perf/max_memory_allocated_gb:52.25\nstep:2 - timing_s/step:62.5 - perf/max_memory_allocated_gb:51.0";
    let memory = memory_line(0, 40_000.0);
    let named = |framework: &str, log: &str| {
        logparse::another_frameworks_log(&plan(framework), &logparse::parse(log).unwrap())
    };
    assert_eq!(named("llamafactory", &megatron), Some(LogSource::Megatron));
    assert_eq!(named("verl", &megatron), Some(LogSource::Megatron));
    assert_eq!(named("megatron", hf), Some(LogSource::HfTrainer));
    assert_eq!(named("mindspeed-llm", verl), Some(LogSource::Verl));
    for framework in ["megatron", "mindspeed-llm"] {
        assert_eq!(named(framework, &megatron), None, "{framework}");
    }
    assert_eq!(named("deepspeed", hf), None);
    let jsonl = r#"{"current_steps": 10, "total_steps": 100, "loss": 1.5, "elapsed_time": "0:01:35"}"#;
    assert_eq!(named("megatron", jsonl), Some(LogSource::HfTrainer));
    assert_eq!(named("llamafactory", jsonl), None);
    assert_eq!(named("verl-megatron", verl), None);
    assert_eq!(named("llamafactory", &memory), None);
    assert_eq!(named("llamafactory", &format!("{megatron}\n{hf}")), None);
}
