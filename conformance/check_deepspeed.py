"""Checks DeepSpeed JSON configs with DeepSpeed's own parser, as `deepspeed.initialize` reads them.

    python conformance/check_deepspeed.py CORPUS_DIR                  the JSON of every DeepSpeed plan
    python conformance/check_deepspeed.py [--world-size N] FILE.json  one file (or several; folders and files mix)

What runs, all from the installed DeepSpeed (0.19.8, conformance/requirements-deepspeed.txt):
- `deepspeed.runtime.config.DeepSpeedConfig(path, mpu=None)`, the object `deepspeed.initialize` builds from
  `config=`: hjson parsing with duplicate keys rejected, the pydantic sections (`zero_optimization`, offload,
  fp16/bf16, ...; unknown keys there raise), the batch identity `train_batch_size == micro × grad-acc ×
  world` (`_batch_assertion`), and the sanity checks.
  Its world size comes from `deepspeed.comm.get_world_size()`: the checker starts torch's single-process
  "fake" process group (`torch.testing._internal.distributed.fake_pg`) with rank 0 and world size = the plan's
  device count, the value torchrun's WORLD_SIZE gives on the cluster, so DeepSpeed checks the identity itself.
- The optimizer and LR scheduler the engine would build, chosen by the engine's own code
  (`DeepSpeedEngine._configure_basic_optimizer` / `get_optimizer_configuration` / `_scheduler_from_config`)
  over the parsed config: the scheduler is constructed for real on a torch optimizer; the optimizer class
  (FusedAdam, DeepSpeedCPUAdam: compiled ops, not built here) gets its arguments bound to its signature.
- `"auto"` values: DeepSpeed's pydantic sections drop them silently (`DeepSpeedConfigModel.__init__`), and
  only an integration (transformers' HfDeepSpeedConfig) fills them; one left in the final config fails.
- Keys DeepSpeed never reads. DeepSpeed ignores unknown top-level keys and unknown keys of the sections it
  reads with `.get` (activation_checkpointing, ...) without a word; the checker records which keys
  DeepSpeedConfig reads and fails any key it did not.
- Anything DeepSpeed logs at WARNING or above while it parses counts as a failure.

Not exercised: the engine itself (model wrapping, ZeRO partitioning, compiled ops), which needs a GPU.
DS_ACCELERATOR=cuda is set so DeepSpeed takes the code path of the CUDA machines the files are for
(its CPU accelerator would JIT-compile a shared-memory op at init); no CUDA call is made.
"""

import argparse
import copy
import inspect
import os
import sys
from pathlib import Path

os.environ.setdefault("DS_ACCELERATOR", "cuda")
os.environ.update(RANK="0", LOCAL_RANK="0", MASTER_ADDR="127.0.0.1", MASTER_PORT="29500")

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import CollectWarnings, Tally, describe, targets, world_size  # noqa: E402

import hjson  # noqa: E402
import torch  # noqa: E402
import torch.distributed as torch_dist  # noqa: E402
from torch.testing._internal.distributed.fake_pg import FakeStore  # noqa: E402

import deepspeed  # noqa: E402
import deepspeed.ops.adam  # noqa: E402
from deepspeed.runtime.config import DeepSpeedConfig  # noqa: E402
from deepspeed.runtime.config_utils import DeepSpeedConfigModel, dict_raise_error_on_duplicate_keys  # noqa: E402
from deepspeed.runtime.engine import DeepSpeedEngine  # noqa: E402

# Messages that come with every config, not from the file: `WarmupLR.__init__` and `WarmupCosineLR.__init__`
# call their own `get_lr` before the first step (lr_schedules.py), and DeepSpeedConfig leaves the file it
# opens to the garbage collector.
IGNORED_WARNINGS = [
    r"^DeepSpeed warning: Attempting to get learning rate from scheduler before it has started$",
    r"^ResourceWarning: unclosed file",
]


