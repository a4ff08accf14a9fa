//! MindSpeed-LLM: the bash script its users run (the pattern of the repo's
//! `examples/mcore/<model>/pretrain_*.sh` and `tune_*.sh`): CANN environment, HCCL timeouts, the
//! Megatron flags with MindSpeed's Ascend flags (`mindspeed/features_manager/`: fused kernels, CoC,
//! swap-attention, activation-function recomputation), `pretrain_gpt.py` for pre-training and
//! `posttrain_gpt.py --finetune --stage sft|dpo` for fine-tuning, LoRA and DPO.

use super::megatron::{model_flags, parallel_flags};
use super::shell::quote;
use super::{
    EmittedFile, FileKind, bash_array, distributed_args, model_path, model_slug, node_vars, script_opening,
};
use crate::Plan;
use crate::model::LoraTarget;
use crate::plan::{LoraTargets, Method, PipelineSchedule, Precision};

/// MindSpeed-LLM's LoRA module names (`--lora-target-modules`, docs/zh/pytorch/training/finetune/
/// mcore/lora_finetune.md): Megatron's fused linears.
pub(super) fn lora_modules(targets: &LoraTargets) -> String {
    let mut names: Vec<&str> = Vec::new();
    for t in targets.list() {
        let name = match t {
            LoraTarget::Q | LoraTarget::K | LoraTarget::V | LoraTarget::Qkv | LoraTarget::QkvProj => {
                "linear_qkv"
            }
            LoraTarget::O => "linear_proj",
            LoraTarget::Gate | LoraTarget::Up | LoraTarget::GateUp => "linear_fc1",
            LoraTarget::Down => "linear_fc2",
            LoraTarget::QA | LoraTarget::QB | LoraTarget::KvA | LoraTarget::KvB => "linear_qkv",
            // The router, and Gated DeltaNet's projections, which the names above do not reach
            // (`model::lora_params` counts them out under Megatron's scope).
            LoraTarget::Router
            | LoraTarget::InProjQkvz
            | LoraTarget::InProjBa
            | LoraTarget::OutProj
            | LoraTarget::InProjQkv
            | LoraTarget::InProjZ
            | LoraTarget::InProjB
            | LoraTarget::InProjA => continue,
        };
        if !names.contains(&name) {
            names.push(name);
        }
    }
    names.join(" ")
}

/// The script.
pub fn script(plan: &Plan, header: &[String]) -> EmittedFile {
    let slug = model_slug(plan);
    let mut text = script_opening(
        header,
        "Run on every node with NODE_RANK set (0 … NNODES − 1); MASTER_ADDR is node 0.",
    );
    text.push_str(&environment(plan));
    text.push_str(&node_vars(plan, false, "NNODES", "NPUS_PER_NODE", "localhost"));
    text.push_str(&path_vars(plan, &slug));
    text.push_str(&distributed_args("NNODES", "NPUS_PER_NODE"));
    let mut gpt = vec!["--use-mcore-models".to_owned()];
    gpt.extend(parallel_flags(plan, true));
    gpt.extend(ascend_flags(plan));
    gpt.extend(training_flags(plan));
    text.push_str(&bash_array("GPT_ARGS", &gpt));
    text.push_str(&bash_array("DATA_ARGS", &["--data-path \"$DATA_PATH\" --split 100,0,0".to_owned()]));
    text.push_str(&bash_array(
        "OUTPUT_ARGS",
        &["--log-interval 1 --save-interval 2000 --eval-interval 2000 --eval-iters 0 --ckpt-format torch"
            .to_owned()],
    ));
    let entry = if plan.method == Method::Pretrain { "pretrain_gpt.py" } else { "posttrain_gpt.py" };
    text.push_str(&format!("\ntorchrun \"${{DISTRIBUTED_ARGS[@]}}\" {entry} \\\n"));
    text.push_str("  \"${GPT_ARGS[@]}\" \"${DATA_ARGS[@]}\" \"${OUTPUT_ARGS[@]}\" \\\n");
    text.push_str("  --distributed-backend nccl --transformer-impl local \\\n");
    text.push_str("  --load \"$CKPT_LOAD_DIR\" --save \"$CKPT_SAVE_DIR\"\n");
    EmittedFile {
        name: format!(
            "{}_{}.sh",
            if plan.method == Method::Pretrain { "pretrain" } else { "tune" },
            slug.replace('.', "_")
        ),
        kind: FileKind::Shell,
        text,
    }
}

