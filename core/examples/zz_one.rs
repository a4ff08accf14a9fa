#[path = "../benches/grid.rs"]
#[allow(dead_code)]
mod grid;
fn main() {
    let want = std::env::args().nth(1).unwrap();
    let plans = grid::plans();
    let (_, plan) = plans.iter().find(|(n, _)| *n == want).unwrap();
    let f = grid::LEVELS[0].1;
    for _ in 0..300000 {
        f(plan);
    }
}