def set_world_size(n: int) -> None:
    """A single-process group of `n` ranks (this one is rank 0) that DeepSpeed's comm layer reports."""
    if torch_dist.is_initialized():
        torch_dist.destroy_process_group()
    os.environ["WORLD_SIZE"] = str(n)
    torch_dist.init_process_group("fake", store=FakeStore(), rank=0, world_size=n)
    deepspeed.init_distributed(dist_backend="fake")
    assert deepspeed.comm.get_world_size() == n


class Tracked(dict):
    """A JSON object that remembers which of its keys were looked up."""

    def __init__(self, *args):
        super().__init__(*args)
        self.read: set[str] = set()

    def __getitem__(self, key):
        self.read.add(key)
        return super().__getitem__(key)

    def get(self, key, default=None):
        self.read.add(key)
        return super().get(key, default)

    def __contains__(self, key):
        if super().__contains__(key):
            self.read.add(key)
        return super().__contains__(key)

    def pop(self, key, *default):
        self.read.add(key)
        return super().pop(key, *default)

    def setdefault(self, key, default=None):
        self.read.add(key)
        return super().setdefault(key, default)

    # Overriding __iter__ turns off CPython's dict fast path in `**mapping`, so a section handed to a
    # pydantic model as keyword arguments is read key by key (and so counted as read).
    def __iter__(self):
        return super().__iter__()

    def keys(self):
        return list(super().__iter__())

    def __copy__(self):
        res = Tracked(list(dict.items(self)))
        res.read = self.read
        return res


def mark_read(value) -> None:
    if isinstance(value, Tracked):
        value.read.update(dict.keys(value))
        for child in dict.values(value):
            mark_read(child)
    elif isinstance(value, list):
        for child in value:
            mark_read(child)


# DeepSpeed's pydantic sections (DeepSpeedConfigModel, `extra="forbid"`) reject unknown keys themselves,
# nested sections included; pydantic reads the nested objects in C, past the lookups `Tracked` counts, so
# whatever such a model is built from counts as read.
_model_init = DeepSpeedConfigModel.__init__


def _tracking_model_init(self, strict=False, **data):
    for value in data.values():
        mark_read(value)
    _model_init(self, strict=strict, **data)


DeepSpeedConfigModel.__init__ = _tracking_model_init


def load_tracked(text: str) -> Tracked:
    return hjson.loads(text, object_pairs_hook=lambda pairs: Tracked(dict_raise_error_on_duplicate_keys(pairs)))


def unread_keys(value, prefix: str = "", skip: tuple[str, ...] = ()) -> list[str]:
    """Keys of `value` (recursively) that were never looked up. `skip` lists dotted paths whose keys are
    checked elsewhere (optimizer and scheduler parameters: bound to the class the engine builds)."""
    res = []
    if isinstance(value, Tracked):
        for key, child in dict.items(value):
            path = f"{prefix}{key}"
            if key not in value.read:
                res.append(path)
            elif path not in skip:
                res += unread_keys(child, path + ".", skip)
    return res


class EngineView:
    """The methods of DeepSpeedEngine that pick and build the optimizer and the scheduler, over a parsed
    config (the engine itself needs a model on a GPU)."""

    _borrowed = (
        "optimizer_name",
        "optimizer_params",
        "scheduler_name",
        "scheduler_params",
        "zero_use_cpu_optimizer",
        "bf16_optimizer_states",
        "get_optimizer_configuration",
        "_configure_basic_optimizer",
        "_scheduler_from_config",
    )

    def __init__(self, config: DeepSpeedConfig):
        self._config = config
        self.client_optimizer = None
        self.zenflow = config.zero_config.zenflow is not None
        self.has_moe_layers = False

    @classmethod
    def build(cls):
        for name in cls._borrowed:
            setattr(cls, name, getattr(DeepSpeedEngine, name))


EngineView.build()


