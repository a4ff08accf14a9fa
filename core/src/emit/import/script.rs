//! Megatron-LM and MindSpeed-LLM launch scripts: shell words and variables, the flags each `torchrun`
//! line passes, and the flags the framework's own parser would refuse.

// The importer's shared types and helpers, and its imports (mod.rs).
use super::*;

/// The words of a shell script, comments dropped; a line that does not split is skipped.
pub(super) fn words(text: &str) -> Vec<String> {
    text.lines()
        .filter(|l| !l.trim_start().starts_with('#'))
        .filter_map(|l| shell_words::split(l.trim_end_matches('\\')).ok())
        .flatten()
        .collect()
}

/// The script's assignments (`NAME=value`, `export NAME=value`), in order.
pub(super) fn script_vars(text: &str) -> Vec<(String, String)> {
    words(text)
        .into_iter()
        .filter_map(|w| {
            let (name, value) = w.split_once('=')?;
            let is_name = !name.is_empty() && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
            is_name.then(|| (name.to_owned(), value.to_owned()))
        })
        .collect()
}

/// One `--flag value…` of a script.
pub(super) struct FlagUse {
    /// The flag, `--tensor-model-parallel-size`.
    flag: String,
    /// Its values with the script's `$NAME`s read (`--flag=value` gives one); `None` where one is
    /// set outside the script.
    values: Option<Vec<String>>,
    /// Its values as written, joined.
    raw: String,
}

/// Every flag of a script with its values: the words after it on its command line (continuations
/// joined) up to the next flag, a shell operator, an array expansion or a `*.py` entry script.
pub(super) fn script_flags(text: &str, vars: &[(String, String)]) -> Vec<FlagUse> {
    let mut out = Vec::new();
    for words in script_lines(text) {
        let mut i = 0;
        while i < words.len() {
            let word = &words[i];
            i += 1;
            let Some((flag, inline)) = flag_word(word) else { continue };
            let mut raw: Vec<&str> = Vec::new();
            match inline {
                Some(v) => raw.push(v),
                None => {
                    while i < words.len()
                        && !words[i].starts_with("--")
                        && !ends_values(&words[i])
                        && !words[i].ends_with(".py")
                    {
                        raw.push(&words[i]);
                        i += 1;
                    }
                }
            }
            let values = raw.iter().map(|w| expand(w, vars, &mut 64)).collect::<Option<Vec<String>>>();
            out.push(FlagUse { flag: flag.to_owned(), values, raw: raw.join(" ") });
        }
    }
    out
}

/// A script's variable, read through the script's assignments.
pub(super) fn var(vars: &[(String, String)], names: &[&str]) -> Option<String> {
    names.iter().find_map(|name| {
        vars.iter().any(|(n, _)| n == name).then(|| expand(&format!("${{{name}}}"), vars, &mut 64)).flatten()
    })
}

