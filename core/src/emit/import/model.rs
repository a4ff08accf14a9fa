//! Which model a launch file names: a Hugging Face id, a local directory's name, or the architecture
//! flags of a script or a MindSpeed-RL model block (a catalog model they describe, else a model built
//! from them).

// The importer's shared types and helpers, and its imports (mod.rs).
use super::*;

/// The model the file tells, and how; the current plan's model when it tells none. A catalog model
/// whose path names a GPTQ or AWQ checkpoint of it (`Qwen/Qwen2.5-7B-Instruct-GPTQ-Int4`) is its
/// config with that `quantization_config` ([`crate::quantized::from_name`]).
pub(super) fn model(text: &str, reading: &Reading, current: &PlanFile) -> (ModelField, ModelOrigin) {
    let (field, origin) = model_as_told(text, reading, current);
    let path = reading.model_path.as_deref().unwrap_or("");
    let (ModelField::Id(id), Some(stored)) = (&field, crate::quantized::from_name(path)) else {
        return (field, origin);
    };
    let Some(config) = crate::catalog::config(id) else {
        return (field, origin);
    };
    let Ok(mut hf_config) = serde_json::from_str::<serde_json::Value>(config.config) else {
        return (field, origin);
    };
    hf_config["quantization_config"] = stored;
    let name = path.rsplit(['/', '\\']).find(|part| !part.is_empty()).unwrap_or(path).to_owned();
    (ModelField::Config { hf_config, name: Some(name) }, origin)
}

fn model_as_told(text: &str, reading: &Reading, current: &PlanFile) -> (ModelField, ModelOrigin) {
    // Catalog models the file names, first the path's, then the other names.
    let mut named: Vec<(&'static str, ModelOrigin)> = Vec::new();
    if let Some(path) = &reading.model_path {
        if let Some(id) = by_repo(path) {
            named.push((id, ModelOrigin::Named(id.to_owned())));
        } else if let Some(m) = crate::catalog::model_by_name(path) {
            named.push((m.id, ModelOrigin::Matched { from: path.clone(), id: m.id.to_owned() }));
        }
    }
    for name in &reading.names {
        if let Some(m) = crate::catalog::model_by_name(name) {
            named.push((m.id, ModelOrigin::Matched { from: name.clone(), id: m.id.to_owned() }));
        }
    }
    let Some(shape) = Shape::parse(&reading.shape) else {
        if let Some((id, origin)) = named.into_iter().next() {
            return (ModelField::Id(id.to_owned()), origin);
        }
        // A Hugging Face id anywhere in the text (a comment, a variable), the longest match winning.
        let anywhere = crate::catalog::CONFIGS
            .iter()
            .filter_map(|c| Some((c.id, crate::emit::hf_repo(c.source)?)))
            .filter(|(_, repo)| text.contains(repo.as_str()))
            .max_by_key(|(_, repo)| repo.len());
        return match anywhere {
            Some((id, _)) => (ModelField::Id(id.to_owned()), ModelOrigin::Named(id.to_owned())),
            None => (current.model.clone(), ModelOrigin::Unknown),
        };
    };
    // The flags decide: a named model only when it has their architecture.
    let candidates: Vec<&'static str> =
        catalog_shapes().iter().filter(|(_, s)| s.matches(&shape)).map(|(id, _)| *id).collect();
    if let Some((id, origin)) = named.iter().find(|(id, _)| candidates.contains(id)) {
        return (ModelField::Id((*id).to_owned()), origin.clone());
    }
    if let Some(id) = candidates.first() {
        return (ModelField::Id((*id).to_owned()), ModelOrigin::Shape((*id).to_owned()));
    }
    let hint = named
        .first()
        .and_then(|(id, _)| crate::catalog::model(id))
        .map(|m| (m.arch.family, m.arch.vocab_size));
    // A name, not a placeholder an example script leaves to fill in (MindSpeed-LLM's
    // `TOKENIZER_PATH="your tokenizer path"`).
    let placeholder =
        |part: &&str| part.contains(char::is_whitespace) || part.to_ascii_lowercase().starts_with("your");
    // MindSpeed-LLM's scripts name the model's HF type for their checkpoint conversion
    // (`--model-type-hf gemma2`): a name where the paths are placeholders.
    let hf_type = reading.rest.iter().filter(|(flag, _)| flag == "--model-type-hf").map(|(_, v)| v);
    let name = reading
        .model_path
        .iter()
        .chain(&reading.names)
        .chain(hf_type)
        .filter_map(|p| p.rsplit(['/', '\\']).find(|part| !part.is_empty()))
        .find(|part| !placeholder(part))
        .map_or_else(|| "custom model".to_owned(), str::to_owned);
    match built(&shape, &reading.shape, hint, &name) {
        Some(field) => (field, ModelOrigin::Built { name }),
        None => (current.model.clone(), ModelOrigin::Unbuilt(unbuilt_flags(&shape, reading))),
    }
}

/// The flags of a file that no family here has, as written: a feed-forward activation neither
/// SwiGLU nor gpt-oss's (PLM's `--squared-relu`; `--gelu-tanh` without Gemma 2's `--post-norm`),
/// a norm other than RMSNorm beside rotary positions, a position type of its own (`deepseek4`).
/// Empty where the layers differ in a way no single flag tells.
fn unbuilt_flags(shape: &Shape, reading: &Reading) -> Vec<String> {
    const ACTIVATIONS: [&str; 4] = ["--gelu-tanh", "--squared-relu", "--openai-gelu", "--geglu"];
    let given = |flag: &str| reading.shape.iter().chain(&reading.rest).find(|(f, _)| f == flag);
    let as_written = |(f, v): &(String, String)| if v.is_empty() { f.clone() } else { format!("{f} {v}") };
    let mut flags: Vec<String> = ACTIVATIONS.iter().filter_map(|a| given(a)).map(as_written).collect();
    let learned = |kind: &str| kind.is_empty() || kind == "learned_absolute";
    if let Some(kind) = given("--position-embedding-type").filter(|(_, v)| !shape.rope && !learned(v)) {
        flags.push(as_written(kind));
    }
    if let Some(norm) = given("--normalization").filter(|_| shape.rope && !shape.rms) {
        flags.push(as_written(norm));
    }
    flags
}

/// The catalog model whose Hugging Face id `path` is, or a variant of (`Qwen/Qwen2.5-7B-Instruct`):
/// the longest id matching.
pub(super) fn by_repo(path: &str) -> Option<&'static str> {
    let path = path.trim().trim_end_matches('/').to_ascii_lowercase();
    crate::catalog::CONFIGS
        .iter()
        .filter_map(|c| Some((c.id, crate::emit::hf_repo(c.source)?.to_ascii_lowercase())))
        .filter(|(_, repo)| path == *repo || path.starts_with(&format!("{repo}-")))
        .max_by_key(|(_, repo)| repo.len())
        .map(|(id, _)| id)
}