class Bound:
    """Stands in for an optimizer class whose constructor loads a compiled op: binds the arguments the
    engine passes to the real constructor's signature (TypeError on an unknown one), builds nothing."""

    def __init__(self, real):
        self.real = real
        self.__name__ = real.__name__

    def __call__(self, *args, **kwargs):
        inspect.signature(self.real.__init__).bind(None, *args, **kwargs)
        return self


def check_optimizer_and_scheduler(config: DeepSpeedConfig) -> None:
    """Runs the engine's optimizer and scheduler construction over `config` (raises what it raises)."""
    engine = EngineView(config)
    params = [torch.nn.Parameter(torch.zeros(2))]
    saved = {name: getattr(deepspeed.ops.adam, name) for name in ("FusedAdam", "DeepSpeedCPUAdam", "ZenFlowCPUAdam")}
    try:
        for name, real in saved.items():
            setattr(deepspeed.ops.adam, name, Bound(real))
        if engine.optimizer_name() is not None:
            engine._configure_basic_optimizer(params)
    finally:
        for name, real in saved.items():
            setattr(deepspeed.ops.adam, name, real)
    if engine.scheduler_name() is not None:
        lr = (engine.optimizer_params() or {}).get("lr", 1e-3)
        engine._scheduler_from_config(torch.optim.AdamW(params, lr=lr))


def check_config(source: str | dict, world: int, text: str | None = None) -> list[str]:
    """Problems DeepSpeed finds in one config (a path, or the dict an integration hands to
    `deepspeed.initialize`) for `world` data-parallel ranks; empty when DeepSpeed accepts it."""
    problems = []
    set_world_size(world)
    with CollectWarnings(["DeepSpeed"], IGNORED_WARNINGS) as collected:
        try:
            config = DeepSpeedConfig(source if isinstance(source, dict) else str(source), mpu=None)
            if config.world_size != world:
                problems.append(f"DeepSpeedConfig saw world size {config.world_size}, expected {world}")
            check_optimizer_and_scheduler(config)
            tracked = load_tracked(text) if text is not None else to_tracked(source)
            DeepSpeedConfig(tracked, mpu=None)
            for key in auto_keys(tracked):
                problems.append(
                    f'key `{key}` is "auto": DeepSpeed drops it (only an integration such as '
                    "transformers' fills it in)"
                )
            skip = ("optimizer.params", "scheduler.params")
            for key in unread_keys(tracked, skip=skip):
                problems.append(f"key `{key}` is not read by DeepSpeed {deepspeed.__version__} (ignored)")
        except Exception as err:  # the framework's own error is the verdict
            problems.append(describe(err))
    problems += collected.messages
    return problems


def auto_keys(value, prefix: str = "") -> list[str]:
    """Keys whose value is the string "auto", which DeepSpeedConfigModel silently drops."""
    res = []
    if isinstance(value, dict):
        for key, child in dict.items(value):
            res += [f"{prefix}{key}"] if child == "auto" else auto_keys(child, f"{prefix}{key}.")
    return res


def to_tracked(value):
    if isinstance(value, dict):
        return Tracked({k: to_tracked(v) for k, v in value.items()})
    if isinstance(value, list):
        return [to_tracked(v) for v in value]
    return copy.copy(value)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "paths", nargs="+", help="corpus folders (with a manifest.json) or files: one DeepSpeed JSON each"
    )
    parser.add_argument(
        "--world-size", type=int, help="data-parallel ranks of files with no report.json or launch.sh beside them"
    )
    args = parser.parse_args()
    tally = Tally("deepspeed")
    for target in targets(args.paths, "deepspeed", lambda files: [f for f in files if f.endswith(".json")]):
        problems: list[str] = []
        world = world_size(target.path.parent, args.world_size, problems)
        problems += check_config(target.path, world, target.path.read_text())
        tally.record(target, problems)
    return tally.finish()


if __name__ == "__main__":
    sys.exit(main())
