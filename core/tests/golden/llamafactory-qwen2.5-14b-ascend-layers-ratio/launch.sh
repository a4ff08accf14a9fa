#!/bin/bash
# Written by trainplan for LLaMA-Factory 0.9.5 + DeepSpeed 0.19.8.
# Qwen2.5-14B full SFT with LLaMA-Factory on 1 × 8 Huawei Ascend 910B2 64GB (8 devices): DP 8,
# ZeRO 3; micro-batch 1, global batch 32, sequence 4096; bf16. Planned peak 58.4 GiB per device,
# step 10.09 s.
# Reopen the plan: #v1=LcxbDoMgEIXhvcyzGi_1oW6GDDBKk1HsgDEtYe-FpI_nO8mfQGM0DpYEG3uNrP57GnMDDsXeKAQLYDB02PY59HqEBnaKztviYY3tejFX85a40PumY-zmdnjooicKMtcjwZfEqxBxK8Wp9IWM388rUj0ZPyRBCcaXh6Xv5px_
# Run on every node with NODE_RANK set (0 … NNODES − 1); MASTER_ADDR is node 0.
set -euo pipefail

export FORCE_TORCHRUN=1
export NNODES=1
export NPROC_PER_NODE=8
export NODE_RANK=${NODE_RANK:-0}
export MASTER_ADDR=${MASTER_ADDR:-'127.0.0.1'}
export MASTER_PORT=${MASTER_PORT:-29500}

llamafactory-cli train train.yaml
