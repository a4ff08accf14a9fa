//! Time and cost to train a token budget: steps, wall-clock time, device-hours, energy at the
//! devices' board power, and the price of the device-hours (docs/cost.md).
//!
//! Everything follows from the plan's step time and tokens per step; nothing here models speed.

use crate::plan::Plan;
use crate::time::StepTime;

/// Seconds in an hour.
const SECONDS_PER_HOUR: f64 = 3600.0;

/// What training the plan's token budget takes.
#[derive(Clone, Debug, PartialEq)]
pub struct Cost {
    /// The tokens trained: `budget.tokens`, or `budget.epochs` × `budget.dataset_tokens`.
    pub budget_tokens: f64,
    /// Tokens one optimizer step trains (global batch × sequence length; RL: the step's sequences).
    pub tokens_per_step: f64,
    /// Optimizer steps: the budget over the tokens per step, rounded up.
    pub steps: u64,
    /// Wall-clock time of those steps, seconds.
    pub wall_seconds: f64,
    /// Devices × wall-clock hours.
    pub device_hours: f64,
    /// Energy at the devices' board power times the PUE, kWh; `None` where the device's power is
    /// unknown (a custom device without one).
    pub energy_kwh: Option<f64>,
    /// Device-hours × the price; `None` where the plan gives no price.
    pub price: Option<f64>,
}

/// The time and cost of training the plan's budget at its step time.
///
/// # Example
///
/// ```
/// let plan = trainplan_core::Plan::from_json(
///     r#"{"model": "llama-2-7b", "budget": {"tokens": 1000000000, "price_per_device_hour": 2}}"#,
/// )?;
/// let mem = trainplan_core::memory::estimate(&plan);
/// let time = trainplan_core::time::estimate(&plan, &mem);
/// let cost = trainplan_core::cost::estimate(&plan, &time);
/// // 64 sequences of 4,096 tokens per step: 10^9 tokens take ⌈10^9 / 262,144⌉ steps.
/// assert_eq!(cost.steps, 3815);
/// assert_eq!(cost.price, Some(cost.device_hours * 2.0));
/// # Ok::<(), trainplan_core::plan::PlanFileError>(())
/// ```
pub fn estimate(plan: &Plan, time: &StepTime) -> Cost {
    let budget = &plan.budget;
    let budget_tokens = budget.budget_tokens();
    // The step's tokens as `time` counts them (samples × sequence length), recovered from its
    // rates; they are whole numbers, so rounding removes the division's last-place error.
    let tokens_per_step = (time.tokens_per_second * time.step_seconds).round().max(1.0);
    let steps = (budget_tokens / tokens_per_step).ceil().max(1.0);
    let wall_seconds = steps * time.step_seconds;
    let device_hours = device_hours(plan.cluster.n_devices(), wall_seconds);
    let watts = plan.hardware.hw.board_power_watts;
    Cost {
        budget_tokens,
        tokens_per_step,
        // At most 10^16 tokens over at least one per step: exact in u64.
        steps: steps as u64,
        wall_seconds,
        device_hours,
        energy_kwh: (0.0 < watts).then(|| energy_kwh(device_hours, watts, budget.pue)),
        price: (0.0 < budget.price_per_device_hour).then_some(device_hours * budget.price_per_device_hour),
    }
}

/// Device-hours of `n_devices` busy for `wall_seconds`.
pub fn device_hours(n_devices: u64, wall_seconds: f64) -> f64 {
    n_devices as f64 * wall_seconds / SECONDS_PER_HOUR
}

/// Energy of `device_hours` at `watts` per device, times the facility's power usage
/// effectiveness, in kWh.
///
/// The method of Patterson et al., "Carbon Emissions and Large Neural Network Training" (2021,
/// arXiv 2104.10350, §2 and Table 4: MWh = hours × processors × average power × PUE), and of the
/// Llama 2 paper (Touvron et al. 2023, §2.2.1 and Table 2: GPU-hours × the GPUs' peak power, 400 W
/// for A100-80GB); board power (TDP) stands in for the average, so the figure is an upper estimate
/// of what the devices draw (docs/cost.md).
///
/// ```
/// // Patterson et al. Table 4, GPT-3: 10,000 V100s for 14.8 days at 330 W, PUE 1.1: 1,287 MWh.
/// let kwh = trainplan_core::cost::energy_kwh(10_000.0 * 14.8 * 24.0, 330.0, 1.1);
/// assert!((kwh / 1_287_000.0 - 1.0).abs() < 0.005);
/// ```
pub fn energy_kwh(device_hours: f64, watts: f64, pue: f64) -> f64 {
    device_hours * watts / 1000.0 * pue
}

/// Whether `plan` fine-tunes (every method but pretraining) on the budget a plan file gets when it
/// gives none: 10^12 tokens and no dataset size ([`crate::plan::BudgetFile`]'s default), a
/// pretraining corpus rather than a fine-tuning set, so its figures say little about the run.
pub fn default_budget_for_fine_tuning(plan: &Plan) -> bool {
    let default = crate::plan::BudgetFile::default();
    plan.method != crate::plan::Method::Pretrain
        && plan.budget.dataset_tokens == default.dataset_tokens
        && plan.budget.tokens == default.tokens
}
