"""Peak device memory and step time of real training steps, to check the planner against.

Each run trains a catalog model (random weights built from the catalog's own config.json, so
nothing is downloaded) for a few steps on one CUDA device the way LLaMA-Factory does on one
device without DeepSpeed:

- the model is built in bf16 with SDPA attention and `use_cache=False`
  (LLaMA-Factory `model/loader.py`, `model/patcher.py`);
- full fine-tuning casts the trainable parameters to fp32, LoRA casts its adapters to fp32
  (`model/adapter.py`, `cast_trainable_params_to_fp32` when not `pure_bf16` and not ZeRO-3);
- LoRA: PEFT `LoraConfig` on every linear layer but the output layer (`lora_target: all`,
  `model/model_utils/misc.py` `find_all_linear_modules`), rank 8, alpha 16, dropout 0;
- gradient checkpointing as LLaMA-Factory enables it (`model/model_utils/checkpointing.py`:
  `use_reentrant=True`, inputs made to require grad);
- HF `Trainer` with `bf16=True` (autocast), its default AdamW, `max_grad_norm` 1.0, every
  sequence `seq_len` tokens long with labels (the longest a `cutoff_len` allows).

Each run is its own process, so the CUDA context and the allocator start clean. Per run it
records the caching allocator's peak (`torch.cuda.max_memory_allocated`) for every step, what
stays allocated between steps, the allocator's reserved peak, the device's used memory as the
driver reports it (context included), and each step's wall time.

    python3 measure.py --out ../../core/tests/data/gpu_peak.json [--only NAME,…] [--steps 3] [--trace] [--profile]
"""

import argparse
import json
import os
import re
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
CATALOG = os.path.join(HERE, "..", "..", "core", "src", "catalog.rs")
# "cpu" only to check this script on a machine without a GPU (the memory figures are then void).
DEVICE = os.environ.get("GPU_PEAK_DEVICE", "cuda")

# (name, catalog id, method, micro-batch, sequence, gradient checkpointing). Chosen to span the
# terms: LoRA on a frozen bf16 base, full fine-tuning's optimizer states, activations with and
# without checkpointing, logits from 2 K to 64 K tokens a micro-batch, tied and untied heads.
RUNS = [
    ("qwen2.5-7b-lora-b2-s4096", "qwen2.5-7b", "lora", 2, 4096, True),
    ("qwen2.5-7b-lora-b1-s16384", "qwen2.5-7b", "lora", 1, 16384, True),
    ("llama-3.1-8b-lora-b1-s4096-nockpt", "llama-3.1-8b", "lora", 1, 4096, False),
    ("qwen2.5-1.5b-full-b4-s2048", "qwen2.5-1.5b", "full", 4, 2048, True),
    ("qwen3-4b-full-b2-s4096", "qwen3-4b", "full", 2, 4096, True),
    ("llama-3.2-1b-full-b2-s2048-nockpt", "llama-3.2-1b", "full", 2, 2048, False),
    ("qwen2.5-0.5b-full-b8-s4096", "qwen2.5-0.5b", "full", 8, 4096, True),
    ("qwen2.5-7b-full-b1-s2048", "qwen2.5-7b", "full", 1, 2048, True),
]


def catalog_configs():
    """The catalog's config.json of every model, read from core/src/catalog.rs."""
    text = open(CATALOG, encoding="utf-8").read()
    pat = re.compile(r'id: "([^"]+)",.*?config: r#"(.*?)"#', re.S)
    return {m.group(1): json.loads(m.group(2)) for m in pat.finditer(text)}


def frame_key(frames):
    """Where an allocation was made, innermost frame first: the innermost frame outside torch
    itself (the model's, the loss's or the trainer's line) and, when torch made it, torch's
    innermost frame, tagged with what of torch's machinery was under way. An allocation with no
    Python frame was made by the autograd engine's own thread: the backward pass."""
    if not frames:
        return "(backward: autograd engine)"
    in_torch = lambda f: "/site-packages/torch/" in f["filename"]
    tags = []
    if any(f["filename"].endswith("torch/utils/checkpoint.py") for f in frames) and any(
        f["name"] in ("recompute_fn", "backward", "unpack_hook") for f in frames
    ):
        tags.append("recompute")
    if any("/torch/optim/" in f["filename"] for f in frames):
        tags.append("optimizer")
    if any(f["filename"].endswith("torch/nn/utils/clip_grad.py") for f in frames):
        tags.append("clip")
    at = lambda f: "%s:%d %s" % (os.path.basename(f["filename"]), f["line"], f["name"])
    outside = next((f for f in frames if not in_torch(f)), None)
    where = at(outside) if outside else at(frames[0])
    if outside is not None and in_torch(frames[0]):
        where += " < " + at(frames[0])
    return ("[%s] " % ",".join(tags) if tags else "") + where


