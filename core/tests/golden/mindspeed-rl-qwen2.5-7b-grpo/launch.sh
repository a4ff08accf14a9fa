#!/bin/bash
# Written by trainplan for MindSpeed-RL master (05a90d7) + Megatron-LM core_v0.12.1 (a845aa7).
# Qwen2.5-7B GRPO with MindSpeed-RL on 2 × 8 Huawei Ascend 910B2 64GB (16 devices): TP 4, PP 1,
# VPP 1, CP 1, EP 1, DP 4, distributed optimizer; micro-batch 2, global batch 32, prompts 2048 +
# responses 2048 tokens; bf16. Planned peak 39.8 GiB per device, step 64.41 s.
# Reopen the plan: #v1=XY_hboMwDITfxb9halmrbbxMFIgHaEmcOo6Yhnj3OaNTpf68-3z2eYPByjhDv8HkabDe3PVr10BYRqZ_o9sbGH3JglynIznMh_vJNuBK_AW9RqLLCdG17KGB2bJbLaMSm0eMrv04n4ZOSUCZyak_caKqdZ9XeVsxdi_X9m1QM1m23ld_A7dk4WUogs5QkiUsP7WJcMEGMt4KxhHNI3EASdBftCP_7Qj228QSjI5r9-u5_qhWYgpJjMc4Sf30dHk_AGNOFDM-oWiyDcljNgn5noZeAZP3VMTUq92-_wI
# Copy the two YAML files to configs/ and configs/model/ in MindSpeed-RL, then run this on every node with NODE_RANK and CURRENT_IP set; MASTER_ADDR is the head node (not localhost).
set -euo pipefail

export HYDRA_FULL_ERROR=1
NNODES=2
NPUS_PER_NODE=8
NODE_RANK=${NODE_RANK:-0}
MASTER_ADDR=${MASTER_ADDR:-'localhost'}
MASTER_PORT=${MASTER_PORT:-29500}

CURRENT_IP=${CURRENT_IP:?set CURRENT_IP to the address of this node}

if [ "$NODE_RANK" = 0 ]; then
  ray start --head --port 6766 --dashboard-host="$MASTER_ADDR" --node-ip-address="$CURRENT_IP" \
    --dashboard-port=8260 --resources="{\"NPU\": $NPUS_PER_NODE}"
  # Train once `ray status` counts every node's NPUs.
  until ray status 2>/dev/null | grep -q "/$((NNODES * NPUS_PER_NODE)).0 NPU"; do sleep 5; done
  python cli/train_grpo.py --config-name grpo_qwen25_7b_16npu
else
  ray start --address="$MASTER_ADDR:6766" --resources="{\"NPU\": $NPUS_PER_NODE}" --node-ip-address="$CURRENT_IP"
fi