/// A Megatron-LM or MindSpeed-LLM script (`ascend`): the layout, memory and batch flags, the
/// cluster and the paths; every `$NAME` read from the script's own assignments.
pub(super) fn script(text: &str, ascend: bool, file: &mut PlanFile) -> Result<Reading, ImportError> {
    file.framework = if ascend { Framework::MindSpeedLlm } else { Framework::Megatron };
    file.recompute.granularity = RecomputeGranularity::None;
    let mut r = Reading::default();
    let vars = script_vars(text);
    // Node variables: `NUM_NODES=4`, `GPUS_PER_NODE=8` (and MindSpeed's names).
    if let Some(n) = var(&vars, &["NUM_NODES", "NNODES"]).and_then(|n| n.parse().ok()) {
        file.cluster.nodes = n;
    }
    if let Some(n) = var(&vars, &["GPUS_PER_NODE", "NPUS_PER_NODE"]).and_then(|n| n.parse().ok()) {
        file.cluster.devices_per_node = Some(n);
    }
    let (mut vpp_layers, mut layers) = (None, None);
    // An MoE script says which kernels it runs: Megatron's defaults stand where it does not
    // (no grouped GEMM, the allgather dispatcher; `TransformerConfig` at core_v0.19.0).
    if text.contains("--num-experts") {
        file.moe.grouped_gemm = false;
        file.moe.dispatcher = crate::plan::MoeDispatcher::AllGather;
    }
    let (mut bf16, mut fp16, mut fp8) = (false, false, false);
    let mut block: Option<Precision> = None;
    let (mut stage, mut lora, mut sft) = (None, false, false);
    // MindSpeed's fused RMSNorm, SwiGLU and rotary kernels: on when the script asks for any.
    let mut fused = false;
    // FlashAttention on the NPU: MindSpeed-LLM runs eager attention without `--use-flash-attn`.
    let mut flash = false;
    for FlagUse { flag, values, raw } in script_flags(text, &vars) {
        let Some(values) = values else {
            r.rest.push((flag, raw));
            continue;
        };
        let w = flag.as_str();
        let one = values.first().map(String::as_str);
        if SHAPE_FLAGS.contains(&w) {
            if w == "--num-layers" {
                layers = Some(num(w, need(one, w)?)?);
            }
            r.shape.push((flag.clone(), values.join(" ")));
            r.rest.push((flag, values.join(" ")));
            continue;
        }
        let p = &mut file.parallel;
        match w {
            "--tensor-model-parallel-size" => p.tp = num(w, need(one, w)?)?,
            "--pipeline-model-parallel-size" => p.pp = num(w, need(one, w)?)?,
            "--num-layers-per-virtual-pipeline-stage" => vpp_layers = Some(num(w, need(one, w)?)?),
            "--num-virtual-stages-per-pipeline-rank" => p.vpp = num(w, need(one, w)?)?,
            "--pipeline-model-parallel-layout" => p.pipeline_layout = need(one, w)?.to_owned(),
            "--mtp-num-layers" => file.mtp_layers = num(w, need(one, w)?)?,
            "--context-parallel-size" => p.cp = num(w, need(one, w)?)?,
            "--expert-model-parallel-size" => p.ep = num(w, need(one, w)?)?,
            "--expert-tensor-parallel-size" => p.etp = num(w, need(one, w)?)?,
            "--sequence-parallel" => p.sequence_parallel = true,
            "--use-distributed-optimizer" => p.distributed_optimizer = true,
            // With the precision-aware optimizer it needs (emit::megatron::parallel_flags); that one
            // alone changes nothing the plan models.
            "--optimizer-cpu-offload" => p.offload_optimizer = true,
            "--use-precision-aware-optimizer" => {}
            "--use-torch-fsdp2" => p.fsdp = crate::plan::Fsdp::Torch,
            "--account-for-embedding-in-pipeline-split" | "--account-for-loss-in-pipeline-split" => {
                p.account_embedding_loss = true
            }
            "--use-megatron-fsdp" => {
                if p.fsdp == crate::plan::Fsdp::None {
                    p.fsdp = crate::plan::Fsdp::OptimGradsParams;
                }
            }
            "--data-parallel-sharding-strategy" => {
                let v = need(one, w)?;
                p.fsdp = match crate::plan::Fsdp::ALL.iter().find(|f| f.wire() == v) {
                    Some(&f) if f != crate::plan::Fsdp::Torch => f,
                    _ if v == "no_shard" => crate::plan::Fsdp::None,
                    _ => {
                        return Err(ImportError::BadValue(w.to_owned(), Expected::FsdpSharding));
                    }
                };
            }
            "--overlap-grad-reduce" => p.overlap_grad_reduce = true,
            "--overlap-param-gather" => p.overlap_param_gather = true,
            "--tp-comm-overlap" | "--use-ascend-coc" => p.tp_comm_overlap = true,
            "--use-fused-rmsnorm" | "--use-fused-swiglu" | "--use-fused-rotary-pos-emb" => fused = true,
            "--use-flash-attn" => flash = true,
            // Megatron-LM's `AttnBackend` (megatron/core/transformer/enums.py), as
            // emit::megatron::script writes it; `auto` picks flash or fused, both memory-efficient.
            "--attention-backend" => {
                file.attention = match need(one, w)? {
                    "flash" | "auto" => AttentionImpl::Flash,
                    "fused" => AttentionImpl::Sdpa,
                    "unfused" | "local" => AttentionImpl::Eager,
                    _ => return Err(ImportError::BadValue(w.to_owned(), Expected::AttentionBackend)),
                }
            }
            "--swap-optimizer" => p.swap_optimizer = true,
            "--num-layer-list"
            | "--decoder-first-pipeline-num-layers"
            | "--decoder-last-pipeline-num-layers" => {
                need(one, w)?;
                p.uneven_layers = true;
            }
            "--schedules-method" => {
                p.schedule = match need(one, w)? {
                    "dualpipev" => PipelineSchedule::DualPipeV,
                    _ => return Err(ImportError::BadValue(w.to_owned(), Expected::DualPipeV)),
                };
            }
            "--enable-zero-bubble" => p.schedule = PipelineSchedule::ZbH1,
            // The MoE kernels and routing (`moe` section, emit::megatron `moe_kernel_flags`).
            "--moe-grouped-gemm" => file.moe.grouped_gemm = true,
            "--moe-token-dispatcher-type" => {
                file.moe.dispatcher = match need(one, w)? {
                    "allgather" => crate::plan::MoeDispatcher::AllGather,
                    "alltoall" | "alltoall_seq" => crate::plan::MoeDispatcher::AllToAll,
                    "flex" => crate::plan::MoeDispatcher::Flex,
                    _ => return Err(ImportError::BadValue(w.to_owned(), Expected::MoeDispatcher)),
                };
            }
            "--moe-permute-fusion" | "--use-fused-moe-token-permute-and-unpermute" => {
                file.moe.permute_fusion = true
            }
            "--overlap-moe-expert-parallel-comm" | "--moe-alltoall-overlap-comm" => {
                file.moe.overlap_ep_comm = true
            }
            "--moe-expert-capacity-factor" => {
                let v = need(one, w)?;
                let c: f64 = v.parse().map_err(|_| ImportError::BadValue(w.to_owned(), Expected::Number))?;
                // Megatron treats a negative factor as none (`TransformerConfig.__post_init__`).
                file.moe.capacity_factor = (0.0 < c).then_some(c);
            }
            "--moe-pad-expert-input-to-capacity" => file.moe.pad_to_capacity = true,
            "--moe-flex-dispatcher-backend" => {
                need(one, w)?;
            }
            "--recompute-granularity" => {
                file.recompute.granularity = match need(one, w)? {
                    "full" => RecomputeGranularity::Full,
                    "selective" => RecomputeGranularity::Selective,
                    _ => return Err(ImportError::BadValue(w.to_owned(), Expected::FullOrSelective)),
                };
            }
            "--recompute-activations" => file.recompute.granularity = RecomputeGranularity::Selective,
            "--recompute-modules" => file.recompute.modules = values.clone(),
            "--cpu-offloading-num-layers" => file.recompute.cpu_offload_layers = num(w, need(one, w)?)?,
            "--recompute-method" => {
                file.recompute.method = match need(one, w)? {
                    "block" => RecomputeMethod::Block,
                    _ => RecomputeMethod::Uniform,
                };
            }
            "--recompute-num-layers" => file.recompute.num_layers = num(w, need(one, w)?)?,
            "--recompute-activation-function" => file.recompute.activation_function = true,
            "--recompute-activation-function-num-layers" => {
                file.recompute.activation_function_layers = num(w, need(one, w)?)?
            }
            "--swap-attention" => file.recompute.swap_attention = true,
            "--micro-batch-size" => file.batch.micro_batch = num(w, need(one, w)?)?,
            "--global-batch-size" => file.batch.global_batch = num(w, need(one, w)?)?,
            "--seq-length" => file.batch.seq_len = num(w, need(one, w)?)?,
            "--bf16" => bf16 = true,
            "--fp16" => fp16 = true,
            "--fp8-format" => fp8 = true,
            "--fp8-recipe" if one == Some("mxfp8") => block = Some(Precision::Mxfp8),
            "--fp4-format" | "--fp4-recipe" => block = Some(Precision::Nvfp4),
            "--lora-r" => {
                file.lora.rank = num(w, need(one, w)?)?;
                lora = 0 < file.lora.rank;
            }
            "--lora-alpha" => file.lora.alpha = num(w, need(one, w)?)?,
            "--lora-target-modules" => match lora_targets_of_modules(&values) {
                Some(targets) => file.lora.targets = targets,
                None => r.rest.push((flag, values.join(" "))),
            },
            // MindSpeed-LLM's post-training stages the plan has (`posttrain_gpt.py --stage`).
            "--stage" => match need(one, w)? {
                v @ ("sft" | "dpo") => stage = Some(v.to_owned()),
                _ => r.rest.push((flag, values.join(" "))),
            },
            // Megatron-LM's own SFT dataset (`--sft`, with `--finetune`).
            "--sft" => sft = true,
            "--tokenizer-model" | "--tokenizer-name-or-path" => r.model_path = Some(need(one, w)?.to_owned()),
            "--data-path" => r.dataset = Some(need(one, w).map(|_| values.join(" "))?),
            "--save" => r.output_dir = Some(need(one, w)?.to_owned()),
            // torchrun's: the cluster and the rendezvous (a value such as `1:4` is not the plan's).
            "--nnodes" | "--nproc_per_node" | "--nproc-per-node" => {
                match one.and_then(|v| v.parse::<u32>().ok()) {
                    Some(n) if w == "--nnodes" => file.cluster.nodes = n,
                    Some(n) => file.cluster.devices_per_node = Some(n),
                    None => r.rest.push((flag, values.join(" "))),
                }
            }
            "--master_addr" | "--master-addr" => r.master_addr = Some(need(one, w)?.to_owned()),
            "--master_port" | "--master-port" => r.master_port = Some(need(one, w)?.to_owned()),
            _ => r.rest.push((flag, values.join(" "))),
        }
    }
    // The paths as variables where no flag names them.
    let paths = [
        (&mut r.model_path, &["TOKENIZER_MODEL", "TOKENIZER_PATH"][..]),
        (&mut r.dataset, &["DATA_PATH"][..]),
        (&mut r.output_dir, &["CHECKPOINT_PATH", "CKPT_SAVE_DIR"][..]),
        (&mut r.master_addr, &["MASTER_ADDR"][..]),
        (&mut r.master_port, &["MASTER_PORT"][..]),
    ];
    for (field, names) in paths {
        if field.is_none() {
            *field = var(&vars, names);
        }
    }
    file.method = match (stage.as_deref(), lora, sft || text.contains("posttrain_gpt.py")) {
        (Some("dpo"), _, _) => Method::Dpo,
        (_, true, _) => Method::Lora,
        (_, _, true) => Method::SftFull,
        _ => Method::Pretrain,
    };
    file.precision = match (block, fp8, bf16, fp16) {
        (Some(block), ..) => block,
        (None, true, _, _) => Precision::Fp8,
        (None, _, true, _) => Precision::Bf16,
        (None, _, _, true) => Precision::Fp16,
        _ => Precision::Fp32,
    };
    if ascend {
        file.parallel.fused_kernels = fused;
        if !flash {
            file.attention = AttentionImpl::Eager;
        }
    }
    // VPP = layers ÷ PP ÷ layers per virtual stage (Megatron `arguments.py`).
    if let (Some(per), Some(layers)) = (vpp_layers, layers) {
        let pp = file.parallel.pp.max(1);
        // The embedding and the loss count as a layer each when the script says so.
        let layers = layers + if file.parallel.account_embedding_loss { 2 } else { 0 };
        file.parallel.vpp = (layers / pp / per.max(1)).max(1);
    }
    // A layout string names VPP: its stages ÷ PP (`arguments.py`).
    if let Ok(stages) = crate::layout::parse(&file.parallel.pipeline_layout) {
        let pp = file.parallel.pp.max(1) as usize;
        if !file.parallel.pipeline_layout.is_empty() && stages.len().is_multiple_of(pp) {
            file.parallel.vpp = u32::try_from(stages.len() / pp).unwrap_or(u32::MAX).max(1);
        }
    }
    Ok(r)
}

