#!/bin/bash
# Written by trainplan for Megatron-LM core_v0.19.0 (5be9626).
# Llama-3.1-70B pre-training with Megatron-LM on 4 × 8 NVIDIA H100 SXM5 80GB (32 devices): TP 8,
# PP 4, VPP 2, CP 1, EP 1, DP 1, distributed optimizer; micro-batch 1, global batch 64, sequence
# 4096; bf16. Planned peak 53.7 GiB per device, step 8.06 s.
# Reopen the plan: #v1=XY9dbgIxDITv4udQ9U9qtZeJTOJCVGcTHGcRrPbuOPCAxJs14_F8XiFwb0oC0wpzidRg-t4c_AlmOhf5hwkyHVClzOBs1GOJplUhFUx3zVJsEjNm3H29fex-3vemVxRkHtYKMTWVtO9K0ZeqKafrqFTp5KAsJIzVHwSjF4o90Ks1bmVvGMdnrFZDddDo1GkO5J99D1_N_3WwjL1Pe0kolFwNYQBZ19wZJenF0BsxBU0LwbbdAA
# Run on every node with NODE_RANK set (0 … NUM_NODES − 1); MASTER_ADDR is node 0.
set -euo pipefail

export CUDA_DEVICE_MAX_CONNECTIONS=1

NUM_NODES=4
GPUS_PER_NODE=8
NODE_RANK=${NODE_RANK:-0}
MASTER_ADDR=${MASTER_ADDR:-'localhost'}
MASTER_PORT=${MASTER_PORT:-29500}

CHECKPOINT_PATH='/ckpt/llama-3.1-70b'   # Megatron (torch_dist) checkpoint, converted from HF
TOKENIZER_MODEL='meta-llama/Llama-3.1-70B'   # HF tokenizer
DATA_PATH='/data/corpus_text_document'   # prefix of .bin/.idx from tools/preprocess_data.py

DISTRIBUTED_ARGS=(
  --nproc_per_node "$GPUS_PER_NODE" --nnodes "$NUM_NODES" --node_rank "$NODE_RANK"
  --master_addr "$MASTER_ADDR" --master_port "$MASTER_PORT"
)
MODEL_ARGS=(
  --num-layers 80
  --hidden-size 8192
  --ffn-hidden-size 28672
  --num-attention-heads 64
  --group-query-attention --num-query-groups 8
  --kv-channels 128
  --seq-length 4096 --max-position-embeddings 131072
  --position-embedding-type rope --rotary-base 500000
  --use-rope-scaling --rope-scaling-factor 8
  --normalization RMSNorm --norm-epsilon 0.00001
  --swiglu
  --disable-bias-linear
  --untie-embeddings-and-output-weights
  --attention-dropout 0.0 --hidden-dropout 0.0
)
PARALLEL_ARGS=(
  --tensor-model-parallel-size 8
  --pipeline-model-parallel-size 4
  --num-layers-per-virtual-pipeline-stage 10
  --context-parallel-size 1
  --sequence-parallel --use-distributed-optimizer --overlap-grad-reduce --overlap-param-gather
  --recompute-granularity selective
)
TRAINING_ARGS=(
  --micro-batch-size 1 --global-batch-size 64
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
