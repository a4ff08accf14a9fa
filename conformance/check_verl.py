"""Checks VeRL launch scripts with VeRL's own Hydra config and validation.

    python conformance/check_verl.py CORPUS_DIR                every launch script of the VeRL plans (both engines)
    python conformance/check_verl.py run_qwen2_5-7b_grpo.sh    one script (or several; folders and files mix)

The script runs `python3 -m verl.trainer.main_ppo key=value ...`. The checker takes the words after
`verl.trainer.main_ppo` as bash would pass them (continuation lines joined, variables the script sets
substituted, then `shlex` quoting; `"$@"` dropped) and runs what `main_ppo.main` runs before it starts Ray,
with the installed verl (0.9.1, Hydra 1.3: conformance/requirements-verl.txt):
- Hydra's compose of `ppo_trainer` (or the `--config-name` given) from verl's own config folder
  (`verl/trainer/config`, as `@hydra.main(config_path="config")`) with the overrides: the config is a struct,
  so a key it lacks fails ("Could not override ..."), as do values of the wrong type.
- `validate_config(config, need_reference_policy(config), need_critic(config))`
  (`verl/utils/config.py`): the batch arithmetic against n_gpus = n_gpus_per_node × nnodes, the micro-batch
  settings, the actor's and critic's dataclasses (`ActorConfig`/`CriticConfig.__post_init__` and `validate`),
  the LoRA rank against vLLM's.
- `OmegaConf.resolve` of the config, as the task runner does first, and the dataclasses the workers build from
  the model, the rollout and its checkpoint engine (`omega_conf_to_dataclass`: `HFModelConfig`,
  `RolloutConfig.__post_init__`, ...).
- Warnings verl emits meanwhile (Python warnings, its loggers, and the lines `validate_config` prints as
  "WARNING: ...") count as failures.
The plan's device count (report.json beside the script) must equal n_gpus.

Stubbed, for want of a GPU or the hub:
- vLLM (CUDA only). `validate_config` checks a LoRA rank with verl's `get_vllm_max_lora_rank`, whose module
  imports vLLM; the checker compiles that one function from verl's file and serves it alone, so it uses
  verl's own list of the ranks vLLM takes.
- The model path. `HFModelConfig` opens a folder written here instead: config.json of the plan's
  architecture (from report.json), a two-token tokenizer, no weights.
- `main_ppo.main` also calls `auto_set_device`, which only renames trainer.device to the accelerator of the
  machine it runs on; it is left out, as this machine has none.
Not exercised: Ray, the workers' engines, the rollout servers, the data files.
"""

import argparse
import ast
import contextlib
import io
import os
import re
import shlex
import sys
import tempfile
import types
from pathlib import Path
from typing import Literal, get_args

os.environ.update(HF_HUB_OFFLINE="1", TOKENIZERS_PARALLELISM="false")

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import CollectWarnings, Tally, describe, expand, plan_report, shell_assignments, targets  # noqa: E402

import verl  # noqa: E402
import verl.workers.config.model  # noqa: E402
from hydra import compose, initialize_config_dir  # noqa: E402
from tokenizers import Tokenizer, models, pre_tokenizers  # noqa: E402
from transformers import AutoConfig, PreTrainedTokenizerFast  # noqa: E402
from transformers.models.auto.modeling_auto import MODEL_FOR_CAUSAL_LM_MAPPING_NAMES  # noqa: E402
from omegaconf import OmegaConf  # noqa: E402
from verl.trainer.ppo.utils import need_critic, need_reference_policy  # noqa: E402
from verl.utils.config import omega_conf_to_dataclass, validate_config  # noqa: E402

CONFIG_DIR = Path(verl.__file__).resolve().parent / "trainer" / "config"
ENTRY = "verl.trainer.main_ppo"
WARNING_LOGGERS = ["verl", "hydra"]
# What this machine causes, not the file: verl finds no GPU or NPU here. And what no file can avoid:
# verl 0.9.1's `McoreEngineConfig.__post_init__` (verl/workers/config/engine.py) warns for every Megatron
# engine at TP 1, whatever its `sequence_parallel` says.
IGNORED_WARNINGS = [
    r"platform_manager warning: No supported accelerator detected",
    r"platform_manager warning: Platform '[a-z]+' \(\w+\) is registered but not available",
    r"^UserWarning: set sequence parallel to false as TP size is 1$",
]


def lift_vllm_lora_rank_check() -> None:
    """Makes verl's `get_vllm_max_lora_rank` importable without vLLM. `validate_config` imports it from
    `verl/workers/rollout/vllm_rollout/utils.py`, whose package needs vLLM (CUDA only, not installed here):
    the function is compiled from that file as it stands and served as that module. Inside it,
    `from vllm.config.lora import MaxLoRARanks` fails, and verl's own fallback list of ranks applies."""
    name = "verl.workers.rollout.vllm_rollout.utils"
    path = Path(verl.__file__).resolve().parent / "workers" / "rollout" / "vllm_rollout" / "utils.py"
    tree = ast.parse(path.read_text())
    function = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "get_vllm_max_lora_rank"]
    namespace = {"Literal": Literal, "get_args": get_args}
    exec(compile(ast.Module(body=function, type_ignores=[]), str(path), "exec"), namespace)
    module = types.ModuleType(name)
    module.get_vllm_max_lora_rank = namespace["get_vllm_max_lora_rank"]
    sys.modules[name] = module