/// A model's architecture as Megatron builds it from its flags, each left out one at Megatron's
/// default (`megatron/training/arguments.py`: `ffn_hidden_size` 4·h, or ⅔ of it rounded down to a
/// multiple of 64 with SwiGLU; `kv_channels` h ÷ heads; one query group under
/// `--group-query-attention`; biases on; LayerNorm; learned absolute positions; rotary base
/// 10000; top-2 routing; the MLA ranks of `_add_mla_args`).
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Shape {
    layers: u64,
    hidden: u64,
    ffn: u64,
    heads: u64,
    groups: u64,
    head_dim: u64,
    qkv_bias: bool,
    linear_bias: bool,
    qk_norm: bool,
    swiglu: bool,
    /// Gemma 2's layers as MindSpeed-LLM builds them: GeLU (tanh) gating (`--gelu-tanh`) and norms
    /// after attention and the MLP (`--post-norm`), both given.
    gemma2: bool,
    tied: bool,
    rms: bool,
    rope: bool,
    /// `None` where the file sets it outside (a `${…}` guard): any base matches.
    rotary_base: Option<u64>,
    /// Llama-3 frequency scaling's factor.
    rope_scaling: Option<f64>,
    /// YaRN: factor, original positions, mscale, mscale over every dimension, betas fast and
    /// slow (`emit::megatron::yarn_flags` writes them). `None` where the file gives none.
    yarn: Option<[f64; 6]>,
    /// Experts, top-k, expert FFN, shared-expert FFN.
    moe: Option<[u64; 4]>,
    /// Which layers hold the experts, layer by layer ([`moe_pattern`]); empty without experts.
    /// `None` where the flags give a pattern this reader does not take: such a shape matches no
    /// model and builds none.
    moe_layers: Option<Vec<bool>>,
    /// q LoRA rank (0 = none), KV LoRA rank, q/k head dim, rotary head dim, v head dim.
    mla: Option<[u64; 5]>,
    /// `None` where the file does not give it (Megatron-LM reads it from the tokenizer): any matches.
    vocab: Option<u64>,
    /// A sliding window: tokens a query attends to (itself included), and every how many layers
    /// one attends to the whole sequence (0: none does). Megatron-LM's `--window-size w-1,0` and
    /// `--window-attn-skip-freq`, MindSpeed-LLM's `--sliding-window w` (`emit::megatron::window_flags`).
    window: Option<[u64; 2]>,
    /// The share of each head's dimensions the rotary embedding turns (`--rotary-percent`, 1
    /// where not given), and whether it turns interleaved pairs (`--rotary-interleaved`): GLM's.
    rotary: (f64, bool),
    /// A sigmoid gate on the shared experts' output (Qwen2-MoE's): Megatron-LM's
    /// `--moe-shared-expert-gate`, MindSpeed-LLM's `--shared-expert-gate`. `None` where the file
    /// does not give it (MindSpeed-RL's model config has no key for it): either matches.
    shared_gate: Option<bool>,
    /// Gated DeltaNet layers (Qwen3-Next's): every how many layers one is attention, key heads,
    /// value heads, key head width, value head width, the convolution's width. Megatron-LM's
    /// `--experimental-attention-variant gated_delta_net` with `--linear-attention-freq` and the
    /// `--linear-*` shapes; MindSpeed-LLM's `--full-attention-interval`, the same shapes and
    /// `--mamba-d-conv` (`emit::megatron::linear_attention_flags`).
    linear: Option<[u64; 6]>,
    /// LongRoPE as MindSpeed-LLM writes it (`--rope-scaling-type longrope`): the original length and
    /// the long and short factor lists (`emit::megatron::longrope_flags`), each `None` where the file
    /// gives none that reads as numbers. A file without matches any ([`Shape::matches`]).
    longrope: Option<Longrope>,
}

/// LongRoPE's original length, then its long and short factor lists ([`Shape::longrope`]).
type Longrope = (u64, Option<Vec<f64>>, Option<Vec<f64>>);

/// The flags that describe the model: read for its architecture, compared with the file the plan
/// writes like the rest.
pub(super) const SHAPE_FLAGS: &[&str] = &[
    "--num-layers",
    "--hidden-size",
    "--ffn-hidden-size",
    "--num-attention-heads",
    "--group-query-attention",
    "--num-query-groups",
    "--kv-channels",
    "--add-qkv-bias",
    "--qk-layernorm",
    "--multi-latent-attention",
    "--q-lora-rank",
    "--kv-lora-rank",
    "--qk-head-dim",
    "--qk-pos-emb-head-dim",
    "--v-head-dim",
    "--position-embedding-type",
    "--rotary-base",
    "--use-rope-scaling",
    "--rope-scaling-type",
    "--rope-scaling-factor",
    "--rope-scaling-mscale",
    "--rope-scaling-mscale-all-dim",
    "--rope-scaling-original-max-position-embeddings",
    "--beta-fast",
    "--beta-slow",
    "--rotary-scaling-factor",
    "--mscale",
    "--mscale-all-dim",
    "--yarn-original-max-position-embeddings",
    "--yarn-beta-fast",
    "--yarn-beta-slow",
    "--low-freq-factor",
    "--high-freq-factor",
    "--original-max-position-embeddings",
    "--max-position-embeddings",
    "--normalization",
    "--norm-epsilon",
    "--swiglu",
    "--disable-bias-linear",
    "--untie-embeddings-and-output-weights",
    "--num-experts",
    "--moe-router-topk",
    "--moe-ffn-hidden-size",
    "--moe-shared-expert-intermediate-size",
    "--n-shared-experts",
    "--first-k-dense-replace",
    "--moe-layer-freq",
    "--padded-vocab-size",
    "--vocab-size",
    "--window-size",
    "--window-attn-skip-freq",
    "--sliding-window",
    "--rotary-percent",
    "--rotary-interleaved",
    "--moe-shared-expert-gate",
    "--shared-expert-gate",
    "--experimental-attention-variant",
    "--linear-attention-freq",
    "--full-attention-interval",
    "--linear-key-head-dim",
    "--linear-value-head-dim",
    "--linear-num-key-heads",
    "--linear-num-value-heads",
    "--linear-conv-kernel-dim",
    "--mamba-d-conv",
    "--attention-output-gate",
    "--partial-rotary-factor",
    "--gelu-tanh",
    "--post-norm",
    "--interleave-sliding-window",
    "--query-pre-attn-scalar",
    "--output-logit-softcapping",
    "--longrope-freqs-type",
    "--long-factor",
    "--short-factor",
];

