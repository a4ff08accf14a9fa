#!/usr/bin/env python3
"""Measure the activation memory HF transformers keeps for backward.

For tiny random-weight causal LMs (llama MHA/GQA, qwen2, mixtral) this runs one
training forward pass (labels = input_ids, so the loss is inside the model) under
torch.autograd.graph.saved_tensors_hooks and records every tensor autograd saves
for backward:

* saved_bytes_dedup_*   : full untyped-storage nbytes, each storage counted once
                          (keyed by untyped_storage().data_ptr()); a storage is
                          attributed to the first decoder layer (or "outside")
                          that saved it.
* saved_bytes_nodedup_* : sum of t.numel() * t.element_size() over every save,
                          no dedupe.
* param_bytes_saved     : deduped storage bytes of saved tensors whose storage is
                          a parameter's storage (weights; excluded from the
                          activation totals above).
* logits_bytes          : numel * element_size of the returned logits.

The current decoder layer is tracked with forward pre/post hooks on
model.model.layers[i]; anything saved outside a layer (embedding, rotary, final
norm, lm_head, loss) is "outside layers".

Run with the venv described in README.md:
    python measure.py --out ../../core/tests/data/hf_activations.json
"""

import argparse
import json
import sys
import time
import warnings

import torch
import transformers
from transformers import AutoModelForCausalLM, LlamaConfig, MixtralConfig, Qwen2Config

VOCAB = 1000

FAMILIES = {
    # name: (family, config class, kwargs)
    "llama_mha": ("llama", LlamaConfig, dict(
        hidden_size=256, intermediate_size=688, num_hidden_layers=2,
        num_attention_heads=8, num_key_value_heads=8)),
    "llama_gqa": ("llama", LlamaConfig, dict(
        hidden_size=256, intermediate_size=688, num_hidden_layers=2,
        num_attention_heads=8, num_key_value_heads=2)),
    "qwen2": ("qwen2", Qwen2Config, dict(
        hidden_size=256, intermediate_size=688, num_hidden_layers=2,
        num_attention_heads=8, num_key_value_heads=2)),
    "mixtral": ("mixtral", MixtralConfig, dict(
        hidden_size=256, intermediate_size=512, num_hidden_layers=2,
        num_attention_heads=8, num_key_value_heads=2,
        num_local_experts=4, num_experts_per_tok=2)),
}

CONFIG_KEYS = ["hidden_size", "intermediate_size", "num_hidden_layers",
               "num_attention_heads", "num_key_value_heads", "vocab_size"]
MOE_KEYS = ["num_local_experts", "num_experts_per_tok"]

DTYPES = {"bfloat16": torch.bfloat16, "float32": torch.float32}


def make_config(variant, attn_impl):
    family, cls, kw = FAMILIES[variant]
    cfg = cls(vocab_size=VOCAB, tie_word_embeddings=False, attention_dropout=0.0,
              use_cache=False, **kw)
    if family == "mixtral":
        # No router jitter (it would be random and in-place); no aux loss.
        cfg.router_jitter_noise = 0.0
        cfg.output_router_logits = False
    cfg._attn_implementation = attn_impl
    return family, cfg


class Recorder:
    """saved_tensors_hooks pack hook that attributes saves to the current layer."""

    def __init__(self, n_layers, param_ptrs):
        self.n_layers = n_layers
        self.param_ptrs = param_ptrs
        self.current = None  # None = outside layers, else layer index
        self.seen = {}  # storage data_ptr -> owner (layer idx / None / "param")
        self.keep = []  # keep saved storages alive so addresses are not reused
        self.dedup_layer = [0] * n_layers
        self.dedup_outside = 0
        self.nodedup_layer = [0] * n_layers
        self.nodedup_outside = 0
        self.param_bytes = 0
        self.param_nodedup = 0
        self.detail = []  # (owner, shape, dtype, storage nbytes, new?) for --verbose

    def pack(self, t):
        st = t.untyped_storage()
        ptr = st.data_ptr()
        nbytes = st.nbytes()
        view_bytes = t.numel() * t.element_size()
        is_param = ptr in self.param_ptrs
        new = ptr not in self.seen and nbytes > 0
        if new:
            self.seen[ptr] = "param" if is_param else self.current
            self.keep.append(st)
        if is_param:
            self.param_nodedup += view_bytes
            if new:
                self.param_bytes += nbytes
        else:
            if self.current is None:
                self.nodedup_outside += view_bytes
                if new:
                    self.dedup_outside += nbytes
            else:
                self.nodedup_layer[self.current] += view_bytes
                if new:
                    self.dedup_layer[self.current] += nbytes
        self.detail.append(("param" if is_param else self.current, tuple(t.shape),
                            str(t.dtype).replace("torch.", ""), nbytes, new))
        return t

    @staticmethod
    def unpack(t):
        return t


