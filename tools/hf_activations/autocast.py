"""Saved tensors of one decoder layer under LLaMA-Factory's mixed precision, against a bf16 model.

`measure.py` measures models held in bf16 throughout. LLaMA-Factory without DeepSpeed trains fp32
parameters (full fine-tuning) or fp32 LoRA adapters on a bf16 base under autocast, and autocast
changes what a layer saves. This script builds a Llama-shaped model of real widths (three layers,
a small vocabulary), runs one forward on CPU under `torch.autocast("cpu", dtype=torch.bfloat16)`
with `measure.py`'s recorder, and prints each layer's saved bytes per token:

- `bf16`: the model in bf16, no autocast (the planner's formula; 53.07h for Llama-3.2-1B's
  widths);
- `full`: parameters cast to fp32, autocast on; the bytes include the 16-bit weight copies the
  linear layers save (a per-layer constant, so per token it shrinks with the tokens);
- `lora`: bf16 base, PEFT LoRA rank 8 on every linear layer, adapters cast to fp32, autocast on;
- `lora-dropout`: the same with `lora_dropout=0.05`, as LLaMA-Factory's examples set it;
- `lora-dora`, `lora-dora-dropout`: DoRA (`use_dora=True`) without and with that dropout, each at
  256 and 512 tokens (its norms save tensors of a fixed size a forward).

    python3 autocast.py [HIDDEN FFN] [--verbose]

With Llama-3.2-1B's widths (2048, 8192) at 256 tokens: bf16 108,680 bytes a token and layer;
full 604,296, of which 475,136 are the layer's 60.8 M linear weights in bf16 over 256 tokens,
leaving 129,160: 20,480 (10h) more than bf16. Each linear layer that reads a norm's output (q, k,
v, gate, up) casts that fp32 output to bf16 and saves its own copy, where the bf16 model's five
share one. The planner counts it (memory/loss.rs `plain_torch_peak`).

`lora-dropout` at those widths: 201,656 bytes, 81,920 (40h) more than `lora`: each adapter's
dropout keeps its noise, fp32 like its input on CPU, 4 bytes × (5h + q + f). On CUDA and NPU the
fused kernel keeps a mask instead, a byte (a bit on NPU) an element (memory/activations.rs
`lora_dropout_bytes`).

`lora-dora` at 256 tokens: each adapted module saves its base output and its adapter's output,
16-bit (1, 256, out) tensors, 46h a token and layer more than `lora`, exactly 4 bytes × the output
widths (memory/activations.rs `dora_saved_bytes`); beside them, a fixed 185.9 MB a layer, each
module's in × in identity (`x_eye`) that the recorder keeps alive, which in training lives only
through the module's forward (memory/mod.rs `dora_workspace_bytes`). `lora-dora-dropout` saves
121.6 MB a layer more, the layer's 60.8 M linear weights in bf16: with a dropout the base runs
again on the dropped input, which PEFT cast to fp32, with the base weight copied to fp32, and
autocast's bf16 copy of that weight is what the GEMM keeps (memory/activations.rs
`dora_saved_bytes`).
"""

import sys

import torch
from transformers import AutoModelForCausalLM, LlamaConfig

from measure import Recorder


def run(cfg, mode, b=1, s=256, verbose=False):
    torch.manual_seed(0)
    m = AutoModelForCausalLM.from_config(cfg, attn_implementation="sdpa", dtype=torch.bfloat16)
    if mode == "full":
        for p in m.parameters():
            p.data = p.data.float()
    if mode.startswith("lora"):
        from peft import LoraConfig, get_peft_model

        dropout = 0.05 if mode.endswith("-dropout") else 0.0
        targets = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]
        config = LoraConfig(r=8, lora_alpha=16, lora_dropout=dropout, target_modules=targets,
                            use_dora=mode.startswith("lora-dora"))
        m = get_peft_model(m, config)
        for p in m.parameters():
            if p.requires_grad:
                p.data = p.data.float()
        m.enable_input_require_grads()
    m.train()
    base = m.get_base_model() if mode.startswith("lora") else m
    layers = base.model.layers
    rec = Recorder(len(layers), {p.untyped_storage().data_ptr() for p in m.parameters()})
    for i, layer in enumerate(layers):
        layer.register_forward_pre_hook(lambda mod, a, i=i: setattr(rec, "current", i))
        layer.register_forward_hook(lambda mod, a, o: setattr(rec, "current", None))
    ids = torch.randint(0, cfg.vocab_size, (b, s), generator=torch.Generator().manual_seed(1))
    autocast = torch.autocast("cpu", dtype=torch.bfloat16, enabled=mode != "bf16")
    with torch.autograd.graph.saved_tensors_hooks(rec.pack, rec.unpack), autocast:
        m(input_ids=ids, labels=ids)
    # Layer 0 also saves the rotary tables every layer shares.
    per = [x / (b * s) for x in rec.dedup_layer]
    print("%-17s %s bytes a token and layer (layers 1..) at %d tokens: %.2fh"
          % (mode, [round(x) for x in per[1:]], b * s, per[1] / cfg.hidden_size))
    if verbose:
        for owner, shape, dt, nb, new in rec.detail:
            if owner == 1 and new:
                print("      %-8s %8.4fh %s" % (dt, nb / (b * s) / cfg.hidden_size, shape))


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    h, f = (int(args[0]), int(args[1])) if args else (2048, 8192)
    cfg = LlamaConfig(vocab_size=1000, hidden_size=h, intermediate_size=f, num_hidden_layers=3,
                      num_attention_heads=32, num_key_value_heads=8, head_dim=h // 32,
                      tie_word_embeddings=False, use_cache=False)
    for mode in ["bf16", "full", "lora", "lora-dropout"]:
        run(cfg, mode, verbose="--verbose" in sys.argv)
    # DoRA's per-forward weight-norm work saves tensors of fixed size (the identity it multiplies
    # through the adapter); two lengths separate them from what grows with the tokens.
    for mode in ["lora-dora", "lora-dora-dropout"]:
        for s in [256, 512]:
            run(cfg, mode, s=s, verbose="--verbose" in sys.argv)


if __name__ == "__main__":
    main()