lift_vllm_lora_rank_check()


def stand_in_model(folder: Path, model: dict | None) -> Path:
    """A model folder with the plan's architecture (config.json) and a two-token tokenizer, no weights:
    what `HFModelConfig` opens at the model path, which is on the hub or the cluster."""
    model = model or {"model_type": "qwen2", "hidden_size": 1024, "n_layers": 2, "n_heads": 8, "vocab_size": 1000}
    folder.mkdir(parents=True, exist_ok=True)
    config = AutoConfig.for_model(
        model["model_type"],
        hidden_size=model["hidden_size"],
        num_hidden_layers=model["n_layers"],
        num_attention_heads=model["n_heads"],
        vocab_size=model["vocab_size"],
    )
    config.architectures = [MODEL_FOR_CAUSAL_LM_MAPPING_NAMES[model["model_type"]]]
    config.save_pretrained(folder)
    tok = Tokenizer(models.WordLevel({"<unk>": 0, "<|endoftext|>": 1}, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    # A pad token as Qwen's own tokenizers name it (`"pad_token": "<|endoftext|>"` in their
    # tokenizer_config.json): without one verl warns that it set one, about the stand-in, not the file
    # (transformers maps only some model types to a tokenizer class that has a default).
    PreTrainedTokenizerFast(
        tokenizer_object=tok, unk_token="<unk>", eos_token="<|endoftext|>", pad_token="<|endoftext|>"
    ).save_pretrained(folder)
    return folder


def open_model_at(folder: Path) -> None:
    """Every model path `HFModelConfig` copies to local disk resolves to `folder`."""
    verl.workers.config.model.copy_to_local = lambda path, **kwargs: str(folder)


class ScriptError(Exception):
    """Occurs when the script has no `verl.trainer.main_ppo` command the checker can read."""


def overrides(script: Path) -> tuple[str, list[str]]:
    """The config name and the Hydra overrides the script passes to `verl.trainer.main_ppo`."""
    text = script.read_text()
    variables = {**os.environ, **shell_assignments(text)}
    logical = re.sub(r"\\\n", " ", text).splitlines()
    commands = [line for line in logical if ENTRY in line and not line.lstrip().startswith("#")]
    if len(commands) != 1:
        raise ScriptError(f"expected one `{ENTRY}` command, found {len(commands)}")
    words = shlex.split(expand(commands[0], variables), comments=True)
    words = words[words.index(ENTRY) + 1 :]
    config_name = "ppo_trainer"
    res = []
    it = iter(words)
    for word in it:
        if word == "$@":
            continue
        if word.startswith("--config-name"):
            config_name = word.split("=", 1)[1] if "=" in word else next(it)
        elif word.startswith(("--config-path", "-cp", "-cn")):
            raise ScriptError(f"the checker reads verl's own config folder only, not `{word}`")
        elif word.startswith("-"):
            raise ScriptError(f"unexpected option `{word}`")
        else:
            res.append(word)
    return config_name, res


def check_script(script: Path, report: dict | None, scratch: Path) -> list[str]:
    """Problems verl finds in the config the script launches; empty when it accepts it."""
    problems: list[str] = []
    n_devices = report["n_devices"] if report else None
    open_model_at(stand_in_model(scratch / script.parent.name, report["model"] if report else None))
    try:
        config_name, args = overrides(script)
    except ScriptError as err:
        return [str(err)]
    printed = io.StringIO()
    with CollectWarnings(WARNING_LOGGERS, IGNORED_WARNINGS) as collected, contextlib.redirect_stdout(printed):
        try:
            with initialize_config_dir(config_dir=str(CONFIG_DIR), version_base=None):
                config = compose(config_name=config_name, overrides=args)
            n_gpus = config.trainer.n_gpus_per_node * config.trainer.nnodes
            if n_devices is not None and n_gpus != n_devices:
                problems.append(f"n_gpus_per_node × nnodes = {n_gpus} but the plan has {n_devices} devices")
            validate_config(
                config=config, use_reference_policy=need_reference_policy(config), use_critic=need_critic(config)
            )
            resolved = OmegaConf.create(OmegaConf.to_container(config, resolve=True))
            omega_conf_to_dataclass(resolved.actor_rollout_ref.model)
            omega_conf_to_dataclass(resolved.actor_rollout_ref.rollout)
            omega_conf_to_dataclass(resolved.actor_rollout_ref.rollout.checkpoint_engine)
        except Exception as err:  # verl's (or Hydra's) own error is the verdict
            problems.append(describe(err))
    problems += collected.messages
    problems += [line for line in printed.getvalue().splitlines() if line.startswith("WARNING")]
    return problems


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "paths", nargs="+", help="corpus folders (with a manifest.json) or files: one launch script each"
    )
    args = parser.parse_args()
    tally = Tally("verl")
    with tempfile.TemporaryDirectory() as scratch:
        for target in targets(args.paths, ("verl", "verl-megatron"), lambda files: [f for f in files if f.endswith(".sh")]):
            tally.record(target, check_script(target.path, plan_report(target.path.parent), Path(scratch)))
    return tally.finish()


if __name__ == "__main__":
    sys.exit(main())