/// torchrun's own flags (`torch.distributed.run`): the launcher's, not the entry script's.
pub(super) const LAUNCHER: &[&str] = &[
    "--nnodes",
    "--nproc_per_node",
    "--nproc-per-node",
    "--node_rank",
    "--node-rank",
    "--master_addr",
    "--master-addr",
    "--master_port",
    "--master-port",
    "--rdzv_backend",
    "--rdzv-backend",
    "--rdzv_endpoint",
    "--rdzv-endpoint",
    "--rdzv_id",
    "--rdzv-id",
    "--rdzv_conf",
    "--rdzv-conf",
    "--standalone",
    "--max_restarts",
    "--max-restarts",
    "--monitor_interval",
    "--monitor-interval",
    "--start_method",
    "--start-method",
    "--role",
    "--module",
    "--no_python",
    "--no-python",
    "--run_path",
    "--run-path",
    "--log_dir",
    "--log-dir",
    "--redirects",
    "--tee",
    "--local_addr",
    "--local-addr",
    "--local-ranks-filter",
];

/// The flags of a Megatron-LM or MindSpeed-LLM script `table`'s parser would refuse. A flag's values
/// are the words after it on its line (continuations joined) up to the next flag, a shell operator
/// or an array expansion; `$NAME` is read from the script's own assignments, and a value set
/// outside the script is not judged. On the entry script's line the words before `*.py` are the
/// launcher's, as are torchrun's flags anywhere.
pub(super) fn refused_flags(text: &str, table: Table) -> Vec<FlagError> {
    let vars = script_vars(text);
    let mut out = Vec::new();
    for words in script_lines(text) {
        let mut i = words.iter().position(|w| w.ends_with(".py")).map_or(0, |at| at + 1);
        while i < words.len() {
            let word = &words[i];
            i += 1;
            let Some((flag, inline)) = flag_word(word) else { continue };
            if LAUNCHER.contains(&flag) {
                continue;
            }
            let mut values = Vec::new();
            let mut judged = true;
            let mut take = |w: &str| match expand(w, &vars, &mut 64) {
                Some(v) => values.push(v),
                None => judged = false,
            };
            match inline {
                Some(v) => take(v),
                None => {
                    while i < words.len() && !words[i].starts_with("--") && !ends_values(&words[i]) {
                        take(&words[i]);
                        i += 1;
                    }
                }
            }
            let Some(spec) = flags::lookup(table, flag) else {
                out.push(FlagError::Unknown { flag: flag.to_owned(), framework: table.name() });
                continue;
            };
            let values: Vec<&str> = values.iter().map(String::as_str).collect();
            if judged && let Err(e) = spec.check(&values) {
                out.push(e);
            }
        }
    }
    out
}

