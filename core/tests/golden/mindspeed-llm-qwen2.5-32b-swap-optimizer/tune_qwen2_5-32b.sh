#!/bin/bash
# Written by trainplan for MindSpeed-LLM master (c77308a) + MindSpeed master (028de58) +
# Megatron-LM core_v0.12.1 (a845aa7).
# Qwen2.5-32B full SFT with MindSpeed-LLM on 2 × 8 Huawei Ascend 910B2 64GB (16 devices): TP 8,
# PP 2, VPP 1, CP 1, EP 1, DP 1, distributed optimizer; micro-batch 1, global batch 64, sequence
# 8192; bf16. Planned peak 27.5 GiB per device, step 53.13 s.
# Reopen the plan: #v1=bZBbTsQwDEX34u8WMQWkTjdTuYmrRuM8JnGooOrecYR4SPBn3eNrX_uABcVsMB1Q6D4zBZjGy3U4OzBci1BuKERLBaamrhk97THfYALvgi2JyPbMHjrYMNsdMynCYijY_np5XAYlnmSLVvWySr9W5qbpUFbpvlMYHl76p2FRNWFG5gYOsK5IdksVsnNM4rx7b3kkV9LGpIG6lrpSMDT_GD952TH9dYm6Rj0jk4k-6eS2B424VxQXw7zWYFrx1f8PmhnfKOs7xl93LRzNTeOH6r_583l-AA
# Run on every node with NODE_RANK set (0 … NNODES − 1); MASTER_ADDR is node 0.
set -euo pipefail

set +u
source "${CANN_SET_ENV:-/usr/local/Ascend/ascend-toolkit/set_env.sh}"
set -u
export CUDA_DEVICE_MAX_CONNECTIONS=1
export HCCL_CONNECT_TIMEOUT=1800
export PYTORCH_NPU_ALLOC_CONF=expandable_segments:True

NNODES=2
NPUS_PER_NODE=8
NODE_RANK=${NODE_RANK:-0}
MASTER_ADDR=${MASTER_ADDR:-'localhost'}
MASTER_PORT=${MASTER_PORT:-29500}

TOKENIZER_PATH='./model_from_hf/Qwen2.5-32B'   # the HF model directory (config, tokenizer)
CKPT_LOAD_DIR='./model_weights/qwen2.5-32b-mcore-tp8-pp2'   # convert_ckpt_v2.py of $TOKENIZER_PATH at this TP/PP
CKPT_SAVE_DIR='./ckpt/qwen2.5-32b'
DATA_PATH='./dataset/enwiki_text_document'   # prefix from preprocess_data.py

DISTRIBUTED_ARGS=(
  --nproc_per_node "$NPUS_PER_NODE" --nnodes "$NNODES" --node_rank "$NODE_RANK"
  --master_addr "$MASTER_ADDR" --master_port "$MASTER_PORT"
)
GPT_ARGS=(
  --use-mcore-models
  --tensor-model-parallel-size 8
  --pipeline-model-parallel-size 2
  --context-parallel-size 1
  --sequence-parallel --use-distributed-optimizer
  --recompute-granularity full --recompute-method block --recompute-num-layers 4
  --recompute-activation-function
  --recompute-activation-function-num-layers 8
  --swap-optimizer --swap-optimizer-times 16
  --use-flash-attn
  --use-fused-rotary-pos-emb --use-fused-rmsnorm --use-fused-swiglu
  --tokenizer-type PretrainedFromHF --tokenizer-name-or-path "$TOKENIZER_PATH"
  --num-layers 64
  --hidden-size 5120
  --ffn-hidden-size 27648
  --num-attention-heads 40
  --group-query-attention --num-query-groups 8
  --kv-channels 128
  --add-qkv-bias
  --seq-length 8192 --max-position-embeddings 131072
  --position-embedding-type rope --rotary-base 1000000
  --normalization RMSNorm --norm-epsilon 1e-6
  --swiglu
  --disable-bias-linear
  --untie-embeddings-and-output-weights
  --attention-dropout 0.0 --hidden-dropout 0.0
  --make-vocab-size-divisible-by 1 --padded-vocab-size 152064
  --micro-batch-size 1 --global-batch-size 64
  --no-masked-softmax-fusion --attention-softmax-in-fp32 --no-gradient-accumulation-fusion
  --lr 1.25e-6 --min-lr 1.25e-7 --lr-decay-style cosine --lr-warmup-fraction 0.01 --train-iters 2000
  --weight-decay 1e-1 --clip-grad 1.0 --adam-beta1 0.9 --adam-beta2 0.95 --initial-loss-scale 4096
  --bf16
  --finetune --stage sft --is-instruction-dataset
)
DATA_ARGS=(
  --data-path "$DATA_PATH" --split 100,0,0
)
OUTPUT_ARGS=(
  --log-interval 1 --save-interval 2000 --eval-interval 2000 --eval-iters 0 --ckpt-format torch
)

torchrun "${DISTRIBUTED_ARGS[@]}" posttrain_gpt.py \
  "${GPT_ARGS[@]}" "${DATA_ARGS[@]}" "${OUTPUT_ARGS[@]}" \
  --distributed-backend nccl --transformer-impl local \
  --load "$CKPT_LOAD_DIR" --save "$CKPT_SAVE_DIR"
