#!/bin/bash
# Written by trainplan for LLaMA-Factory 0.9.5 + DeepSpeed 0.19.8.
# Qwen2.5-72B full SFT with LLaMA-Factory on 2 × 8 NVIDIA H100 SXM5 80GB (16 devices): DP 16,
# ZeRO 3, optimizer offload; micro-batch 1, global batch 64, sequence 4096; bf16. Planned peak
# 26.4 GiB per device, step 26.86 s.
# Reopen the plan: #v1=TZDBTsMwDIbfxed2WYsmRI_cOPIEkWkcFilNQu2AoOq740zTNuUS_7_9_ZY3mGNloRWmDVJ2xDCNewcRa5rPTXQoyCQwAcaCM1pK1tGSu-AoSZBf6GDBhrDonHJgOB7aG-5GyasCxpfTcVBNU6ItKIoHc6nYvP9QGg-n_nl87d8Sy1pn0flcpVSxLjQu4zex-bp1fhhfYzTsBXTjheScXWvz0jcDrlEqPcyoWnDFGJuxQfY-ZnQ2FwlL-Gt30GzqQL_ZsuAnwfS07_8
# Run on every node with NODE_RANK set (0 … NNODES − 1); MASTER_ADDR is node 0.
set -euo pipefail

export FORCE_TORCHRUN=1
export NNODES=2
export NPROC_PER_NODE=8
export NODE_RANK=${NODE_RANK:-0}
export MASTER_ADDR=${MASTER_ADDR:-'10.0.0.1'}
export MASTER_PORT=${MASTER_PORT:-29501}

llamafactory-cli train train.yaml
