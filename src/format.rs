//! Turning the core's exact numbers into text. The only place where bytes become GiB.

use crate::i18n::Lang;

/// An exact count with thousands separators: `6738415616` → `6,738,415,616`.
pub fn count(n: u64) -> String {
    let digits = n.to_string();
    let mut res = String::with_capacity(digits.len() + digits.len() / 3);
    for (idx, ch) in digits.chars().enumerate() {
        if idx != 0 && (digits.len() - idx).is_multiple_of(3) {
            res.push(',');
        }
        res.push(ch);
    }
    res
}

/// A count rounded the way each language says large numbers: `6.74 B` in English, `67.38 亿` in Chinese.
pub fn count_short(n: u64, lang: Lang) -> String {
    let x = n as f64;
    let units: &[(f64, &str)] = match lang {
        Lang::En => &[(1e12, "T"), (1e9, "B"), (1e6, "M"), (1e3, "K")],
        Lang::Zh => &[(1e12, "万亿"), (1e8, "亿"), (1e4, "万")],
    };
    match units.iter().find(|(scale, _)| *scale <= x) {
        Some((scale, unit)) => format!("{} {unit}", significant(x / scale)),
        None => count(n),
    }
}

/// Bytes in binary gigabytes, as `nvidia-smi` and `npu-smi` count them: `1684603904` → `1.57 GiB`.
pub fn gib(bytes: u64) -> String {
    format!("{} GiB", gib_figure(bytes))
}

/// Bytes in GiB without the unit, for a table whose caption names it: `23.04`.
pub fn gib_figure(bytes: u64) -> String {
    format!("{:.2}", bytes as f64 / (1u64 << 30) as f64)
}

/// Bytes as a number of GiB, for a chart's axis (whose ticks [`tick`] writes).
pub fn in_gib(bytes: u64) -> f64 {
    bytes as f64 / (1u64 << 30) as f64
}

/// An axis tick, its unit written once beside the axis: three significant digits, `20`, `0.25`.
pub fn tick(x: f64) -> String {
    match x {
        x if !x.is_finite() => "–".to_owned(),
        x if x.abs() < 1e-9 => "0".to_owned(),
        x => significant(x),
    }
}

/// Seconds the way people read durations: `0.0123` → `12.3 ms`, `4.56` → `4.56 s`, `5400` → `1.50 h`.
pub fn seconds(x: f64) -> String {
    match x {
        x if !x.is_finite() || x < 0.0 => "–".to_owned(),
        0.0 => "0 s".to_owned(),
        x if x < 1e-3 => format!("{:.0} µs", x * 1e6),
        x if x < 1.0 => format!("{} ms", significant(x * 1e3)),
        x if x < 3600.0 => format!("{} s", significant(x)),
        x => format!("{} h", significant(x / 3600.0)),
    }
}

/// A time on an axis whose ticks are `step_seconds` apart, with the decimals that tell them apart:
/// `26.85` at 0.05 apart → `26.85 s`, `20` at 10 apart → `20 s`.
pub fn seconds_tick(x: f64, step_seconds: f64) -> String {
    let decimals = match step_seconds {
        s if !s.is_finite() || s <= 0.0 || 1.0 <= s => 0,
        s => (-s.log10()).ceil().clamp(0.0, 9.0) as usize,
    };
    match x {
        x if !x.is_finite() => "–".to_owned(),
        x => format!("{:.decimals$} s", x.max(0.0)),
    }
}

/// A fraction in [0, 1] as a percentage with one decimal: `0.0389` → `3.9%`; a share too small to
/// show is `<0.1%`, never a misleading `0.0%`.
pub fn percent(frac: f64) -> String {
    match frac {
        f if !f.is_finite() => "–".to_owned(),
        f if 0.0 < f && f < 0.0005 => "<0.1%".to_owned(),
        f => format!("{:.1}%", f * 100.0),
    }
}

/// How many times one figure is another, two decimals: `1.724` → `× 1.72`; none is `–`.
pub fn times(ratio: Option<f64>) -> String {
    match ratio {
        Some(r) if r.is_finite() => format!("× {r:.2}"),
        _ => "–".to_owned(),
    }
}

/// A part of a whole as a percentage ([`percent`]): `share(1, 8)` → `12.5%`; a part of nothing is
/// `–`.
pub fn share(part: u64, whole: u64) -> String {
    percent(part as f64 / whole as f64)
}

/// A fraction in [0, 1] as a whole percentage, for progress: `0.426` → `43%`.
pub fn whole_percent(frac: f64) -> String {
    match frac {
        f if !f.is_finite() => "–".to_owned(),
        f => format!("{:.0}%", f * 100.0),
    }
}

