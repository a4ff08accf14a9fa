//! Megatron-LM and MindSpeed-LLM launch scripts: shell words and variables, the flags each `torchrun`
//! line passes, and the flags the framework's own parser would refuse.

// The importer's shared types and helpers, and its imports (mod.rs).
use super::*;

/// The words of a shell script, comments dropped; a line that does not split is skipped.
pub(super) fn words(text: &str) -> Vec<String> {
    text.lines()
        .filter(|l| !l.trim_start().starts_with('#'))
        .filter_map(|l| shell_words::split(&arithmetic_joined(l.trim_end_matches('\\'))).ok())
        .flatten()
        .collect()
}

/// `line` with the blanks inside each `$((…))` taken out, so that it stays one word
/// (`max_prompt_length=$((1024 * 2))`, as VeRL's example scripts write).
fn arithmetic_joined(line: &str) -> std::borrow::Cow<'_, str> {
    if !line.contains("$((") {
        return line.into();
    }
    let mut res = String::with_capacity(line.len());
    let mut rest = line;
    while let Some(at) = rest.find("$((") {
        res.push_str(&rest[..at + 3]);
        let inner = &rest[at + 3..];
        let end = arithmetic_end(inner).unwrap_or(inner.len());
        res.extend(inner[..end].chars().filter(|c| !c.is_whitespace()));
        rest = &inner[end..];
    }
    res.push_str(rest);
    res.into()
}

/// Where the `))` closing a `$((` whose body `inner` starts lies, past the parentheses nested in it.
fn arithmetic_end(inner: &str) -> Option<usize> {
    let mut depth = 0u32;
    for (i, b) in inner.bytes().enumerate() {
        match b {
            b'(' => depth += 1,
            b')' if depth == 0 => return inner[i..].starts_with("))").then_some(i),
            b')' => depth -= 1,
            _ => {}
        }
    }
    None
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
        for (flag, raw) in flag_runs(&words, 0, true) {
            let values = raw.iter().map(|w| expand(w, vars, &mut 64)).collect::<Option<Vec<String>>>();
            out.push(FlagUse { flag: flag.to_owned(), values, raw: raw.join(" ") });
        }
    }
    out
}

/// The flags of a command line's words from `from` on, each with its values as written: the one
/// joined to it by `=`, else the words after it up to the next flag, a shell operator, an array
/// expansion or, where `entry`, a `*.py` entry script.
fn flag_runs(words: &[String], from: usize, entry: bool) -> Vec<(&str, Vec<&str>)> {
    let ends_run = |w: &str| w.starts_with("--") || ends_values(w) || (entry && w.ends_with(".py"));
    let mut out = Vec::new();
    let mut i = from;
    while i < words.len() {
        let word = &words[i];
        i += 1;
        let Some((flag, inline)) = flag_word(word) else { continue };
        let mut raw: Vec<&str> = Vec::new();
        match inline {
            Some(v) => raw.push(v),
            None => {
                while i < words.len() && !ends_run(&words[i]) {
                    raw.push(&words[i]);
                    i += 1;
                }
            }
        }
        out.push((flag, raw));
    }
    out
}

/// A script's variable, read through the script's assignments.
pub(super) fn var(vars: &[(String, String)], names: &[&str]) -> Option<String> {
    names.iter().find_map(|name| {
        vars.iter().any(|(n, _)| n == name).then(|| expand(&format!("${{{name}}}"), vars, &mut 64)).flatten()
    })
}

/// One flag of a script with its values read, as the readers below take it.
struct Flag<'a> {
    /// The flag, `--tensor-model-parallel-size`.
    name: &'a str,
    /// Its values with the script's `$NAME`s read.
    values: &'a [String],
}

impl<'a> Flag<'a> {
    /// The first value, if any.
    fn one(&self) -> Option<&'a str> {
        self.values.first().map(String::as_str)
    }

    /// The first value, or that the flag has none.
    fn value(&self) -> Result<&'a str, ImportError> {
        need(self.one(), self.name)
    }

    /// The first value as a count.
    fn count(&self) -> Result<u32, ImportError> {
        num(self.name, self.value()?)
    }

    /// The flag's value is not one of `expected`.
    fn bad(&self, expected: Expected) -> ImportError {
        ImportError::BadValue(self.name.to_owned(), expected)
    }
}

