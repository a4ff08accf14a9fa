#!/bin/bash
# Written by trainplan for MindSpeed-LLM master (c77308a) + MindSpeed master (028de58) +
# Megatron-LM core_v0.12.1 (a845aa7).
# Llama-3-70B pre-training with MindSpeed-LLM on 8 × 8 Huawei Ascend 910B2 64GB (64 devices): TP
# 8, PP 4, VPP 4, CP 1, EP 1, DP 2, distributed optimizer; micro-batch 1, global batch 512,
# sequence 8192; bf16. Planned peak 43.4 GiB per device, step 140.17 s.
# Reopen the plan: #v1=XZBdbgIxDITvkuddCWirwl4m8iaGjer81HFALeLudShoJZ6SzGc7M76aGcQtZrqaE-UZyD7eH9vdYCp-W8Jkpv32sLsNxlGrgtyrU_ZYFah6ZIh4yfxlJhND8rUg-pEomsEswP4CjIqgOkx-PGw3805JRFmyV70wCkNIXdOhpBIRRBjfxs_NrGoBBqIOrsaHKhzmJuhtLhJi-O1-hBsOJp-RCYo9MXjL6JvDV9RnRXsCWda2Usz0fg_bMDm063__XJTv-2FdjtE-Rj3p-d6ua2BUXNRZ9wlOwhkk5GSPLbl-eTaou9QIOMiPRk05oWasFzUHIpjW0tvtDw
# Run on every node with NODE_RANK set (0 … NNODES − 1); MASTER_ADDR is node 0.
set -euo pipefail

set +u
source "${CANN_SET_ENV:-/usr/local/Ascend/ascend-toolkit/set_env.sh}"
set -u
export CUDA_DEVICE_MAX_CONNECTIONS=1
export HCCL_CONNECT_TIMEOUT=1800
export PYTORCH_NPU_ALLOC_CONF=expandable_segments:True

NNODES=8
NPUS_PER_NODE=8
NODE_RANK=${NODE_RANK:-0}
MASTER_ADDR=${MASTER_ADDR:-'localhost'}
MASTER_PORT=${MASTER_PORT:-29500}

TOKENIZER_PATH='./model_from_hf/Meta-Llama-3-70B'   # the HF model directory (config, tokenizer)
CKPT_LOAD_DIR='./model_weights/llama-3-70b-mcore-tp8-pp4'   # convert_ckpt_v2.py of $TOKENIZER_PATH at this TP/PP
CKPT_SAVE_DIR='./ckpt/llama-3-70b'
DATA_PATH='./dataset/enwiki_text_document'   # prefix from preprocess_data.py

DISTRIBUTED_ARGS=(
  --nproc_per_node "$NPUS_PER_NODE" --nnodes "$NNODES" --node_rank "$NODE_RANK"
  --master_addr "$MASTER_ADDR" --master_port "$MASTER_PORT"
)
GPT_ARGS=(
  --use-mcore-models
  --tensor-model-parallel-size 8
  --pipeline-model-parallel-size 4
  --num-layers-per-virtual-pipeline-stage 5
  --context-parallel-size 1
  --sequence-parallel --use-distributed-optimizer --overlap-grad-reduce --overlap-param-gather --use-ascend-coc --coc-parallel-num 2
  --recompute-activation-function
  --swap-attention
  --reuse-fp32-param
  --use-flash-attn
  --use-fused-rotary-pos-emb --use-fused-rmsnorm --use-fused-swiglu
  --tokenizer-type PretrainedFromHF --tokenizer-name-or-path "$TOKENIZER_PATH"
  --num-layers 80
  --hidden-size 8192
  --ffn-hidden-size 28672
  --num-attention-heads 64
  --group-query-attention --num-query-groups 8
  --kv-channels 128
  --seq-length 8192 --max-position-embeddings 8192
  --position-embedding-type rope --rotary-base 500000
  --normalization RMSNorm --norm-epsilon 0.00001
  --swiglu
  --disable-bias-linear
  --untie-embeddings-and-output-weights
  --attention-dropout 0.0 --hidden-dropout 0.0
  --make-vocab-size-divisible-by 1 --padded-vocab-size 128256
  --micro-batch-size 1 --global-batch-size 512
  --no-masked-softmax-fusion --attention-softmax-in-fp32 --no-gradient-accumulation-fusion
  --lr 1.25e-6 --min-lr 1.25e-7 --lr-decay-style cosine --lr-warmup-fraction 0.01 --train-iters 2000
  --weight-decay 1e-1 --clip-grad 1.0 --adam-beta1 0.9 --adam-beta2 0.95 --initial-loss-scale 4096
  --bf16
)
DATA_ARGS=(
  --data-path "$DATA_PATH" --split 100,0,0
)
OUTPUT_ARGS=(
  --log-interval 1 --save-interval 2000 --eval-interval 2000 --eval-iters 0 --ckpt-format torch
)

torchrun "${DISTRIBUTED_ARGS[@]}" pretrain_gpt.py \
  "${GPT_ARGS[@]}" "${DATA_ARGS[@]}" "${OUTPUT_ARGS[@]}" \
  --distributed-backend nccl --transformer-impl local \
  --load "$CKPT_LOAD_DIR" --save "$CKPT_SAVE_DIR"
