//! Launch files: valid by construction (bash -n, a YAML parser, serde_json), every planned value
//! written, batch identities holding, user-typed text never run by the shell, and golden files
//! (core/tests/golden/, reviewed against the frameworks' own examples: Megatron-LM
//! `examples/llama/train_llama3_8b_h100_fp8.sh`, LLaMA-Factory `examples/train_lora/*.yaml` and
//! `examples/deepspeed/ds_z3_config.json`, VeRL `examples/grpo_trainer/*.sh`; rewrite them with
//! `UPDATE_GOLDEN=1 cargo test -p trainplan-core --test it emit`, as scripts/update-docs does).

use std::path::{Path, PathBuf};
use std::process::Command;

use trainplan_core::emit::{EmittedFile, FileKind, emit};
use trainplan_core::plan::Plan;
use yaml_rust2::{Yaml, YamlLoader};

fn plan(text: &str) -> Plan {
    Plan::from_json(text).unwrap_or_else(|e| panic!("{text}: {e}"))
}

/// (golden directory, plan): at least two plans per framework. Each directory's `plan.json` is the
/// plan; the conformance corpus (`tests/corpus`) reads the same files.
const GOLDEN: &[(&str, &str)] = &[
    ("megatron-llama-3.1-70b", include_str!("../golden/megatron-llama-3.1-70b/plan.json")),
    ("megatron-mixtral-8x7b", include_str!("../golden/megatron-mixtral-8x7b/plan.json")),
    ("deepspeed-qwen2.5-7b-zero3", include_str!("../golden/deepspeed-qwen2.5-7b-zero3/plan.json")),
    (
        "deepspeed-llama-3-8b-zero2-offload",
        include_str!("../golden/deepspeed-llama-3-8b-zero2-offload/plan.json"),
    ),
    ("llamafactory-qwen2.5-7b-lora", include_str!("../golden/llamafactory-qwen2.5-7b-lora/plan.json")),
    ("verl-qwen2.5-7b-grpo", include_str!("../golden/verl-qwen2.5-7b-grpo/plan.json")),
    ("verl-qwen2.5-32b-ppo-ascend", include_str!("../golden/verl-qwen2.5-32b-ppo-ascend/plan.json")),
    ("mindspeed-rl-qwen2.5-7b-grpo", include_str!("../golden/mindspeed-rl-qwen2.5-7b-grpo/plan.json")),
    ("mindspeed-rl-qwen3-30b-a3b-grpo", include_str!("../golden/mindspeed-rl-qwen3-30b-a3b-grpo/plan.json")),
    ("mindspeed-llm-llama-3-70b", include_str!("../golden/mindspeed-llm-llama-3-70b/plan.json")),
    ("mindspeed-llm-qwen2.5-7b-lora", include_str!("../golden/mindspeed-llm-qwen2.5-7b-lora/plan.json")),
    (
        "llamafactory-qwen2.5-72b-zero3-offload",
        include_str!("../golden/llamafactory-qwen2.5-72b-zero3-offload/plan.json"),
    ),
    (
        "mindspeed-llm-qwen2.5-32b-swap-optimizer",
        include_str!("../golden/mindspeed-llm-qwen2.5-32b-swap-optimizer/plan.json"),
    ),
    ("verl-qwen2.5-7b-dynamic-batch", include_str!("../golden/verl-qwen2.5-7b-dynamic-batch/plan.json")),
    (
        "llamafactory-qwen2.5-14b-ascend-layers-ratio",
        include_str!("../golden/llamafactory-qwen2.5-14b-ascend-layers-ratio/plan.json"),
    ),
];

fn golden_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden")
}

fn files(text: &str) -> Vec<EmittedFile> {
    let p = plan(text);
    let link = format!("#{}", trainplan_core::permalink::encode(&p));
    emit(&p, &link).unwrap()
}

#[test]
fn golden_files_are_what_the_emitters_write() {
    let update = std::env::var_os("UPDATE_GOLDEN").is_some();
    for (dir, text) in GOLDEN {
        let dir = golden_dir().join(dir);
        for f in files(text) {
            let path = dir.join(&f.name);
            if update {
                std::fs::create_dir_all(&dir).unwrap();
                std::fs::write(&path, &f.text).unwrap();
            }
            let golden = std::fs::read_to_string(&path)
                .unwrap_or_else(|e| panic!("{}: {e} (UPDATE_GOLDEN=1 writes it)", path.display()));
            assert_eq!(f.text, golden, "{} differs (UPDATE_GOLDEN=1 rewrites it)", path.display());
        }
    }
}

fn bash_n(text: &str) {
    let dir = tempdir("bash-n");
    let path = dir.join("script.sh");
    std::fs::write(&path, text).unwrap();
    let out = Command::new("bash").arg("-n").arg(&path).output().expect("bash runs");
    assert!(out.status.success(), "bash -n: {}\n{text}", String::from_utf8_lossy(&out.stderr));
}

fn tempdir(name: &str) -> PathBuf {
    let dir =
        std::env::temp_dir().join(format!("trainplan-emit-{}-{name}-{}", std::process::id(), rand_suffix()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn rand_suffix() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    N.fetch_add(1, Ordering::Relaxed)
}

#[test]
fn every_file_parses_in_its_own_syntax() {
    let mut n = 0;
    for (_, text) in GOLDEN {
        for f in files(text) {
            match f.kind {
                FileKind::Shell => bash_n(&f.text),
                FileKind::Yaml => {
                    let docs =
                        YamlLoader::load_from_str(&f.text).unwrap_or_else(|e| panic!("{}: {e}", f.name));
                    assert!(matches!(docs[0], Yaml::Hash(_)), "{}", f.name);
                }
                FileKind::Json => {
                    serde_json::from_str::<serde_json::Value>(&f.text)
                        .unwrap_or_else(|e| panic!("{}: {e}", f.name));
                }
            }
            n += 1;
        }
    }
    // The tuning-knob plans: one MindSpeed-LLM script, one VeRL script, LLaMA-Factory YAML + DeepSpeed JSON + launch.
    assert_eq!(n, 2 + 4 + 3 + 2 + 2 + 3 + 3 + 2 + 1 + 1 + 3, "files written");
}

fn flag_value<'a>(text: &'a str, flag: &str) -> Option<&'a str> {
    text.split_whitespace().skip_while(|w| *w != flag).nth(1)
}

#[test]
fn megatron_scripts_carry_every_planned_flag() {
    let text = &files(GOLDEN[0].1)[0].text;
    // Llama-3.1-70B config.json: 80 layers, hidden 8192, FFN 28672, 64 heads, 8 KV heads.
    for (flag, value) in [
        ("--num-layers", "80"),
        ("--hidden-size", "8192"),
        ("--ffn-hidden-size", "28672"),
        ("--num-attention-heads", "64"),
        ("--num-query-groups", "8"),
        ("--tensor-model-parallel-size", "8"),
        ("--pipeline-model-parallel-size", "4"),
        // 80 layers / PP 4 / VPP 2 (Megatron `arguments.py`: VPP = layers / PP / this).
        ("--num-layers-per-virtual-pipeline-stage", "10"),
        ("--micro-batch-size", "1"),
        ("--global-batch-size", "64"),
        ("--seq-length", "4096"),
        ("--recompute-granularity", "selective"),
        // config.json: rope_theta 500000.0, rms_norm_eps 1e-05, llama3 rope scaling with factor 8;
        // Megatron declares --rotary-base type=int (megatron/training/arguments.py), so no ".0".
        ("--rotary-base", "500000"),
        ("--rope-scaling-factor", "8"),
    ] {
        assert_eq!(flag_value(text, flag), Some(value), "{flag}");
    }
    for switch in [
        "--sequence-parallel",
        "--use-distributed-optimizer",
        "--overlap-grad-reduce",
        "--overlap-param-gather",
        "--bf16",
        "--swiglu",
    ] {
        assert!(text.split_whitespace().any(|w| w == switch), "{switch}");
    }
    assert!(text.contains("export CUDA_DEVICE_MAX_CONNECTIONS=1"));
    let moe = &files(GOLDEN[1].1)[0].text;
    // Mixtral-8x7B: 8 experts, top-2, expert FFN 14336.
    assert_eq!(flag_value(moe, "--num-experts"), Some("8"));
    assert_eq!(flag_value(moe, "--moe-router-topk"), Some("2"));
    assert_eq!(flag_value(moe, "--expert-model-parallel-size"), Some("4"));
    assert_eq!(flag_value(moe, "--recompute-method"), Some("uniform"));
}

#[test]
fn deepspeed_batch_identity_holds() {
    for (_, text) in &GOLDEN[2..4] {
        let p = plan(text);
        let config: serde_json::Value = serde_json::from_str(&files(text)[0].text).unwrap();
        let world = p.cluster.n_devices();
        let (tbs, micro, gas) = (
            config["train_batch_size"].as_u64().unwrap(),
            config["train_micro_batch_size_per_gpu"].as_u64().unwrap(),
            config["gradient_accumulation_steps"].as_u64().unwrap(),
        );
        // DeepSpeed `runtime/config.py::_batch_assertion`: train_batch_size = micro × GAS × world.
        assert_eq!(tbs, micro * gas * world, "{text}");
        assert_eq!(tbs, u64::from(p.batch.global_batch.get()));
        assert_eq!(config["zero_optimization"]["stage"], p.parallel.zero_stage.get());
    }
    let offload: serde_json::Value = serde_json::from_str(&files(GOLDEN[3].1)[0].text).unwrap();
    assert_eq!(offload["zero_optimization"]["offload_optimizer"]["device"], "cpu");
}

#[test]
fn llamafactory_yaml_holds_the_plan() {
    let text = GOLDEN[11].1;
    let p = plan(text);
    let out = files(text);
    let yaml = &YamlLoader::load_from_str(&out[0].text).unwrap()[0];
    // HF batch identity: per-device batch × accumulation × world = global batch.
    let micro = yaml["per_device_train_batch_size"].as_i64().unwrap() as u64;
    let gas = yaml["gradient_accumulation_steps"].as_i64().unwrap() as u64;
    assert_eq!(micro * gas * p.cluster.n_devices(), 64);
    assert_eq!(yaml["cutoff_len"].as_i64(), Some(4096));
    assert_eq!(yaml["finetuning_type"].as_str(), Some("full"));
    assert_eq!(yaml["model_name_or_path"].as_str(), Some("/models/Qwen2.5-72B-Instruct"));
    assert_eq!(yaml["deepspeed"].as_str(), Some("ds_z3_offload_config.json"));
    assert_eq!(out[1].name, "ds_z3_offload_config.json");
    let ds: serde_json::Value = serde_json::from_str(&out[1].text).unwrap();
    assert_eq!(ds["zero_optimization"]["offload_optimizer"]["device"], "cpu");
    assert_eq!(ds["train_batch_size"], "auto");
    let lora = &YamlLoader::load_from_str(&files(GOLDEN[4].1)[0].text).unwrap()[0];
    assert_eq!(lora["finetuning_type"].as_str(), Some("lora"));
    assert_eq!(lora["lora_rank"].as_i64(), Some(8));
    assert_eq!(lora["lora_target"].as_str(), Some("all"));
    assert_eq!(lora["template"].as_str(), Some("qwen"));
}

