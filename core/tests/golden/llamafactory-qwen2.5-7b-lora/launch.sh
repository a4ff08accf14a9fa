#!/bin/bash
# Written by trainplan for LLaMA-Factory 0.9.5 + DeepSpeed 0.19.8.
# Qwen2.5-7B LoRA SFT with LLaMA-Factory on 1 × 8 NVIDIA H100 SXM5 80GB (8 devices): DP 8, ZeRO
# 0; micro-batch 1, global batch 64, sequence 4096; bf16. Planned peak 23.3 GiB per device, step
# 4.54 s.
# Reopen the plan: #v1=q1bKzU9JzVGyUiosT80z0jPVNU9SqgUA
# Run on every node with NODE_RANK set (0 … NNODES − 1); MASTER_ADDR is node 0.
set -euo pipefail

export FORCE_TORCHRUN=1
export NNODES=1
export NPROC_PER_NODE=8
export NODE_RANK=${NODE_RANK:-0}
export MASTER_ADDR=${MASTER_ADDR:-'127.0.0.1'}
export MASTER_PORT=${MASTER_PORT:-29500}

llamafactory-cli train train.yaml