/// A signed relative change, with a true minus sign: `+42.7%`, `−2.5%`.
pub fn signed_percent(frac: f64) -> String {
    let sign = if frac < 0.0 { "−" } else { "+" };
    format!("{sign}{}", percent(frac.abs()))
}

/// A signed size change in bytes, with a true minus sign: `−24.64 GiB`, `+7.45 GiB`.
pub fn signed_gib(delta_bytes: i64) -> String {
    let sign = if delta_bytes < 0 { "−" } else { "+" };
    format!("{sign}{}", gib(delta_bytes.unsigned_abs()))
}

/// A memory offset given in MiB (the plan file's unit), in GiB with its sign: `512` → `+0.50 GiB`,
/// `-2048` → `-2.00 GiB`.
pub fn signed_gib_of_mib(mib: f64) -> String {
    match mib {
        x if !x.is_finite() => "–".to_owned(),
        x => format!("{:+.2} GiB", x / 1024.0),
    }
}

/// GiB as a user types them (a measured peak) in bytes: `1.5` → 1,610,612,736. The cast saturates
/// (a negative or NaN figure gives 0).
pub fn bytes_of_gib(gib: f64) -> u64 {
    (gib * (1u64 << 30) as f64) as u64
}

/// The unit written once beside a chart's axis of [`in_gib`] figures.
pub const GIB: &str = "GiB";

/// Device memory in whole GiB, rounded down, as datasheets count HBM: `80 << 30` → `80`.
pub fn whole_gib(bytes: u64) -> String {
    (bytes >> 30).to_string()
}

/// FLOP/s in whole TFLOPS, as datasheets give them: `989.4e12` → `989`.
pub fn whole_tflops(flops_per_second: f64) -> String {
    match flops_per_second {
        x if !x.is_finite() => "–".to_owned(),
        x => format!("{}", (x / 1e12).round()),
    }
}

/// Bytes per second in TB/s with two decimals, as datasheets give memory bandwidth: `3.35e12` →
/// `3.35`.
pub fn tb_per_second(bytes_per_second: f64) -> String {
    match bytes_per_second {
        x if !x.is_finite() => "–".to_owned(),
        x => format!("{:.2}", x / 1e12),
    }
}

/// Three significant digits, without trailing zeros after the point.
fn significant(x: f64) -> String {
    let decimals = match x {
        x if 100.0 <= x => 0,
        x if 10.0 <= x => 1,
        _ => 2,
    };
    let text = format!("{x:.decimals$}");
    match text.contains('.') {
        true => text.trim_end_matches('0').trim_end_matches('.').to_owned(),
        false => text,
    }
}

/// A long duration in days (`12.3 days`, `12.3 天`) from two days on; shorter ones as [`seconds`].
pub fn duration(x: f64, lang: Lang) -> String {
    match x {
        x if x.is_finite() && 2.0 * 86_400.0 <= x => {
            let unit = match lang {
                Lang::En => "days",
                Lang::Zh => "天",
            };
            format!("{} {unit}", grouped(x / 86_400.0))
        }
        x => seconds(x),
    }
}

/// Energy from kWh: `13.96 kWh`, `1.29 GWh`.
pub fn energy_kwh(x: f64) -> String {
    match x {
        x if !x.is_finite() || x < 0.0 => "–".to_owned(),
        x if x < 1e3 => format!("{} kWh", significant(x)),
        x if x < 1e6 => format!("{} MWh", significant(x / 1e3)),
        x => format!("{} GWh", grouped(x / 1e6)),
    }
}

/// A non-negative amount (device-hours, a price) with three significant digits below 1,000 and
/// separators above: `19.9`, `49.87` → `49.9`, `1234567.8` → `1,234,568`.
pub fn amount(x: f64) -> String {
    grouped(x)
}

/// Three significant digits below 1,000; a whole number with separators from there.
fn grouped(x: f64) -> String {
    match x {
        x if !x.is_finite() || x < 0.0 => "–".to_owned(),
        // The cast saturates (at 1.8 × 10^19, beyond any figure the core's limits allow).
        x if 1000.0 <= x => count(x.round() as u64),
        x => significant(x),
    }
}

/// How many times another figure this one is: `1.234` → `×1.23`.
pub fn factor(x: f64) -> String {
    match x.is_finite() {
        true => format!("×{x:.2}"),
        false => "–".to_owned(),
    }
}

/// A scale factor fitted to a measurement, to three decimals: `0.87349` → `0.873`.
pub fn scale(x: f64) -> String {
    match x.is_finite() {
        true => format!("{x:.3}"),
        false => "–".to_owned(),
    }
}