#[test]
fn seed_knobs_reach_their_files() {
    // MindSpeed-LLM's memory knobs: swap-optimizer (and no --reuse-fp32-param beside it,
    // MindSpeed `swap_optimizer_feature.py` incompatible_check), activation-function recompute
    // on 8 layers after 4 block-recomputed ones.
    let ms = &files(GOLDEN[12].1)[0].text;
    assert!(ms.split_whitespace().any(|w| w == "--swap-optimizer"));
    assert!(!ms.contains("--reuse-fp32-param"));
    assert_eq!(flag_value(ms, "--recompute-activation-function-num-layers"), Some("8"));
    assert_eq!(flag_value(ms, "--recompute-method"), Some("block"));
    assert_eq!(flag_value(ms, "--recompute-num-layers"), Some("4"));
    // VeRL's batching knobs (docs/perf/perf_tuning.rst), as Hydra overrides.
    let verl = &files(GOLDEN[13].1)[0].text;
    for (key, value) in [
        ("actor_rollout_ref.actor.ppo_mini_batch_size", "64"),
        ("actor_rollout_ref.actor.use_dynamic_bsz", "True"),
        ("actor_rollout_ref.actor.ppo_max_token_len_per_gpu", "12288"),
        ("actor_rollout_ref.actor.ulysses_sequence_parallel_size", "2"),
        ("actor_rollout_ref.rollout.log_prob_use_dynamic_bsz", "True"),
        ("actor_rollout_ref.ref.log_prob_max_token_len_per_gpu", "12288"),
        ("actor_rollout_ref.model.use_remove_padding", "True"),
        ("actor_rollout_ref.rollout.enforce_eager", "True"),
        ("actor_rollout_ref.rollout.max_model_len", "10240"),
        ("actor_rollout_ref.rollout.max_num_batched_tokens", "16384"),
        ("actor_rollout_ref.rollout.n", "8"),
    ] {
        assert!(verl.contains(&format!("    {key}={value} \\\n")), "{key}={value}");
    }
    // The same plan on MindSpeed-RL: its YAML keys (mindspeed_rl/config_cls/*.py).
    let mut rl_plan: serde_json::Value = serde_json::from_str(GOLDEN[13].1).unwrap();
    rl_plan["framework"] = "mindspeed-rl".into();
    rl_plan["hardware"] = "ascend-910b2".into();
    rl_plan["parallel"] = serde_json::json!({"tp": 4, "distributed_optimizer": true, "swap_optimizer": true});
    let rl_plan = rl_plan.to_string();
    let yaml = &YamlLoader::load_from_str(&files(&rl_plan)[0].text).unwrap()[0];
    let (r, g, m) = (&yaml["rl_config"], &yaml["generate_config"], &yaml["megatron_training"]);
    assert_eq!(r["mini_batch_size"].as_i64(), Some(64));
    assert_eq!(r["use_dynamic_bsz"].as_bool(), Some(true));
    assert_eq!(r["max_packing_token_size"].as_i64(), Some(12288));
    // Each role's own size too, which MindSpeed-RL sets to 4,096 before it reads the file
    // (`RLConfig.__init__`, mindspeed_rl/config_cls/rl_config.py at 05a90d7) and packs by.
    for role in ["update", "actor", "ref"] {
        assert_eq!(r[format!("{role}_max_packing_token_size").as_str()].as_i64(), Some(12288), "{role}");
    }
    assert_eq!(r["use_remove_padding"].as_bool(), Some(true));
    assert_eq!(r["use_integrated_worker"].as_bool(), Some(true));
    assert_eq!(r["blocking"].as_bool(), Some(true));
    assert_eq!(r["n_samples_per_prompt"].as_i64(), Some(8));
    assert_eq!(m["swap_optimizer"].as_bool(), Some(true));
    assert_eq!(m["reset_attention_mask"].as_bool(), Some(true));
    assert_eq!(g["enforce_eager"].as_bool(), Some(true));
    assert_eq!(g["max_model_len"].as_i64(), Some(10240));
    assert_eq!(g["max_num_batched_tokens"].as_i64(), Some(16384));
    assert_eq!(g["infer_tensor_parallel_size"].as_i64(), Some(2));
    // LLaMA-Factory on Ascend: recompute_layers_ratio, as a comment to uncomment on Ascend's
    // build (upstream's HfArgumentParser refuses the key), so the YAML itself never holds it.
    let lf_text = &files(GOLDEN[14].1)[0].text;
    let lf = &YamlLoader::load_from_str(lf_text).unwrap()[0];
    assert!(lf["recompute_layers_ratio"].is_badvalue(), "an active key upstream refuses");
    assert!(lf_text.contains("\n# recompute_layers_ratio: 0.5 "), "{lf_text}");
}

/// Hostile texts a user might paste (control characters are refused by the plan itself).
const HOSTILE: &[&str] = &[
    "x; touch SENTINEL",
    "$(touch SENTINEL)",
    "`touch SENTINEL`",
    "it's \"quoted\" $HOME ${PATH} \\ back",
    "模型/路径 ü && touch SENTINEL",
    "' ; touch SENTINEL ; '",
];

/// Runs `script` with fake `torchrun`, `llamafactory-cli` and `python3` first on PATH; they record
/// their arguments and MASTER_ADDR, NUL-separated. Returns (arguments, environment's MASTER_ADDR).
fn run_with_fakes(script: &str, dir: &Path) -> (Vec<String>, String) {
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    // An empty CANN environment script stands in for /usr/local/Ascend's.
    std::fs::write(dir.join("set_env.sh"), "").unwrap();
    let record = dir.join("args");
    let fake = format!(
        "#!/bin/bash\nprintf '%s\\0' \"$@\" > {}\nprintf '%s' \"$MASTER_ADDR\" > {}.env\n",
        record.display(),
        record.display()
    );
    for name in ["torchrun", "llamafactory-cli", "python3"] {
        let path = bin.join(name);
        std::fs::write(&path, &fake).unwrap();
        Command::new("chmod").arg("+x").arg(&path).status().unwrap();
    }
    let path = dir.join("launch.sh");
    std::fs::write(&path, script).unwrap();
    let out = Command::new("bash")
        .arg(&path)
        .current_dir(dir)
        .env("PATH", format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default()))
        // The shape alone does not give these (the script refuses to run without them).
        .env("ROTARY_BASE", "500000")
        .env("NORM_EPSILON", "1e-5")
        .env("CANN_SET_ENV", dir.join("set_env.sh"))
        .env_remove("MASTER_ADDR")
        .env_remove("NODE_RANK")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let args = std::fs::read(&record).unwrap();
    let args = args
        .split(|b| *b == 0)
        .filter(|a| !a.is_empty())
        .map(|a| String::from_utf8(a.to_vec()).unwrap())
        .collect();
    let env = std::fs::read_to_string(format!("{}.env", record.display())).unwrap();
    (args, env)
}

#[test]
fn typed_text_reaches_the_framework_verbatim_and_never_runs() {
    for hostile in HOSTILE {
        let dir = tempdir("hostile");
        let sentinel = dir.join("pwned");
        let hostile = hostile.replace("SENTINEL", &sentinel.display().to_string());
        let launch = serde_json::json!({
            "model_path": hostile, "dataset": hostile, "output_dir": hostile, "master_addr": hostile
        });
        // Megatron: every typed text is one argument of torchrun, unchanged.
        let text = format!(
            r#"{{"model": "llama-3-8b", "framework": "megatron", "method": "pretrain", "launch": {launch}}}"#
        );
        let script = &files(&text)[0].text;
        bash_n(script);
        let (args, _) = run_with_fakes(script, &dir);
        for flag in ["--tokenizer-model", "--data-path", "--save", "--load", "--master_addr"] {
            let at = args.iter().position(|a| a == flag).unwrap_or_else(|| panic!("{flag} missing"));
            assert_eq!(args[at + 1], hostile, "{flag}");
        }
        // MindSpeed-LLM likewise.
        let text = format!(
            r#"{{"model": "llama-3-8b", "hardware": "ascend-910b2", "framework": "mindspeed-llm", "method": "lora", "launch": {launch}}}"#
        );
        let (args, _) = run_with_fakes(&files(&text)[0].text, &dir);
        // The typed model path is the HF directory (tokenizer); --load is the converted checkpoint.
        for flag in ["--tokenizer-name-or-path", "--data-path", "--save", "--master_addr"] {
            let at = args.iter().position(|a| a == flag).unwrap_or_else(|| panic!("{flag} missing"));
            assert_eq!(args[at + 1], hostile, "{flag}");
        }
        assert!(args.iter().any(|a| a == "posttrain_gpt.py"));
        // DeepSpeed's launch line.
        let text = format!(
            r#"{{"model": "llama-3-8b", "framework": "deepspeed", "method": "sft-full", "launch": {launch}}}"#
        );
        let (args, _) = run_with_fakes(&files(&text)[1].text, &dir);
        let at = args.iter().position(|a| a == "--master_addr").unwrap();
        assert_eq!(args[at + 1], hostile);
        // MindSpeed-RL's and LLaMA-Factory's YAML hold the texts as they are; OmegaConf, which
        // loads both, would take `${` for an interpolation, so a text holding one is refused, with
        // the first field named.
        let mindspeed_rl = format!(
            r#"{{"model": "qwen2.5-7b", "hardware": "ascend-910b2", "framework": "mindspeed-rl", "method": "grpo", "launch": {launch}}}"#
        );
        let llamafactory = format!(r#"{{"model": "llama-3-8b", "launch": {launch}}}"#);
        if hostile.contains("${") {
            for text in [&mindspeed_rl, &llamafactory] {
                let err = emit(&plan(text), "#v1=x").unwrap_err().to_string();
                assert!(err.starts_with("launch.model_path cannot hold ${"), "{err}");
            }
        } else {
            let run = &YamlLoader::load_from_str(&files(&mindspeed_rl)[0].text).unwrap()[0];
            assert_eq!(run["megatron_training"]["data_path"].as_str(), Some(hostile.as_str()));
            assert_eq!(run["megatron_training"]["tokenizer_name_or_path"].as_str(), Some(hostile.as_str()));
            assert_eq!(run["actor_config"]["save"].as_str(), Some(hostile.as_str()));
            // LLaMA-Factory: the address reaches the launcher's environment; the YAML holds the rest.
            let out = files(&llamafactory);
            let yaml = &YamlLoader::load_from_str(&out[0].text).unwrap()[0];
            for key in ["model_name_or_path", "dataset", "output_dir"] {
                assert_eq!(yaml[key].as_str(), Some(hostile.as_str()), "{key}");
            }
            let launch_sh = &out.last().unwrap().text;
            let (args, env) = run_with_fakes(launch_sh, &dir);
            assert_eq!(args, ["train", "train.yaml"]);
            assert_eq!(env, hostile);
        }
        assert!(!sentinel.exists(), "{hostile:?} ran");
    }
}

#[test]
fn control_characters_are_refused_with_the_field_named() {
    for bad in ["a\nb", "a\rb", "tab\there", "nul\u{0}"] {
        let text = format!(
            r#"{{"model": "llama-3-8b", "launch": {{"dataset": {}}}}}"#,
            serde_json::to_string(bad).unwrap()
        );
        let err = Plan::from_json(&text).unwrap_err().to_string();
        assert!(err.contains("launch.dataset") && err.contains("control characters"), "{err}");
    }
}

#[test]
fn names_the_header_carries_refuse_control_characters() {
    let custom = |name: &str| {
        format!(
            r#"{{"model": "llama-3-8b", "framework": "megatron", "method": "pretrain",
            "hardware": {{"custom": {{"name": {}, "memory_gb": 80,
            "bf16_tflops": 989, "fp8_tflops": 1979, "memory_tb_per_s": 3.35, "intra_node_gb_per_s": 900,
            "inter_node_gbit_per_s": 400, "devices_per_node": 8}}}}}}"#,
            serde_json::to_string(name).unwrap()
        )
    };
    let imported = |name: &str| {
        format!(
            r#"{{"model": {{"name": {}, "hf_config": {{"model_type": "llama", "hidden_size": 512,
            "intermediate_size": 1024, "num_hidden_layers": 2, "num_attention_heads": 8,
            "num_key_value_heads": 8, "vocab_size": 1000, "max_position_embeddings": 2048}}}}}}"#,
            serde_json::to_string(name).unwrap()
        )
    };
    assert!(Plan::from_json(&custom("lab card")).is_ok());
    assert!(Plan::from_json(&imported("lab model")).is_ok());
    for bad in ["lab\nrm -rf ~ #", "a\rb", "nul\u{0}"] {
        let err = Plan::from_json(&custom(bad)).unwrap_err().to_string();
        assert!(err.contains("hardware.custom.name") && err.contains("control character"), "{err}");
        let err = Plan::from_json(&imported(bad)).unwrap_err().to_string();
        assert!(err.starts_with("model must be") && err.contains("control characters"), "{err}");
    }
    // Should one get into a plan all the same, the header stays a comment: every line of the
    // script before the strict-mode line is a shebang or a comment.
    let mut plan = Plan::from_json(&custom("lab card")).unwrap();
    plan.hardware.hw.name = "lab\nrm -rf ~ #".to_owned();
    plan.model.name = "evil\r\ntouch pwned".to_owned();
    let script = &emit(&plan, "").unwrap()[0].text;
    let opening = script.split("set -euo pipefail").next().unwrap();
    assert!(opening.lines().all(|l| l.starts_with('#')), "{opening}");
    assert!(opening.contains("lab rm -rf ~ #") && opening.contains("evil  touch pwned"), "{opening}");
}

