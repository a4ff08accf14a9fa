"""Checks LLaMA-Factory train.yaml files, and the DeepSpeed JSON each names, with LLaMA-Factory's own code.

    python conformance/check_llamafactory.py CORPUS_DIR   each plan's train.yaml and the DeepSpeed JSON it names
    python conformance/check_llamafactory.py [--world-size N] [--hidden-size H] train.yaml

`llamafactory-cli train train.yaml` (with FORCE_TORCHRUN=1, as launch.sh sets) starts torchrun on
`llamafactory/launcher.py`, which calls `llamafactory.train.tuner.run_exp()`. The checker calls that same
`run_exp()` in a process set up as torchrun sets up rank 0 (RANK, LOCAL_RANK, WORLD_SIZE, OMP_NUM_THREADS=1,
and the variables launch.sh exports; where launch.sh runs one device without FORCE_TORCHRUN, as the CLI's own
process, with no process group), with sys.argv = [launcher.py, train.yaml], so this runs for real
(LLaMA-Factory 0.9.5, transformers 5.6.0, accelerate, DeepSpeed 0.19.8: conformance/requirements-llamafactory.txt):
- `read_args` (OmegaConf load of the YAML), `get_ray_args`, and `get_train_args`: HfArgumentParser over
  LLaMA-Factory's dataclasses with `allow_extra_keys=False` (an unknown key raises "Some keys are not used by
  the HfArgumentParser"), each dataclass's `__post_init__`, transformers' `TrainingArguments.__post_init__`
  (which reads the DeepSpeed JSON through `HfTrainerDeepSpeedConfig.trainer_config_process`: "auto" values
  filled from the arguments, explicit ones that disagree rejected) and accelerate's DeepSpeedPlugin, and
  LLaMA-Factory's checks of the combination (distributed launch, DeepSpeed, quantization, stage rules).
- The stage's workflow (`run_sft`, `run_dpo`, ...) up to its data: `get_template_and_fix_tokenizer` (the
  template must exist in LLaMA-Factory's registry) and, of `get_dataset`, `_get_merged_dataset`: every dataset
  name looked up in `dataset_dir/dataset_info.json` and checked against the stage the workflow loads it for
  (DPO and RM need ranking datasets, the others must not have them). `dataset_dir: data` is LLaMA-Factory's
  own data folder: the one of its 0.9.5 sdist (the wheel lacks it), which scripts/conformance unpacks.
- The DeepSpeed JSON as `deepspeed.initialize` finally gets it: `trainer_config_finalize` (the hidden-size
  "auto" values, from the plan's model) and then check_deepspeed's checks (DeepSpeedConfig with the world size,
  unknown and leftover "auto" keys).
- Warnings that LLaMA-Factory, transformers, accelerate or DeepSpeed log meanwhile (e.g. a deprecated key)
  count as failures.

Stubbed, because they need the hub or a GPU: the tokenizer (a two-token tokenizer built here stands in for
`load_tokenizer`, so the template's warning that it added tokens is not collected), the dataset files (not
loaded or tokenized: `_load_single_dataset` is skipped), the model (never loaded: the workflow stops after
the data), and the GPU's bf16 support (`is_torch_bf16_gpu_available` answers yes: the plans target GPUs and
NPUs with bf16). The process group is torch's single-process "fake" group with the plan's world size.
"""

import argparse
import importlib
import os
import sys
from pathlib import Path
from types import SimpleNamespace

os.environ.update(
    DS_ACCELERATOR="cuda",
    OMP_NUM_THREADS="1",
    HF_HUB_OFFLINE="1",
    HF_DATASETS_OFFLINE="1",
    TOKENIZERS_PARALLELISM="false",
)

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import check_deepspeed  # noqa: E402
import torch.distributed as torch_dist  # noqa: E402
from common import CollectWarnings, Tally, Target, describe, plan_report, shell_assignments, targets, world_size  # noqa: E402

import transformers.training_args  # noqa: E402
from accelerate.state import AcceleratorState, PartialState  # noqa: E402
from tokenizers import Tokenizer, models, pre_tokenizers  # noqa: E402
from transformers import PreTrainedTokenizerFast  # noqa: E402
from transformers.integrations.deepspeed import unset_hf_deepspeed_config  # noqa: E402

import llamafactory  # noqa: E402
import llamafactory.hparams.parser  # noqa: E402
from llamafactory.data import loader  # noqa: E402
from llamafactory.data.parser import get_dataset_list  # noqa: E402
from llamafactory.train import tuner  # noqa: E402

# The GPU the file is for supports bf16 (this machine has none): what transformers and LLaMA-Factory ask.
transformers.training_args.is_torch_bf16_gpu_available = lambda: True
llamafactory.hparams.parser.is_torch_bf16_gpu_available = lambda: True