/// CANN's environment, and the variables HCCL, the allocator and Megatron's ordering want.
fn environment(plan: &Plan) -> String {
    // CANN's environment script reads variables that may be unset: source it outside `set -u`.
    let mut text =
        "set +u\nsource \"${CANN_SET_ENV:-/usr/local/Ascend/ascend-toolkit/set_env.sh}\"\nset -u\n"
            .to_owned();
    // FSDP asserts CUDA_DEVICE_MAX_CONNECTIONS is not 1 (Megatron `validate_args`).
    if plan.parallel.fsdp == crate::plan::Fsdp::None {
        text.push_str("export CUDA_DEVICE_MAX_CONNECTIONS=1\n");
    }
    text.push_str("export HCCL_CONNECT_TIMEOUT=1800\n");
    text.push_str("export PYTORCH_NPU_ALLOC_CONF=expandable_segments:True\n\n");
    text
}

/// The paths: the HF model directory, the converted checkpoint, where to save, the data.
fn path_vars(plan: &Plan, slug: &str) -> String {
    let launch = &plan.launch;
    let p = &plan.parallel;
    let save =
        if launch.output_dir.is_empty() { format!("./ckpt/{slug}") } else { launch.output_dir.clone() };
    let data = if launch.dataset.is_empty() {
        "./dataset/enwiki_text_document".to_owned()
    } else {
        launch.dataset.clone()
    };
    // `--tokenizer-type PretrainedFromHF` loads a local directory (`build_tokenizer`), so the
    // default is the directory MindSpeed-LLM's examples download the HF model to, not a hub id.
    let hf_dir = match launch.model_path.is_empty() {
        true => format!("./model_from_hf/{}", model_path(plan).rsplit('/').next().unwrap_or(slug)),
        false => launch.model_path.clone(),
    };
    let mcore_dir = format!("./model_weights/{slug}-mcore-tp{}-pp{}", p.tp, p.pp);
    let mut text =
        format!("TOKENIZER_PATH={}   # the HF model directory (config, tokenizer)\n", quote(&hf_dir));
    text.push_str(&format!(
        "CKPT_LOAD_DIR={}   # convert_ckpt_v2.py of $TOKENIZER_PATH at this TP/PP\n",
        quote(&mcore_dir)
    ));
    text.push_str(&format!("CKPT_SAVE_DIR={}\n", quote(&save)));
    text.push_str(&format!("DATA_PATH={}   # prefix from preprocess_data.py\n\n", quote(&data)));
    text
}