/// The value of a Hydra override `key=value` in a script.
fn override_value<'a>(text: &'a str, key: &str) -> Option<&'a str> {
    text.split_whitespace().find_map(|w| w.strip_prefix(key)?.strip_prefix('='))
}

#[test]
fn verl_scripts_count_prompts_and_carry_the_rollout() {
    let text = &files(GOLDEN[5].1)[0].text;
    // The golden plan: 512 prompts per step, 8 responses each, rollout TP 2, lengths 1024 + 2048.
    for (key, value) in [
        ("algorithm.adv_estimator", "grpo"),
        ("data.train_batch_size", "512"),
        ("data.max_prompt_length", "1024"),
        ("data.max_response_length", "2048"),
        ("actor_rollout_ref.rollout.n", "8"),
        ("actor_rollout_ref.rollout.tensor_model_parallel_size", "2"),
        ("actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu", "16"),
        ("actor_rollout_ref.model.path", "'Qwen/Qwen2.5-7B'"),
        ("trainer.n_gpus_per_node", "8"),
        ("trainer.nnodes", "1"),
    ] {
        assert_eq!(override_value(text, key), Some(value), "{key}");
    }
    let ppo = &files(GOLDEN[6].1)[0].text;
    for (key, value) in [
        ("algorithm.adv_estimator", "gae"),
        ("actor_rollout_ref.actor.ulysses_sequence_parallel_size", "2"),
        ("actor_rollout_ref.actor.fsdp_config.optimizer_offload", "True"),
        ("actor_rollout_ref.actor.fsdp_config.param_offload", "True"),
        ("trainer.device", "npu"),
        ("trainer.nnodes", "2"),
        ("trainer.default_local_dir", "'/ckpt/qwen32b-ppo'"),
    ] {
        assert_eq!(override_value(ppo, key), Some(value), "{key}");
    }
}

/// VeRL's Hydra overrides hold typed text as Hydra reads it back, unchanged: bare where its grammar
/// reads a plain string, in its double quotes where it would read syntax, a number, a boolean or
/// null, or stop at a character (`~`, a Chinese path). Each expectation follows hydra-core 1.3.8's
/// override grammar (`hydra/grammar/OverrideLexer.g4`, the release VeRL 0.9.1 runs), as its own
/// `OverridesParser` read each text here; `scripts/conformance` runs the corpus's quoted paths
/// through Hydra and VeRL themselves. The script runs with a fake `python3`, so the arguments are
/// what bash hands to VeRL, and the importer reads the same text back.
#[test]
fn verl_writes_typed_text_as_hydra_reads_it_back() {
    let plan_with = |text: &str| {
        let launch = serde_json::json!({ "dataset": text, "output_dir": text });
        plan(&format!(
            r#"{{"model": "qwen2.5-7b", "framework": "verl", "method": "grpo", "launch": {launch}}}"#
        ))
    };
    let bare = ["/data/gsm8k/train.parquet", "hf:Qwen/Qwen2.5-7B", "a.b-c_d:e@f+g", "v1.0", "1.5.2", "-x"];
    let quoted = [
        "~/data/gsm8k/train.parquet",
        "/数据/gsm8k/train.parquet",
        "a,b",
        "x=y",
        "[1]",
        "my data/x",
        "null",
        "True",
        "1e3",
        "1_000",
        "-1",
        "inf",
    ];
    // The hostile texts a shell must not run; those holding `"`, `\` or `${` are refused below.
    let hostile = HOSTILE.iter().filter(|h| !h.contains(['"', '\\']));
    let cases = bare.iter().map(|t| (t.to_string(), false));
    let cases = cases.chain(quoted.iter().chain(hostile).map(|t| (t.to_string(), true)));
    let base =
        trainplan_core::plan::PlanFile::minimal(trainplan_core::plan::ModelField::Id("qwen2.5-7b".into()));
    for (text, in_quotes) in cases {
        let dir = tempdir("hydra");
        let sentinel = dir.join("pwned");
        let text = text.replace("SENTINEL", &sentinel.display().to_string());
        let script = &emit(&plan_with(&text), "#v1=x").unwrap()[0].text;
        bash_n(script);
        let (args, _) = run_with_fakes(script, &dir);
        let hydra = if in_quotes { format!("\"{text}\"") } else { text.clone() };
        for key in ["data.train_files", "data.val_files", "trainer.default_local_dir"] {
            assert!(args.contains(&format!("{key}={hydra}")), "{text:?} as {key}: {args:?}");
        }
        assert!(!sentinel.exists(), "{text:?} ran");
        // Read back (a `$` reads as a variable the script does not set: not the plan's text).
        if !text.contains('$') {
            let back = trainplan_core::emit::import::import(script, &base).unwrap();
            assert_eq!(back.file.launch.dataset, text, "{text:?}");
            assert_eq!(back.file.launch.output_dir, text, "{text:?}");
        }
    }
    // No quoting keeps these text: a quote or a backslash escapes, `${` interpolates.
    for refused in
        HOSTILE.iter().filter(|h| h.contains(['"', '\\'])).chain(&["${oc.env:HOME}", "a\\b", "say \"hi\""])
    {
        let err = emit(&plan_with(refused), "#v1=x").unwrap_err().to_string();
        assert!(err.starts_with("launch.dataset cannot hold a double quote"), "{refused:?}: {err}");
    }
}

#[test]
fn mindspeed_scripts_carry_the_ascend_flags() {
    let text = &files(GOLDEN[9].1)[0].text;
    for switch in [
        "--use-ascend-coc",
        "--swap-attention",
        "--recompute-activation-function",
        "--use-distributed-optimizer",
        "--reuse-fp32-param",
        "--use-flash-attn",
    ] {
        assert!(text.split_whitespace().any(|w| w == switch), "{switch}");
    }
    assert!(!text.contains("--tp-comm-overlap"));
    // 80 layers / PP 4 / VPP 4 = 5 layers per virtual stage.
    assert_eq!(flag_value(text, "--num-layers-per-virtual-pipeline-stage"), Some("5"));
    assert_eq!(flag_value(text, "--padded-vocab-size"), Some("128256"));
    assert!(text.contains("/usr/local/Ascend/ascend-toolkit/set_env.sh"));
    let lora = &files(GOLDEN[10].1)[0].text;
    assert_eq!(flag_value(lora, "--lora-r"), Some("16"));
    assert!(lora.contains("--lora-target-modules linear_qkv linear_proj linear_fc1 linear_fc2"));
    assert!(lora.contains("posttrain_gpt.py") && lora.contains("--stage sft"));
}

