#!/bin/bash
# Written by trainplan for DeepSpeed 0.19.8.
# Llama-3-8B full SFT with DeepSpeed on 2 × 8 NVIDIA GeForce RTX 4090 24GB (16 devices): DP 16,
# ZeRO 2, optimizer offload; micro-batch 1, global batch 64, sequence 2048; bf16. Planned peak
# 19.4 GiB per device, step 9.70 s.
# Reopen the plan: #v1=Fc7RCoMwDIXhd8m1Bdm8cL6MRJuqLLVdGnFMfPeld-H7IZwLJtR5heGCQp-RaYfh0Xb93cDMR1GSmvbkqVgwDYKRziRvGMAT5ZKJPDSwovgThYxFv65rX617dIuVSLomb16CunAwV7OHbMSMEd3T9ZNhRkHm6hekEDihH1PWLW6_OkPloAbsTGNRXKjuuf8
# train.py is your script: it calls deepspeed.initialize(..., config="ds_config.json").
# Run on every node with NODE_RANK set (0 … NUM_NODES − 1); MASTER_ADDR is node 0.
set -euo pipefail

NUM_NODES=2
GPUS_PER_NODE=8
NODE_RANK=${NODE_RANK:-0}
MASTER_ADDR=${MASTER_ADDR:-'localhost'}
MASTER_PORT=${MASTER_PORT:-29500}

torchrun --nnodes "$NUM_NODES" --nproc_per_node "$GPUS_PER_NODE" --node_rank "$NODE_RANK" \
  --master_addr "$MASTER_ADDR" --master_port "$MASTER_PORT" \
  train.py --deepspeed --deepspeed_config ds_config.json