def peak_breakdown(trace, before):
    """Replays one step's allocator trace: the peak, and what was allocated at that moment, grouped
    by `frame_key`. `before` is what was allocated when the recording began."""
    cur, peak, at = before, before, -1
    live = {}
    for i, e in enumerate(trace):
        if e["action"] == "alloc":
            live[e["addr"]] = e["size"]
            cur += e["size"]
            if cur > peak:
                peak, at = cur, i
        elif e["action"] == "free_completed":
            cur -= live.pop(e["addr"], e["size"])
    groups = {"(allocated before the step)": before}
    live = {}
    for e in trace[: at + 1]:
        if e["action"] == "alloc":
            live[e["addr"]] = e
        elif e["action"] == "free_completed":
            if live.pop(e["addr"], None) is None:
                groups["(allocated before the step)"] -= e["size"]
    for e in live.values():
        k = frame_key(e.get("frames", []))
        groups[k] = groups.get(k, 0) + e["size"]
    top = sorted(groups.items(), key=lambda kv: -kv[1])
    return {
        "peak": peak,
        "event": at,
        "events": len(trace),
        "peak_alloc_at": frame_key(trace[at].get("frames", [])) if at >= 0 else None,
        "groups": [[k, v] for k, v in top if v >= 1 << 20][:24],
    }


def kernel_profile(prof, seconds):
    """The GPU kernels' time in one step by kind: matrix products, attention, and the rest
    (elementwise, norms, reductions, copies, the optimizer's), with the busiest kernels named."""
    import torch

    kinds = {"gemm": 0.0, "attention": 0.0, "other": 0.0}
    top = []
    for e in prof.key_averages():
        if e.device_type != torch.autograd.DeviceType.CUDA:
            continue
        us = getattr(e, "self_device_time_total", None) or getattr(e, "self_cuda_time_total", 0.0)
        name = e.key.lower()
        if any(k in name for k in ("sdpa", "flash", "fmha", "attention", "efficient")):
            kind = "attention"
        elif any(k in name for k in ("gemm", "cutlass", "nvjet", "xmma", "cublas", "sm90_")):
            kind = "gemm"
        else:
            kind = "other"
        kinds[kind] += us / 1e6
        top.append((us / 1e6, e.count, kind, e.key[:100]))
    top.sort(reverse=True)
    return {
        "step_seconds": seconds,
        "kernel_seconds": kinds,
        "busy_seconds": sum(kinds.values()),
        "top": [list(t) for t in top[:20]],
    }