/// Architecture flags by name, each with its values (the last of a flag given twice).
struct FlagMap<'a>(HashMap<&'a str, &'a str>);

impl<'a> FlagMap<'a> {
    fn of(flags: &'a [(String, String)]) -> FlagMap<'a> {
        FlagMap(flags.iter().map(|(f, v)| (f.as_str(), v.trim())).collect())
    }

    /// Whether the flag is given.
    fn has(&self, flag: &str) -> bool {
        self.0.contains_key(flag)
    }

    /// Whether the flag is given with this value.
    fn is(&self, flag: &str, value: &str) -> bool {
        self.0.get(flag) == Some(&value)
    }

    /// The flag's values as written.
    fn get(&self, flag: &str) -> Option<&'a str> {
        self.0.get(flag).copied()
    }

    /// The flag's value as a count.
    fn int(&self, flag: &str) -> Option<u64> {
        self.get(flag).and_then(|v| v.parse::<u64>().ok())
    }

    /// The flag's value as a finite number.
    fn float(&self, flag: &str) -> Option<f64> {
        self.get(flag).and_then(|v| v.parse::<f64>().ok()).filter(|x| x.is_finite())
    }
}

impl Shape {
    /// The architecture the flags describe; `None` without layers, width and heads.
    fn parse(flags: &[(String, String)]) -> Option<Shape> {
        let map = FlagMap::of(flags);
        let has = |f: &str| map.has(f);
        let int = |f: &str| map.int(f);
        let (layers, hidden, heads) =
            (int("--num-layers")?, int("--hidden-size")?, int("--num-attention-heads")?);
        if layers == 0 || hidden == 0 || heads == 0 {
            return None;
        }
        let swiglu = has("--swiglu");
        // Saturating: an edited script can name any width.
        let ffn = int("--ffn-hidden-size").unwrap_or(if swiglu {
            (hidden.saturating_mul(8) / 3) / 64 * 64
        } else {
            hidden.saturating_mul(4)
        });
        let mla = has("--multi-latent-attention").then(|| {
            [
                int("--q-lora-rank").unwrap_or(0),
                int("--kv-lora-rank").unwrap_or(32),
                int("--qk-head-dim").unwrap_or(128),
                int("--qk-pos-emb-head-dim").unwrap_or(64),
                int("--v-head-dim").unwrap_or(128),
            ]
        });
        let (groups, head_dim) = match mla {
            Some(_) => (heads, 0),
            None => (
                match has("--group-query-attention") {
                    true => int("--num-query-groups").unwrap_or(1),
                    false => heads,
                },
                int("--kv-channels").unwrap_or(hidden / heads),
            ),
        };
        let linear_bias = !has("--disable-bias-linear");
        // Megatron-LM's YaRN outside MLA is a rotary type of its own.
        let rope = map.is("--position-embedding-type", "rope") || map.is("--position-embedding-type", "yarn");
        let rotary_base = match map.get("--rotary-base") {
            _ if !rope => None,
            None => Some(10000),
            Some(v) => v.parse::<f64>().ok().filter(|x| x.is_finite() && 0.0 < *x).map(|x| x.round() as u64),
        };
        let llama3 = has("--use-rope-scaling") || map.is("--rope-scaling-type", "llama3");
        let rope_scaling = llama3
            .then(|| map.get("--rope-scaling-factor").and_then(|v| v.parse::<f64>().ok()).unwrap_or(8.0));
        // YaRN as Megatron-LM writes it (`--rotary-scaling-factor` with MLA or the yarn position
        // type, its defaults argparse's and `MLATransformerConfig`'s) or MindSpeed-LLM
        // (`--rope-scaling-type yarn`).
        let float = |f: &str, default: f64| map.float(f).unwrap_or(default);
        let yarn = match (map.is("--rope-scaling-type", "yarn"), map.float("--rotary-scaling-factor")) {
            (true, _) => Some([
                float("--rope-scaling-factor", 1.0),
                float("--rope-scaling-original-max-position-embeddings", 4096.0),
                float("--rope-scaling-mscale", 1.0),
                float("--rope-scaling-mscale-all-dim", 0.0),
                float("--beta-fast", 32.0),
                float("--beta-slow", 1.0),
            ]),
            (false, Some(factor)) if mla.is_some() || map.is("--position-embedding-type", "yarn") => Some([
                factor,
                float("--yarn-original-max-position-embeddings", 4096.0),
                float("--mscale", 1.0),
                float("--mscale-all-dim", 0.0),
                float("--yarn-beta-fast", 32.0),
                float("--yarn-beta-slow", 1.0),
            ]),
            _ => None,
        };
        let moe = int("--num-experts").map(|n| {
            let expert_ffn = int("--moe-ffn-hidden-size").unwrap_or(ffn);
            // MindSpeed-LLM counts shared experts of the routed experts' width (`--n-shared-experts`,
            // its DeepSeek-V3 scripts); Megatron-LM gives their summed width.
            let shared = int("--moe-shared-expert-intermediate-size")
                .or_else(|| int("--n-shared-experts").map(|k| k.saturating_mul(expert_ffn)))
                .unwrap_or(0);
            [n, int("--moe-router-topk").unwrap_or(2), expert_ffn, shared]
        });
        let moe_layers = match moe {
            Some(_) => moe_pattern(&map, layers),
            None => Some(Vec::new()),
        };
        Some(Shape {
            layers,
            hidden,
            ffn,
            heads,
            groups,
            head_dim,
            qkv_bias: linear_bias || has("--add-qkv-bias"),
            linear_bias,
            // With MLA, `--qk-layernorm` is the latent norms every DeepSeek MLA model has (Megatron's
            // MLA spec builds `q_layernorm`, `kv_layernorm` with it), not a model's own choice.
            qk_norm: has("--qk-layernorm") && mla.is_none(),
            swiglu,
            gemma2: has("--gelu-tanh") && has("--post-norm"),
            tied: !has("--untie-embeddings-and-output-weights"),
            rms: map.is("--normalization", "RMSNorm"),
            rope,
            rotary_base,
            rope_scaling,
            yarn,
            moe,
            moe_layers,
            mla,
            vocab: int("--padded-vocab-size").or_else(|| int("--vocab-size")),
            window: window(&map),
            rotary: (
                map.float("--rotary-percent").or_else(|| map.float("--partial-rotary-factor")).unwrap_or(1.0),
                has("--rotary-interleaved"),
            ),
            shared_gate: (has("--moe-shared-expert-gate") || has("--shared-expert-gate")).then_some(true),
            linear: linear_attention(&map),
            longrope: longrope(&map),
        })
    }

