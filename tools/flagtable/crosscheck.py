#!/usr/bin/env python3
"""Cross-check a flag table against the frameworks' own argparse parser.

extract.py reads the sources without running them. This script does the opposite on the same
trees: it imports them, with stand-in modules for every third-party package they import and this
Python lacks (torch, transformer_engine, torch_npu, ...), builds the parser the way the framework
does (Megatron-LM's add_megatron_arguments; for MindSpeed-LLM then every feature's register_args
from create_features_list) and compares each flag's action, type, choices, nargs and dest with the
table. Flags the table marks `if` (declared under a condition the stand-ins do not meet) may be
missing from the parser; everything else must agree.

This runs the frameworks' code (import-time code, the argparse registrations); run it on trees you
trust, in a throw-away environment. Python 3.11+ standard library only.

    crosscheck.py megatron-lm   --tree MEGATRON_DIR --table core/data/flags/megatron-lm.tsv
    crosscheck.py mindspeed-llm --tree MINDSPEED_LLM_DIR --tree MINDSPEED_DIR --tree MEGATRON_DIR \
        --table core/data/flags/mindspeed-llm.tsv
    crosscheck.py mindspeed-rl  --tree ... (MindSpeed-RL's MindSpeed-LLM, MindSpeed, Megatron-LM) \
        --table core/data/flags/mindspeed-rl.tsv

Each DIR holds the package directories (megatron/, mindspeed/, mindspeed_llm/), e.g. a checkout.
Exit status 1 when the table and the parser disagree.
"""

import abc
import argparse
import importlib.abc
import importlib.machinery
import os
import sys
import types
import typing


def install_stand_ins(roots):
    """Any module a file under `roots` imports and this Python cannot find becomes a stand-in."""

    class StandInMeta(typing._ProtocolMeta):  # compatible with ABC and Protocol bases
        def __getattr__(cls, name):
            if name.startswith("__"):
                raise AttributeError(name)
            return make(name)

        def __getitem__(cls, key):
            return cls

        def __or__(cls, other):
            return typing.Union[cls, other]

        def __ror__(cls, other):
            return typing.Union[other, cls]

    anything = {
        "__lt__": lambda s, o: False, "__gt__": lambda s, o: True, "__le__": lambda s, o: False,
        "__ge__": lambda s, o: True, "__hash__": lambda s: id(s), "__int__": lambda s: 0,
        "__index__": lambda s: 0, "__len__": lambda s: 0, "__float__": lambda s: 0.0,
        "__enter__": lambda s: s, "__exit__": lambda s, *a: False, "__iter__": lambda s: iter(()),
        "__bool__": lambda s: False, "__mul__": lambda s, o: s, "__add__": lambda s, o: s,
        "__radd__": lambda s, o: s, "__rmul__": lambda s, o: s, "__truediv__": lambda s, o: s,
        "__sub__": lambda s, o: s, "__or__": lambda s, o: s, "__ror__": lambda s, o: s,
    }

    class StandIn(types.ModuleType):
        __path__ = []
        __version__ = "99.0.0"

        def __getattr__(self, name):
            if name.startswith("__"):
                raise AttributeError(name)
            value = make(name)
            setattr(self, name, value)
            return value

        def __call__(self, *args, **kwargs):
            if len(args) == 1 and callable(args[0]) and not kwargs:
                return args[0]  # used as a decorator
            return StandIn("result")

        def __getitem__(self, key):
            return self

    for key, fn in anything.items():
        setattr(StandIn, key, fn)

    def make(name):
        if name[:1].isupper():  # a class: subclassed, instantiated, its attributes read
            body = dict(anything)
            body["__getattr__"] = lambda self, n: StandIn(n)
            body["__init__"] = lambda self, *a, **k: None
            body["__call__"] = lambda self, *a, **k: StandIn("result")
            body["__getitem__"] = lambda self, k: StandIn("item")
            return StandInMeta(name, (), body)
        return StandIn(name)

    class Finder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
        def find_spec(self, fullname, path, target=None):
            top = fullname.split(".")[0]
            if top in sys.stdlib_module_names or top.startswith("_"):
                return None
            if any(os.path.exists(os.path.join(r, top)) for r in roots):
                return None
            frame = sys._getframe(1)
            while frame and ("importlib" in frame.f_code.co_filename or frame.f_code.co_filename.startswith("<frozen")):
                frame = frame.f_back
            if frame is None or not any(frame.f_code.co_filename.startswith(r) for r in roots):
                return None
            for finder in sys.meta_path:
                if finder is self:
                    continue
                try:
                    if finder.find_spec(fullname, path, target) is not None:
                        return None
                except Exception:  # noqa: BLE001 (another finder's trouble is not ours)
                    continue
            return importlib.machinery.ModuleSpec(fullname, self, is_package=True)

        def create_module(self, spec):
            return StandIn(spec.name)

        def exec_module(self, module):
            pass

    sys.meta_path.insert(0, Finder())
    if not hasattr(typing, "override"):  # Python 3.12's, used by Megatron-LM
        typing.override = lambda f: f
    # MindSpeed-LLM's package __init__ patches Megatron-LM at import; only the parser is wanted.
    os.environ["TRAINING_BACKEND"] = "none"
    sys.modules["mindspeed_llm.tasks.megatron_adaptor_v2"] = StandIn("mindspeed_llm.tasks.megatron_adaptor_v2")


