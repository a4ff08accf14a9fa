//! Deep pipelines and their uneven random costs, shared by the native schedule tests
//! (`it/schedule.rs`) and the wasm build's check of its SIMD loop (`wasm_simd.rs`): the shapes
//! of the benchmark grid's slowest plans (PP 64 over 3·pp micro-batches; PP 32 × 3 chunks), and
//! runs of odd length, whose last pass the vector loop takes alone.

use trainplan_core::schedule::{Costs, Schedule};

/// A small deterministic generator (xorshift64, Marsaglia 2003) for random costs.
pub struct Xorshift(pub u64);

impl Xorshift {
    pub fn unit(&mut self) -> f64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 11) as f64 / (1u64 << 53) as f64
    }

    pub fn below(&mut self, n: u32) -> u32 {
        (self.unit() * f64::from(n)) as u32
    }
}

/// (schedule, pp, vpp, micro-batches).
pub const SHAPES: [(Schedule, u32, u32, u32); 7] = [
    (Schedule::OneFOneB, 64, 1, 192),
    (Schedule::OneFOneB, 37, 1, 50),
    (Schedule::Interleaved, 32, 3, 96),
    (Schedule::Interleaved, 16, 4, 32),
    (Schedule::Interleaved, 7, 2, 21),
    (Schedule::ZbH1, 32, 1, 96),
    (Schedule::GPipe, 24, 1, 72),
];

/// Two sizes of stage, as an uneven split makes, each with its own noise, and a send.
pub fn uneven_costs(rng: &mut Xorshift, pp: u32, vpp: u32) -> Costs {
    let n = (pp * vpp) as usize;
    let mut draw = |scale: f64| {
        (0..n)
            .map(|i| scale * (1.0 + f64::from(u8::from(i % 3 == 0)) + 0.1 * rng.unit()))
            .collect::<Vec<f64>>()
    };
    let (forward, backward, weight) = (draw(1.0), draw(1.5), draw(0.5));
    Costs::new(pp, vpp, &forward, &backward, &weight, 0.07)
}