/// A count as short as it can be written exactly, for an input a user edits: `1000000000000` →
/// `1T`, `2500000000` → `2.5B`, `1234` → `1234`; [`parse_count`] reads it back.
pub fn count_typed(n: u64) -> String {
    for (scale, unit) in [(1_000_000_000_000u64, "T"), (1_000_000_000, "B"), (1_000_000, "M")] {
        if scale <= n && (unit == "T" || n / scale < 1000) && n.is_multiple_of(scale / 1000) {
            let text = format!("{}.{:03}", n / scale, n % scale / (scale / 1000));
            return format!("{}{unit}", text.trim_end_matches('0').trim_end_matches('.'));
        }
    }
    n.to_string()
}

/// A count as people type it: `1T`, `1.5 T`, `300B`, `800M`, `20k`, `2e12`, `1,000,000`, `1 000`.
/// `None` unless the result is a whole number from 1 to `max`.
pub fn parse_count(text: &str, max: u64) -> Option<u64> {
    let text: String = text.chars().filter(|c| !matches!(c, ',' | '_' | ' ' | '\u{a0}')).collect();
    let (number, scale) = match text.char_indices().last() {
        Some((i, c)) if c.is_ascii_alphabetic() && !text[..i].ends_with(['e', 'E']) => {
            let scale = match c.to_ascii_uppercase() {
                'K' => 1e3,
                'M' => 1e6,
                'B' | 'G' => 1e9,
                'T' => 1e12,
                'P' => 1e15,
                _ => return None,
            };
            (&text[..i], scale)
        }
        _ => (text.as_str(), 1.0),
    };
    let x = number.parse::<f64>().ok()? * scale;
    let n = x.round();
    // Whole (to a part in 10^9, so `1.1T` is 1,100,000,000,000) and in range.
    match x.is_finite() && 1.0 <= n && n <= max as f64 && (x - n).abs() <= 1e-9 * n.max(1.0) {
        true => Some(n as u64),
        false => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_get_separators() {
        assert_eq!(count(0), "0");
        assert_eq!(count(999), "999");
        assert_eq!(count(1_000), "1,000");
        assert_eq!(count(6_738_415_616), "6,738,415,616");
        assert_eq!(count(u64::MAX), "18,446,744,073,709,551,615");
    }

    #[test]
    fn short_counts_in_each_language() {
        assert_eq!(count_short(6_738_415_616, Lang::En), "6.74 B");
        assert_eq!(count_short(6_738_415_616, Lang::Zh), "67.4 亿");
        assert_eq!(count_short(494_032_768, Lang::En), "494 M");
        assert_eq!(count_short(494_032_768, Lang::Zh), "4.94 亿");
        assert_eq!(count_short(70_000_000_000, Lang::En), "70 B");
        assert_eq!(count_short(1_024, Lang::Zh), "1,024");
        assert_eq!(count_short(15_000, Lang::Zh), "1.5 万");
    }

    #[test]
    fn bytes_and_fractions() {
        assert_eq!(gib(1_684_603_904), "1.57 GiB");
        assert_eq!(gib(80 << 30), "80.00 GiB");
        assert_eq!((in_gib(20 << 30), in_gib(1 << 28)), (20.0, 0.25));
        assert_eq!(
            (tick(20.0), tick(0.25), tick(0.0), tick(f64::NAN)),
            ("20".into(), "0.25".into(), "0".into(), "–".into())
        );
        assert_eq!(percent(0.0389), "3.9%");
        assert_eq!(percent(f64::NAN), "–");
        assert_eq!(percent(0.0), "0.0%");
        assert_eq!(percent(204_288.0 / 7_615_616_512.0), "<0.1%");
        assert_eq!(percent(1.0), "100.0%");
        assert_eq!(seconds(0.0123), "12.3 ms");
        assert_eq!(seconds(4.567), "4.57 s");
        assert_eq!(seconds(5400.0), "1.5 h");
        assert_eq!(seconds(0.000_02), "20 µs");
        assert_eq!(seconds(0.0), "0 s");
        assert_eq!((seconds_tick(26.85, 0.05), seconds_tick(20.0, 10.0)), ("26.85 s".into(), "20 s".into()));
        assert_eq!(
            (seconds_tick(26.8047, 0.002), seconds_tick(f64::NAN, 1.0)),
            ("26.805 s".into(), "–".into())
        );
        assert_eq!(seconds(f64::NAN), "–");
    }

    /// The figures each helper is written for: exact binary multiples (2^30 bytes in a GiB, 2^20 in
    /// a MiB) and decimal ones (10^12 in a tera), checked by hand.
    #[test]
    fn shares_signed_changes_and_datasheet_units() {
        assert_eq!(share(1, 8), "12.5%");
        assert_eq!(share(0, 8), "0.0%");
        assert_eq!(share(1, 0), "–");
        assert_eq!(share(0, 0), "–");
        assert_eq!(
            (whole_percent(0.426), whole_percent(1.0), whole_percent(f64::NAN)),
            ("43%".into(), "100%".into(), "–".into())
        );
        assert_eq!((signed_percent(0.427), signed_percent(-0.025)), ("+42.7%".into(), "−2.5%".into()));
        // 24.64 GiB = 26,456,715,592 bytes (24.64 × 2^30, rounded), written back to two decimals.
        assert_eq!(
            (signed_gib(-26_456_998_543), signed_gib(8_000_000_000)),
            ("−24.64 GiB".into(), "+7.45 GiB".into())
        );
        assert_eq!(signed_gib(0), "+0.00 GiB");
        assert_eq!(
            (signed_gib_of_mib(512.0), signed_gib_of_mib(-2048.0)),
            ("+0.50 GiB".into(), "-2.00 GiB".into())
        );
        assert_eq!(signed_gib_of_mib(f64::INFINITY), "–");
        assert_eq!((bytes_of_gib(1.5), bytes_of_gib(80.0)), (1_610_612_736, 80 << 30));
        assert_eq!((bytes_of_gib(-1.0), bytes_of_gib(f64::NAN)), (0, 0));
        // H100 SXM's datasheet: 80 GB of HBM3 (80 GiB), 989 dense BF16 TFLOPS, 3.35 TB/s.
        assert_eq!(whole_gib(80 << 30), "80");
        assert_eq!(whole_gib((80 << 30) - 1), "79");
        assert_eq!(whole_tflops(989.4e12), "989");
        assert_eq!(tb_per_second(3.35e12), "3.35");
        assert_eq!((whole_tflops(f64::NAN), tb_per_second(f64::INFINITY)), ("–".into(), "–".into()));
    }

    #[test]
    fn durations_energies_amounts_and_typed_counts() {
        assert_eq!(duration(3600.0, Lang::En), "1 h");
        assert_eq!(duration(10.0 * 86_400.0, Lang::En), "10 days");
        assert_eq!(duration(1234.5 * 86_400.0, Lang::Zh), "1,235 天");
        assert_eq!(duration(f64::INFINITY, Lang::En), "–");
        assert_eq!(energy_kwh(13.963), "14 kWh");
        assert_eq!(energy_kwh(1_287_000.0), "1.29 GWh");
        assert_eq!(energy_kwh(52_430.0), "52.4 MWh");
        assert_eq!(amount(19.947), "19.9");
        assert_eq!(amount(1_234_567.8), "1,234,568");
        assert_eq!(amount(f64::NAN), "–");
        assert_eq!(factor(1.234), "×1.23");
        assert_eq!(factor(f64::INFINITY), "–");
        assert_eq!(scale(0.87349), "0.873");
        assert_eq!(scale(f64::NAN), "–");
        assert_eq!(parse_count("1T", u64::MAX), Some(1_000_000_000_000));
        assert_eq!(parse_count("1.5 t", u64::MAX), Some(1_500_000_000_000));
        assert_eq!(parse_count("300B", u64::MAX), Some(300_000_000_000));
        assert_eq!(parse_count("2e12", u64::MAX), Some(2_000_000_000_000));
        assert_eq!(parse_count("1,000,000", u64::MAX), Some(1_000_000));
        assert_eq!(parse_count("20k", u64::MAX), Some(20_000));
        assert_eq!(parse_count("0.5", u64::MAX), None);
        assert_eq!(parse_count("0", u64::MAX), None);
        assert_eq!(parse_count("-3M", u64::MAX), None);
        assert_eq!(parse_count("1x", u64::MAX), None);
        assert_eq!(parse_count("", u64::MAX), None);
        assert_eq!(parse_count("11", 10), None);
        for n in [1_000_000_000_000, 2_500_000_000, 1_234, 40_000_000, 10_000_000_000_000_000, 1_000_001] {
            assert_eq!(parse_count(&count_typed(n), u64::MAX), Some(n), "{}", count_typed(n));
        }
        assert_eq!(count_typed(1_000_000_000_000), "1T");
        assert_eq!(count_typed(2_500_000_000), "2.5B");
        assert_eq!(count_typed(1_000_001), "1000001");
    }
}