/// MindSpeed's own features (`mindspeed/features_manager/`): the pipeline schedule,
/// activation-function recomputation, swap-attention, the optimizer's swap or reuse, and the fused
/// kernels.
fn ascend_flags(plan: &Plan) -> Vec<String> {
    let p = &plan.parallel;
    let mut gpt = Vec::new();
    // MindSpeed's DualPipeV (`--schedules-method dualpipev`, mindspeed/features_manager
    // pipeline-parallel features); without it the run is plain 1F1B. Neither MindSpeed (028de58)
    // nor MindSpeed-LLM (c77308a) declares a zero-bubble schedule, so ZB-H1 writes no flag (rule
    // schedule.framework refuses it, and the file's header says so); GPipe likewise.
    if p.schedule == PipelineSchedule::DualPipeV {
        gpt.push("--schedules-method dualpipev".to_owned());
    }
    let r = &plan.recompute;
    if r.activation_function {
        gpt.push("--recompute-activation-function".to_owned());
        if 0 < r.activation_function_layers {
            gpt.push(format!("--recompute-activation-function-num-layers {}", r.activation_function_layers));
        }
    }
    if r.swap_attention {
        gpt.push("--swap-attention".to_owned());
    }
    if p.swap_optimizer {
        // MindSpeed swap-optimizer (docs/zh/features/swap-optimizer.md); its default of 16 slices,
        // written out to be tuned.
        gpt.push("--swap-optimizer --swap-optimizer-times 16".to_owned());
    } else if p.distributed_optimizer {
        // fp32 master weights share memory with the bf16 ones (MindSpeed
        // docs/zh/features/reuse-fp32-param.md); MindSpeed refuses it beside --swap-optimizer
        // (`SwapOptimizerFeature.validate_args`, swap_optimizer_feature.py).
        gpt.push("--reuse-fp32-param".to_owned());
    }
    // The NPU's fused attention unless the plan counts eager attention (`--use-flash-attn`,
    // mindspeed/features_manager/), and MindSpeed's other fused kernels unless the plan turns them off.
    if plan.attention != crate::plan::AttentionImpl::Eager {
        gpt.push("--use-flash-attn".to_owned());
    }
    if p.fused_kernels {
        gpt.push("--use-fused-rotary-pos-emb --use-fused-rmsnorm --use-fused-swiglu".to_owned());
    }
    gpt
}

/// The tokenizer, the model, the batch, the optimizer, the precision, the fine-tuning stage and
/// LoRA.
fn training_flags(plan: &Plan) -> Vec<String> {
    let mut gpt =
        vec!["--tokenizer-type PretrainedFromHF --tokenizer-name-or-path \"$TOKENIZER_PATH\"".to_owned()];
    gpt.extend(model_flags(plan, true));
    // No padding of the vocabulary: the checkpoint's rows as they are (as the repo's
    // examples/mcore/*/pretrain_*.sh do).
    gpt.push(format!("--make-vocab-size-divisible-by 1 --padded-vocab-size {}", plan.model.arch.vocab_size));
    gpt.push(format!(
        "--micro-batch-size {} --global-batch-size {}",
        plan.batch.micro_batch, plan.batch.global_batch
    ));
    gpt.push(
        "--no-masked-softmax-fusion --attention-softmax-in-fp32 --no-gradient-accumulation-fusion".to_owned(),
    );
    gpt.push(
        "--lr 1.25e-6 --min-lr 1.25e-7 --lr-decay-style cosine --lr-warmup-fraction 0.01 --train-iters 2000"
            .to_owned(),
    );
    gpt.push(
        "--weight-decay 1e-1 --clip-grad 1.0 --adam-beta1 0.9 --adam-beta2 0.95 --initial-loss-scale 4096"
            .to_owned(),
    );
    match plan.precision {
        Precision::Fp16 => gpt.push("--fp16".to_owned()),
        Precision::Fp32 => {}
        _ => gpt.push("--bf16".to_owned()),
    }
    // Fine-tuning runs `posttrain_gpt.py` at its stage.
    match plan.method {
        Method::Pretrain => {}
        Method::Dpo | Method::DpoLora => {
            gpt.push("--finetune --stage dpo --is-instruction-dataset".to_owned())
        }
        _ => gpt.push("--finetune --stage sft --is-instruction-dataset".to_owned()),
    }
    // Samples trained at their own lengths, as the plan's mean sample length counts them: each
    // micro-batch padded to its longest sample rather than to `--seq-length`
    // (`build_pretraining_data_loader`, mindspeed_llm/legacy/data/data_samplers.py at c77308a).
    let knob = crate::knobs::Knob::MeanSeqLen;
    if 0 < plan.batch.mean_seq_len && crate::knobs::applies(plan.framework, plan.method, knob).yes() {
        gpt.push("--no-pad-to-seq-lengths".to_owned());
    }
    if matches!(plan.method, Method::Lora | Method::Qlora | Method::DpoLora) {
        gpt.push(format!("--lora-r {} --lora-alpha {}", plan.lora.rank, plan.lora.alpha));
        gpt.push(format!("--lora-target-modules {}", lora_modules(&plan.lora.targets)));
    }
    gpt
}
