"""Rewrites the conformance lock files from the top-level pins below.

Each `requirements-<framework>.txt` is a complete lock: every package of the environment with an exact
`==` pin, resolved by pip from the few top-level pins here, so `scripts/conformance` installs it with
`--no-deps` and no resolver run. `requirements-torch.txt` is the heavy layer (torch, its CUDA wheels,
triton) that every lock shares and that `scripts/conformance` installs once and links into each venv.

    python3.11 conformance/lock.py         # all frameworks (a few minutes: pip resolves each one)
    python3.11 conformance/lock.py verl    # one

Run it with the Python the venvs use (3.11: the locks name cp311 wheels) and its pip.

Choice of pins, from each package's own metadata at that version:
- deepspeed 0.19.8 requires torch>=2.0.0 and ships only as an sdist (built once into the wheelhouse).
- llamafactory 0.9.5 requires transformers>=4.55.0,<=5.6.0, accelerate<=1.11.0, peft<=0.18.1, trl<=0.24.0,
  datasets<=4.0.0 and torch>=2.4.0 (setup metadata; `llamafactory/extras/misc.py::check_dependencies` checks
  the same ranges at import); transformers 5.6.0 is the newest it accepts. DeepSpeed comes in because
  transformers' DeepSpeed integration (which fills the `"auto"` values of the JSON it names) needs it.
  liger-kernel 0.8.5 (torch>=2.1.2, triton>=2.3.1) is there because `get_train_args` requires the package
  when a YAML sets `enable_liger_kernel` (`hparams/parser.py`); galore-torch 1.0 and apollo-torch 1.0.3
  (each torch, transformers, bitsandbytes) because it requires `galore_torch` / `apollo_torch` when a YAML
  sets `use_galore` / `use_apollo` (`check_version(..., mandatory=True)`, the same file).
  torchvision and torchaudio are the releases built against torch 2.11.0 (torchaudio 2.11.1, which pip
  picks otherwise, fails to load its library against it).
- verl 0.9.1 requires transformers>=5.5.3,<5.11,!=5.6.0 and its `cpu`/`vllm`/`sglang`/`fsdp` extras pin
  torch==2.11.0 and transformers==5.9.0; we take those two.
"""

import json
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent

TORCH = "torch==2.11.0"

TOP = {
    "deepspeed": ["deepspeed==0.19.8", TORCH],
    "llamafactory": [
        "llamafactory==0.9.5",
        "transformers==5.6.0",
        "deepspeed==0.19.8",
        "liger-kernel==0.8.5",
        "galore-torch==1.0",
        "apollo-torch==1.0.3",
        TORCH,
        "torchvision==0.26.0",
        "torchaudio==2.11.0",
    ],
    "verl": ["verl==0.9.1", "transformers==5.9.0", TORCH],
}


def canonical(name: str) -> str:
    return name.lower().replace("_", "-").replace(".", "-")


def in_layer(name: str) -> bool:
    """The shared layer: torch and the binary wheels that come with it on Linux x86_64."""
    name = canonical(name)
    return name == "torch" or name == "triton" or name.startswith(("nvidia-", "cuda-"))


def resolve(top: list[str]) -> list[tuple[str, str]]:
    """Asks pip for the full set of packages `top` installs into an empty Python 3.11 environment."""
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "report.json"
        subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "install",
                "--quiet",
                "--dry-run",
                "--ignore-installed",
                "--report",
                str(report),
                *top,
            ],
            check=True,
        )
        data = json.loads(report.read_text())
    res = [(i["metadata"]["name"], i["metadata"]["version"]) for i in data["install"]]
    return sorted(res, key=lambda nv: canonical(nv[0]))


def write(path: Path, header: list[str], pins: list[tuple[str, str]]) -> None:
    lines = [f"# {line}".rstrip() for line in header]
    lines += [f"{canonical(name)}=={version}" for name, version in pins]
    path.write_text("\n".join(lines) + "\n")
    print(f"lock: wrote {path.relative_to(HERE.parent)} ({len(pins)} packages)")


def main() -> None:
    names = sys.argv[1:] or list(TOP)
    layer = None
    for name in names:
        top = TOP[name]
        pins = resolve(top)
        write(
            HERE / f"requirements-{name}.txt",
            [
                f"Conformance environment for {name}: complete lock, written by conformance/lock.py.",
                f"Top-level pins: {' '.join(top)}",
                "Installed with `pip install --no-deps` by scripts/conformance; do not edit by hand.",
            ],
            pins,
        )
        this_layer = [nv for nv in pins if in_layer(nv[0])]
        if layer is not None and this_layer != layer:
            sys.exit(f"lock: the torch layer of {name} differs from the others'")
        layer = this_layer
    if layer is not None and len(names) == len(TOP):
        write(
            HERE / "requirements-torch.txt",
            [
                "The layer every conformance lock shares (torch, its CUDA wheels, triton): written by",
                "conformance/lock.py; scripts/conformance installs it once and hard-links it into each venv.",
            ],
            layer,
        )


if __name__ == "__main__":
    main()