def one(run, steps, trace=False, profile=False):
    import torch
    import transformers
    from transformers import AutoConfig, AutoModelForCausalLM, Trainer, TrainerCallback, TrainingArguments

    name, model_id, method, micro, seq, ckpt = run
    cfg_dict = dict(catalog_configs()[model_id])
    model_type = cfg_dict.pop("model_type")
    cfg = AutoConfig.for_model(model_type, **cfg_dict)
    cfg.use_cache = False

    torch.cuda.init()
    torch.empty(1, device=DEVICE)
    free, total = torch.cuda.mem_get_info()
    context_bytes = total - free - torch.cuda.memory_reserved()

    torch.manual_seed(0)
    with torch.device(DEVICE):
        model = AutoModelForCausalLM.from_config(cfg, dtype=torch.bfloat16, attn_implementation="sdpa")
    n_params = sum(p.numel() for p in model.parameters())
    if method == "full":
        for p in model.parameters():
            p.data = p.data.to(torch.float32)
    else:
        from peft import LoraConfig, get_peft_model

        targets = sorted(
            {n.split(".")[-1] for n, m in model.named_modules() if isinstance(m, torch.nn.Linear) and "lm_head" not in n}
        )
        model = get_peft_model(
            model, LoraConfig(r=8, lora_alpha=16, lora_dropout=0.0, target_modules=targets, task_type="CAUSAL_LM")
        )
        for p in model.parameters():
            if p.requires_grad:
                p.data = p.data.to(torch.float32)
    n_trainable = sum(p.numel() for p in model.parameters() if p.requires_grad)
    if ckpt:
        model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": True})
        model.enable_input_require_grads()
    torch.cuda.synchronize()
    after_load = torch.cuda.memory_allocated()

    vocab = cfg.vocab_size

    class Tokens(torch.utils.data.Dataset):
        def __len__(self):
            return micro * steps

        def __getitem__(self, i):
            g = torch.Generator().manual_seed(i)
            ids = torch.randint(0, vocab, (seq,), generator=g)
            return {"input_ids": ids, "attention_mask": torch.ones_like(ids), "labels": ids.clone()}

    record = {"steps": []}

    class Probe(TrainerCallback):
        def on_step_begin(self, args, state, control, **kw):
            torch.cuda.synchronize()
            torch.cuda.reset_peak_memory_stats()
            if profile and state.global_step == 1:
                self.prof = torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA])
                self.prof.__enter__()
            if trace and state.global_step == 1:
                self.before = torch.cuda.memory_allocated()
                torch.cuda.memory._record_memory_history(max_entries=4_000_000, stacks="python")
            self.t0 = time.perf_counter()

        def on_step_end(self, args, state, control, **kw):
            torch.cuda.synchronize()
            seconds = time.perf_counter() - self.t0
            if profile and state.global_step == 2:
                self.prof.__exit__(None, None, None)
                record["kernel_profile"] = kernel_profile(self.prof, seconds)
            if trace and state.global_step == 2:
                snap = torch.cuda.memory._snapshot()
                torch.cuda.memory._record_memory_history(enabled=None)
                record["peak_breakdown"] = peak_breakdown(snap["device_traces"][0], self.before)
            free, total = torch.cuda.mem_get_info()
            record["steps"].append(
                {
                    "seconds": seconds,
                    "peak_allocated": torch.cuda.max_memory_allocated(),
                    "peak_reserved": torch.cuda.max_memory_reserved(),
                    "allocated_after": torch.cuda.memory_allocated(),
                    "device_used": total - free,
                }
            )

    args = TrainingArguments(
        output_dir="/tmp/gpu_peak_out",
        per_device_train_batch_size=micro,
        gradient_accumulation_steps=1,
        max_steps=steps,
        learning_rate=1e-5,
        bf16=True,
        logging_steps=1,
        save_strategy="no",
        report_to="none",
        remove_unused_columns=False,
        dataloader_num_workers=0,
        disable_tqdm=True,
        use_cpu=DEVICE == "cpu",
    )
    trainer = Trainer(model=model, args=args, train_dataset=Tokens(), callbacks=[Probe()])
    error = None
    try:
        trainer.train()
    except torch.OutOfMemoryError as e:
        error = "out of memory: " + str(e).splitlines()[0]
    return {
        "name": name,
        "model": model_id,
        "method": method,
        "micro_batch": micro,
        "seq_len": seq,
        "gradient_checkpointing": ckpt,
        "n_params": n_params,
        "n_trainable": n_trainable,
        "optim": str(args.optim),
        "context_bytes": context_bytes,
        "allocated_after_load": after_load,
        "peak_allocated_all_steps": torch.cuda.max_memory_allocated() if error else max(
            s["peak_allocated"] for s in record["steps"]
        ),
        "error": error,
        "steps": record["steps"],
        "peak_breakdown": record.get("peak_breakdown"),
        "kernel_profile": record.get("kernel_profile"),
        "device": torch.cuda.get_device_name(),
        "device_total_bytes": total,
        "torch": torch.__version__,
        "transformers": transformers.__version__,
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out")
    ap.add_argument("--only", help="run only the runs whose name holds one of these, comma-separated")
    ap.add_argument("--steps", type=int, default=3)
    ap.add_argument("--trace", action="store_true", help="record the second step's allocations")
    ap.add_argument("--profile", action="store_true", help="time the second step's kernels by kind")
    ap.add_argument("--one", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.one is not None:
        print("RESULT " + json.dumps(one(RUNS[int(a.one)], a.steps, a.trace, a.profile)), flush=True)
        return
    results = []
    for i, run in enumerate(RUNS):
        if a.only and not any(n in run[0] for n in a.only.split(",")):
            continue
        t = time.time()
        p = subprocess.run(
            [sys.executable, __file__, "--one", str(i), "--steps", str(a.steps)] + (["--trace"] if a.trace else [])
            + (["--profile"] if a.profile else []),
            capture_output=True,
            text=True,
            timeout=300,
        )
        lines = [l for l in p.stdout.splitlines() if l.startswith("RESULT ")]
        if lines:
            r = json.loads(lines[-1][len("RESULT ") :])
        else:
            r = {"name": run[0], "error": "exit %d: %s" % (p.returncode, p.stderr[-2000:])}
        r["wall_seconds"] = round(time.time() - t, 1)
        results.append(r)
        print(json.dumps({k: v for k, v in r.items() if k not in ("steps", "peak_breakdown", "kernel_profile")}), flush=True)
        kp = r.get("kernel_profile")
        if kp:
            print("    step %.3f s, kernels %.3f s: %s" % (kp["step_seconds"], kp["busy_seconds"], kp["kernel_seconds"]), flush=True)
            for t in kp["top"]:
                print("    %8.4f s %6d %-9s %s" % tuple(t), flush=True)
        for k, v in (r.get("peak_breakdown") or {}).get("groups", []):
            print("    %8.3f GB  %s" % (v / 1e9, k), flush=True)
        if a.out:
            with open(a.out, "w") as f:
                json.dump({"runs": results}, f, indent=1)
                f.write("\n")


if __name__ == "__main__":
    main()