/// What a script's flags say that settles only once all are read: the layers (for VPP from the
/// layers per virtual stage), the precision flags, the method's flags and MindSpeed's kernels.
#[derive(Default)]
struct Seen {
    /// `--num-layers-per-virtual-pipeline-stage`.
    vpp_layers: Option<u32>,
    /// `--num-layers`.
    layers: Option<u32>,
    bf16: bool,
    fp16: bool,
    fp8: bool,
    /// A block-scaled recipe (MXFP8, NVFP4).
    block: Option<Precision>,
    /// MindSpeed-LLM's `--stage` (`sft`, `dpo`).
    stage: Option<String>,
    /// A LoRA rank above 0.
    lora: bool,
    /// Megatron-LM's `--sft`.
    sft: bool,
    /// MindSpeed-LLM's `--num-layer-list`: the layers of each stage.
    layer_list: Option<Vec<u64>>,
    /// MindSpeed's `--noop-layers`: the empty slots of the padded layers.
    noop: Option<Vec<u64>>,
    /// MindSpeed's fused RMSNorm, SwiGLU and rotary kernels: on when the script asks for any.
    fused: bool,
    /// FlashAttention on the NPU: MindSpeed-LLM runs eager attention without `--use-flash-attn`.
    flash: bool,
    /// MindSpeed-LLM's `--no-pad-to-seq-lengths`: samples trained at their own lengths.
    no_pad: bool,
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
    // An MoE script says which kernels it runs: Megatron's defaults stand where it does not
    // (no grouped GEMM, the allgather dispatcher; `TransformerConfig` at core_v0.19.0).
    if text.contains("--num-experts") {
        file.moe.grouped_gemm = false;
        file.moe.dispatcher = crate::plan::MoeDispatcher::AllGather;
    }
    let mut seen = Seen::default();
    for FlagUse { flag, values, raw } in script_flags(text, &vars) {
        let Some(values) = values else {
            r.rest.push((flag, raw));
            continue;
        };
        let f = Flag { name: &flag, values: &values };
        if SHAPE_FLAGS.contains(&f.name) {
            if f.name == "--num-layers" {
                seen.layers = Some(f.count()?);
            }
            r.shape.push((flag.clone(), values.join(" ")));
            r.rest.push((flag, values.join(" ")));
            continue;
        }
        let read = pipeline_flag(&f, file, &mut seen)?
            || parallel_flag(&f, file)?
            || kernel_flag(&f, file, &mut seen)?
            || moe_flag(&f, file)?
            || recompute_flag(&f, file)?
            || batch_flag(&f, file, &mut seen)?
            || method_flag(&f, file, &mut seen)?
            || launch_flag(&f, file, &mut r)?;
        if !read {
            r.rest.push((flag.clone(), values.join(" ")));
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
    settle_flags(text, ascend, file, &seen, &mut r);
    Ok(r)
}

/// The pipeline: PP, VPP (as chunks, layers per chunk or a layout string), MTP, the embedding and
/// loss in the split, uneven stages and the schedule. `Ok(false)` for a flag of another section.
fn pipeline_flag(f: &Flag, file: &mut PlanFile, seen: &mut Seen) -> Result<bool, ImportError> {
    let p = &mut file.parallel;
    match f.name {
        "--pipeline-model-parallel-size" => p.pp = f.count()?,
        "--num-layers-per-virtual-pipeline-stage" => seen.vpp_layers = Some(f.count()?),
        "--num-virtual-stages-per-pipeline-rank" => p.vpp = f.count()?,
        "--pipeline-model-parallel-layout" => p.pipeline_layout = f.value()?.to_owned(),
        "--mtp-num-layers" => file.mtp_layers = f.count()?,
        "--account-for-embedding-in-pipeline-split" | "--account-for-loss-in-pipeline-split" => {
            p.account_embedding_loss = true
        }
        "--num-layer-list" => {
            let list: Option<Vec<u64>> = f.value()?.split(',').map(|n| n.trim().parse().ok()).collect();
            seen.layer_list = list.filter(|l| l.iter().all(|&n| 0 < n));
            p.uneven_layers = true;
        }
        "--noop-layers" => {
            let list: Option<Vec<u64>> = f.value()?.split(',').map(|n| n.trim().parse().ok()).collect();
            seen.noop = list;
        }
        "--decoder-first-pipeline-num-layers" | "--decoder-last-pipeline-num-layers" => {
            f.value()?;
            p.uneven_layers = true;
        }
        "--schedules-method" => {
            p.schedule = match f.value()? {
                "dualpipev" => PipelineSchedule::DualPipeV,
                _ => return Err(f.bad(Expected::DualPipeV)),
            };
        }
        // The zero-bubble fork's flag (sail-sg/zero-bubble-pipeline-parallelism, a Megatron-LM fork):
        // read as ZB-H1, which rule schedule.framework then says upstream does not run.
        "--enable-zero-bubble" => p.schedule = PipelineSchedule::ZbH1,
        _ => return Ok(false),
    }
    Ok(true)
}

/// The other parallel sizes, sharding (distributed optimizer, FSDP), offload and the
/// communication overlaps. `Ok(false)` for a flag of another section.
fn parallel_flag(f: &Flag, file: &mut PlanFile) -> Result<bool, ImportError> {
    use crate::plan::Fsdp;
    let framework = file.framework;
    let p = &mut file.parallel;
    match f.name {
        "--tensor-model-parallel-size" => p.tp = f.count()?,
        "--context-parallel-size" => p.cp = f.count()?,
        // How CP exchanges (emit::megatron `cp_algo_flag`): Megatron-LM's `--cp-comm-type`, one
        // type for every layer; MindSpeed's `--context-parallel-algo`. The all-gather and hybrid
        // forms are not modeled: such a flag is listed as not kept.
        "--cp-comm-type" if framework == Framework::Megatron => match cp_comm_type(f.values) {
            Some(algo) => p.cp_algo = algo,
            None => return Ok(false),
        },
        "--context-parallel-algo" if framework == Framework::MindSpeedLlm => {
            p.cp_algo = match f.value()? {
                "megatron_cp_algo" => CpAlgo::Ring,
                "ulysses_cp_algo" => CpAlgo::AllToAll,
                _ => return Ok(false),
            }
        }
        "--expert-model-parallel-size" => p.ep = f.count()?,
        "--expert-tensor-parallel-size" => p.etp = f.count()?,
        "--sequence-parallel" => p.sequence_parallel = true,
        "--use-distributed-optimizer" => p.distributed_optimizer = true,
        // With the precision-aware optimizer it needs (emit::megatron::parallel_flags); that one
        // alone changes nothing the plan models.
        "--optimizer-cpu-offload" => p.offload_optimizer = true,
        "--use-precision-aware-optimizer" => {}
        "--use-torch-fsdp2" => p.fsdp = Fsdp::Torch,
        "--use-megatron-fsdp" => {
            if p.fsdp == Fsdp::None {
                p.fsdp = Fsdp::OptimGradsParams;
            }
        }
        "--data-parallel-sharding-strategy" => {
            let v = f.value()?;
            p.fsdp = match Fsdp::from_wire(v) {
                Some(s) if s != Fsdp::Torch => s,
                _ if v == "no_shard" => Fsdp::None,
                _ => return Err(f.bad(Expected::FsdpSharding)),
            };
        }
        "--overlap-grad-reduce" => p.overlap_grad_reduce = true,
        "--overlap-param-gather" => p.overlap_param_gather = true,
        "--grad-reduce-in-bf16" => p.grad_reduce_bf16 = true,
        "--fp8-param-gather" => p.fp8_param_gather = true,
        "--tp-comm-overlap" | "--use-ascend-coc" => p.tp_comm_overlap = true,
        "--swap-optimizer" => p.swap_optimizer = true,
        _ => return Ok(false),
    }
    Ok(true)
}

/// Megatron-LM's `--cp-comm-type`, one type or one per layer (megatron/training/arguments.py at
/// core_v0.19.0): `p2p` the ring, `a2a` all-to-all, the same for every layer; `None` otherwise.
fn cp_comm_type(values: &[String]) -> Option<CpAlgo> {
    let algo = match values.first()?.as_str() {
        "p2p" => CpAlgo::Ring,
        "a2a" => CpAlgo::AllToAll,
        _ => return None,
    };
    values.iter().all(|v| *v == values[0]).then_some(algo)
}

/// The attention kernel and MindSpeed's fused kernels. `Ok(false)` for a flag of another section.
fn kernel_flag(f: &Flag, file: &mut PlanFile, seen: &mut Seen) -> Result<bool, ImportError> {
    match f.name {
        "--use-fused-rmsnorm" | "--use-fused-swiglu" | "--use-fused-rotary-pos-emb" => seen.fused = true,
        "--use-flash-attn" => seen.flash = true,
        // Megatron-LM's `AttnBackend` (megatron/core/transformer/enums.py), as
        // emit::megatron::script writes it; `auto` picks flash or fused, both memory-efficient.
        "--attention-backend" => {
            file.attention = match f.value()? {
                "flash" | "auto" => AttentionImpl::Flash,
                "fused" => AttentionImpl::Sdpa,
                "unfused" | "local" => AttentionImpl::Eager,
                _ => return Err(f.bad(Expected::AttentionBackend)),
            }
        }
        _ => return Ok(false),
    }
    Ok(true)
}

/// The MoE kernels and routing (`moe` section, emit::megatron `moe_kernel_flags`). `Ok(false)` for
/// a flag of another section.
fn moe_flag(f: &Flag, file: &mut PlanFile) -> Result<bool, ImportError> {
    use crate::plan::MoeDispatcher;
    let moe = &mut file.moe;
    match f.name {
        "--moe-grouped-gemm" => moe.grouped_gemm = true,
        "--moe-token-dispatcher-type" => {
            moe.dispatcher = match f.value()? {
                "allgather" => MoeDispatcher::AllGather,
                "alltoall" | "alltoall_seq" => MoeDispatcher::AllToAll,
                "flex" => MoeDispatcher::Flex,
                _ => return Err(f.bad(Expected::MoeDispatcher)),
            };
        }
        "--moe-permute-fusion" | "--use-fused-moe-token-permute-and-unpermute" => moe.permute_fusion = true,
        "--overlap-moe-expert-parallel-comm" | "--moe-alltoall-overlap-comm" => moe.overlap_ep_comm = true,
        "--moe-expert-capacity-factor" => {
            let c: f64 = f.value()?.parse().map_err(|_| f.bad(Expected::Number))?;
            // Megatron treats a negative factor as none (`TransformerConfig.__post_init__`).
            moe.capacity_factor = (0.0 < c).then_some(c);
        }
        "--moe-pad-expert-input-to-capacity" => moe.pad_to_capacity = true,
        "--moe-flex-dispatcher-backend" => {
            f.value()?;
        }
        _ => return Ok(false),
    }
    Ok(true)
}

/// Recomputation, activation offloading and swap-attention. `Ok(false)` for a flag of another
/// section.
fn recompute_flag(f: &Flag, file: &mut PlanFile) -> Result<bool, ImportError> {
    let rc = &mut file.recompute;
    match f.name {
        "--recompute-granularity" => {
            rc.granularity = match f.value()? {
                "full" => RecomputeGranularity::Full,
                "selective" => RecomputeGranularity::Selective,
                _ => return Err(f.bad(Expected::FullOrSelective)),
            };
        }
        "--recompute-activations" => rc.granularity = RecomputeGranularity::Selective,
        "--recompute-modules" => rc.modules = f.values.to_vec(),
        "--cpu-offloading-num-layers" => rc.cpu_offload_layers = f.count()?,
        "--distribute-saved-activations" => rc.distribute_saved_activations = true,
        "--recompute-method" => {
            rc.method = match f.value()? {
                "block" => RecomputeMethod::Block,
                _ => RecomputeMethod::Uniform,
            };
        }
        "--recompute-num-layers" => rc.num_layers = f.count()?,
        "--recompute-activation-function" => rc.activation_function = true,
        "--recompute-activation-function-num-layers" => rc.activation_function_layers = f.count()?,
        "--swap-attention" => rc.swap_attention = true,
        _ => return Ok(false),
    }
    Ok(true)
}

/// The batch, the sequence and the precision flags. `Ok(false)` for a flag of another section.
fn batch_flag(f: &Flag, file: &mut PlanFile, seen: &mut Seen) -> Result<bool, ImportError> {
    match f.name {
        "--micro-batch-size" => file.batch.micro_batch = f.count()?,
        "--global-batch-size" => file.batch.global_batch = f.count()?,
        "--seq-length" => file.batch.seq_len = f.count()?,
        "--no-pad-to-seq-lengths" => seen.no_pad = true,
        "--bf16" => seen.bf16 = true,
        "--fp16" => seen.fp16 = true,
        "--fp8-format" => seen.fp8 = true,
        "--fp8-recipe" if f.one() == Some("mxfp8") => seen.block = Some(Precision::Mxfp8),
        "--fp4-format" | "--fp4-recipe" => seen.block = Some(Precision::Nvfp4),
        _ => return Ok(false),
    }
    Ok(true)
}

/// LoRA and the post-training stage. `Ok(false)` for a flag of another section, and for LoRA
/// modules or a stage the plan does not have.
fn method_flag(f: &Flag, file: &mut PlanFile, seen: &mut Seen) -> Result<bool, ImportError> {
    match f.name {
        "--lora-r" => {
            file.lora.rank = f.count()?;
            seen.lora = 0 < file.lora.rank;
        }
        "--lora-alpha" => file.lora.alpha = f.count()?,
        "--lora-target-modules" => match lora_targets_of_modules(f.values) {
            Some(targets) => file.lora.targets = targets,
            None => return Ok(false),
        },
        // MindSpeed-LLM's post-training stages the plan has (`posttrain_gpt.py --stage`).
        "--stage" => match f.value()? {
            v @ ("sft" | "dpo") => seen.stage = Some(v.to_owned()),
            _ => return Ok(false),
        },
        // Megatron-LM's own SFT dataset (`--sft`, with `--finetune`).
        "--sft" => seen.sft = true,
        _ => return Ok(false),
    }
    Ok(true)
}

/// The paths, and torchrun's cluster and rendezvous. `Ok(false)` for a flag of another section, and
/// for a cluster size that is not the plan's (`1:4`).
fn launch_flag(f: &Flag, file: &mut PlanFile, r: &mut Reading) -> Result<bool, ImportError> {
    match f.name {
        "--tokenizer-model" | "--tokenizer-name-or-path" => r.model_path = Some(f.value()?.to_owned()),
        "--data-path" => r.dataset = Some(f.value().map(|_| f.values.join(" "))?),
        "--save" => r.output_dir = Some(f.value()?.to_owned()),
        // torchrun's: the cluster and the rendezvous (a value such as `1:4` is not the plan's).
        "--nnodes" | "--nproc_per_node" | "--nproc-per-node" => {
            match f.one().and_then(|v| v.parse::<u32>().ok()) {
                Some(n) if f.name == "--nnodes" => file.cluster.nodes = n,
                Some(n) => file.cluster.devices_per_node = Some(n),
                None => return Ok(false),
            }
        }
        "--master_addr" | "--master-addr" => r.master_addr = Some(f.value()?.to_owned()),
        "--master_port" | "--master-port" => r.master_port = Some(f.value()?.to_owned()),
        _ => return Ok(false),
    }
    Ok(true)
}

/// What several flags decide together, once all are read: the method, the precision, MindSpeed's
/// kernels, VPP and the layers per stage (a list, or empty slots).
fn settle_flags(text: &str, ascend: bool, file: &mut PlanFile, seen: &Seen, r: &mut Reading) {
    file.method = match (seen.stage.as_deref(), seen.lora, seen.sft || text.contains("posttrain_gpt.py")) {
        (Some("dpo"), true, _) => Method::DpoLora,
        (Some("dpo"), false, _) => Method::Dpo,
        (_, true, _) => Method::Lora,
        (_, _, true) => Method::SftFull,
        _ => Method::Pretrain,
    };
    // Samples at their own lengths, whose mean is the data's and no part of the script: counted
    // at the sequence length until the plan is told the mean (`batch.mean_seq_len`), which then
    // writes the flag back.
    if seen.no_pad {
        file.batch.mean_seq_len = file.batch.seq_len;
    }
    file.precision = match (seen.block, seen.fp8, seen.bf16, seen.fp16) {
        (Some(block), ..) => block,
        (None, true, _, _) => Precision::Fp8,
        (None, _, true, _) => Precision::Bf16,
        (None, _, _, true) => Precision::Fp16,
        _ => Precision::Fp32,
    };
    if ascend {
        file.parallel.fused_kernels = seen.fused;
        if !seen.flash {
            file.attention = AttentionImpl::Eager;
        }
    }
    // VPP = layers ÷ PP ÷ layers per virtual stage (Megatron `arguments.py`).
    if let (Some(per), Some(layers)) = (seen.vpp_layers, seen.layers) {
        let pp = file.parallel.pp.max(1);
        // The embedding and the loss count as a layer each when the script says so.
        let layers = layers + if file.parallel.account_embedding_loss { 2 } else { 0 };
        file.parallel.vpp = (layers / pp / per.max(1)).max(1);
    }
    // A list of layers per stage other than the planner's own uneven split is the plan's layout
    // (one stage per rank, the embedding on the first, the loss on the last).
    let pp = u64::from(file.parallel.pp.max(1));
    let listed = seen.layer_list.as_ref().filter(|l| l.len() as u64 == pp && file.parallel.vpp <= 1);
    if let Some(list) = listed.filter(|_| file.parallel.pipeline_layout.is_empty()) {
        set_stage_sizes(file, list, pp);
    }
    // MindSpeed's empty layer slots: the model has that many layers fewer, and each stage holds its
    // slots' layers (`layout::noop_stage_sizes`), the plan's layout.
    if let (Some(noop), Some(padded)) = (seen.noop.as_ref(), seen.layers) {
        let stages = pp * u64::from(file.parallel.vpp.max(1));
        if let Some(sizes) = crate::layout::noop_stage_sizes(u64::from(padded), stages, noop) {
            set_stage_sizes(file, &sizes, pp);
            let real = (u64::from(padded) - noop.len() as u64).to_string();
            for (flag, value) in r.shape.iter_mut().chain(r.rest.iter_mut()) {
                if flag == "--num-layers" {
                    *value = real.clone();
                }
            }
        } else {
            r.rest.push((
                "--noop-layers".to_owned(),
                noop.iter().map(u64::to_string).collect::<Vec<_>>().join(","),
            ));
        }
    }
    // A layout string names VPP: its stages ÷ PP (`arguments.py`).
    if let Ok(stages) = crate::layout::parse(&file.parallel.pipeline_layout) {
        let pp = file.parallel.pp.max(1) as usize;
        if !file.parallel.pipeline_layout.is_empty() && stages.len().is_multiple_of(pp) {
            file.parallel.vpp = u32::try_from(stages.len() / pp).unwrap_or(u32::MAX).max(1);
        }
    }
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
        let from = words.iter().position(|w| w.ends_with(".py")).map_or(0, |at| at + 1);
        for (flag, raw) in flag_runs(&words, from, false) {
            if LAUNCHER.contains(&flag) {
                continue;
            }
            let Some(spec) = flags::lookup(table, flag) else {
                out.push(FlagError::Unknown { flag: flag.to_owned(), framework: table.name().into() });
                continue;
            };
            // A value set outside the script is not judged.
            let values = raw.iter().map(|w| expand(w, &vars, &mut 64)).collect::<Option<Vec<String>>>();
            if let Some(values) = values
                && let Err(e) = spec.check(&values.iter().map(String::as_str).collect::<Vec<_>>())
            {
                out.push(e);
            }
        }
    }
    out
}

/// The words of each command line of a script: continuation lines joined (each physical line on
/// its own where the joined one does not split), comments dropped. A quoted word that is a flag and
/// its value (`"--fp8-format hybrid"`, an array item as Megatron-LM's own example scripts write
/// them, `examples/llama/train_llama3_8b_h100_fp8.sh`) is split as bash splits the array's
/// unquoted expansion (`${DTYPE_ARGS[@]}`).
pub(super) fn script_lines(text: &str) -> Vec<Vec<String>> {
    script_lines_as_written(text).into_iter().map(split_flag_items).collect()
}

/// `words` with each `--flag value` word split at its blanks (a flag written `--flag=value` keeps
/// its value whole).
fn split_flag_items(words: Vec<String>) -> Vec<String> {
    let item = |w: &str| w.starts_with("--") && !w.contains('=') && w.contains(char::is_whitespace);
    match words.iter().any(|w| item(w)) {
        false => words,
        true => words
            .into_iter()
            .flat_map(|w| match item(&w) {
                true => w.split_whitespace().map(str::to_owned).collect(),
                false => vec![w],
            })
            .collect(),
    }
}

fn script_lines_as_written(text: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let text = without_command_arrays(text);
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

/// The elements after `NAME=(` (or `NAME+=(`) where `line` opens an array.
fn array_opening(line: &str) -> Option<&str> {
    let (name, rest) = line.trim_start().split_once("=(")?;
    let name = name.strip_suffix('+').unwrap_or(name);
    let is_name = !name.is_empty() && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
    is_name.then_some(rest)
}

/// `text` with the elements of each array that holds a command rather than arguments left out: an
/// array whose first element is a program (`PROFILE_CMD=( nsys profile --sample=none … )`, before
/// the launcher in Megatron-LM's `examples/llama/train_llama3_8b_fsdp_h100_fp8.sh`), whose flags
/// are the program's, not the training script's. An array of arguments starts with a flag or an
/// expansion.
fn without_command_arrays(text: &str) -> std::borrow::Cow<'_, str> {
    let program = |word: &str| {
        !word.is_empty()
            && !word.starts_with(['-', '$', '"', '\'', '#', ')'])
            && word.bytes().all(|b| b.is_ascii_alphanumeric() || b"_./-".contains(&b))
    };
    let lines: Vec<&str> = text.lines().collect();
    let mut skip = vec![false; lines.len()];
    let mut i = 0;
    while i < lines.len() {
        let Some(rest) = array_opening(lines[i]) else {
            i += 1;
            continue;
        };
        // The array's lines: to the one that closes it (a `)` outside the elements' quotes is
        // taken as the close, as these scripts write them).
        let mut end = i;
        while !lines[end].trim_end().ends_with(')') && end + 1 < lines.len() {
            end += 1;
        }
        let elements = || std::iter::once(rest).chain(lines[i + 1..=end].iter().copied());
        let first = elements().filter_map(|l| l.split_whitespace().next()).find(|w| !w.starts_with('#'));
        // A command that runs the training script itself (`CMD=( python pretrain_gpt.py … )`) keeps
        // its flags.
        let trains =
            elements().flat_map(str::split_whitespace).any(|w| w.trim_matches(['"', '\'']).ends_with(".py"));
        if first.is_some_and(program) && !trains {
            skip[i..=end].iter_mut().for_each(|s| *s = true);
        }
        i = end + 1;
    }
    match skip.contains(&true) {
        false => text.into(),
        true => {
            let kept = lines.iter().zip(&skip).map(|(l, &s)| if s { "" } else { *l });
            kept.collect::<Vec<_>>().join("\n").into()
        }
    }
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

/// `word` with `$NAME`, `${NAME}`, `${NAME:-default}` (the default expanded in turn, nested braces
/// and all: `${MODEL:-"${HOME}/models/Qwen3-8B"}`, as VeRL's example scripts write), `${NAME:?message}`
/// and integer arithmetic `$((…))` replaced from the script's assignments (the last one of each
/// name); `None` where a value is not in the script, or past `budget` expansions (pasted text may
/// nest them without end).
pub(super) fn expand(word: &str, vars: &[(String, String)], budget: &mut u32) -> Option<String> {
    expand_as(word, vars, budget, false)
}

/// [`expand`], leaving a value not in the script as written (`${HOME}/models/Qwen3-8B`): for naming
/// the model, never for a value the plan keeps.
pub(super) fn expand_leniently(word: &str, vars: &[(String, String)]) -> String {
    expand_as(word, vars, &mut 64, true).unwrap_or_else(|| word.to_owned())
}

fn expand_as(word: &str, vars: &[(String, String)], budget: &mut u32, lenient: bool) -> Option<String> {
    let mut res = String::new();
    let mut rest = word;
    while let Some(at) = rest.find('$') {
        *budget = budget.checked_sub(1)?;
        res.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        if let Some(inner) = after.strip_prefix("((") {
            let end = arithmetic_end(inner)?;
            let value = arithmetic(&inner[..end], vars, budget);
            match (value, lenient) {
                (Some(v), _) => res.push_str(&v.to_string()),
                (None, true) => res.push_str(&rest[at..at + 3 + end + 2]),
                (None, false) => return None,
            }
            rest = &inner[end + 2..];
            continue;
        }
        let (name, default, tail) = match after.strip_prefix('{') {
            Some(inner) => {
                let end = closing_brace(inner)?;
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
        let value = match (vars.iter().rposition(|(n, _)| n == name), default) {
            (Some(pos), _) => expand_as(&vars[pos].1, &vars[..pos], budget, lenient),
            (None, Some(default)) => expand_as(default.trim_matches('"'), vars, budget, lenient),
            (None, None) => None,
        };
        match (value, lenient) {
            (Some(value), _) => res.push_str(&value),
            (None, true) => res.push_str(&rest[at..rest.len() - tail.len()]),
            (None, false) => return None,
        }
        rest = tail;
    }
    res.push_str(rest);
    Some(res)
}

/// Where the `}` closing a `${` whose body `inner` starts lies, past the braces nested in it.
fn closing_brace(inner: &str) -> Option<usize> {
    let mut depth = 0u32;
    for (i, b) in inner.bytes().enumerate() {
        match b {
            b'{' => depth += 1,
            b'}' if depth == 0 => return Some(i),
            b'}' => depth -= 1,
            _ => {}
        }
    }
    None
}

/// Bash's integer arithmetic over `+ - * / %` and parentheses, its operands numbers or variables
/// (`$NAME`, `${NAME}` or a bare `NAME`, as `$((GPUS_PER_NODE*NNODES))` reads them); `None` for
/// anything else, a division by zero or an overflow.
fn arithmetic(expr: &str, vars: &[(String, String)], budget: &mut u32) -> Option<i64> {
    // Operands replaced by their values first, then the expression's tokens.
    let mut text = String::new();
    let mut rest = expr;
    while let Some(at) = rest.find(|c: char| c == '$' || c.is_ascii_alphabetic() || c == '_') {
        text.push_str(&rest[..at]);
        let after = &rest[at..];
        let word_end =
            |s: &str| s.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).unwrap_or(s.len());
        let (word, tail) = match after.strip_prefix("${") {
            Some(inner) => {
                let end = closing_brace(inner)?;
                (&after[..end + 3], &inner[end + 1..])
            }
            None if after.starts_with('$') => {
                let end = 1 + word_end(&after[1..]);
                (&after[..end], &after[end..])
            }
            None => {
                let end = word_end(after);
                (&after[..end], &after[end..])
            }
        };
        let word = if word.starts_with('$') { word.to_owned() } else { format!("${word}") };
        text.push_str(expand_as(&word, vars, budget, false)?.trim());
        rest = tail;
    }
    text.push_str(rest);
    let tokens: Vec<char> = text.chars().filter(|c| !c.is_whitespace()).collect();
    let mut at = 0;
    let value = sum(&tokens, &mut at)?;
    (at == tokens.len()).then_some(value)
}

fn sum(t: &[char], at: &mut usize) -> Option<i64> {
    let mut value = product(t, at)?;
    while let Some(&op @ ('+' | '-')) = t.get(*at) {
        *at += 1;
        let rhs = product(t, at)?;
        value = if op == '+' { value.checked_add(rhs)? } else { value.checked_sub(rhs)? };
    }
    Some(value)
}

fn product(t: &[char], at: &mut usize) -> Option<i64> {
    let mut value = unary(t, at)?;
    while let Some(&op @ ('*' | '/' | '%')) = t.get(*at) {
        *at += 1;
        let rhs = unary(t, at)?;
        value = match op {
            '*' => value.checked_mul(rhs)?,
            '/' => value.checked_div(rhs)?,
            _ => value.checked_rem(rhs)?,
        };
    }
    Some(value)
}

fn unary(t: &[char], at: &mut usize) -> Option<i64> {
    match t.get(*at)? {
        '-' => {
            *at += 1;
            unary(t, at)?.checked_neg()
        }
        '+' => {
            *at += 1;
            unary(t, at)
        }
        '(' => {
            *at += 1;
            let value = sum(t, at)?;
            (t.get(*at) == Some(&')')).then(|| *at += 1)?;
            Some(value)
        }
        _ => {
            let digits = t[*at..].iter().take_while(|c| c.is_ascii_digit()).count();
            let value = t[*at..*at + digits].iter().collect::<String>().parse().ok()?;
            *at += digits;
            Some(value)
        }
    }
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
