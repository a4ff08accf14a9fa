#!/bin/bash
# Written by trainplan for DeepSpeed 0.19.8.
# Qwen2.5-7B full SFT with DeepSpeed on 1 × 8 NVIDIA A100 SXM4 80GB (8 devices): DP 8, ZeRO 3;
# micro-batch 2, global batch 128, sequence 4096; bf16. Planned peak 31.1 GiB per device, step
# 19.23 s.
# Reopen the plan: #v1=Nc5RDoIwEATQu-x3awBjJFyGLHQpxq2t2yJGwt1dEv2cN8lkNhiwjDN0G3iOA3L_y3XTGgi3UeJfmt3AJBhojXKHDhxRyonIgYEZxa0opIx1Vdn8DratvDaByhydep6KnRbmw6IjVnqu9GhOF3sdFBMKMh--QXyRMKbeC7peyC2jLhdZyMCH9FEu6FXO-_4F
# train.py is your script: it calls deepspeed.initialize(..., config="ds_config.json").
# Run on every node with NODE_RANK set (0 … NUM_NODES − 1); MASTER_ADDR is node 0.
set -euo pipefail

NUM_NODES=1
GPUS_PER_NODE=8
NODE_RANK=${NODE_RANK:-0}
MASTER_ADDR=${MASTER_ADDR:-'localhost'}
MASTER_PORT=${MASTER_PORT:-29500}

torchrun --nnodes "$NUM_NODES" --nproc_per_node "$GPUS_PER_NODE" --node_rank "$NODE_RANK" \
  --master_addr "$MASTER_ADDR" --master_port "$MASTER_PORT" \
  train.py --deepspeed --deepspeed_config ds_config.json
