#!/bin/bash
# Written by trainplan for MindSpeed-RL master (05a90d7) + Megatron-LM core_v0.12.1 (a845aa7).
# Qwen3-30B-A3B GRPO with MindSpeed-RL on 2 × 16 Huawei Ascend 910C (per die) 64GB (32 devices):
# TP 4, PP 2, VPP 1, CP 1, EP 4, DP 4, distributed optimizer; micro-batch 1, global batch 64,
# prompts 1024 + responses 4096 tokens; bf16. Planned peak 40.2 GiB per device, step 216.26 s.
# Reopen the plan: #v1=TVBJbsMwDPwLz94dBI1vzQ_6AoGx2NiotlAyXDTI30vZ6XKSyFmlO4xmiYkYhjs4rynC0D0KeGe0tHr-gAHs7HQMRLpkAwVMyHpFJkEwjuR0eWqbUQCDixunbKQxYaQkjKp-3mtNFOKIhnhbCd9iDlaotaRDe-qq9vhSNVXbZFC6GBUwiSHU2xTrt5VcX_bNuXztzyA1LaXJa2FcOfgflYy3J_FSYn-RfUBGYzIk5eaYeL4sibTyIc12_srPT7xQARRgOAhfjq6ASLeF3EjqT7_TUqZJPm-OFj9VYG9DUobcNVdum-5QbABTDN5F-oUOzelYgFMRbTAUVZA_2NUiE4S9MX5JKlf5P--Zj28
# Copy the two YAML files to configs/ and configs/model/ in MindSpeed-RL, then run this on every node with NODE_RANK and CURRENT_IP set; MASTER_ADDR is the head node (not localhost).
set -euo pipefail

export HYDRA_FULL_ERROR=1
NNODES=2
NPUS_PER_NODE=16
NODE_RANK=${NODE_RANK:-0}
MASTER_ADDR=${MASTER_ADDR:-'192.168.0.10'}
MASTER_PORT=${MASTER_PORT:-29500}

CURRENT_IP=${CURRENT_IP:?set CURRENT_IP to the address of this node}

if [ "$NODE_RANK" = 0 ]; then
  ray start --head --port 6766 --dashboard-host="$MASTER_ADDR" --node-ip-address="$CURRENT_IP" \
    --dashboard-port=8260 --resources="{\"NPU\": $NPUS_PER_NODE}"
  # Train once `ray status` counts every node's NPUs.
  until ray status 2>/dev/null | grep -q "/$((NNODES * NPUS_PER_NODE)).0 NPU"; do sleep 5; done
  python cli/train_grpo.py --config-name grpo_qwen3_30b_a3b_32npu
else
  ray start --address="$MASTER_ADDR:6766" --resources="{\"NPU\": $NPUS_PER_NODE}" --node-ip-address="$CURRENT_IP"
fi