/// The words of each command line of a script: continuation lines joined (each physical line on
/// its own where the joined one does not split), comments dropped.
pub(super) fn script_lines(text: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let mut lines = text.lines();
    while let Some(first) = lines.next() {
        let mut physical = vec![first];
        while physical.last().is_some_and(|l| l.trim_end().ends_with('\\')) {
            match lines.next() {
                Some(next) => physical.push(next),
                None => break,
            }
        }
        let trim = |l: &str| l.trim_end().trim_end_matches('\\').to_owned();
        let joined: Vec<String> = physical.iter().map(|l| trim(l)).collect();
        match shell_words::split(&joined.join(" ")) {
            Ok(words) => out.push(words),
            Err(_) => out.extend(joined.iter().filter_map(|l| shell_words::split(l).ok())),
        }
    }
    out
}

/// Whether a word ends a flag's values: a shell operator or redirection, a bracket, or an array
/// expansion (`${ARGS[@]}`, more flags).
pub(super) fn ends_values(word: &str) -> bool {
    matches!(word, "|" | "||" | "&&" | "&" | ";" | ";;" | "(" | ")")
        || word.starts_with(['>', '<'])
        || word.contains(">&")
        || word.starts_with("2>")
        || word.starts_with("1>")
        || word.contains("[@]")
        || word.contains("[*]")
}