    /// The same architecture as `other`, a file's: a vocabulary or rotary base one side leaves open
    /// matching any, and YaRN or LongRoPE the file leaves out matching any.
    fn matches(&self, other: &Shape) -> bool {
        let closed = |s: &Shape| Shape {
            vocab: None,
            rotary_base: None,
            yarn: None,
            shared_gate: None,
            longrope: None,
            ..s.clone()
        };
        // YaRN the file (`other`) gives must be the model's; a file without leaves it open. With
        // MLA the original positions and the betas are left out: Megatron-LM's command line has no
        // flag for them (`MLATransformerConfig.original_max_position_embeddings`, `beta_fast`,
        // `beta_slow`), and the catalog's shapes are read from its flags, which cannot carry Kimi
        // K2's betas of 1 and 1 or GLM-5's 202,752 original positions that MindSpeed-LLM's files
        // write.
        let compared: &[usize] = if self.mla.is_some() { &[0, 2, 3] } else { &[0, 1, 2, 3, 4, 5] };
        let yarn_open = match (self.yarn, other.yarn) {
            (_, None) => true,
            (Some(a), Some(b)) => compared.iter().all(|&i| a[i] == b[i]),
            (None, Some(_)) => false,
        };
        // LongRoPE likewise: the file's must be the model's (Phi-3-mini-128k's lists are not
        // Phi-3.5-mini's, on the same shape).
        let longrope_open = match (&self.longrope, &other.longrope) {
            (_, None) => true,
            (Some(a), Some(b)) => a == b,
            (None, Some(_)) => false,
        };
        self.moe_layers.is_some()
            && longrope_open
            && open(self.vocab, other.vocab)
            && open(self.rotary_base, other.rotary_base)
            && open(self.shared_gate, other.shared_gate)
            && yarn_open
            && closed(self) == closed(other)
    }

    /// The architecture of a plan's model, as its Megatron flags and vocabulary give it: Megatron-LM's,
    /// or for Gemma 2 MindSpeed-LLM's, the one framework whose script builds its layers.
    fn of(plan: &Plan) -> Option<Shape> {
        // Gemma 2's layers and Phi-3's LongRoPE as MindSpeed-LLM writes them, the one framework
        // whose script builds either.
        let flags = match plan.model.arch.family {
            Family::Gemma2 | Family::Phi3 => {
                let mindspeed = Plan { framework: crate::plan::Framework::MindSpeedLlm, ..plan.clone() };
                crate::emit::megatron::model_flags(&mindspeed, true)
            }
            _ => crate::emit::megatron::model_flags(plan, false),
        };
        let words = shell_words::split(&flags.join(" ")).ok()?;
        let mut shape = Shape::parse(&flag_pairs(&words))?;
        shape.vocab = Some(plan.model.arch.vocab_size);
        Some(shape)
    }
}

/// `--flag value…` words as (flag, values joined) pairs, a switch's value empty.
pub(super) fn flag_pairs(words: &[String]) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < words.len() {
        let Some(_) = words[i].strip_prefix("--") else {
            i += 1;
            continue;
        };
        let flag = words[i].clone();
        i += 1;
        let mut values = Vec::new();
        while i < words.len() && !words[i].starts_with("--") {
            values.push(words[i].as_str());
            i += 1;
        }
        out.push((flag, values.join(" ")));
    }
    out
}