def real_parser(stack):
    import megatron.training.arguments as megatron_arguments

    parser = argparse.ArgumentParser(allow_abbrev=False)
    megatron_arguments.add_megatron_arguments(parser)
    if stack != "megatron-lm":
        from mindspeed.features_manager.features_manager import MindSpeedFeaturesManager

        import mindspeed_llm.features_manager as llm_features

        MindSpeedFeaturesManager.set_features_list(llm_features.create_features_list())
        MindSpeedFeaturesManager.register_features_args(parser)
    return parser


KINDS = {
    "_StoreTrueAction": "store_true", "_StoreFalseAction": "store_false", "_StoreAction": "value",
    "_StoreConstAction": "store_const", "_AppendAction": "append", "_CountAction": "count",
    "_HelpAction": "help", "_AppendConstAction": "append_const", "_ExtendAction": "extend",
}


def describe(flag, action):
    """An action as the table writes it: kind, type, choices, nargs, dest."""
    kind = KINDS.get(type(action).__name__, "action:" + type(action).__name__)
    if kind == "action:BooleanOptionalAction":
        kind = "store_false" if flag.startswith("--no-") else "store_true"
    switch = kind in ("store_true", "store_false", "store_const", "append_const", "count", "help")
    t = action.type
    type_name = "" if switch else ("str" if t is None else getattr(t, "__name__", repr(t)))
    if type_name == "<lambda>":
        type_name = "lambda"
    choices = "" if action.choices is None else "|".join(str(getattr(c, "name", c)) for c in action.choices)
    nargs = "" if action.nargs in (None, 0) else str(action.nargs)
    return kind, type_name, choices, nargs, action.dest


def table_rows(path, stack):
    rows = {}
    for line in open(path, encoding="utf-8"):
        if line.startswith("#"):
            continue
        c = line.rstrip("\n").split("\t") + [""] * 10
        if stack == "mindspeed-rl":
            if c[0] != "MegatronConfig":
                continue
            name = "--" + c[1].replace("_", "-")
            if c[2] == "undeclared":
                rows[name] = None
                continue
            # The table has no dest column for MindSpeed-RL: the key is what the YAML names.
            rows[name] = dict(kind=c[2], type=c[3], choices=c[4], nargs=c[5], dest=None, cond=c[6] == "if")
        else:
            dest = c[5] or c[0].lstrip("-").replace("-", "_")
            rows[c[0]] = dict(kind=c[1], type=c[2], choices=c[3], nargs=c[4], dest=dest, cond=c[6] == "if")
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("stack", choices=["megatron-lm", "mindspeed-llm", "mindspeed-rl"])
    ap.add_argument("--tree", action="append", required=True)
    ap.add_argument("--table", required=True)
    args = ap.parse_args()
    roots = [os.path.abspath(t) for t in args.tree]
    sys.path[:0] = roots
    install_stand_ins(roots)
    parser = real_parser(args.stack)
    real = {}
    for action in parser._actions:
        for flag in action.option_strings:
            real[flag] = describe(flag, action)
    rows = table_rows(args.table, args.stack)
    problems = []
    for name, row in sorted(rows.items()):
        got = real.get(name)
        if row is None:
            if got is not None:
                problems.append(f"{name}: the table says undeclared, the parser has {got}")
            continue
        if got is None:
            if not row["cond"]:
                problems.append(f"{name}: in the table, not in the parser")
            continue
        kind, type_name, choices, nargs, dest = got
        if type_name not in ("enum_type_handler",) and row["type"] != type_name and not (
            row["type"].endswith("." + type_name)  # json.loads
        ):
            problems.append(f"{name}: type {row['type']} in the table, {type_name} in the parser")
        for field, value in (("kind", kind), ("choices", choices), ("nargs", nargs), ("dest", dest)):
            if row[field] is not None and row[field] != value:
                problems.append(f"{name}: {field} {row[field]!r} in the table, {value!r} in the parser")
    if args.stack != "mindspeed-rl":
        for name in sorted(set(real) - set(rows)):
            problems.append(f"{name}: in the parser, not in the table")
    for p in problems:
        print(p, file=sys.stderr)
    print(f"{args.table}: {len(rows)} rows, {len(real)} parser flags, {len(problems)} disagreements", file=sys.stderr)
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
