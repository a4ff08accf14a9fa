#!/bin/bash
# Written by trainplan for Megatron-LM core_v0.19.0 (5be9626).
# Mixtral-8x7B pre-training with Megatron-LM on 2 × 8 NVIDIA H100 SXM5 80GB (16 devices): TP 2,
# PP 2, VPP 1, CP 1, EP 4, DP 4, distributed optimizer; micro-batch 1, global batch 128, sequence
# 4096; bf16. Planned peak 69.0 GiB per device, step 13.95 s.
# Reopen the plan: #v1=RY1RDsIgEETvst_4YWNiw2UaKGtLpAWXJTYS7u6iJn7tzpuZTAVreF5BV1hCtCZMP30exqZgDiUzUrf36DCDHoTeyGz4jHQHDRsuhinuoOTlNTphiZDJ-A-TVugxfwgKp_G4WsHJiAjdqeB8ZvK2MLopJvabf_VFpoIKMIG-SF7OoCDjo-A-4_Tvf2Pc_dbe
# Run on every node with NODE_RANK set (0 … NUM_NODES − 1); MASTER_ADDR is node 0.
set -euo pipefail

export CUDA_DEVICE_MAX_CONNECTIONS=1

NUM_NODES=2
GPUS_PER_NODE=8
NODE_RANK=${NODE_RANK:-0}
MASTER_ADDR=${MASTER_ADDR:-'localhost'}
MASTER_PORT=${MASTER_PORT:-29500}

CHECKPOINT_PATH='/ckpt/mixtral-8x7b'   # Megatron (torch_dist) checkpoint, converted from HF
TOKENIZER_MODEL='mistralai/Mixtral-8x7B-v0.1'   # HF tokenizer
DATA_PATH='/data/corpus_text_document'   # prefix of .bin/.idx from tools/preprocess_data.py

DISTRIBUTED_ARGS=(
  --nproc_per_node "$GPUS_PER_NODE" --nnodes "$NUM_NODES" --node_rank "$NODE_RANK"
  --master_addr "$MASTER_ADDR" --master_port "$MASTER_PORT"
)
MODEL_ARGS=(
  --num-layers 32
  --hidden-size 4096
  --ffn-hidden-size 14336
  --num-attention-heads 32
  --group-query-attention --num-query-groups 8
  --kv-channels 128
  --seq-length 4096 --max-position-embeddings 32768
  --position-embedding-type rope --rotary-base 1000000
  --normalization RMSNorm --norm-epsilon 0.00001
  --swiglu
  --disable-bias-linear
  --untie-embeddings-and-output-weights
  --num-experts 8 --moe-router-topk 2
  --moe-ffn-hidden-size 14336
  --moe-grouped-gemm --moe-token-dispatcher-type alltoall
  --attention-dropout 0.0 --hidden-dropout 0.0
)
PARALLEL_ARGS=(
  --tensor-model-parallel-size 2
  --pipeline-model-parallel-size 2
  --context-parallel-size 1
  --expert-model-parallel-size 4 --expert-tensor-parallel-size 1
  --sequence-parallel --use-distributed-optimizer
  --recompute-granularity full --recompute-method uniform --recompute-num-layers 1
)
TRAINING_ARGS=(
  --micro-batch-size 1 --global-batch-size 128
  --train-iters 100000 --lr 1.5e-4 --min-lr 1.5e-5 --lr-decay-style cosine --lr-warmup-iters 2000
  --weight-decay 0.1 --adam-beta1 0.9 --adam-beta2 0.95 --clip-grad 1.0
  --bf16
  --attention-backend flash
)
DATA_ARGS=(
  --data-path "$DATA_PATH" --split 99,1,0
  --tokenizer-type HuggingFaceTokenizer --tokenizer-model "$TOKENIZER_MODEL"
)
LOGGING_ARGS=(
  --log-interval 10 --log-throughput --eval-interval 1000 --eval-iters 10
  --save-interval 1000 --save "$CHECKPOINT_PATH" --load "$CHECKPOINT_PATH" --ckpt-format torch_dist
)

torchrun "${DISTRIBUTED_ARGS[@]}" pretrain_gpt.py \
  "${MODEL_ARGS[@]}" "${PARALLEL_ARGS[@]}" "${TRAINING_ARGS[@]}" "${DATA_ARGS[@]}" "${LOGGING_ARGS[@]}"