#[test]
fn mindspeed_rl_yaml_follows_its_layout() {
    let out = files(GOLDEN[7].1);
    let run = &YamlLoader::load_from_str(&out[0].text).unwrap()[0];
    // 32 prompts × 8 samples on 16 NPUs, colocated workers (as MindSpeed-RL's
    // configs/grpo_qwen25_7b_A3.yaml); TP 4 and rollout TP 2 are the golden plan's own.
    assert_eq!(run["megatron_training"]["global_batch_size"].as_i64(), Some(32));
    assert_eq!(run["megatron_training"]["stage"].as_str(), Some("ray_grpo"));
    assert_eq!(run["actor_config"]["tensor_model_parallel_size"].as_i64(), Some(4));
    assert_eq!(run["actor_config"]["micro_batch_size"].as_i64(), Some(2));
    assert_eq!(run["rl_config"]["n_samples_per_prompt"].as_i64(), Some(8));
    assert_eq!(run["rl_config"]["actor_resource"]["num_npus"].as_i64(), Some(16));
    assert_eq!(run["rl_config"]["use_integrated_worker"].as_bool(), Some(true));
    assert_eq!(run["generate_config"]["infer_tensor_parallel_size"].as_i64(), Some(2));
    assert_eq!(run["generate_config"]["max_model_len"].as_i64(), Some(4096));
    assert_eq!(run["defaults"][0]["model"][0].as_str(), Some("qwen25_7b"));
    // The model block: Qwen2.5-7B's config.json shape under its name.
    let model = &YamlLoader::load_from_str(&out[1].text).unwrap()[0]["qwen25_7b"];
    assert_eq!(model["num_layers"].as_i64(), Some(28));
    assert_eq!(model["hidden_size"].as_i64(), Some(3584));
    assert_eq!(model["num_query_groups"].as_i64(), Some(4));
    assert_eq!(model["add_qkv_bias"].as_bool(), Some(true));
    assert_eq!(model["padded_vocab_size"].as_i64(), Some(152064));
    assert_eq!(out[0].name, "grpo_qwen25_7b_16npu.yaml");
    // The MoE plan: experts over EP 4, full recomputation, Qwen3-30B-A3B's 128 experts, top-8.
    let out = files(GOLDEN[8].1);
    let run = &YamlLoader::load_from_str(&out[0].text).unwrap()[0];
    assert_eq!(run["megatron_training"]["expert_model_parallel_size"].as_i64(), Some(4));
    assert_eq!(run["megatron_training"]["recompute_granularity"].as_str(), Some("full"));
    assert_eq!(run["actor_config"]["pipeline_model_parallel_size"].as_i64(), Some(2));
    let model = &YamlLoader::load_from_str(&out[1].text).unwrap()[0]["qwen3_30b_a3b"];
    assert_eq!(model["num_experts"].as_i64(), Some(128));
    assert_eq!(model["moe_router_topk"].as_i64(), Some(8));
}

#[test]
fn the_zip_holds_every_file_as_written() {
    use std::io::Read;
    for (name, text) in [GOLDEN[4], GOLDEN[9], GOLDEN[11]] {
        let p = plan(text);
        let files = files(text);
        let folder = trainplan_core::emit::archive::folder(&p);
        let bytes = trainplan_core::emit::archive::zip(&folder, &files);
        // The same plan gives the same bytes: entries are dated 1980-01-01.
        assert_eq!(bytes, trainplan_core::emit::archive::zip(&folder, &files), "{name}");
        let mut archive = zip::ZipArchive::new(std::io::Cursor::new(bytes)).unwrap();
        assert_eq!(archive.len(), files.len(), "{name}");
        for (i, f) in files.iter().enumerate() {
            let mut entry = archive.by_index(i).unwrap();
            assert_eq!(entry.name(), format!("{folder}/{}", f.name));
            let mode = entry.unix_mode().unwrap() & 0o777;
            assert_eq!(mode, if f.kind == FileKind::Shell { 0o755 } else { 0o644 }, "{}", f.name);
            let mut text = String::new();
            entry.read_to_string(&mut text).unwrap();
            assert_eq!(text, f.text);
        }
    }
    // The system's unzip agrees, where there is one.
    let Ok(out) = Command::new("unzip").arg("-v").output() else { return };
    if !out.status.success() {
        return;
    }
    let dir = tempdir("zip");
    let p = plan(GOLDEN[9].1);
    let folder = trainplan_core::emit::archive::folder(&p);
    std::fs::write(dir.join("all.zip"), trainplan_core::emit::archive::zip(&folder, &files(GOLDEN[9].1)))
        .unwrap();
    let status = Command::new("unzip").args(["-q", "all.zip"]).current_dir(&dir).status().unwrap();
    assert!(status.success());
    for f in files(GOLDEN[9].1) {
        assert_eq!(std::fs::read_to_string(dir.join(&folder).join(&f.name)).unwrap(), f.text);
    }
}

#[test]
fn uneven_stages_are_written_as_each_framework_names_them() {
    // DeepSeek-V3: 61 decoder layers (config.json num_hidden_layers) on 8 stages. Megatron's rule
    // (arguments.py): the middle 6 stages split 61 − first − last evenly: 6 + 6 × 8 + 7.
    let plan = |framework: &str, hardware: &str| {
        format!(
            r#"{{"model": "deepseek-v3", "hardware": "{hardware}", "cluster": {{"nodes": 64}}, "framework": "{framework}",
                "method": "pretrain", "parallel": {{"tp": 8, "pp": 8, "ep": 8, "distributed_optimizer": true,
                "uneven_layers": true}}, "batch": {{"global_batch": 1024}}}}"#
        )
    };
    let megatron = &files(&plan("megatron", "h800-sxm-80g"))[0].text;
    assert_eq!(flag_value(megatron, "--decoder-first-pipeline-num-layers"), Some("6"));
    assert_eq!(flag_value(megatron, "--decoder-last-pipeline-num-layers"), Some("7"));
    let mindspeed = &files(&plan("mindspeed-llm", "ascend-910c"))[0].text;
    assert_eq!(flag_value(mindspeed, "--num-layer-list"), Some("6,8,8,8,8,8,8,7"));
    // And back: the importer reads either form as uneven stages.
    let base =
        trainplan_core::plan::PlanFile::minimal(trainplan_core::plan::ModelField::Id("deepseek-v3".into()));
    for text in [megatron, mindspeed] {
        let back = trainplan_core::emit::import::import(text, &base).unwrap();
        assert!(back.file.parallel.uneven_layers && back.file.parallel.pp == 8);
        assert!(back.unknown.is_empty(), "{:?}", back.unknown);
    }
}

/// All-to-all context parallelism is written as each framework names it: Megatron-LM
/// `--cp-comm-type a2a` (megatron/training/arguments.py at core_v0.19.0), MindSpeed-LLM
/// `--context-parallel-algo ulysses_cp_algo` and MindSpeed-RL's `context_parallel_algo` key
/// (mindspeed/features_manager/context_parallel/ulysses_context_parallel.py); the ring, every
/// framework's default, is written as nothing, and the header names the algorithm.
#[test]
fn the_context_parallel_algorithm_is_written_as_each_framework_names_it() {
    let plan = |framework: &str, hardware: &str, algo: &str| {
        format!(
            r#"{{"model": "qwen2.5-7b", "hardware": "{hardware}", "framework": "{framework}", "method": "pretrain",
                "parallel": {{"cp": 4, "cp_algo": "{algo}", "distributed_optimizer": true}},
                "batch": {{"global_batch": 64, "seq_len": 32768}}}}"#
        )
    };
    let megatron = &files(&plan("megatron", "h100-sxm-80g", "alltoall"))[0].text;
    assert_eq!(flag_value(megatron, "--cp-comm-type"), Some("a2a"));
    assert!(megatron.contains("CP 4 (all-to-all)"));
    let mindspeed = &files(&plan("mindspeed-llm", "ascend-910b2", "alltoall"))[0].text;
    assert_eq!(flag_value(mindspeed, "--context-parallel-algo"), Some("ulysses_cp_algo"));
    assert!(!mindspeed.contains("--cp-comm-type"));
    for (framework, hardware) in [("megatron", "h100-sxm-80g"), ("mindspeed-llm", "ascend-910b2")] {
        let ring = &files(&plan(framework, hardware, "ring"))[0].text;
        assert!(!ring.contains("--cp-comm-type") && !ring.contains("--context-parallel-algo"), "{framework}");
        assert!(!ring.contains("all-to-all"), "{framework}");
    }
    let rl = |algo: &str| {
        let text = format!(
            r#"{{"model": "qwen2.5-7b", "hardware": "ascend-910b2", "framework": "mindspeed-rl", "method": "grpo",
                "parallel": {{"tp": 2, "cp": 2, "cp_algo": "{algo}"}}}}"#
        );
        let run = YamlLoader::load_from_str(&files(&text)[0].text).unwrap().remove(0);
        run["megatron_training"]["context_parallel_algo"].as_str().map(str::to_owned)
    };
    assert_eq!(rl("alltoall").as_deref(), Some("ulysses_cp_algo"));
    assert_eq!(rl("ring"), None);
}

/// A file of a plan that does not run says so in its header, with the peak against what is usable
/// and each broken rule; a clean plan's files carry no warning.
#[test]
fn headers_carry_the_verdict() {
    // Llama-3.1-70B full SFT on one node of 24 GiB cards: far from fitting.
    let bad = r#"{"model": "llama-3.1-70b", "hardware": "rtx-4090-24g", "framework": "llamafactory",
        "method": "sft-full", "parallel": {"tp": 2}}"#;
    for f in files(bad) {
        if f.kind == FileKind::Json {
            continue; // JSON has no comments; the YAML and the script beside it say it.
        }
        // The header's comment lines, unwrapped.
        let head = f
            .text
            .lines()
            .skip_while(|l| l.starts_with("#!"))
            .take_while(|l| l.starts_with('#'))
            .map(|l| l.trim_start_matches('#').trim())
            .collect::<Vec<_>>()
            .join(" ");
        assert!(head.contains("WARNING: this plan does not run as written"), "{}: {head}", f.name);
        assert!(head.contains("GiB are usable"), "{}", f.name);
        assert!(head.contains("[hf.no_model_parallel]"), "{}", f.name);
    }
    for (name, text) in GOLDEN {
        let report = trainplan_core::evaluate(&plan(text));
        let clean = report.findings.iter().all(|f| f.severity != trainplan_core::report::Severity::Error);
        for f in files(text) {
            assert_eq!(!f.text.contains("WARNING: this plan does not run"), clean, "{name}/{}", f.name);
        }
    }
}

