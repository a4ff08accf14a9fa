//! The launch-file reader: reads a launch file back into a plan ([`trainplan_core::emit::import`])
//! in a wasm module of its own, which the page fetches the first time a file is read. Reading takes
//! the frameworks' recorded flag tables, a YAML parser and each framework's reader; kept out of the
//! page's module, they are no part of its first download (docs/DESIGN.md, "What does the page's
//! wasm weigh").
//!
//! The page and this module speak JSON text: the current plan file in, [`Reply`] out.

use trainplan_core::emit::import::{self, Reply};
use trainplan_core::plan::PlanFile;
use wasm_bindgen::prelude::wasm_bindgen;

/// Reads `text` (a launch file) against `current` (the current plan file, JSON) and gives back the
/// [`Reply`] as JSON; `null` when `current` is no plan file (the page sends its own, so never).
#[wasm_bindgen]
pub fn read_launch(text: &str, current: &str) -> String {
    let Ok(current) = serde_json::from_str::<PlanFile>(current) else {
        return "null".to_owned();
    };
    let reply: Reply = import::import(text, &current);
    serde_json::to_string(&reply).unwrap_or_else(|_| "null".to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use trainplan_core::Plan;
    use trainplan_core::emit;
    use trainplan_core::emit::import::{ImportError, Imported, ModelOrigin};

    /// Every file the emitters write for a plan of each framework reads back through the JSON the
    /// page gets exactly as [`import::import`] reads it in place: nothing is lost on the way.
    #[test]
    fn a_read_crosses_to_the_page_unchanged() {
        let plans = [
            r#"{"model": "qwen2.5-7b"}"#,
            r#"{"model": "llama-3.1-70b", "framework": "megatron", "method": "pretrain", "cluster": {"nodes": 4},
                "parallel": {"tp": 8, "pp": 4, "vpp": 2}, "batch": {"global_batch": 64, "seq_len": 4096}}"#,
            r#"{"model": "qwen2.5-7b", "framework": "mindspeed-llm", "hardware": "ascend-910b2", "method": "sft-full",
                "parallel": {"tp": 2, "pp": 2}}"#,
            r#"{"model": "qwen2.5-7b", "framework": "deepspeed", "method": "sft-full", "parallel": {"zero_stage": 3}}"#,
            r#"{"model": "qwen2.5-7b", "framework": "verl", "method": "grpo"}"#,
            r#"{"model": "qwen2.5-7b", "framework": "mindspeed-rl", "hardware": "ascend-910b2", "method": "grpo"}"#,
        ];
        let mut read = 0;
        let mut first = String::new();
        for text in plans {
            let plan = Plan::from_json(text).unwrap();
            let current = plan.to_file();
            let current_json = serde_json::to_string(&current).unwrap();
            if first.is_empty() {
                first.clone_from(&current_json);
            }
            for file in emit::emit(&plan, "#v1=x").unwrap() {
                let direct = import::import(&file.text, &current);
                let crossed: Reply = serde_json::from_str(&read_launch(&file.text, &current_json)).unwrap();
                assert_eq!(crossed, direct, "{}", file.name);
                read += usize::from(direct.is_ok());
            }
        }
        assert!(read >= 6, "only {read} files read");
        // A model built from a script's architecture flags (no catalog model has 20 of Qwen2.5-7B's
        // layers) crosses as the whole config it becomes.
        let plan = Plan::from_json(plans[2]).unwrap();
        let script = &emit::emit(&plan, "#v1=x").unwrap()[0].text;
        assert!(script.contains("--num-layers 28"), "{script}");
        let built = script.replace("--num-layers 28", "--num-layers 20");
        let current = plan.to_file();
        let direct = import::import(&built, &current);
        assert!(matches!(direct, Ok(Imported { model: ModelOrigin::Built { .. }, .. })), "{direct:?}");
        let crossed: Reply =
            serde_json::from_str(&read_launch(&built, &serde_json::to_string(&current).unwrap())).unwrap();
        assert_eq!(crossed, direct);
        // A refusal crosses too, with what the value must be.
        let bad = "stage: sft\ncutoff_len: -3\n";
        let crossed: Reply = serde_json::from_str(&read_launch(bad, &first)).unwrap();
        assert!(
            matches!(crossed, Err(ImportError::BadValue(ref key, _)) if key == "cutoff_len"),
            "{crossed:?}"
        );
        assert_eq!(read_launch(bad, "{}"), "null");
    }
}
