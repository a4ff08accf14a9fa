#!/bin/bash
# Written by trainplan for MindSpeed-LLM master (c77308a) + MindSpeed master (028de58) +
# Megatron-LM core_v0.12.1 (a845aa7).
# Qwen2.5-7B LoRA SFT with MindSpeed-LLM on 1 × 8 Huawei Ascend 910B2 64GB (8 devices): TP 2, PP
# 1, VPP 1, CP 1, EP 1, DP 4; micro-batch 1, global batch 64, sequence 4096; bf16. Planned peak
# 11.7 GiB per device, step 10.29 s.
# Reopen the plan: #v1=FYxLDsIwDETvMusE0SBA5DYuMSrC-eAiZRHl7ri70Ty9N_BSytyrfhCR3yXtjTl5kQyHjTR1UjZE-5NL8o_lvAYjUpUQB0jaZuMSHJSKNZbbdMg1sZj07VzC6ervqymNlESOf-DXEMOcfw
# Run on every node with NODE_RANK set (0 … NNODES − 1); MASTER_ADDR is node 0.
set -euo pipefail

set +u
source "${CANN_SET_ENV:-/usr/local/Ascend/ascend-toolkit/set_env.sh}"
set -u
export CUDA_DEVICE_MAX_CONNECTIONS=1
export HCCL_CONNECT_TIMEOUT=1800
export PYTORCH_NPU_ALLOC_CONF=expandable_segments:True

NNODES=1
NPUS_PER_NODE=8
NODE_RANK=${NODE_RANK:-0}
MASTER_ADDR=${MASTER_ADDR:-'localhost'}
MASTER_PORT=${MASTER_PORT:-29500}

TOKENIZER_PATH='./model_from_hf/Qwen2.5-7B'   # the HF model directory (config, tokenizer)
CKPT_LOAD_DIR='./model_weights/qwen2.5-7b-mcore-tp2-pp1'   # convert_ckpt_v2.py of $TOKENIZER_PATH at this TP/PP
CKPT_SAVE_DIR='./ckpt/qwen2.5-7b'
DATA_PATH='./dataset/enwiki_text_document'   # prefix from preprocess_data.py

DISTRIBUTED_ARGS=(
  --nproc_per_node "$NPUS_PER_NODE" --nnodes "$NNODES" --node_rank "$NODE_RANK"
  --master_addr "$MASTER_ADDR" --master_port "$MASTER_PORT"
)
GPT_ARGS=(
  --use-mcore-models
  --tensor-model-parallel-size 2
  --pipeline-model-parallel-size 1
  --context-parallel-size 1
  --recompute-granularity full --recompute-method uniform --recompute-num-layers 1
  --use-flash-attn
  --use-fused-rotary-pos-emb --use-fused-rmsnorm --use-fused-swiglu
  --tokenizer-type PretrainedFromHF --tokenizer-name-or-path "$TOKENIZER_PATH"
  --num-layers 28
  --hidden-size 3584
  --ffn-hidden-size 18944
  --num-attention-heads 28
  --group-query-attention --num-query-groups 4
  --kv-channels 128
  --add-qkv-bias
  --seq-length 4096 --max-position-embeddings 131072
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
  --lora-r 16 --lora-alpha 32
  --lora-target-modules linear_qkv linear_proj linear_fc1 linear_fc2
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