/// An imported config of a type the planner reads Llama-like gets its own chat template in
/// LLaMA-Factory's YAML where LLaMA-Factory has one (0.9.5 `DEFAULT_TEMPLATE`: GPT-OSS-20B-Thinking
/// `gpt_oss`, Llama-4-Scout-17B-16E-Instruct `llama4`), the wrapper's type or its language
/// model's; an unknown type LLaMA-Factory has no template for keeps `default`.
#[test]
fn an_imported_model_type_keeps_its_own_chat_template() {
    let shape = r#""hidden_size": 512, "intermediate_size": 1024, "num_hidden_layers": 2,
        "num_attention_heads": 8, "num_key_value_heads": 8, "vocab_size": 1000, "max_position_embeddings": 4096"#;
    for (config, expected) in [
        (format!(r#"{{"model_type": "gpt_oss", {shape}}}"#), "gpt_oss"),
        (
            format!(r#"{{"model_type": "llama4", "text_config": {{"model_type": "llama4_text", {shape}}}}}"#),
            "llama4",
        ),
        (format!(r#"{{"model_type": "my_decoder", {shape}}}"#), "default"),
        // Gemma 2 and the text-only Gemma 3 talk as `gemma2`, the multimodal Gemma 3 as `gemma3`
        // (LLaMA-Factory's constants.py at ff6d4d1: Gemma-2-*, Gemma-3-270M and -1B under
        // `gemma2`; Gemma-3-4B to -27B under `gemma3`).
        (format!(r#"{{"model_type": "gemma2", {shape}}}"#), "gemma2"),
        (format!(r#"{{"model_type": "gemma3_text", {shape}}}"#), "gemma2"),
        (
            format!(r#"{{"model_type": "gemma3", "text_config": {{"model_type": "gemma3_text", {shape}}}}}"#),
            "gemma3",
        ),
        // Qwen2.5-VL as `qwen2_vl`; Qwen3-VL's Instruct models (dense and MoE) as `qwen3_vl_nothink`
        // (constants.py at ff6d4d1: Qwen3-VL-2B- to -235B-A22B-Instruct), its Thinking ones below.
        (format!(r#"{{"model_type": "qwen2_5_vl", {shape}}}"#), "qwen2_vl"),
        (
            format!(
                r#"{{"model_type": "qwen3_vl", "text_config": {{"model_type": "qwen3_vl_text", {shape}}}}}"#
            ),
            "qwen3_vl_nothink",
        ),
        (
            format!(
                r#"{{"model_type": "qwen3_vl_moe", "text_config": {{"model_type": "qwen3_vl_moe_text", {shape}}}}}"#
            ),
            "qwen3_vl_nothink",
        ),
        // GLM-4.1V as `glm4v`, not GLM-4's `glm4` (constants.py at ff6d4d1: GLM-4.1V-9B-Base and
        // -Thinking), its shape at the top.
        (format!(r#"{{"model_type": "glm4v", {shape}}}"#), "glm4v"),
        // GLM-4.5V as `glm4_5v` (constants.py at ff6d4d1: GLM-4.5V-Air-Thinking).
        (
            format!(
                r#"{{"model_type": "glm4v_moe", "text_config": {{"model_type": "glm4v_moe_text", {shape}}}}}"#
            ),
            "glm4_5v",
        ),
    ] {
        let files = files(&format!(r#"{{"model": {{"hf_config": {config}}}}}"#));
        let yaml = &files.iter().find(|f| f.name == "train.yaml").unwrap().text;
        assert!(yaml.contains(&format!("\ntemplate: {expected}\n")), "{config}: {yaml}");
    }
    // Qwen3-VL-8B-Thinking (LLaMA-Factory registers the Thinking models with `qwen3_vl`).
    let thinking = format!(
        r#"{{"model": {{"hf_config": {{"model_type": "qwen3_vl", "text_config": {{"model_type": "qwen3_vl_text", {shape}}}}},
        "name": "Qwen/Qwen3-VL-8B-Thinking"}}}}"#
    );
    let yaml = files(&thinking).into_iter().find(|f| f.name == "train.yaml").unwrap().text;
    assert!(yaml.contains("\ntemplate: qwen3_vl\n"), "{yaml}");
}

/// Catalog models talk in LLaMA-Factory's YAML as its constants.py at ff6d4d1 registers them
/// (`register_model_group(..., template=...)`): Mistral-Nemo-Instruct-2407 `ministral`,
/// Mistral-Small-24B-Instruct-2501 `mistral_small`, Llama-3.3-70B-Instruct `llama3`,
/// Qwen2.5-Coder-32B-Instruct `qwen`, GLM-4.5 `glm4_moe`, Moonlight-16B-A3B `moonlight`,
/// DeepSeek-V3 `deepseek3`; Qwen3-Coder, which it does not
/// register, as its non-thinking Qwen3 models (Qwen3-30B-A3B-Instruct-2507) `qwen3_nothink`, which
/// an Instruct-2507 release named by its weights talks as too.
#[test]
fn catalog_models_keep_llama_factorys_chat_template() {
    for (model, expected) in [
        ("mistral-nemo", "ministral"),
        ("mistral-small-24b", "mistral_small"),
        ("mistral-7b-v0.3", "mistral"),
        ("llama-3.3-70b", "llama3"),
        ("qwen2.5-coder-32b", "qwen"),
        ("glm-4.6", "glm4_moe"),
        ("qwen3-coder-30b-a3b", "qwen3_nothink"),
        ("qwen3-30b-a3b", "qwen3"),
        ("moonlight-16b-a3b", "moonlight"),
        ("deepseek-v3", "deepseek3"),
        // constants.py at ff6d4d1: `DeepSeek-R1-14B-Distill` and `-32B-Distill` in the `deepseekr1`
        // group, `QwQ-32B-Instruct` (Qwen/QwQ-32B) in the `qwen` one.
        ("deepseek-r1-distill-qwen-14b", "deepseekr1"),
        ("deepseek-r1-distill-qwen-32b", "deepseekr1"),
        ("qwq-32b", "qwen"),
        // constants.py at ff6d4d1: `Phi-4-14B-Instruct` (microsoft/phi-4) in the `phi4` group,
        // `Phi-4-3.8B-instruct` (microsoft/Phi-4-mini-instruct) in the `phi4_mini` one.
        ("phi-4", "phi4"),
        ("phi-4-mini", "phi4_mini"),
        // `Phi-3.5-4B-instruct` (microsoft/Phi-3.5-mini-instruct) in the `phi` group.
        ("phi-3.5-mini", "phi"),
    ] {
        let files = files(&format!(r#"{{"model": "{model}"}}"#));
        let yaml = &files.iter().find(|f| f.name == "train.yaml").unwrap().text;
        assert!(yaml.contains(&format!("\ntemplate: {expected}\n")), "{model}: {yaml}");
    }
    // Qwen3-30B-A3B's 2507 releases, named by their weights: Instruct `qwen3_nothink`, Thinking `qwen3`.
    for (path, expected) in
        [("Qwen/Qwen3-30B-A3B-Instruct-2507", "qwen3_nothink"), ("Qwen/Qwen3-30B-A3B-Thinking-2507", "qwen3")]
    {
        let files = files(&format!(r#"{{"model": "qwen3-30b-a3b", "launch": {{"model_path": "{path}"}}}}"#));
        let yaml = &files.iter().find(|f| f.name == "train.yaml").unwrap().text;
        assert!(yaml.contains(&format!("\ntemplate: {expected}\n")), "{path}: {yaml}");
    }
    // A Phi-3 release (`Phi-3-4B-4k-Instruct`, microsoft/Phi-3-mini-4k-instruct, in the `phi` group),
    // its config's shape with Phi-4-mini's name left out.
    let files = files(
        r#"{"model": {"hf_config": {"model_type": "phi3", "vocab_size": 32064, "hidden_size": 3072,
            "intermediate_size": 8192, "num_hidden_layers": 32, "num_attention_heads": 32}},
            "launch": {"model_path": "microsoft/Phi-3-mini-4k-instruct"}}"#,
    );
    let yaml = &files.iter().find(|f| f.name == "train.yaml").unwrap().text;
    assert!(yaml.contains("\ntemplate: phi\n"), "{yaml}");
}

/// How the router weighs a token's k experts follows the model's `norm_topk_prob`: Qwen3-MoE
/// renormalizes them (its config.json: `"norm_topk_prob": true`), Qwen1.5-MoE keeps their share of
/// the softmax over every expert (`false`). Megatron-LM renormalizes unless told
/// `--moe-router-pre-softmax` (`topk_softmax_with_capacity`: softmax over the top k logits, or top
/// k of the softmax with it); MindSpeed-LLM and MindSpeed-RL keep the share unless told
/// `--norm-topk-prob` (MindSpeed-RL's own `configs/model/qwen3_30b_a3b.yaml` sets
/// `norm_topk_prob: true`). DeepSeek-V3's sigmoid router renormalizes too: MindSpeed-LLM's scripts
/// set the flag, and Megatron-LM has no softmax to move.
#[test]
fn the_router_weighs_its_experts_as_the_model_does() {
    let script = |model: &str, framework: &str, hardware: &str| {
        let text = format!(
            r#"{{"model": "{model}", "framework": "{framework}", "method": "pretrain", "hardware": "{hardware}",
                "parallel": {{"ep": 8, "distributed_optimizer": true}}}}"#
        );
        files(&text).into_iter().map(|f| f.text).collect::<Vec<_>>().join("\n")
    };
    let has = |text: &str, flag: &str| text.split_whitespace().any(|w| w == flag);
    for (model, renormalized) in [("qwen3-30b-a3b", true), ("qwen1.5-moe-a2.7b", false)] {
        let megatron = script(model, "megatron", "h100-sxm-80g");
        assert_eq!(has(&megatron, "--moe-router-pre-softmax"), !renormalized, "{model}");
        let mindspeed = script(model, "mindspeed-llm", "ascend-910b2");
        assert_eq!(has(&mindspeed, "--norm-topk-prob"), renormalized, "{model}");
    }
    let rl = r#"{"model": "qwen3-30b-a3b", "framework": "mindspeed-rl", "method": "grpo", "hardware": "ascend-910b2"}"#;
    let model_yaml = files(rl).into_iter().find(|f| f.name == "qwen3_30b_a3b.yaml").unwrap().text;
    assert!(model_yaml.lines().any(|l| l.trim() == "norm_topk_prob: true"), "{model_yaml}");
    assert!(!has(&script("deepseek-v3", "megatron", "h800-sxm-80g"), "--moe-router-pre-softmax"));
    assert!(has(&script("deepseek-v3", "mindspeed-llm", "ascend-910c"), "--norm-topk-prob"));
    // DeepSeek-V3's router itself (transformers 5.6.0 `DeepseekV3TopkRouter` and `DeepseekV3Config`:
    // sigmoid scores with a bias per expert, 4 of 8 groups, weights × 2.5), as MindSpeed-LLM's
    // DeepSeek-V3 scripts write it; a softmax router writes none of it.
    let value = |text: &str, flag: &str| {
        let words: Vec<&str> = text.split_whitespace().collect();
        words.iter().position(|w| *w == flag).map(|at| words[at + 1].to_owned())
    };
    for (framework, hardware) in [("megatron", "h800-sxm-80g"), ("mindspeed-llm", "ascend-910c")] {
        let text = script("deepseek-v3", framework, hardware);
        assert_eq!(value(&text, "--moe-router-score-function").as_deref(), Some("sigmoid"), "{framework}");
        assert_eq!(value(&text, "--moe-router-num-groups").as_deref(), Some("8"), "{framework}");
        assert_eq!(value(&text, "--moe-router-group-topk").as_deref(), Some("4"), "{framework}");
        assert_eq!(value(&text, "--moe-router-topk-scaling-factor").as_deref(), Some("2.5"), "{framework}");
        assert!(has(&text, "--moe-router-enable-expert-bias"), "{framework}");
        assert!(!has(&script("qwen3-30b-a3b", framework, hardware), "--moe-router-score-function"));
    }
}

/// DeepSeek's positions and DeepSeek-V2's router as the frameworks' own DeepSeek scripts write them,
/// from the models' config.json (`rope_scaling`: YaRN, factor 40 past 4,096 positions, mscale 0.707 on
/// V2 and V2-Lite, 1.0 on V3; V2's `group_limited_greedy` over 3 of 8 groups, weights × 16).
/// Megatron-LM: `examples/post_training/modelopt/conf/deepseek-ai/DeepSeek-V2-Lite.sh` and
/// `examples/megatron_fsdp/sbatch_mfsdp_deepseek_v3.sh` (`--rotary-scaling-factor 40 --mscale …
/// --mscale-all-dim …`). MindSpeed-LLM: `examples/mcore/deepseek2_lite/pretrain_deepseek2_lite_16b_ptd_8p.sh`,
/// `examples/mcore/deepseek3/pretrain_deepseek3_671b_4k_ptd.sh` (`ROPE_ARGS`) and
/// `tests/pipeline/legacy/deepseek2/deepseek_v2_mcore_tp1_pp1_ep8.sh` (the router). Without them
/// Megatron-LM's MLA takes factor 1 and mscale-all-dim 0: plain RoPE and an attention scale 1.59×
/// (V2) to 1.87× (V3) below the checkpoint's, and V2's experts a sixteenth of their weight.
#[test]
fn deepseek_positions_and_router_follow_the_model() {
    let script = |model: &str, framework: &str, hardware: &str| {
        let text = format!(
            r#"{{"model": "{model}", "framework": "{framework}", "method": "pretrain", "hardware": "{hardware}",
                "cluster": {{"nodes": 8}}, "parallel": {{"pp": 4, "ep": 8, "distributed_optimizer": true}}}}"#
        );
        files(&text).into_iter().map(|f| f.text).collect::<Vec<_>>().join("\n")
    };
    let value = |text: &str, flag: &str| {
        let words: Vec<&str> = text.split_whitespace().collect();
        words.iter().position(|w| *w == flag).map(|at| words[at + 1].to_owned())
    };
    let number = |text: &str, flag: &str| value(text, flag).and_then(|v| v.parse::<f64>().ok());
    for (model, mscale) in [("deepseek-v2-lite", 0.707), ("deepseek-v2", 0.707), ("deepseek-v3", 1.0)] {
        let megatron = script(model, "megatron", "h800-sxm-80g");
        assert_eq!(number(&megatron, "--rotary-scaling-factor"), Some(40.0), "{model}");
        assert_eq!(number(&megatron, "--mscale"), Some(mscale), "{model}");
        assert_eq!(number(&megatron, "--mscale-all-dim"), Some(mscale), "{model}");
        let mindspeed = script(model, "mindspeed-llm", "ascend-910b2");
        assert_eq!(value(&mindspeed, "--rope-scaling-type").as_deref(), Some("yarn"), "{model}");
        for (flag, expected) in [
            ("--rope-scaling-factor", 40.0),
            ("--rope-scaling-mscale", mscale),
            ("--rope-scaling-mscale-all-dim", mscale),
            ("--rope-scaling-original-max-position-embeddings", 4096.0),
            ("--beta-fast", 32.0),
            ("--beta-slow", 1.0),
        ] {
            assert_eq!(number(&mindspeed, flag), Some(expected), "{model} {flag}");
        }
    }
    // Llama's own RoPE takes none of it.
    assert_eq!(value(&script("mixtral-8x7b", "megatron", "h100-sxm-80g"), "--rotary-scaling-factor"), None);
    // YaRN on grouped-query attention, as Qwen2.5's model cards tell to add it for long context
    // (`"rope_scaling": {"factor": 4.0, "original_max_position_embeddings": 32768, "type": "yarn"}`):
    // Megatron-LM's own position type with its `--yarn-*` flags, mscale 1 and 0 giving transformers'
    // default attention factor; MindSpeed-LLM the flags it gives DeepSeek.
    let mut qwen: serde_json::Value = serde_json::from_str(
        trainplan_core::catalog::CONFIGS.iter().find(|c| c.id == "qwen2.5-7b").unwrap().config,
    )
    .unwrap();
    qwen["rope_scaling"] =
        serde_json::json!({"factor": 4.0, "original_max_position_embeddings": 32768, "type": "yarn"});
    for (framework, hardware) in [("megatron", "h100-sxm-80g"), ("mindspeed-llm", "ascend-910b2")] {
        let plan = format!(
            r#"{{"model": {{"hf_config": {qwen}}}, "framework": "{framework}", "method": "pretrain", "hardware": "{hardware}"}}"#
        );
        let text = files(&plan).into_iter().map(|f| f.text).collect::<Vec<_>>().join("\n");
        let expected: &[(&str, f64)] = match framework {
            "megatron" => &[
                ("--rotary-scaling-factor", 4.0),
                ("--yarn-original-max-position-embeddings", 32768.0),
                ("--yarn-beta-fast", 32.0),
                ("--yarn-beta-slow", 1.0),
                ("--mscale", 1.0),
                ("--mscale-all-dim", 0.0),
            ],
            _ => &[
                ("--rope-scaling-factor", 4.0),
                ("--rope-scaling-original-max-position-embeddings", 32768.0),
            ],
        };
        for &(flag, want) in expected {
            assert_eq!(number(&text, flag), Some(want), "{framework} {flag}");
        }
        let kind = if framework == "megatron" { "yarn" } else { "rope" };
        assert_eq!(value(&text, "--position-embedding-type").as_deref(), Some(kind), "{framework}");
    }
    // DeepSeek-V2's group-limited router; V2-Lite routes greedily over every expert, unscaled.
    let v2 = script("deepseek-v2", "mindspeed-llm", "ascend-910b2");
    assert_eq!(value(&v2, "--moe-router-load-balancing-type").as_deref(), Some("group_limited_greedy"));
    let megatron_v2 = script("deepseek-v2", "megatron", "h800-sxm-80g");
    for text in [&v2, &megatron_v2] {
        assert_eq!(number(text, "--moe-router-num-groups"), Some(8.0));
        assert_eq!(number(text, "--moe-router-group-topk"), Some(3.0));
        assert_eq!(number(text, "--moe-router-topk-scaling-factor"), Some(16.0));
    }
    assert_eq!(value(&megatron_v2, "--moe-router-load-balancing-type"), None);
    for framework in ["megatron", "mindspeed-llm"] {
        let lite = script("deepseek-v2-lite", framework, "h800-sxm-80g");
        assert_eq!(value(&lite, "--moe-router-num-groups"), None, "{framework}");
        assert_eq!(value(&lite, "--moe-router-topk-scaling-factor"), None, "{framework}");
    }
}

/// VeRL runs the plan's ZeRO stage as its FSDP engine shards (verl 0.9.1
/// `verl/workers/engine/fsdp/utils.py`): every rank (`fsdp_size` −1 with `reshard_after_forward`, the
/// defaults: ZeRO-3, written as nothing), no rank (`fsdp_size: 1`, a replicated mesh: ZeRO-0), or the
/// gradients and optimizer states alone (`reshard_after_forward: False`, `SHARD_GRAD_OP`: ZeRO-2); for
/// the actor, its reference and PPO's critic (`critic.fsdp` in 0.9.1's `ppo_trainer`). Before, every
/// file ran ZeRO-3 whatever the memory panel counted.
#[test]
fn verl_shards_as_the_plan_counts() {
    let overrides = |zero: u8| {
        let text = format!(
            r#"{{"model": "qwen2.5-0.5b", "framework": "verl", "method": "ppo", "parallel": {{"zero_stage": {zero}}}}}"#
        );
        let script = files(&text).into_iter().next().unwrap().text;
        let mut keys: Vec<String> = script
            .split_whitespace()
            .filter(|w| w.contains("fsdp_size=") || w.contains("reshard_after_forward="))
            .map(str::to_owned)
            .collect();
        keys.sort();
        keys
    };
    assert_eq!(
        overrides(0),
        [
            "actor_rollout_ref.actor.fsdp_config.fsdp_size=1",
            "actor_rollout_ref.ref.fsdp_config.fsdp_size=1",
            "critic.fsdp.fsdp_size=1"
        ]
    );
    assert_eq!(
        overrides(2),
        [
            "actor_rollout_ref.actor.fsdp_config.reshard_after_forward=False",
            "actor_rollout_ref.ref.fsdp_config.reshard_after_forward=False",
            "critic.fsdp.reshard_after_forward=False"
        ]
    );
    assert!(overrides(3).is_empty());
}

/// gpt-oss on Megatron-LM is built as Megatron-Bridge's `GPTOSSBridge` builds it: a gated quick
/// GELU on `up + 1` clamped at 7 (no SwiGLU), biased linear layers, windows of 128 tokens (the 127
/// before and the token itself, `window_size = (sliding_window - 1, 0)`) on every layer but each
/// second, a learned sink per head, YaRN without rounding its correction range; and
/// LLaMA-Factory trains it on its `gpt_oss` template, Kimi K2 on Moonlight's turns.
#[test]
fn gpt_oss_and_kimi_k2_launch_as_their_frameworks_build_them() {
    let p = plan(
        r#"{"model": "gpt-oss-120b", "cluster": {"nodes": 2}, "framework": "megatron", "method": "sft-full",
            "attention": "sdpa", "parallel": {"tp": 1, "pp": 2, "ep": 8}}"#,
    );
    let files = emit(&p, "#link").unwrap();
    let script = &files.iter().find(|f| f.kind == FileKind::Shell).unwrap().text;
    for flag in [
        "--quick-geglu --glu-linear-offset 1.0 --activation-func-clamp-value 7.0",
        "--window-size 127,0 --window-attn-skip-freq 2",
        "--softmax-type learnable",
        "--no-yarn-correction-range-round-to-int",
        "--attention-backend fused",
        "--add-qkv-bias",
    ] {
        assert!(script.contains(flag), "{flag} missing:\n{script}");
    }
    for flag in ["--swiglu", "--disable-bias-linear"] {
        assert!(!script.contains(flag), "{flag} written:\n{script}");
    }
    for (model, template) in [("gpt-oss-20b", "gpt_oss"), ("kimi-k2", "moonlight")] {
        let p = plan(&format!(r#"{{"model": "{model}"}}"#));
        let yaml = &emit(&p, "#link").unwrap().into_iter().find(|f| f.kind == FileKind::Yaml).unwrap().text;
        assert!(yaml.contains(&format!("template: {template}\n")), "{model}:\n{yaml}");
    }
}

/// Megatron builds experts on every layer unless told which hold them: for each MoE model of the
/// catalog the Megatron-LM script's `--moe-layer-freq` pattern, evaluated as Python evaluates
/// `([0]*3+[1]*58)` (`moe_freq_type`), is the model's own layout, as long as its layers; and
/// MindSpeed-LLM's names the dense layers first with `--first-k-dense-replace`. Models whose every
/// layer holds experts write neither (Megatron's default, every layer).
#[test]
fn moe_scripts_name_the_layers_that_hold_experts() {
    let mut patterned = 0;
    for entry in trainplan_core::catalog::models() {
        let Some(moe) = &entry.arch.moe else { continue };
        let layout: Vec<u8> = (0..entry.arch.n_layers).map(|i| u8::from(moe.is_moe_layer(i))).collect();
        for framework in ["megatron", "mindspeed-llm"] {
            let p = plan(&format!(
                r#"{{"model": "{}", "framework": "{framework}", "method": "pretrain", "hardware": "{}"}}"#,
                entry.id,
                if framework == "megatron" { "h100-sxm-80g" } else { "ascend-910b2" }
            ));
            let files = emit(&p, "#link").unwrap();
            let script = &files.iter().find(|f| f.kind == FileKind::Shell).unwrap().text;
            let freq =
                script.split("--moe-layer-freq ").nth(1).map(|rest| rest.split_whitespace().next().unwrap());
            let first_k = script
                .split("--first-k-dense-replace ")
                .nth(1)
                .map(|rest| rest.split_whitespace().next().unwrap().parse::<usize>().unwrap());
            let written: Option<Vec<u8>> = match (freq, first_k) {
                (None, None) => None,
                (Some("1"), Some(k)) => Some((0..layout.len()).map(|i| u8::from(k <= i)).collect()),
                (Some(pattern), None) => {
                    let inner = pattern.trim_matches('"').trim_start_matches('(').trim_end_matches(')');
                    Some(
                        inner
                            .split('+')
                            .flat_map(|term| {
                                let (value, count) = term.split_once('*').unwrap();
                                let value: u8 = value.trim_matches(['[', ']']).parse().unwrap();
                                std::iter::repeat_n(value, count.parse().unwrap())
                            })
                            .collect(),
                    )
                }
                other => panic!("{} on {framework}: {other:?}", entry.id),
            };
            match written {
                None => {
                    assert!(layout.iter().all(|&l| l == 1), "{} on {framework}: no layout written", entry.id)
                }
                Some(written) => {
                    assert_eq!(written, layout, "{} on {framework}", entry.id);
                    patterned += 1;
                }
            }
        }
    }
    // DeepSeek-V2, V2-Lite, V3, R1, Kimi K2, Moonlight, GLM-4.5, GLM-4.5-Air and GLM-4.6 on both
    // frameworks.
    assert_eq!(patterned, 18);
}

/// A gpt-oss-shaped config whose every layer is windowed (`layer_types` all `sliding_attention`)
/// writes the window alone: Megatron windows every layer without `--window-attn-skip-freq`, whose
/// 0 it would divide by (`is_layer_window_attention`: `layer_number % window_attn_skip_freq`).
#[test]
fn a_model_windowed_on_every_layer_writes_no_skip_frequency() {
    let mut config: serde_json::Value = serde_json::from_str(
        trainplan_core::catalog::CONFIGS.iter().find(|c| c.id == "gpt-oss-20b").unwrap().config,
    )
    .unwrap();
    config["layer_types"] = serde_json::json!(vec!["sliding_attention"; 24]);
    let text =
        serde_json::json!({"model": {"hf_config": config, "name": "all-windowed"}, "framework": "megatron",
        "method": "pretrain", "attention": "sdpa", "parallel": {"ep": 8}})
        .to_string();
    let p = plan(&text);
    assert_eq!(p.model.arch.sliding_window.unwrap().windowed_layers(24), 24);
    let script = &emit(&p, "#link").unwrap()[0].text;
    assert!(script.contains("--window-size 127,0\n"), "{script}");
    assert!(!script.contains("--window-attn-skip-freq"), "{script}");
}

/// Mistral-7B-v0.1's 4,096-token window on every layer is built where the framework can say it:
/// Megatron-LM `--window-size 4095,0` (the 4,095 tokens before and the token itself, as
/// Megatron-Bridge's `MistralBridge` converts `sliding_window`), with no skip frequency since no
/// layer attends to the whole sequence; MindSpeed-LLM `--sliding-window 4096`, its fused
/// attention's `pre_tockens`. MindSpeed-RL's model config has no key for it (its warning, rules),
/// and Mistral-7B-v0.3, which has no window, writes none anywhere.
#[test]
fn sliding_windows_are_built_where_the_framework_says_them() {
    let file = every_file_of;
    let megatron = file("mistral-7b-v0.1", "megatron", "h100-sxm-80g", "pretrain");
    assert!(megatron.contains("--window-size 4095,0\n"), "{megatron}");
    assert!(!megatron.contains("--window-attn-skip-freq"), "{megatron}");
    let mindspeed = file("mistral-7b-v0.1", "mindspeed-llm", "ascend-910b2", "pretrain");
    assert!(mindspeed.contains("--sliding-window 4096\n"), "{mindspeed}");
    assert!(!mindspeed.contains("--window-size"), "{mindspeed}");
    let rl = file("mistral-7b-v0.1", "mindspeed-rl", "ascend-910b2", "grpo");
    assert!(!rl.contains("window"), "{rl}");
    for (framework, hardware, method) in
        [("megatron", "h100-sxm-80g", "pretrain"), ("mindspeed-llm", "ascend-910b2", "pretrain")]
    {
        let text = file("mistral-7b-v0.3", framework, hardware, method);
        assert!(!text.contains("window"), "{framework}:\n{text}");
    }
}

/// ZeRO++ is written into DeepSpeed's `zero_optimization` as its config names it, for DeepSpeed's
/// own JSON and LLaMA-Factory's DeepSpeed file, at ZeRO-3 (the stage that reads it); a plan
/// without it writes none of its keys.
#[test]
fn zero_plus_plus_is_written_where_deepspeed_reads_it() {
    for framework in ["deepspeed", "llamafactory"] {
        let json = |parallel: &str| {
            let p = plan(&format!(
                r#"{{"model": "llama-3-8b", "framework": "{framework}", "method": "sft-full", "cluster": {{"nodes": 2}},
                    "parallel": {parallel}}}"#
            ));
            let files = emit(&p, "#link").unwrap();
            let file = files.iter().find(|f| f.kind == FileKind::Json).unwrap();
            serde_json::from_str::<serde_json::Value>(&file.text).unwrap()["zero_optimization"].clone()
        };
        let on = json(
            r#"{"zero_stage": 3, "zero_hpz_partition_size": 8, "zero_quantized_weights": true, "zero_quantized_gradients": true}"#,
        );
        assert_eq!(on["zero_hpz_partition_size"], 8, "{framework}: {on}");
        assert_eq!(on["zero_quantized_weights"], true, "{framework}: {on}");
        assert_eq!(on["zero_quantized_gradients"], true, "{framework}: {on}");
        let off = json(r#"{"zero_stage": 3}"#);
        for key in ["zero_hpz_partition_size", "zero_quantized_weights", "zero_quantized_gradients"] {
            assert!(off.get(key).is_none(), "{framework}: {off}");
        }
    }
}

/// GLM-4-9B rotates the first half of each head's 128 dimensions, in interleaved pairs
/// (transformers `GlmConfig.partial_rotary_factor` 0.5, `rotate_half` over `x[..., 0::2]` and
/// `x[..., 1::2]`): Megatron-LM's script says `--rotary-percent 0.5 --rotary-interleaved`,
/// MindSpeed-LLM's the same with its rope fusion off (core 0.12.1 refuses the two together), as its
/// GLM-4.5 scripts write `--rotary-percent 0.5 --no-rope-fusion`; MindSpeed-RL's model file cannot
/// say it (its warning, rules), and a model with whole-head rotation writes neither.
#[test]
fn glm_rotates_half_of_each_head_in_interleaved_pairs() {
    let text = every_file_of;
    let megatron = text("glm-4-9b", "megatron", "h100-sxm-80g", "pretrain");
    assert!(
        megatron.contains("--rotary-percent 0.5\n") && megatron.contains("--rotary-interleaved\n"),
        "{megatron}"
    );
    assert!(!megatron.contains("--no-rope-fusion"), "{megatron}");
    let mindspeed = text("glm-4-9b", "mindspeed-llm", "ascend-910b2", "pretrain");
    for flag in ["--rotary-percent 0.5\n", "--rotary-interleaved\n", "--no-rope-fusion\n"] {
        assert!(mindspeed.contains(flag), "{flag}:\n{mindspeed}");
    }
    let rl = text("glm-4-9b", "mindspeed-rl", "ascend-910b2", "grpo");
    assert!(!rl.contains("rotary_percent") && !rl.contains("rotary_interleaved"), "{rl}");
    let qwen = text("qwen2.5-7b", "megatron", "h100-sxm-80g", "pretrain");
    assert!(!qwen.contains("--rotary-percent") && !qwen.contains("--rotary-interleaved"), "{qwen}");
}

/// Phi-4-mini rotates the first three quarters of each head's 128 dimensions in halves (its
/// config.json's `partial_rotary_factor` 0.75; transformers `Phi3Attention` splits `q_rot`, `q_pass`
/// and applies `rotate_half` to the first): `--rotary-percent 0.75` on Megatron-LM and
/// MindSpeed-LLM, no interleaving and no fusion turned off; MindSpeed-RL's model file cannot say it
/// (its warning). Phi-4 rotates whole heads (no `partial_rotary_factor`: `Phi3Config`'s 1.0).
#[test]
fn phi_4_mini_rotates_three_quarters_of_each_head() {
    let text = every_file_of;
    for (framework, hardware) in [("megatron", "h100-sxm-80g"), ("mindspeed-llm", "ascend-910b2")] {
        let script = text("phi-4-mini", framework, hardware, "pretrain");
        assert!(script.contains("--rotary-percent 0.75\n"), "{framework}:\n{script}");
        assert!(!script.contains("--rotary-interleaved") && !script.contains("--no-rope-fusion"), "{script}");
        let whole = text("phi-4", framework, hardware, "pretrain");
        assert!(!whole.contains("--rotary-percent"), "{framework}:\n{whole}");
    }
    let warned = |model: &str| {
        let p = plan(&format!(
            r#"{{"model": "{model}", "framework": "mindspeed-rl", "hardware": "ascend-910b2", "method": "grpo",
                "cluster": {{"nodes": 2}}}}"#
        ));
        let mem = trainplan_core::memory::estimate(&p);
        trainplan_core::rules::check(&p, &mem).iter().any(|f| f.code.as_str() == "model.rotary_mindspeed_rl")
    };
    assert!(warned("phi-4-mini"));
    assert!(!warned("phi-4"));
}

/// Phi-4-mini's LongRoPE (its config.json's `rope_scaling`: `type` longrope, 48 long factors from 1
/// to 47.77, 48 short factors of 1.0, over `original_max_position_embeddings` 4096): MindSpeed-LLM's
/// script writes it as its own Phi-3.5 scripts do (`examples/mcore/phi35`), the lists in the
/// config's order; Megatron-LM has no LongRoPE and MindSpeed-RL's model config no key for the
/// lists, so their files train plain rotary positions, and the plan says so. A config without the
/// lists leaves them for the script's user to set, and the script will not start without them.
#[test]
fn longrope_is_written_where_the_framework_builds_it() {
    let text = every_file_of;
    let mindspeed = text("phi-4-mini", "mindspeed-llm", "ascend-910b2", "pretrain");
    let flags = mindspeed.lines().find(|l| l.contains("--rope-scaling-type longrope")).unwrap_or_default();
    assert!(
        flags.contains("--longrope-freqs-type outer --rope-scaling-original-max-position-embeddings 4096")
    );
    let list = |flag: &str| -> Vec<f64> {
        let rest = flags.split(flag).nth(1).unwrap_or_default().split_whitespace().next().unwrap_or_default();
        rest.split(',').filter_map(|x| x.parse().ok()).collect()
    };
    let (long, short) = (list("--long-factor "), list("--short-factor "));
    assert_eq!((long.len(), short.len()), (48, 48), "{flags}");
    assert_eq!((long[0], long[1], long[47]), (1.0, 1.118320672, 47.77));
    assert!(short.iter().all(|&x| x == 1.0));
    for (framework, hardware, method) in
        [("megatron", "h100-sxm-80g", "pretrain"), ("mindspeed-rl", "ascend-910b2", "grpo")]
    {
        let files = text("phi-4-mini", framework, hardware, method);
        assert!(!files.contains("longrope") && !files.contains("long_factor"), "{framework}:\n{files}");
    }
    let warned = |model: &str, framework: &str, hardware: &str, method: &str| {
        let p = plan(&format!(
            r#"{{"model": "{model}", "framework": "{framework}", "hardware": "{hardware}", "method": "{method}"}}"#
        ));
        let mem = trainplan_core::memory::estimate(&p);
        trainplan_core::rules::check(&p, &mem).iter().any(|f| f.code.as_str() == "model.longrope_framework")
    };
    assert!(warned("phi-4-mini", "megatron", "h100-sxm-80g", "pretrain"));
    assert!(warned("phi-4-mini", "mindspeed-rl", "ascend-910b2", "grpo"));
    assert!(!warned("phi-4-mini", "mindspeed-llm", "ascend-910b2", "pretrain"));
    assert!(!warned("phi-4", "megatron", "h100-sxm-80g", "pretrain"));
    // A LongRoPE config whose lists are not in it (a trimmed upload): the script asks for them.
    let trimmed = plan(
        r#"{"model": {"hf_config": {"model_type": "phi3", "vocab_size": 32064, "hidden_size": 3072,
            "intermediate_size": 8192, "num_hidden_layers": 32, "num_attention_heads": 32,
            "max_position_embeddings": 131072, "rope_scaling": {"type": "longrope"}}},
            "framework": "mindspeed-llm", "hardware": "ascend-910b2", "method": "pretrain"}"#,
    );
    let script = &emit(&trimmed, "#x").unwrap()[0].text;
    assert!(
        script.contains("--long-factor \"${LONG_FACTOR:?set LONG_FACTOR to rope_scaling.long_factor"),
        "{script}"
    );
}

/// Every file a plan of `model` on `framework`, `hardware` and `method` over two nodes writes, one
/// after the other.
fn every_file_of(model: &str, framework: &str, hardware: &str, method: &str) -> String {
    let p = plan(&format!(
        r#"{{"model": "{model}", "framework": "{framework}", "hardware": "{hardware}", "method": "{method}",
            "cluster": {{"nodes": 2}}}}"#
    ));
    emit(&p, "#link").unwrap().iter().map(|f| f.text.clone()).collect::<Vec<_>>().join("\n")
}

/// Qwen1.5-MoE-A2.7B's shared expert (4 × 1,408 wide) and its sigmoid gate: Megatron-LM's script
/// writes `--moe-shared-expert-intermediate-size 5632 --moe-shared-expert-gate`, MindSpeed-LLM's
/// its own `--shared-expert-gate`, MindSpeed-RL's model file `n_shared_experts: 4` (its config has
/// no width key, nor the gate: a warning, rules); DeepSeek-V2-Lite's ungated experts write no gate.
#[test]
fn shared_experts_and_their_gate_are_built() {
    let megatron = every_file_of("qwen1.5-moe-a2.7b", "megatron", "h100-sxm-80g", "pretrain");
    assert!(megatron.contains("--moe-shared-expert-intermediate-size 5632\n"), "{megatron}");
    assert!(megatron.contains("--moe-shared-expert-gate\n"), "{megatron}");
    let mindspeed = every_file_of("qwen1.5-moe-a2.7b", "mindspeed-llm", "ascend-910b2", "pretrain");
    assert!(mindspeed.contains("--shared-expert-gate\n"), "{mindspeed}");
    let rl = every_file_of("qwen1.5-moe-a2.7b", "mindspeed-rl", "ascend-910b2", "grpo");
    assert!(rl.contains("  n_shared_experts: 4\n") && !rl.contains("shared_expert_intermediate"), "{rl}");
    assert!(!rl.contains("gate"), "{rl}");
    let deepseek = every_file_of("deepseek-v2-lite", "megatron", "h100-sxm-80g", "pretrain");
    assert!(!deepseek.contains("shared-expert-gate"), "{deepseek}");
}

/// GLM-4.5's Megatron-LM script builds it as THUDM's slime builds it
/// (`scripts/models/glm4.5-355B-A32B.sh`): q/k norms and q/k/v biases, rotary positions on half
/// of each head (not interleaved), 160 experts of 1,536 and a shared one after 3 dense layers,
/// sigmoid routing with an expert bias, one group, weights × 2.5; MindSpeed-LLM's as its own
/// GLM-4.5 script (`examples/mcore/glm45/tune_glm45_4k_lora_ptd.sh`): the dense layers as
/// `--first-k-dense-replace 3 --moe-layer-freq 1`, the weights renormalized, no rope fusion. LLaMA-Factory
/// trains GLM-4.5-Air on its `glm4_moe` template.
#[test]
fn glm_4_5_launches_as_its_frameworks_build_it() {
    let megatron = every_file_of("glm-4.5", "megatron", "h100-sxm-80g", "pretrain");
    for flag in [
        "--num-layers 92\n",
        "--group-query-attention --num-query-groups 8\n",
        "--kv-channels 128\n",
        "--add-qkv-bias\n",
        "--qk-layernorm\n",
        "--rotary-percent 0.5\n",
        "--disable-bias-linear\n",
        "--num-experts 160 --moe-router-topk 8\n",
        "--moe-layer-freq \"([0]*3+[1]*89)\"\n",
        "--moe-ffn-hidden-size 1536\n",
        "--moe-shared-expert-intermediate-size 1536\n",
        "--moe-router-score-function sigmoid --moe-router-enable-expert-bias --moe-router-num-groups 1 \
         --moe-router-group-topk 1 --moe-router-topk-scaling-factor 2.5\n",
    ] {
        assert_writes(&megatron, flag);
    }
    assert!(!megatron.contains("--rotary-interleaved"), "{megatron}");
    let mindspeed = every_file_of("glm-4.5", "mindspeed-llm", "ascend-910b3", "pretrain");
    for flag in [
        "--first-k-dense-replace 3 --moe-layer-freq 1\n",
        "--norm-topk-prob\n",
        "--rotary-percent 0.5\n",
        "--no-rope-fusion\n",
        "--qk-layernorm\n",
    ] {
        assert_writes(&mindspeed, flag);
    }
    let air = every_file_of("glm-4.5-air", "llamafactory", "h100-sxm-80g", "lora");
    assert!(air.contains("template: glm4_moe\n"), "{air}");
    assert!(!every_file_of("glm-4.5-air", "megatron", "h100-sxm-80g", "pretrain").contains("--qk-layernorm"));
}

/// LoRA on experts under MindSpeed runs the sequence all-to-all alone (MindSpeed-LLM
/// `features_manager/finetune/lora.py`: "Lora in the moe only enable the alltoall_seq"), whatever
/// the plan's dispatcher: MindSpeed-LLM's script and MindSpeed-RL's actor config say it; full
/// fine-tuning keeps the plan's all-to-all, and Megatron-LM has no such dispatcher.
#[test]
fn mindspeed_lora_on_experts_dispatches_by_sequence() {
    let with = |framework: &str, method: &str, rl_lora: bool| {
        let p = plan(&format!(
            r#"{{"model": "qwen3-30b-a3b", "hardware": "ascend-910b3", "framework": "{framework}", "method": "{method}",
                "cluster": {{"nodes": 2}}, "rl": {{"lora": {rl_lora}}}}}"#
        ));
        emit(&p, "#link").unwrap().iter().map(|f| f.text.clone()).collect::<Vec<_>>().join("\n")
    };
    assert!(with("mindspeed-llm", "lora", false).contains("--moe-token-dispatcher-type alltoall_seq"));
    assert!(with("mindspeed-rl", "grpo", true).contains("moe_token_dispatcher_type: alltoall_seq"));
    assert!(with("mindspeed-llm", "sft-full", false).contains("--moe-token-dispatcher-type alltoall\n"));
}