/// Each catalog model's architecture, computed once.
pub(super) fn catalog_shapes() -> &'static [(&'static str, Shape)] {
    static SHAPES: OnceLock<Vec<(&'static str, Shape)>> = OnceLock::new();
    SHAPES.get_or_init(|| {
        crate::catalog::CONFIGS
            .iter()
            .filter_map(|c| {
                let plan = Plan::from_file(&PlanFile::minimal(ModelField::Id(c.id.to_owned()))).ok()?;
                Some((c.id, Shape::of(&plan)?))
            })
            .collect()
    })
}

/// Which of `layers` layers hold experts, as the flags build them: MindSpeed-LLM, given
/// `--first-k-dense-replace K` (any value Python reads as true), builds experts on layer `i` (from
/// 0) where `i >= K` and `i % --moe-layer-freq == 0` (`_transformer_block_build_layers`,
/// mindspeed_llm/core/transformer/transformer_block.py; the frequency 1 by default, and -1, as its
/// Hunyuan and Phi-3.5-MoE scripts write it, every layer); otherwise Megatron-LM's
/// `--moe-layer-freq`, a whole number N (experts on layers 0, N, 2N…) or a Python list expression
/// as long as the layers, 1 an expert layer (`moe_freq_type`, megatron/training/arguments.py),
/// every layer without it. `None` for an expression this reader does not take, or a count of layers
/// beyond any model's.
fn moe_pattern(map: &FlagMap, layers: u64) -> Option<Vec<bool>> {
    if crate::hf::MAX_LAYERS < layers {
        return None;
    }
    let freq = map.get("--moe-layer-freq");
    let first = map.get("--first-k-dense-replace").and_then(|v| v.parse::<i64>().ok()).filter(|&k| k != 0);
    if let Some(first) = first {
        let every = match freq {
            None => 1,
            Some(v) => v.parse::<i64>().ok().filter(|&f| f != 0)?.unsigned_abs(),
        };
        return Some((0..layers).map(|i| first <= i as i64 && i.is_multiple_of(every)).collect());
    }
    let Some(freq) = freq else { return Some(vec![true; layers as usize]) };
    if let Ok(every) = freq.parse::<u64>() {
        return (0 < every).then(|| (0..layers).map(|i| i.is_multiple_of(every)).collect());
    }
    let pattern = list_expression(freq, layers)?;
    (pattern.len() as u64 == layers).then_some(pattern)
}

/// The layers of a Python list expression of 0s and 1s joined by `+`, each list repeated by an
/// optional `*n` (`([0]*3+[1]*58)`, `[0,1]*24`), quotes and brackets around it as a shell leaves
/// them; `None` for any other expression, or one longer than `most`.
fn list_expression(text: &str, most: u64) -> Option<Vec<bool>> {
    let inner = text.trim().trim_matches(['"', '\'']).trim();
    let inner = inner.strip_prefix('(').and_then(|t| t.strip_suffix(')')).unwrap_or(inner);
    let mut out = Vec::new();
    for term in inner.split('+') {
        let (list, times) = match term.split_once('*') {
            Some((list, times)) => (list.trim(), times.trim().parse::<u64>().ok()?),
            None => (term.trim(), 1),
        };
        let items = list.strip_prefix('[')?.strip_suffix(']')?;
        let items: Vec<bool> = items
            .split(',')
            .map(|v| match v.trim() {
                "0" => Some(false),
                "1" => Some(true),
                _ => None,
            })
            .collect::<Option<_>>()?;
        if most < (out.len() as u64).saturating_add((items.len() as u64).saturating_mul(times)) {
            return None;
        }
        for _ in 0..times {
            out.extend_from_slice(&items);
        }
    }
    Some(out)
}

/// The dense layers before the first expert layer where every layer after holds experts
/// (DeepSeek's `first_k_dense_replace`, GLM-4.5's); `None` for any other pattern.
fn dense_first(pattern: &[bool]) -> Option<u64> {
    let first = pattern.iter().position(|&expert| expert).unwrap_or(pattern.len());
    pattern[first..].iter().all(|&expert| expert).then_some(first as u64)
}

/// Qwen-MoE's `mlp_only_layers`: the layers of `pattern` that hold no experts.
fn dense_layers(pattern: &[bool]) -> Vec<u64> {
    (0..pattern.len() as u64).filter(|&i| !pattern[i as usize]).collect()
}

/// Gated DeltaNet's layers as the flags give them ([`Shape::linear`]); `None` without them, or
/// where the attention layers are not every k-th (a layer pattern).
fn linear_attention(map: &FlagMap) -> Option<[u64; 6]> {
    let (every, conv) = match map.is("--experimental-attention-variant", "gated_delta_net") {
        true => (map.int("--linear-attention-freq")?, map.int("--linear-conv-kernel-dim")?),
        false => (map.int("--full-attention-interval")?, map.int("--mamba-d-conv")?),
    };
    Some([
        every,
        map.int("--linear-num-key-heads")?,
        map.int("--linear-num-value-heads")?,
        map.int("--linear-key-head-dim")?,
        map.int("--linear-value-head-dim")?,
        conv,
    ])
}

/// Whether two values match where either may be left open (`None`).
fn open<T: PartialEq>(a: Option<T>, b: Option<T>) -> bool {
    a.is_none() || b.is_none() || a == b
}

/// The sliding window the flags give ([`Shape::window`]): Megatron-LM's `--window-size`, a
/// (left, right) pair as its `tuple_type` reads it, causal (right 0) and bounded (left not -1);
/// MindSpeed-LLM's `--sliding-window`. A window of another kind, or a skip frequency that is not
/// a whole number (a layer pattern), reads as none, and the model then matches no windowed one.
fn window(map: &FlagMap) -> Option<[u64; 2]> {
    if let Some(size) = map.int("--sliding-window") {
        return Some([size, 0]);
    }
    // MindSpeed-LLM's Gemma 2 layers: the window on every other layer from the first.
    if let Some(size) = map.int("--interleave-sliding-window") {
        return Some([size, 2]);
    }
    let pair = map.get("--window-size")?.trim_matches(|c| c == '(' || c == ')' || c == '"' || c == '\'');
    let (left, right) = pair.split_once(',')?;
    let (left, right) = (left.trim().parse::<u64>().ok()?, right.trim());
    if right != "0" {
        return None;
    }
    let every = match map.get("--window-attn-skip-freq") {
        None => 0,
        Some(_) => map.int("--window-attn-skip-freq")?,
    };
    Some([left.checked_add(1)?, every])
}

/// A model with `shape` as an HF config the planner reads, named `name`: GPT-2 for learned
/// positions and LayerNorm; for RoPE, RMSNorm and SwiGLU, DeepSeek-V3 for MLA, GLM-4.5 for q/k norms
/// with shared experts, Qwen3(-MoE) for q/k norms, Qwen2-MoE for a shared expert, Mixtral for other
/// MoE, Qwen2 for biases on q/k/v only, Mistral for a window on every layer, Llama otherwise; the
/// expert layers as the flags place them ([`moe_pattern`]). `None` where no family has the shape (a
/// window elsewhere), or the config read back has another.
/// A vocabulary the flags do not give is `hint`'s (a named model's family and vocabulary) when the
/// families agree, else the family's default.
pub(super) fn built(
    shape: &Shape,
    flags: &[(String, String)],
    hint: Option<(Family, u64)>,
    name: &str,
) -> Option<ModelField> {
    let map = FlagMap::of(flags);
    let mut c = match (shape.swiglu, shape.rms, shape.rope) {
        (false, false, false) => gpt2_config(shape, &map)?,
        (false, true, true) if shape.gemma2 => gemma2_config(shape, &map)?,
        (true, true, true) => {
            let mut c = rope_config(shape, &map);
            rope_family(shape, &mut c)?;
            c
        }
        _ => return None,
    };
    let family = c.get("model_type").and_then(Value::as_str).and_then(Family::from_model_type);
    let vocab = shape.vocab.or(hint.filter(|(f, _)| Some(*f) == family).map(|(_, v)| v));
    if let Some(vocab) = vocab {
        c.insert("vocab_size".to_owned(), json!(vocab));
    }
    let field = ModelField::Config { hf_config: Value::Object(c), name: Some(name.to_owned()) };
    // The config read back must have the flags' architecture.
    let plan = Plan::from_file(&PlanFile::minimal(field.clone())).ok()?;
    Shape::of(&plan).filter(|back| back.matches(shape)).map(|_| field)
}

/// The positions a model is built for: the flag's, else 4096.
fn max_positions(map: &FlagMap) -> u64 {
    map.int("--max-position-embeddings").unwrap_or(4096)
}

/// GPT-2's config (learned positions, LayerNorm, biases, tied embeddings, no GQA); `None` for a
/// shape GPT-2 does not have.
fn gpt2_config(s: &Shape, map: &FlagMap) -> Option<Map<String, Value>> {
    let gpt2 = s.linear_bias && s.tied && s.moe.is_none() && s.mla.is_none() && !s.qk_norm;
    if !gpt2 || s.groups != s.heads || s.head_dim.checked_mul(s.heads) != Some(s.hidden) {
        return None;
    }
    let mut c = Map::new();
    let mut set = |k: &str, v: Value| {
        c.insert(k.to_owned(), v);
    };
    set("model_type", json!("gpt2"));
    set("n_embd", json!(s.hidden));
    set("n_layer", json!(s.layers));
    set("n_head", json!(s.heads));
    set("n_positions", json!(max_positions(map)));
    set("n_inner", json!(s.ffn));
    if let Some(eps) = map.float("--norm-epsilon") {
        set("layer_norm_epsilon", json!(eps));
    }
    Some(c)
}

/// Gemma 2's config (`Gemma2Config`) from MindSpeed-LLM's flags: the RoPE families' sizes, the
/// attention's scale and the logits' soft cap where given, and the window on every other layer
/// (`--interleave-sliding-window`); `None` for a shape Gemma 2 does not have (biases, experts,
/// untied embeddings, a window on other layers).
fn gemma2_config(s: &Shape, map: &FlagMap) -> Option<Map<String, Value>> {
    let gemma = !s.qkv_bias && !s.linear_bias && s.tied && s.moe.is_none() && s.mla.is_none() && !s.qk_norm;
    if !gemma || s.linear.is_some() || s.window.is_some_and(|[_, every]| every != 2) {
        return None;
    }
    let mut c = rope_config(s, map);
    c.insert("model_type".to_owned(), json!("gemma2"));
    // Without a window Gemma 2 attends to the whole sequence on every layer.
    c.insert("sliding_window".to_owned(), s.window.map_or(Value::Null, |[size, _]| json!(size)));
    if let Some(scalar) = map.int("--query-pre-attn-scalar") {
        c.insert("query_pre_attn_scalar".to_owned(), json!(scalar));
    }
    // No cap where the script writes none (`Gemma2Config` would default it to 30).
    let cap = map.float("--output-logit-softcapping");
    c.insert("final_logit_softcapping".to_owned(), cap.map_or(Value::Null, |cap| json!(cap)));
    Some(c)
}

/// The keys every RoPE, RMSNorm and SwiGLU family shares: the sizes, the rotary base and Llama-3
/// scaling, and the query groups and head size where the attention is not MLA.
fn rope_config(s: &Shape, map: &FlagMap) -> Map<String, Value> {
    let mut c = Map::new();
    let mut set = |k: &str, v: Value| {
        c.insert(k.to_owned(), v);
    };
    set("hidden_size", json!(s.hidden));
    set("num_hidden_layers", json!(s.layers));
    set("num_attention_heads", json!(s.heads));
    set("intermediate_size", json!(s.ffn));
    set("max_position_embeddings", json!(max_positions(map)));
    set("tie_word_embeddings", json!(s.tied));
    if let Some(theta) = s.rotary_base {
        set("rope_theta", json!(theta));
    }
    if let Some(eps) = map.float("--norm-epsilon") {
        set("rms_norm_eps", json!(eps));
    }
    if let Some([factor, original, mscale, mscale_all_dim, beta_fast, beta_slow]) = s.yarn {
        set(
            "rope_scaling",
            json!({"type": "yarn", "factor": factor, "original_max_position_embeddings": original as u64,
                "mscale": mscale, "mscale_all_dim": mscale_all_dim, "beta_fast": beta_fast, "beta_slow": beta_slow}),
        );
    }
    if let Some(factor) = s.rope_scaling {
        set(
            "rope_scaling",
            json!({"rope_type": "llama3", "factor": factor,
                "low_freq_factor": map.float("--low-freq-factor").unwrap_or(1.0),
                "high_freq_factor": map.float("--high-freq-factor").unwrap_or(4.0),
                "original_max_position_embeddings": map.int("--original-max-position-embeddings").unwrap_or(8192)}),
        );
    }
    if let Some((original, long, short)) = &s.longrope {
        let mut scaling = Map::new();
        for (key, list) in [("long_factor", long), ("short_factor", short)] {
            if let Some(list) = list {
                scaling.insert(key.to_owned(), json!(list));
            }
        }
        scaling.insert("type".to_owned(), json!("longrope"));
        set("rope_scaling", Value::Object(scaling));
        set("original_max_position_embeddings", json!(original));
    }
    if s.mla.is_none() {
        set("num_key_value_heads", json!(s.groups));
        set("head_dim", json!(s.head_dim));
    }
    c
}

/// LongRoPE's original length and factor lists, where the file names it ([`Shape::longrope`]).
fn longrope(map: &FlagMap) -> Option<Longrope> {
    if !map.is("--rope-scaling-type", "longrope") {
        return None;
    }
    let list = |flag: &str| -> Option<Vec<f64>> {
        let text = map.get(flag)?.trim_matches(|c| c == '"' || c == '\'');
        let numbers: Option<Vec<f64>> =
            text.split(',').map(|x| x.trim().parse::<f64>().ok().filter(|x| x.is_finite())).collect();
        numbers.filter(|n| !n.is_empty())
    };
    let original = map.int("--rope-scaling-original-max-position-embeddings").unwrap_or(4096);
    Some((original, list("--long-factor"), list("--short-factor")))
}

/// The family of a RoPE, RMSNorm and SwiGLU shape and its own keys, into `c`: DeepSeek-V3 for MLA
/// with MoE, an MoE family, else Qwen3, Qwen2 or Llama by their biases and q/k norms. `None` for a
/// shape no family has.
fn rope_family(s: &Shape, c: &mut Map<String, Value>) -> Option<()> {
    let mut set = |k: &str, v: Value| {
        c.insert(k.to_owned(), v);
    };
    // Biases: q/k/v only (Qwen2), everywhere (Llama's attention_bias and mlp_bias), none.
    let qkv_only = s.qkv_bias && !s.linear_bias;
    match (s.mla, s.moe) {
        (Some([q, kv, qk, rope, v]), Some([n, k, expert, shared])) => {
            if s.qk_norm || s.qkv_bias || !shared.is_multiple_of(expert.max(1)) {
                return None;
            }
            set("model_type", json!("deepseek_v3"));
            set("num_key_value_heads", json!(s.heads));
            set("q_lora_rank", if q == 0 { Value::Null } else { json!(q) });
            set("kv_lora_rank", json!(kv));
            set("qk_nope_head_dim", json!(qk));
            set("qk_rope_head_dim", json!(rope));
            set("v_head_dim", json!(v));
            set("n_routed_experts", json!(n));
            set("num_experts_per_tok", json!(k));
            set("moe_intermediate_size", json!(expert));
            set("n_shared_experts", json!(shared / expert.max(1)));
            set("first_k_dense_replace", json!(dense_first(s.moe_layers.as_deref()?)?));
            set("num_nextn_predict_layers", json!(0));
        }
        (Some(_), None) => return None,
        (None, Some(moe)) => moe_family(s, moe, c)?,
        // Qwen3.5's dense language model: Gated DeltaNet layers, q/k norms, no biases.
        (None, None) if s.linear.is_some() => {
            if !s.qk_norm || s.qkv_bias {
                return None;
            }
            set("model_type", json!("qwen3_5_text"));
            set("attention_bias", json!(false));
            set_linear_attention(&mut set, s.linear?, s.rotary.0);
        }
        (None, None) if s.qk_norm => {
            if s.qkv_bias != s.linear_bias {
                return None;
            }
            set("model_type", json!("qwen3"));
            set("attention_bias", json!(s.qkv_bias));
        }
        // GLM: biases on q/k/v alone, its rotary embedding on interleaved pairs of part of each
        // head (`emit::megatron::partial_rotary_flags`).
        (None, None) if s.rotary.1 => {
            let (percent, _) = s.rotary;
            if !qkv_only || s.qk_norm || !(0.0 < percent && percent <= 1.0) {
                return None;
            }
            set("model_type", json!("glm"));
            set("attention_bias", json!(true));
            set("partial_rotary_factor", json!(percent));
        }
        (None, None) if qkv_only => set("model_type", json!("qwen2")),
        // Mistral: Llama's shape without biases, through a window on every layer.
        (None, None) if s.window.is_some() => {
            let Some([size, 0]) = s.window.filter(|_| !s.linear_bias) else { return None };
            set("model_type", json!("mistral"));
            set("sliding_window", json!(size));
        }
        // Phi-3: Llama's shape without biases, its rotary embedding on the first share of each
        // head by halves (`Phi3Attention`; Phi-4-mini's 0.75, `partial_rotary_flags`), or LongRoPE
        // (Phi-3.5-mini, Phi-4-mini; `longrope_flags`).
        (None, None) if s.rotary.0 < 1.0 || s.longrope.is_some() => {
            if s.linear_bias || s.rotary.0 <= 0.0 {
                return None;
            }
            set("model_type", json!("phi3"));
            set("partial_rotary_factor", json!(s.rotary.0));
        }
        (None, None) => {
            set("model_type", json!("llama"));
            set("attention_bias", json!(s.linear_bias));
            set("mlp_bias", json!(s.linear_bias));
        }
    }
    Some(())
}

/// Gated DeltaNet's keys ([`Shape::linear`]) and the rotary embedding's share of each head, as
/// Qwen3-Next's and Qwen3.5's configs write them.
fn set_linear_attention(set: &mut impl FnMut(&str, Value), linear: [u64; 6], rotary: f64) {
    let [every, key_heads, value_heads, key_dim, value_dim, conv] = linear;
    set("full_attention_interval", json!(every));
    set("linear_num_key_heads", json!(key_heads));
    set("linear_num_value_heads", json!(value_heads));
    set("linear_key_head_dim", json!(key_dim));
    set("linear_value_head_dim", json!(value_dim));
    set("linear_conv_kernel_dim", json!(conv));
    set("partial_rotary_factor", json!(rotary));
}

/// An MoE family without MLA and its keys, into `c`: GLM-4.5's for q/k norms with shared experts
/// (Ling 2.0's and Hunyuan's shapes as MindSpeed-LLM writes them), Qwen3-MoE for q/k norms alone,
/// Qwen2-MoE for a shared expert, Mixtral for experts as wide as the dense FFN. `None` for a shape
/// none has.
fn moe_family(s: &Shape, [n, k, expert, shared]: [u64; 4], c: &mut Map<String, Value>) -> Option<()> {
    let pattern = s.moe_layers.as_deref()?;
    let mut set = |k: &str, v: Value| {
        c.insert(k.to_owned(), v);
    };
    // GLM-4.5 (`Glm4MoeConfig`): biases on q/k/v alone or none, q/k norms where `use_qk_norm`,
    // rotary positions on a share of each head's dimensions by halves (not interleaved),
    // `n_shared_experts` of the routed experts' width, dense layers first, each dense layer's
    // width `intermediate_size`.
    let glm4_moe = s.qk_norm && 0 < shared && s.linear.is_none() && !s.linear_bias && !s.rotary.1;
    if glm4_moe {
        let (percent, _) = s.rotary;
        if !(shared.is_multiple_of(expert.max(1)) && 0.0 < percent && percent <= 1.0) {
            return None;
        }
        set("model_type", json!("glm4_moe"));
        set("attention_bias", json!(s.qkv_bias));
        set("use_qk_norm", json!(true));
        set("partial_rotary_factor", json!(percent));
        set("n_routed_experts", json!(n));
        set("n_shared_experts", json!(shared / expert.max(1)));
        set("num_experts_per_tok", json!(k));
        set("moe_intermediate_size", json!(expert));
        set("first_k_dense_replace", json!(dense_first(pattern)?));
        set("num_nextn_predict_layers", json!(0));
        return Some(());
    }
    match (s.qk_norm, 0 < shared) {
        // Qwen3-Next: Gated DeltaNet layers, q/k norms, a gated shared expert, no biases.
        (true, true) if s.linear.is_some() && !s.qkv_bias => {
            set("model_type", json!("qwen3_next"));
            set("attention_bias", json!(false));
            set("num_experts", json!(n));
            set("shared_expert_intermediate_size", json!(shared));
            set_linear_attention(&mut set, s.linear?, s.rotary.0);
        }
        _ if s.linear.is_some() => return None,
        (true, false) if !s.qkv_bias => {
            set("model_type", json!("qwen3_moe"));
            set("attention_bias", json!(false));
            set("num_experts", json!(n));
        }
        (false, true) if !s.linear_bias => {
            set("model_type", json!("qwen2_moe"));
            set("qkv_bias", json!(s.qkv_bias));
            set("shared_expert_intermediate_size", json!(shared));
            set("num_experts", json!(n));
        }
        (false, false) if !s.qkv_bias && expert == s.ffn && pattern.iter().all(|&e| e) => {
            set("model_type", json!("mixtral"));
            set("num_local_experts", json!(n));
            // `MixtralConfig.sliding_window`, every layer alike (none by default).
            if let Some([size, every]) = s.window {
                if every != 0 {
                    return None;
                }
                set("sliding_window", json!(size));
            }
        }
        _ => return None,
    }
    set("num_experts_per_tok", json!(k));
    set("moe_intermediate_size", json!(expert));
    set("decoder_sparse_step", json!(1));
    set("mlp_only_layers", json!(dense_layers(pattern)));
    Some(())
}

// ---------------------------------------------------------------------------------------------
// The readers.

#[cfg(test)]
mod tests {
    use super::*;

    fn pattern(flags: &[(&str, &str)], layers: u64) -> Option<Vec<bool>> {
        let flags: Vec<(String, String)> =
            flags.iter().map(|(f, v)| ((*f).to_owned(), (*v).to_owned())).collect();
        moe_pattern(&FlagMap::of(&flags), layers)
    }

    /// The expert layers as each framework builds them from its flags, worked out by hand from
    /// MindSpeed-LLM's `_transformer_block_build_layers` (layer `i` from 0 holds experts where
    /// `i >= first_k_dense_replace and i % moe_layer_freq == 0`, Python's `%`, both given and
    /// non-zero) and Megatron-LM's `moe_freq_type` (N: layers 0, N, 2N…; a list: 1 an expert layer).
    #[test]
    fn expert_layers_are_placed_as_each_framework_builds_them() {
        let (t, f) = (true, false);
        // MindSpeed-LLM: one dense layer first, then every layer (Ling 2.0's script).
        assert_eq!(
            pattern(&[("--first-k-dense-replace", "1"), ("--moe-layer-freq", "1")], 4),
            Some(vec![f, t, t, t])
        );
        // Hunyuan's `-1`: `i % -1 == 0` for every i, so every layer past the dense one.
        assert_eq!(
            pattern(&[("--first-k-dense-replace", "1"), ("--moe-layer-freq", "-1")], 3),
            Some(vec![f, t, t])
        );
        // Phi-3.5-MoE's `--first-k-dense-replace -1`: every i >= -1.
        assert_eq!(
            pattern(&[("--first-k-dense-replace", "-1"), ("--moe-layer-freq", "-1")], 2),
            Some(vec![t, t])
        );
        // Dense first, then every other layer.
        assert_eq!(
            pattern(&[("--first-k-dense-replace", "2"), ("--moe-layer-freq", "2")], 6),
            Some(vec![f, f, t, f, t, f])
        );
        // Megatron-LM: a whole number, a list expression, none.
        assert_eq!(pattern(&[("--moe-layer-freq", "2")], 4), Some(vec![t, f, t, f]));
        assert_eq!(pattern(&[("--moe-layer-freq", "\"([0]*1+[1]*3)\"")], 4), Some(vec![f, t, t, t]));
        assert_eq!(pattern(&[("--moe-layer-freq", "[0,1]*2")], 4), Some(vec![f, t, f, t]));
        assert_eq!(pattern(&[], 2), Some(vec![t, t]));
        // A list of the wrong length, or an expression this reader does not take.
        assert_eq!(pattern(&[("--moe-layer-freq", "([0]*1+[1]*2)")], 4), None);
        assert_eq!(pattern(&[("--moe-layer-freq", "[1 if i > 2 else 0 for i in range(4)]")], 4), None);
        assert_eq!(pattern(&[("--moe-layer-freq", "[1]*99999999999")], 4), None);
        assert_eq!(dense_first(&[f, f, t, t]), Some(2));
        assert_eq!(dense_first(&[f, t, f, t]), None);
        assert_eq!(dense_layers(&[f, t, f, t]), [0, 2]);
    }
}