/// `word` with `$NAME`, `${NAME}`, `${NAME:-default}` and `${NAME:?message}` replaced from the
/// script's assignments (the last one of each name); `None` where a value is not in the script, or
/// past `budget` expansions (pasted text may nest them without end).
pub(super) fn expand(word: &str, vars: &[(String, String)], budget: &mut u32) -> Option<String> {
    let mut res = String::new();
    let mut rest = word;
    while let Some(at) = rest.find('$') {
        *budget = budget.checked_sub(1)?;
        res.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        let (name, default, tail) = match after.strip_prefix('{') {
            Some(inner) => {
                let end = inner.find('}')?;
                let body = &inner[..end];
                let (name, default) = match body.split_once(":-") {
                    Some((name, default)) => (name, Some(default)),
                    None => (body.split(":?").next().unwrap_or(body), None),
                };
                (name, default, &inner[end + 1..])
            }
            None => {
                let end =
                    after.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).unwrap_or(after.len());
                (&after[..end], None, &after[end..])
            }
        };
        if name.is_empty() || !name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
            return None;
        }
        // An assignment sees only the ones before it (`NODE_RANK=${NODE_RANK:-0}` reads the
        // environment's).
        match (vars.iter().rposition(|(n, _)| n == name), default) {
            (Some(pos), _) => res.push_str(&expand(&vars[pos].1, &vars[..pos], budget)?),
            (None, Some(default)) => res.push_str(default),
            (None, None) => return None,
        }
        rest = tail;
    }
    res.push_str(rest);
    Some(res)
}

/// A word that is a flag: its name and the value joined to it by `=`, if any; `None` for a word
/// that is no flag.
fn flag_word(word: &str) -> Option<(&str, Option<&str>)> {
    if !word.starts_with("--") {
        return None;
    }
    Some(match word.split_once('=') {
        Some((flag, value)) => (flag, Some(value)),
        None => (word, None),
    })
}