/// Panics, showing the files, unless they write `flag`.
fn assert_writes(files: &str, flag: &str) {
    assert!(files.contains(flag), "{flag}:\n{files}");
}

/// Qwen3-Next's gated attention, zero-centred norms and quarter-head rotary embedding are written
/// whether or not it has Gated DeltaNet layers: a config whose every layer is attention
/// (`full_attention_interval` 1) writes no DeltaNet variant on Megatron-LM, and its interval of 1
/// on MindSpeed-LLM, whose Qwen3-Next spec then builds attention on every layer.
#[test]
fn qwen3_next_without_linear_layers_keeps_its_attention_flags() {
    let config =
        trainplan_core::catalog::CONFIGS.iter().find(|c| c.id == "qwen3-next-80b-a3b").unwrap().config;
    let mut hf_config: serde_json::Value = serde_json::from_str(config).unwrap();
    hf_config["full_attention_interval"] = serde_json::json!(1);
    let script = |framework: &str, hardware: &str| {
        let text = serde_json::json!({"model": {"hf_config": hf_config, "name": "Qwen3-Next"}, "framework": framework,
            "hardware": hardware, "method": "pretrain"});
        emit(&plan(&text.to_string()), "#x").unwrap()[0].text.clone()
    };
    let megatron = script("megatron", "h100-sxm-80g");
    assert!(!megatron.contains("--experimental-attention-variant"), "{megatron}");
    for flag in ["--attention-output-gate", "--apply-layernorm-1p", "--rotary-percent 0.25"] {
        assert!(megatron.contains(flag), "{flag}: {megatron}");
    }
    let mindspeed = script("mindspeed-llm", "ascend-910b2");
    for flag in ["--full-attention-interval 1\n", "--add-rmsnorm-offset", "--partial-rotary-factor 0.25"] {
        assert!(mindspeed.contains(flag), "{flag}: {mindspeed}");
    }
}