WORKFLOWS = ["pt", "sft", "rm", "ppo", "dpo", "kto"]
WARNING_LOGGERS = ["llamafactory", "transformers", "accelerate", "DeepSpeed"]
# Messages a correct file cannot avoid: the stand-in tokenizer lacks the template's special tokens, which the
# model's own tokenizer may have (`Template.fix_special_tokens`); `get_template_and_fix_tokenizer` prints its
# reminder about `_nothink` for every reasoning template, whatever the model; and see
# check_deepspeed.IGNORED_WARNINGS.
IGNORED_WARNINGS = [
    r"^llamafactory\.data\.template warning: New tokens have been added, make sure `resize_vocab` is True\.$",
    r"^llamafactory\.data\.template warning: You are using reasoning template, please add `_nothink` suffix",
    r"^DeepSpeed warning: Attempting to get learning rate from scheduler before it has started$",
    r"^ResourceWarning: unclosed",
]


class Reached(Exception):
    """Raised by the stand-in of `get_dataset`: the workflow got as far as the checker goes."""


def tiny_tokenizer() -> PreTrainedTokenizerFast:
    """A two-token tokenizer in place of the model's, which is on the hub."""
    tok = Tokenizer(models.WordLevel({"<unk>": 0, "<|endoftext|>": 1}, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    return PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="<unk>", eos_token="<|endoftext|>")


class Run:
    """What one `run_exp()` reached, and the stand-ins it calls."""

    def __init__(self, data_dir: Path):
        self.data_dir = data_dir
        self.training_args = None
        self.finetuning_stage = None

    def parse_train_args(self, real):
        """Wraps `_parse_train_args` to keep what HfArgumentParser made, before LLaMA-Factory's checks."""

        def parse(args):
            res = real(args)
            self.training_args = res[2]
            self.finetuning_stage = res[3].stage
            return res

        return parse

    def load_tokenizer(self, model_args):
        return {"tokenizer": tiny_tokenizer(), "processor": None}

    def get_dataset(self, template, model_args, data_args, training_args, stage, **tokenizer_module):
        """The start of `llamafactory.data.loader.get_dataset`: the datasets merged for `stage`, unloaded."""
        if data_args.dataset_dir == "data":
            data_args.dataset_dir = str(self.data_dir)
        real = loader._load_single_dataset
        loader._load_single_dataset = lambda dataset_attr, *args: None
        try:
            for names in (data_args.dataset, data_args.eval_dataset):
                try:
                    loader._get_merged_dataset(names, model_args, data_args, training_args, stage, return_dict=True)
                except ValueError as err:
                    # LLaMA-Factory's message names neither the dataset nor the stage: add them.
                    found = get_dataset_list(names, data_args.dataset_dir) if "applicable" in str(err) else []
                    ranking = ", ".join(f"{n} (ranking: {a.ranking})" for n, a in zip(names, found, strict=True))
                    where = (
                        f" [the {self.finetuning_stage} workflow loads {ranking} for stage {stage!r}]" if found else ""
                    )
                    raise ValueError(f"{err}{where}") from err
        finally:
            loader._load_single_dataset = real
        raise Reached()


def torchrun_env(plan_dir: Path, world: int) -> bool:
    """The environment torchrun gives rank 0 on node 0, after launch.sh's exports; where launch.sh runs one
    device without FORCE_TORCHRUN, `llamafactory-cli` trains in its own process (`llamafactory/cli.py`:
    torchrun only with FORCE_TORCHRUN or more than one device), and only the exports apply. Whether torchrun runs."""
    launch = plan_dir / "launch.sh"
    exported = shell_assignments(launch.read_text()) if launch.is_file() else {"FORCE_TORCHRUN": "1"}
    os.environ.update(exported)
    if world == 1 and "FORCE_TORCHRUN" not in exported:
        # check_deepspeed sets rank 0's variables for its own process group: a plain process has none.
        for name in ("RANK", "LOCAL_RANK", "GROUP_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE"):
            os.environ.pop(name, None)
        return False
    per_node = int(exported.get("NPROC_PER_NODE", world))
    os.environ.update(
        RANK="0",
        LOCAL_RANK="0",
        GROUP_RANK="0",
        WORLD_SIZE=str(world),
        LOCAL_WORLD_SIZE=str(per_node),
        MASTER_ADDR="127.0.0.1",
        MASTER_PORT="29500",
    )
    return True


def run(yaml_path: Path, world: int, data_dir: Path, allow_extra: bool) -> tuple[Run, list[str]]:
    """Runs `run_exp()` on one train.yaml; returns what it reached and the problems it raised or logged."""
    problems: list[str] = []
    saved_env = dict(os.environ)
    distributed = torchrun_env(yaml_path.parent, world)
    if allow_extra:
        os.environ["ALLOW_EXTRA_ARGS"] = "1"
    else:
        os.environ.pop("ALLOW_EXTRA_ARGS", None)
    # What the previous file left in process-wide state (one launch reads one file).
    AcceleratorState._reset_state(reset_partial_state=True)
    PartialState._reset_state()
    unset_hf_deepspeed_config()
    if distributed:
        check_deepspeed.set_world_size(world)
    elif torch_dist.is_initialized():
        torch_dist.destroy_process_group()
    with CollectWarnings(WARNING_LOGGERS, IGNORED_WARNINGS) as collected:
        state = Run(data_dir)
        for name in WORKFLOWS:
            module = importlib.import_module(f"llamafactory.train.{name}.workflow")
            module.load_tokenizer = state.load_tokenizer
            module.get_dataset = state.get_dataset
        parser_module = llamafactory.hparams.parser
        real_parse = parser_module._parse_train_args
        parser_module._parse_train_args = state.parse_train_args(real_parse)
        cwd = os.getcwd()
        argv = sys.argv
        os.chdir(yaml_path.parent)
        sys.argv = [str(Path(llamafactory.__file__).parent / "launcher.py"), yaml_path.name]
        try:
            tuner.run_exp()
            version = llamafactory.__version__
            problems.append(f"the stage's workflow returned without reading its data (checker behind {version}?)")
        except Reached:
            pass
        except Exception as err:  # LLaMA-Factory's own error is the verdict
            problems.append(describe(err))
        finally:
            parser_module._parse_train_args = real_parse
            os.chdir(cwd)
            sys.argv = argv
            os.environ.clear()
            os.environ.update(saved_env)
    return state, problems + collected.messages


def check_deepspeed_json(state: Run, world: int, hidden_size: int) -> list[str]:
    """The DeepSpeed config as HF's Trainer hands it to `deepspeed.initialize`, checked by DeepSpeed."""
    args = state.training_args
    hf_config = args.hf_deepspeed_config
    model = SimpleNamespace(config=SimpleNamespace(hidden_size=hidden_size))
    # Only the scheduler's "auto" values depend on the step count, which the dataset decides.
    steps = args.max_steps if args.max_steps > 0 else 1000
    problems = []
    with CollectWarnings(WARNING_LOGGERS, IGNORED_WARNINGS) as collected:
        try:
            hf_config.trainer_config_finalize(args, model, steps)
        except Exception as err:  # transformers' own error is the verdict
            problems.append(describe(err))
    problems += collected.messages
    if problems:
        return problems
    return check_deepspeed.check_config(dict(hf_config.config), world)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="+", help="corpus folders (with a manifest.json) or files: one train.yaml each")
    parser.add_argument(
        "--world-size", type=int, help="processes of files with no report.json or launch.sh beside them"
    )
    parser.add_argument(
        "--hidden-size", type=int, help="the model's hidden size for files with no report.json beside them"
    )
    parser.add_argument(
        "--data-dir", type=Path, help="LLaMA-Factory's data/ folder (default: the one scripts/conformance unpacks)"
    )
    args = parser.parse_args()
    data_dir = (
        args.data_dir or HERE.parent / "target" / "conformance" / f"llamafactory-{llamafactory.__version__}" / "data"
    )
    if not (data_dir / "dataset_info.json").is_file():
        sys.exit(f"{data_dir}/dataset_info.json is missing: run scripts/conformance --install, or pass --data-dir")
    tally = Tally("llamafactory")
    for target in targets(args.paths, "llamafactory", lambda files: [f for f in files if f.endswith(".yaml")]):
        problems: list[str] = []
        world = world_size(target.path.parent, args.world_size, problems)
        state, found = run(target.path, world, data_dir, allow_extra=False)
        problems += found
        if state.training_args is None:
            # Reparse with LLaMA-Factory's own escape hatch for unknown keys, so the DeepSpeed JSON still gets
            # checked when the only problem of the YAML is an extra key.
            state, _ = run(target.path, world, data_dir, allow_extra=True)
        tally.record(target, problems)
        ds_name = ds_json_name(target.path)
        if ds_name is None:
            continue
        ds_target = Target(target.plan, target.path.parent / ds_name, target.errors)
        if state.training_args is None or state.training_args.hf_deepspeed_config is None:
            tally.record(ds_target, [f"not reached: LLaMA-Factory rejected {target.path.name} before reading it"])
            continue
        report = plan_report(target.path.parent)
        hidden = report["model"]["hidden_size"] if report else args.hidden_size
        if hidden is None:
            sys.exit(f"{target.path}: pass --hidden-size (no report.json beside it)")
        tally.record(ds_target, check_deepspeed_json(state, world, hidden))
    return tally.finish()


def ds_json_name(yaml_path: Path) -> str | None:
    """The DeepSpeed JSON the YAML names (`deepspeed:`), as LLaMA-Factory's OmegaConf load reads it."""
    from omegaconf import OmegaConf

    value = OmegaConf.to_container(OmegaConf.load(yaml_path)).get("deepspeed")
    return None if value is None else str(value)


if __name__ == "__main__":
    sys.exit(main())
