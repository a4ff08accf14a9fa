// The peer's auto-optimizer (zhebrak/llm-cluster-simulator, `optimizeTraining` in
// src/core/simulation/optimizer.ts), called as its UI calls it, on the problems `run` also gives
// trainplan's search. `peer/` is an esbuild alias for the peer's checkout (`run` sets it).
// Prints one JSON line per problem: the median, fastest and slowest of `rounds` optimizations.

import { optimizeTraining } from 'peer/src/core/simulation/optimizer.ts';
import type { SimulationConfig } from 'peer/src/core/simulation/engine.ts';
import { createMultiNodeCluster } from 'peer/src/core/hardware/topology.ts';

interface Problem {
  name: string;
  config: SimulationConfig;
}

// Each starts from the plan an engineer would try first (TP 8, PP 4, selective recompute, FSDP);
// the optimizer then fixes, climbs and explores.
function llama3_70b(nodes: number, globalBatchSize: number, sequenceLength: number): SimulationConfig {
  return {
    clusterConfig: createMultiNodeCluster('h100-sxm', 8, nodes)!,
    modelId: 'llama3-70b',
    globalBatchSize,
    microBatchSize: 1,
    sequenceLength,
    strategyType: 'fsdp-tp-pp',
    strategyConfig: { tp: 8, pp: 4, sequenceParallel: true, pipelineSchedule: '1f1b' },
    activationCheckpointing: true,
    checkpointingGranularity: 'selective',
    flashAttention: true,
    mixedPrecision: 'bf16',
  };
}

const problems: Problem[] = [
  {
    name: 'llama-3-70b pretrain, 1,024 x H100, global batch 1,024, sequence 8,192',
    config: llama3_70b(128, 1024, 8192),
  },
  {
    name: 'llama-3-70b pretrain, 32 x H100, global batch 64, sequence 4,096',
    config: llama3_70b(4, 64, 4096),
  },
];

const rounds = Number(process.argv[2] ?? 5);
// 15 T tokens, Llama 3's pre-training budget: the optimizer scores time to train.
const targetTokens = 15e12;
for (const p of problems) {
  optimizeTraining(p.config, targetTokens, p.config.sequenceLength); // warm-up (JIT)
  const times: number[] = [];
  let result = optimizeTraining(p.config, targetTokens, p.config.sequenceLength);
  for (let i = 0; i < rounds; i++) {
    const t0 = performance.now();
    result = optimizeTraining(p.config, targetTokens, p.config.sequenceLength);
    times.push(performance.now() - t0);
  }
  times.sort((a, b) => a - b);
  const best = result.optimizedConfig;
  console.log(JSON.stringify({
    problem: p.name,
    median_ms: +times[times.length >> 1].toFixed(2),
    fastest_ms: +times[0].toFixed(2),
    slowest_ms: +times[times.length - 1].toFixed(2),
    simulations: result.totalSimulations,
    found: `${best.strategyType} ${JSON.stringify(best.strategyConfig)} micro-batch ${best.microBatchSize}`,
  }));
}