def run_one(variant, dtype_name, b, s, attn_impl, gc, verbose=False):
    family, cfg = make_config(variant, attn_impl)
    torch.manual_seed(0)
    model = AutoModelForCausalLM.from_config(cfg, attn_implementation=attn_impl)
    model.to(DTYPES[dtype_name])
    if gc:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)
            model.gradient_checkpointing_enable(
                gradient_checkpointing_kwargs={"use_reentrant": False})
    model.train()
    assert model.config._attn_implementation == attn_impl, model.config._attn_implementation

    layers = model.model.layers
    param_ptrs = {p.untyped_storage().data_ptr() for p in model.parameters()}
    rec = Recorder(len(layers), param_ptrs)

    handles = []
    for i, layer in enumerate(layers):
        def pre(mod, args, i=i):
            rec.current = i

        def post(mod, args, out):
            rec.current = None

        handles.append(layer.register_forward_pre_hook(pre))
        handles.append(layer.register_forward_hook(post))

    g = torch.Generator().manual_seed(1)
    input_ids = torch.randint(0, VOCAB, (b, s), generator=g)
    t0 = time.perf_counter()
    with torch.autograd.graph.saved_tensors_hooks(rec.pack, rec.unpack):
        out = model(input_ids=input_ids, labels=input_ids, use_cache=False)
    fwd_s = time.perf_counter() - t0
    # Sanity: the graph is usable (and backward is where the saves are consumed).
    out.loss.backward()
    for h in handles:
        h.remove()

    logits = out.logits
    row = {
        "family": family,
        "variant": variant,
    }
    for k in CONFIG_KEYS:
        row[k] = getattr(cfg, k)
    if family == "mixtral":
        for k in MOE_KEYS:
            row[k] = getattr(cfg, k)
        row["experts_implementation"] = getattr(model.config, "_experts_implementation", None)
    row["head_dim"] = getattr(cfg, "head_dim", None) or cfg.hidden_size // cfg.num_attention_heads
    row.update({
        "dtype": dtype_name,
        "batch": b,
        "seq": s,
        "attn_implementation": attn_impl,
        "gradient_checkpointing": gc,
        "saved_bytes_dedup_total": sum(rec.dedup_layer) + rec.dedup_outside,
        "saved_bytes_dedup_per_layer": rec.dedup_layer,
        "saved_bytes_dedup_outside_layers": rec.dedup_outside,
        "saved_bytes_nodedup_total": sum(rec.nodedup_layer) + rec.nodedup_outside,
        "saved_bytes_nodedup_per_layer": rec.nodedup_layer,
        "saved_bytes_nodedup_outside_layers": rec.nodedup_outside,
        "param_bytes_saved": rec.param_bytes,
        "logits_bytes": logits.numel() * logits.element_size(),
        "logits_dtype": str(logits.dtype).replace("torch.", ""),
    })
    if verbose:
        print(f"--- {variant} {dtype_name} b={b} s={s} {attn_impl} gc={gc}", file=sys.stderr)
        for owner, shape, dt, nb, new in rec.detail:
            print(f"  {str(owner):>6} {'new ' if new else 'dup '} {dt:9} {nb:>10} {shape}",
                  file=sys.stderr)
    return row, fwd_s


def grid():
    runs = []
    for variant in FAMILIES:
        for b in (1, 2):
            for s in (64, 256):
                for attn in ("eager", "sdpa"):
                    for gc in (False, True):
                        runs.append((variant, "bfloat16", b, s, attn, gc))
    # One float32 llama case (MHA, b=1, s=256) across attention x checkpointing.
    for attn in ("eager", "sdpa"):
        for gc in (False, True):
            runs.append(("llama_mha", "float32", 1, 256, attn, gc))
    return runs


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default="hf_activations.json", help="output JSON path")
    ap.add_argument("--only", default=None,
                    help="run only variants whose name contains this (no JSON written "
                         "unless --out is given explicitly)")
    ap.add_argument("--verbose", action="store_true",
                    help="print every saved tensor (owner, dtype, storage bytes, shape) to stderr")
    args = ap.parse_args()

    torch.manual_seed(0)
    t_all = time.perf_counter()
    rows = []
    for variant, dt, b, s, attn, gc in grid():
        if args.only and args.only not in variant:
            continue
        t0 = time.perf_counter()
        row, fwd_s = run_one(variant, dt, b, s, attn, gc, verbose=args.verbose)
        rows.append(row)
        print(f"{variant:10} {dt:8} b={b} s={s:3} {attn:5} gc={int(gc)} "
              f"act={row['saved_bytes_dedup_total']:>10} layers={row['saved_bytes_dedup_per_layer']} "
              f"out={row['saved_bytes_dedup_outside_layers']:>9} "
              f"({time.perf_counter() - t0:.2f}s)", flush=True)

    doc = {
        "description": "Bytes of tensors saved for backward (torch.autograd.graph.saved_tensors_hooks) "
                       "during one training forward pass (labels=input_ids) of tiny random-weight HF "
                       "causal LMs on CPU. dedup: full untyped storage nbytes, each storage once, "
                       "attributed to the first decoder layer (or outside) that saved it; nodedup: "
                       "sum of numel*element_size over all saves. Parameters excluded from both and "
                       "reported as param_bytes_saved. Generated by tools/hf_activations/measure.py.",
        "torch_version": torch.__version__,
        "transformers_version": transformers.__version__,
        "python_version": sys.version.split()[0],
        "device": "cpu",
        "runs": rows,
    }
    with open(args.out, "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
    print(f"wrote {len(rows)} runs to {args.out} in {time.perf_counter() - t_all:.1f}s")


if __name__ == "__main__":
    main()
