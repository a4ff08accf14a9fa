#!/usr/bin/env python3
"""Record the command-line flags Megatron-family frameworks declare, read from their source trees.

Nothing is imported or run: the trees are parsed with `ast` and the argparse registrations are
followed statically, the way `parse_args` reaches them at run time:

* Megatron-LM: `megatron.training.arguments.add_megatron_arguments` and every function it calls
  with the parser; `parser.add_argument(...)` calls as written, and (core >= 0.16) the flags
  `ArgumentGroupFactory(SomeConfig, exclude=[...]).build_group(parser)` generates from a dataclass
  (megatron/training/argument_utils.py): `--` + field name with `_` -> `-`; the type from the
  annotation (Optional[X] -> X, list[X] -> nargs '+', Literal -> choices, an Enum -> its member
  names); a bool field is `store_true` when its default == False, else `store_false` named
  `--no-<name>` and `--disable-<name>`; fields with `init=False` or in `exclude` are skipped; a
  field's `metadata["argparse_meta"]` overrides all of it (`arg_names` for the names). A
  standard-library Enum (`signal.Signals`) is read from this Python, so its members are this
  platform's.
* MindSpeed-LLM: Megatron-LM's parser above, then `register_args(parser)` of every feature
  `mindspeed_llm.features_manager.create_features_list()` instantiates (MindSpeed's and its own),
  in that order (`MindSpeedFeaturesManager.register_features_args`). The parser keeps argparse's
  default `conflict_handler='error'`, so a flag registered twice stops the program at start; a
  second registration guarded by a test of the parser's options (inside an `if`, or after a loop
  that returns) is recorded as guarded. Choices added to an existing flag
  (`add_parser_argument_choices_value`, `_add_choice`) are applied.
* MindSpeed-RL: the attributes each config class (`mindspeed_rl/config_cls/*.py`) sets before
  `self.update(...)`, i.e. the YAML keys `BaseConfig.update` accepts, the section each class reads
  (from `cli/*.py`), and for `MegatronConfig` the flag each key becomes (`parse_args_from_config`:
  `--` + key with `_` -> `-`) with its declaration in the Megatron-LM + MindSpeed + MindSpeed-LLM
  stack MindSpeed-RL installs.

Usage (tools/flagtable/regenerate runs these):

    extract.py megatron-lm   --tree M=DIR --source 'M<TAB>owner/repo<TAB>commit<TAB>ref<TAB>date' --out FILE
    extract.py mindspeed-llm --tree M=DIR --tree S=DIR --tree L=DIR --source ... --out FILE
    extract.py mindspeed-rl  --tree M=DIR --tree S=DIR --tree L=DIR --tree R=DIR --source ... --out FILE

Python 3 standard library only.
"""

import argparse
import ast
import os
import re
import sys

UNKNOWN = object()  # a value the static reading cannot know
PARSER = object()  # an argparse parser or argument group
SELF = object()  # `self` inside a method


class Warnings:
    items = []

    @classmethod
    def add(cls, text):
        cls.items.append(text)


# ---------------------------------------------------------------- modules


class Module:
    """One parsed source file and its top-level names."""

    def __init__(self, name, key, root, rel, is_pkg):
        self.name = name
        self.key = key
        self.rel = rel
        self.is_pkg = is_pkg
        with open(os.path.join(root, rel), encoding="utf-8", errors="replace") as f:
            self.node = ast.parse(f.read(), filename=rel)
        self.names = {}  # name -> ('node', def) | ('expr', expr) | ('import', module, attr|None)
        for stmt in self._top(self.node.body):
            self._bind(stmt)

    def _top(self, body):
        for stmt in body:
            if isinstance(stmt, ast.If):
                yield from self._top(stmt.body)
                yield from self._top(stmt.orelse)
            elif isinstance(stmt, ast.Try):
                yield from self._top(stmt.body)
                for h in stmt.handlers:
                    yield from self._top(h.body)
                yield from self._top(stmt.orelse)
            else:
                yield stmt

    def _package(self, level):
        parts = self.name.split(".")
        if not self.is_pkg:
            parts = parts[:-1]
        if level > 1:
            parts = parts[: len(parts) - (level - 1)]
        return ".".join(parts)

    def _bind(self, stmt):
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            self.names[stmt.name] = ("node", stmt)
        elif isinstance(stmt, ast.Assign):
            for t in stmt.targets:
                if isinstance(t, ast.Name):
                    self.names[t.id] = ("expr", stmt.value)
        elif isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) and stmt.value is not None:
            self.names[stmt.target.id] = ("expr", stmt.value)
        elif isinstance(stmt, ast.Import):
            for a in stmt.names:
                if a.asname:
                    self.names[a.asname] = ("import", a.name, None)
                else:
                    top = a.name.split(".")[0]
                    self.names[top] = ("import", top, None)
        elif isinstance(stmt, ast.ImportFrom):
            base = stmt.module or ""
            if stmt.level:
                pkg = self._package(stmt.level)
                base = f"{pkg}.{base}" if base else pkg
            for a in stmt.names:
                if a.name == "*":
                    continue
                self.names[a.asname or a.name] = ("import", base, a.name)


class Index:
    """The modules of a set of source trees, found by dotted name (first tree wins)."""

    def __init__(self, trees):
        self.trees = trees  # [(key, root)]
        self.cache = {}

    def module(self, name):
        if name in self.cache:
            return self.cache[name]
        res = None
        rel = name.replace(".", "/")
        for key, root in self.trees:
            for cand, is_pkg in ((rel + ".py", False), (rel + "/__init__.py", True)):
                if os.path.isfile(os.path.join(root, cand)):
                    res = Module(name, key, root, cand, is_pkg)
                    break
            if res:
                break
        self.cache[name] = res
        return res


class Sym:
    """A resolved name: a module, a function or a class definition, with the module it lives in."""

    def __init__(self, kind, mod, node=None):
        self.kind = kind  # 'module' | 'func' | 'class'
        self.mod = mod
        self.node = node

    def __repr__(self):
        return f"Sym({self.kind}, {self.mod.name}, {getattr(self.node, 'name', '')})"

    def __eq__(self, other):
        return isinstance(other, Sym) and self.mod is other.mod and self.node is other.node

    def __hash__(self):
        return hash((id(self.mod), id(self.node)))


class EnumMember:
    def __init__(self, name, value):
        self.name = name
        self.value = value


class Resolver:
    def __init__(self, index):
        self.index = index

    def name(self, mod, name, depth=0):
        """What `name` means at the top level of `mod`: a Sym, a Python value, or UNKNOWN."""
        if depth > 12:
            return UNKNOWN
        entry = mod.names.get(name)
        if entry is None:
            return UNKNOWN
        if entry[0] == "node":
            node = entry[1]
            return Sym("class" if isinstance(node, ast.ClassDef) else "func", mod, node)
        if entry[0] == "expr":
            return self.expr(mod, entry[1], {}, depth + 1)
        _, base, attr = entry
        if attr is None:
            m = self.index.module(base)
            return Sym("module", m) if m else UNKNOWN
        sub = self.index.module(f"{base}.{attr}")
        if sub:
            return Sym("module", sub)
        m = self.index.module(base)
        if m is None:
            return UNKNOWN
        return self.name(m, attr, depth + 1)

    def attr(self, value, attr, depth=0):
        if isinstance(value, Sym):
            if value.kind == "module":
                sub = self.index.module(f"{value.mod.name}.{attr}")
                if sub:
                    return Sym("module", sub)
                return self.name(value.mod, attr, depth + 1)
            if value.kind == "class":
                member = self.member(value, attr)
                if member is not None:
                    return member
                enum = self.enum_members(value)
                if enum:
                    for m in enum:
                        if m.name == attr:
                            return m
        if isinstance(value, EnumMember) and attr in ("name", "value"):
            return getattr(value, attr)
        return UNKNOWN

    def bases(self, cls):
        out = []
        for b in cls.node.bases:
            v = self.expr(cls.mod, b, {})
            if isinstance(v, Sym) and v.kind == "class":
                out.append(v)
            else:
                out.append(ast.unparse(b))
        return out

    def mro(self, cls):
        """C3 linearisation over the classes found in the trees (others are left out)."""
        seqs = [self.mro(b) for b in self.bases(cls) if isinstance(b, Sym)]
        seqs.append([b for b in self.bases(cls) if isinstance(b, Sym)])
        res = [cls]
        seqs = [list(s) for s in seqs if s]
        while seqs:
            for s in seqs:
                head = s[0]
                if not any(head in t[1:] for t in seqs):
                    break
            else:
                head = seqs[0][0]  # not linearisable: depth first
            res.append(head)
            seqs = [[x for x in s if x != head] for s in seqs]
            seqs = [s for s in seqs if s]
        return res

    def member(self, cls, attr, after=None):
        """`attr` looked up along the class's MRO (after class `after`, for `super()`)."""
        chain = self.mro(cls)
        if after is not None and after in chain:
            chain = chain[chain.index(after) + 1 :]
        for c in chain:
            for stmt in c.node.body:
                if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) and stmt.name == attr:
                    return Sym("func", c.mod, stmt)
                if isinstance(stmt, ast.Assign) and any(
                    isinstance(t, ast.Name) and t.id == attr for t in stmt.targets
                ):
                    return self.expr(c.mod, stmt.value, {})
        return None

    def is_enum(self, cls):
        for c in self.mro(cls):
            for b in self.bases(c):
                text = b if isinstance(b, str) else ""
                if re.fullmatch(r"(enum\.)?(Enum|IntEnum|StrEnum|Flag|IntFlag)", text):
                    return True
        return False

    def enum_members(self, cls):
        if not self.is_enum(cls):
            return None
        out = []
        for stmt in cls.node.body:
            if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
                name = stmt.targets[0].id
                if name.startswith("_"):
                    continue
                value = self.expr(cls.mod, stmt.value, {})
                if isinstance(stmt.value, ast.Call) and ast.unparse(stmt.value.func).endswith("auto"):
                    value = len(out) + 1
                out.append(EnumMember(name, value))
        return out

    def expr(self, mod, node, env, depth=0):
        """A Python value for simple expressions: literals, names, attributes, list arithmetic."""
        if depth > 20:
            return UNKNOWN
        ev = lambda n: self.expr(mod, n, env, depth + 1)  # noqa: E731
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
            items = []
            for e in node.elts:
                if isinstance(e, ast.Starred):
                    v = ev(e.value)
                    if not isinstance(v, (list, tuple)):
                        return UNKNOWN
                    items.extend(v)
                else:
                    items.append(ev(e))
            return tuple(items) if isinstance(node, ast.Tuple) else list(items)
        if isinstance(node, ast.Dict):
            out = {}
            for k, v in zip(node.keys, node.values):
                if k is None:
                    inner = ev(v)
                    if isinstance(inner, dict):
                        out.update(inner)
                    continue
                kk = ev(k)
                if kk is UNKNOWN or isinstance(kk, (list, dict)):
                    return UNKNOWN
                out[kk] = ev(v)
            return out
        if isinstance(node, ast.Name):
            if node.id in env:
                return env[node.id]
            if node.id in ("True", "False", "None"):
                return {"True": True, "False": False, "None": None}[node.id]
            v = self.name(mod, node.id, depth + 1)
            if v is UNKNOWN and node.id in BUILTIN_TYPES:
                return BuiltinType(node.id)
            return v
        if isinstance(node, ast.Attribute):
            return self.attr(ev(node.value), node.attr, depth + 1)
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            a, b = ev(node.left), ev(node.right)
            if isinstance(a, list) and isinstance(b, (list, tuple)):
                return a + list(b)
            if isinstance(a, tuple) and isinstance(b, tuple):
                return a + b
            if isinstance(a, str) and isinstance(b, str):
                return a + b
            return UNKNOWN
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Pow):
            a, b = ev(node.left), ev(node.right)
            if isinstance(a, int) and isinstance(b, int):
                return a**b
            return UNKNOWN
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            v = ev(node.operand)
            return -v if isinstance(v, (int, float)) and not isinstance(v, bool) else UNKNOWN
        if isinstance(node, ast.JoinedStr):
            return UNKNOWN
        if isinstance(node, ast.Call):
            fn = node.func
            fname = fn.id if isinstance(fn, ast.Name) else None
            if fname in ("list", "tuple", "sorted", "set") and len(node.args) == 1:
                v = ev(node.args[0])
                if isinstance(v, Sym) and v.kind == "class":
                    members = self.enum_members(v)
                    return list(members) if members is not None else UNKNOWN
                if isinstance(v, dict):
                    v = list(v.keys())
                if isinstance(v, (list, tuple, set)):
                    return sorted(v) if fname == "sorted" else list(v)
                if isinstance(v, DictView):
                    return list(v.items)
                return UNKNOWN
            if fname == "range" and 1 <= len(node.args) <= 3:
                bounds = [ev(a) for a in node.args]
                if all(isinstance(b, int) for b in bounds):
                    return list(range(*bounds))
                return UNKNOWN
            if isinstance(fn, ast.Attribute) and fn.attr in ("keys", "values") and not node.args:
                v = ev(fn.value)
                if isinstance(v, dict):
                    return DictView(list(v.keys()) if fn.attr == "keys" else list(v.values()))
            if fname == "field" or (isinstance(fn, ast.Attribute) and fn.attr == "field"):
                return UNKNOWN
            return UNKNOWN
        if isinstance(node, (ast.ListComp, ast.GeneratorExp)) and len(node.generators) == 1:
            gen = node.generators[0]
            it = ev(gen.iter)
            if isinstance(it, Sym) and it.kind == "class":
                it = self.enum_members(it)
            if isinstance(it, DictView):
                it = it.items
            if isinstance(it, dict):
                it = list(it.keys())
            if not isinstance(it, (list, tuple)) or not isinstance(gen.target, ast.Name) or gen.ifs:
                return UNKNOWN
            out = []
            for item in it:
                v = self.expr(mod, node.elt, {**env, gen.target.id: item}, depth + 1)
                if v is UNKNOWN:
                    return UNKNOWN
                out.append(v)
            return out
        return UNKNOWN


BUILTIN_TYPES = ("int", "float", "str", "bool", "list", "dict", "tuple")


class BuiltinType:
    def __init__(self, name):
        self.name = name


class DictView:
    def __init__(self, items):
        self.items = items


# ---------------------------------------------------------------- flags


class Flag:
    def __init__(self, name, kind, type_, choices, nargs, dest, at, cond):
        self.name = name
        self.kind = kind
        self.type = type_
        self.choices = choices  # list of str, None (no choices) or '?' (not readable statically)
        self.nargs = nargs
        self.dest = dest
        self.at = [at]
        self.cond = cond


def default_dest(name):
    return name.lstrip("-").replace("-", "_")


class Registry:
    """The flags in the order argparse receives them, as `conflict_handler='error'` keeps them."""

    def __init__(self):
        self.flags = {}
        self.notes = []

    def add(self, flag):
        old = self.flags.get(flag.name)
        if old is None:
            self.flags[flag.name] = flag
            return
        same = (old.kind, old.type, old.choices, old.nargs) == (flag.kind, flag.type, flag.choices, flag.nargs)
        old.at.append(flag.at[0])
        what = "same declaration" if same else (
            f"differs: {old.kind}/{old.type}/{fmt_choices(old.choices)}/{old.nargs or ''} first, "
            f"{flag.kind}/{flag.type}/{fmt_choices(flag.choices)}/{flag.nargs or ''} second"
        )
        if flag.cond:
            self.notes.append(
                f"{flag.name} declared again at {flag.at[0]} behind a condition ({what}); "
                f"argparse keeps the first, {old.at[0]}"
            )
        else:
            self.notes.append(
                f"{flag.name} declared again at {flag.at[0]} ({what}); with conflict_handler='error' "
                f"argparse raises at start-up; the first, {old.at[0]}, is listed"
            )

    def add_choice(self, name, value, at):
        flag = self.flags.get(name)
        if flag is None:
            Warnings.add(f"{at}: choice {value!r} added to undeclared {name}")
            return
        if not isinstance(flag.choices, list):
            return
        if value not in flag.choices:
            flag.choices = flag.choices + [value]
            self.notes.append(f"{name} gains choice {value} at {at}")


def fmt_choices(choices):
    if choices is None:
        return ""
    if choices == "?":
        return "?"
    return "|".join(choices)


def choice_text(v, by_value):
    if isinstance(v, EnumMember):
        v = v.value if by_value else v.name
    if isinstance(v, bool):
        return "True" if v else "False"
    if isinstance(v, float):
        return repr(v)
    return str(v)


SWITCH_ACTIONS = {"store_true", "store_false", "store_const", "append_const", "count", "help", "version"}


class Visitor:
    """Follows the functions a parser is passed to and records what they declare."""

    def __init__(self, index, registry):
        self.index = index
        self.res = Resolver(index)
        self.reg = registry
        self.stack = []

    def at(self, mod, node):
        return f"{mod.key}:{mod.rel}:{node.lineno}"

    # -- functions

    def call_function(self, fsym, args, kwargs, cond, self_cls=None, def_cls=None, bound=False):
        node = fsym.node
        ident = (id(fsym.mod), id(node), id(self_cls))
        if ident in self.stack or len(self.stack) > 30:
            return
        params = [a.arg for a in node.args.posonlyargs + node.args.args]
        if bound and params:
            params = params[1:]
        env = {}
        for p, v in zip(params, args):
            env[p] = v
        for k, v in kwargs.items():
            env[k] = v
        if bound:
            env.setdefault("self", SELF)
        self.stack.append(ident)
        ctx = Ctx(fsym.mod, env, self_cls, def_cls)
        self.body(node.body, ctx, cond)
        self.stack.pop()

    def body(self, stmts, ctx, cond):
        for stmt in stmts:
            if isinstance(stmt, ast.If):
                self.body(stmt.body, ctx, True)
                self.body(stmt.orelse, ctx, True)
            elif isinstance(stmt, (ast.For, ast.While)):
                self.body(stmt.body, ctx, True)
                self.body(stmt.orelse, ctx, True)
            elif isinstance(stmt, ast.Try):
                self.body(stmt.body, ctx, cond)
                for h in stmt.handlers:
                    self.body(h.body, ctx, True)
                self.body(stmt.orelse, ctx, cond)
                self.body(stmt.finalbody, ctx, cond)
            elif isinstance(stmt, ast.With):
                self.body(stmt.body, ctx, cond)
            elif isinstance(stmt, ast.Assign):
                v = self.value(stmt.value, ctx, cond)
                for t in stmt.targets:
                    if isinstance(t, ast.Name):
                        ctx.env[t.id] = v
            elif isinstance(stmt, ast.AnnAssign) and stmt.value is not None:
                v = self.value(stmt.value, ctx, cond)
                if isinstance(stmt.target, ast.Name):
                    ctx.env[stmt.target.id] = v
            elif isinstance(stmt, ast.AugAssign) and isinstance(stmt.target, ast.Name):
                old = ctx.env.get(stmt.target.id, UNKNOWN)
                new = self.value(stmt.value, ctx, cond)
                if isinstance(old, list) and isinstance(new, (list, tuple)) and isinstance(stmt.op, ast.Add):
                    ctx.env[stmt.target.id] = old + list(new)
                else:
                    ctx.env[stmt.target.id] = UNKNOWN
            elif isinstance(stmt, (ast.Expr, ast.Return)) and stmt.value is not None:
                self.value(stmt.value, ctx, cond)
            elif isinstance(stmt, (ast.Import, ast.ImportFrom)):
                # A function-local import binds like a module-level one.
                saved = dict(ctx.mod.names)
                ctx.mod._bind(stmt)
                for a in stmt.names:
                    name = a.asname or a.name.split(".")[0]
                    if name != "*":
                        ctx.env[name] = self.res.name(ctx.mod, name)
                ctx.mod.names = saved
            # A guard that may return early makes the rest of the function conditional.
            if isinstance(stmt, (ast.If, ast.For, ast.While, ast.Try)) and any(
                isinstance(n, (ast.Return, ast.Raise)) for n in ast.walk(stmt)
            ):
                cond = True

    def value(self, node, ctx, cond):
        """Evaluates an expression, acting on the calls in it that reach the parser."""
        if isinstance(node, ast.Call):
            return self.call(node, ctx, cond)
        if isinstance(node, (ast.Tuple, ast.List)) and any(isinstance(e, ast.Call) for e in node.elts):
            # `group.add_argument(...),` with a stray comma is a tuple expression.
            items = [self.value(e, ctx, cond) for e in node.elts]
            return tuple(items) if isinstance(node, ast.Tuple) else items
        return self.res.expr(ctx.mod, node, ctx.env)

    def target(self, node, ctx):
        """What a called expression is: a Sym and how it is bound."""
        fn = node.func
        if isinstance(fn, ast.Attribute):
            recv = fn.value
            # super().m(...) / super(C, self).m(...)
            if isinstance(recv, ast.Call) and isinstance(recv.func, ast.Name) and recv.func.id == "super":
                if ctx.self_cls is None or ctx.def_cls is None:
                    return None, False, None
                m = self.res.member(ctx.self_cls, fn.attr, after=ctx.def_cls)
                return (m, True, m) if isinstance(m, Sym) else (None, False, None)
            rv = self.res.expr(ctx.mod, recv, ctx.env)
            if rv is SELF and ctx.self_cls is not None:
                m = self.res.member(ctx.self_cls, fn.attr)
                return (m, True, m) if isinstance(m, Sym) else (None, False, None)
            if isinstance(rv, Sym):
                m = self.res.attr(rv, fn.attr)
                if isinstance(m, Sym):
                    # A staticmethod called through its class or an instance is not bound.
                    return m, False, m
            return None, False, rv
        v = self.res.expr(ctx.mod, fn, ctx.env)
        return (v, False, v) if isinstance(v, Sym) else (None, False, None)

    def call(self, node, ctx, cond):
        fn = node.func
        args = [self.value(a, ctx, cond) for a in node.args if not isinstance(a, ast.Starred)]
        kwargs = {k.arg: self.value(k.value, ctx, cond) for k in node.keywords if k.arg}
        if isinstance(fn, ast.Attribute):
            recv = self.value(fn.value, ctx, cond) if not _is_super(fn.value) else UNKNOWN
            if recv is PARSER:
                if fn.attr == "add_argument":
                    self.add_argument(node, ctx, cond)
                    return UNKNOWN
                if fn.attr in ("add_argument_group", "add_mutually_exclusive_group"):
                    return PARSER
                return UNKNOWN
            if fn.attr == "build_group" and isinstance(recv, Factory):
                self.factory(recv, ctx, node, cond)
                return PARSER
        sym, bound, _ = self.target(node, ctx)
        if sym is None:
            return UNKNOWN
        if sym.kind == "class":
            if sym.node.name == "ArgumentGroupFactory" or any(
                isinstance(b, Sym) and b.node.name == "ArgumentGroupFactory" for b in self.res.mro(sym)[1:]
            ):
                cls = args[0] if args else kwargs.get("src_cfg_class", UNKNOWN)
                exclude = args[1] if len(args) > 1 else kwargs.get("exclude", None)
                return Factory(cls, exclude)
            return Instance(sym)
        if sym.kind != "func":
            return UNKNOWN
        if mutates_choices(sym.node):
            strings = [a for a in args if isinstance(a, str)]
            flags = [s for s in strings if s.startswith("--")]
            values = [s for s in strings if not s.startswith("--")]
            if len(flags) == 1 and values:
                for v in values:
                    self.reg.add_choice(flags[0], v, self.at(ctx.mod, node))
            else:
                Warnings.add(f"{self.at(ctx.mod, node)}: choices changed in a way not read")
            return UNKNOWN
        if PARSER in args or PARSER in kwargs.values():
            if isinstance(fn, ast.Attribute) and _is_super(fn.value):
                def_cls = self.owner(sym)
                self.call_function(sym, args, kwargs, cond, ctx.self_cls, def_cls, bound=True)
            elif bound:
                self.call_function(sym, args, kwargs, cond, ctx.self_cls, self.owner(sym), bound=True)
            else:
                # A method called through its class (`Base.register_args(self, parser)`).
                self.call_function(sym, args, kwargs, cond, ctx.self_cls, self.owner(sym), bound=False)
            return PARSER
        return UNKNOWN

    def owner(self, fsym):
        for stmt in ast.walk(fsym.mod.node):
            if isinstance(stmt, ast.ClassDef) and fsym.node in stmt.body:
                return Sym("class", fsym.mod, stmt)
        return None

    # -- declarations

    def add_argument(self, node, ctx, cond):
        at = self.at(ctx.mod, node)
        names = []
        for a in node.args:
            v = self.res.expr(ctx.mod, a, ctx.env)
            if not isinstance(v, str):
                Warnings.add(f"{at}: option string not read: {ast.unparse(a)}")
                return
            names.append(v)
        if not names or not all(n.startswith("-") for n in names):
            Warnings.add(f"{at}: positional argument {names} left out")
            return
        kw = {k.arg: k.value for k in node.keywords if k.arg}
        self.record(names, kw, ctx.mod, ctx.env, at, cond)

    def record(self, names, kw, mod, env, at, cond, evaluated=None):
        """One add_argument: `kw` maps keyword to an AST node (or, in `evaluated`, to a value)."""
        evaluated = evaluated or {}

        def get(k):
            if k in evaluated:
                return evaluated[k]
            if k in kw:
                return self.res.expr(mod, kw[k], env)
            return None

        action = get("action")
        type_node = kw.get("type")
        type_value = get("type")
        kind, type_name, by_value = "value", "str", False
        if isinstance(action, str):
            kind = action if action in SWITCH_ACTIONS else ("value" if action == "store" else action)
        elif isinstance(action, Sym) and action.kind == "class":
            if action.node.name == "BooleanOptionalAction":
                kind = "bool_opt"
            else:
                kind = "action:" + action.node.name
        elif action is not None and "action" in kw:
            text = ast.unparse(kw["action"])
            if text.endswith("BooleanOptionalAction"):
                kind = "bool_opt"
            else:
                kind = "action:" + text
        if type_node is not None or "type" in evaluated:
            type_name, by_value = describe_type(self.res, mod, type_node, type_value)
        choices = None
        if "choices" in kw or "choices" in evaluated:
            c = get("choices")
            if isinstance(c, DictView):
                c = c.items
            if isinstance(c, dict):
                c = list(c.keys())
            if isinstance(c, (list, tuple, set)) and all(x is not UNKNOWN for x in c):
                choices = [choice_text(x, by_value) for x in c]
            elif c is None:
                choices = None
            else:
                Warnings.add(f"{at}: choices of {names[0]} not read: {ast.unparse(kw['choices']) if 'choices' in kw else c}")
                choices = "?"
        nargs = get("nargs")
        nargs = None if nargs is None else str(nargs)
        dest = get("dest")
        if not isinstance(dest, str):
            longs = [n for n in names if n.startswith("--")]
            dest = default_dest(longs[0] if longs else names[0])
        if kind in SWITCH_ACTIONS or kind == "bool_opt":
            type_name, nargs = "", None
        if kind == "bool_opt":
            for n in names:
                self.reg.add(Flag(n, "store_true", "", None, None, dest, at, cond))
                if n.startswith("--"):
                    self.reg.add(Flag("--no-" + n[2:], "store_false", "", None, None, dest, at, cond))
            return
        for n in names:
            self.reg.add(Flag(n, kind, type_name, choices, nargs, dest, at, cond))

    # -- dataclass-generated flags (megatron/training/argument_utils.py)

    def factory(self, fac, ctx, node, cond):
        cls = fac.cls
        at_call = self.at(ctx.mod, node)
        if not (isinstance(cls, Sym) and cls.kind == "class"):
            Warnings.add(f"{at_call}: ArgumentGroupFactory class not found")
            return
        exclude = fac.exclude
        if exclude is None:
            exclude = []
        if not isinstance(exclude, (list, tuple)):
            Warnings.add(f"{at_call}: exclude list of {cls.node.name} not read")
            exclude = []
        for f in dataclass_fields(self.res, cls):
            if f.name in exclude or f.init is False:
                continue
            self.field_flag(f, cond)

    def field_flag(self, f, cond):
        at = f"{f.mod.key}:{f.mod.rel}:{f.node.lineno}"
        names = ["--" + f.name.replace("_", "-")]
        evaluated = {"dest": f.name}
        meta = f.meta
        try:
            t = extract_type(self.res, f.mod, f.annotation)
            if t["type"] == "bool":
                if f.default is not MISSING and f.default == False:  # noqa: E712 (the factory's own test)
                    evaluated["action"] = "store_true"
                else:
                    evaluated["action"] = "store_false"
                    names = ["--no-" + f.name.replace("_", "-"), "--disable-" + f.name.replace("_", "-")]
            else:
                evaluated["type"] = t["type"]
                if "choices" in t:
                    evaluated["choices"] = t["choices"]
                if "nargs" in t:
                    evaluated["nargs"] = t["nargs"]
        except TypeInferenceError as e:
            if meta is None:
                Warnings.add(f"{at}: {f.name}: {e} and no argparse_meta (Megatron raises here)")
                return
        if meta is not None:
            if not isinstance(meta, dict):
                Warnings.add(f"{at}: argparse_meta of {f.name} not read")
                return
            for k, v in meta.items():
                if k == "arg_names":
                    names = list(v)
                elif k in ("type", "choices", "nargs", "action", "dest"):
                    if v is UNKNOWN:
                        Warnings.add(f"{at}: argparse_meta {k} of {f.name} not read")
                    evaluated[k] = v
        self.record(names, {}, f.mod, {}, at, cond, evaluated)


class Ctx:
    def __init__(self, mod, env, self_cls, def_cls):
        self.mod = mod
        self.env = env
        self.self_cls = self_cls
        self.def_cls = def_cls


class Factory:
    def __init__(self, cls, exclude):
        self.cls = cls
        self.exclude = exclude


class Instance:
    def __init__(self, cls):
        self.cls = cls


def _is_super(node):
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "super"


def mutates_choices(fnode):
    for n in ast.walk(fnode):
        if isinstance(n, (ast.Assign, ast.AugAssign)):
            targets = n.targets if isinstance(n, ast.Assign) else [n.target]
            if any(isinstance(t, ast.Attribute) and t.attr == "choices" for t in targets):
                return True
        if (
            isinstance(n, ast.Call)
            and isinstance(n.func, ast.Attribute)
            and n.func.attr in ("append", "extend")
            and isinstance(n.func.value, ast.Attribute)
            and n.func.value.attr == "choices"
        ):
            return True
    return False


def describe_type(res, mod, node, value):
    """The type column for `type=...`, and whether enum choices are matched by value."""
    if isinstance(value, BuiltinType):
        return value.name, False
    if isinstance(value, str) and value in BUILTIN_TYPES:
        return value, False
    if isinstance(value, str):
        return value, False
    if isinstance(value, Sym):
        if value.kind == "class" and res.enum_members(value) is not None:
            return value.node.name, True
        return value.node.name if value.node is not None else value.mod.name, False
    if isinstance(node, ast.Lambda):
        return "lambda", False
    if node is not None:
        return ast.unparse(node), False
    return "str", False


# ---------------------------------------------------------------- dataclasses

MISSING = object()


class TypeInferenceError(Exception):
    pass


class Field:
    def __init__(self, name, annotation, default, init, meta, mod, node):
        self.name = name
        self.annotation = annotation
        self.default = default
        self.init = init
        self.meta = meta
        self.mod = mod
        self.node = node


def dataclass_fields(res, cls):
    """`dataclasses.fields(cls)`: base classes' fields first, a redefinition keeps its place."""
    out = {}
    for c in reversed(res.mro(cls)):
        if not any(
            "dataclass" in ast.unparse(d) for d in c.node.decorator_list
        ):
            continue
        for stmt in c.node.body:
            if not (isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name)):
                continue
            ann = ast.unparse(stmt.annotation)
            if "ClassVar" in ann or "InitVar" in ann:
                continue
            name = stmt.target.id
            default, init, meta = MISSING, True, None
            v = stmt.value
            if isinstance(v, ast.Call) and ast.unparse(v.func) in ("field", "dataclasses.field"):
                kws = {k.arg: k.value for k in v.keywords}
                if "default" in kws:
                    default = res.expr(c.mod, kws["default"], {})
                if "init" in kws:
                    init = res.expr(c.mod, kws["init"], {})
                if "metadata" in kws:
                    md = res.expr(c.mod, kws["metadata"], {})
                    if isinstance(md, dict) and "argparse_meta" in md:
                        meta = md["argparse_meta"]
                    elif md is UNKNOWN:
                        Warnings.add(f"{c.mod.rel}:{stmt.lineno}: metadata of {name} not read")
            elif v is not None:
                default = res.expr(c.mod, v, {})
            out[name] = Field(name, stmt.annotation, default, init, meta, c.mod, stmt)
    return list(out.values())


def type_args(node):
    s = node.slice
    return list(s.elts) if isinstance(s, ast.Tuple) else [s]


def extract_type(res, mod, node):
    """`ArgumentGroupFactory._extract_type` over an annotation's AST."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return extract_type(res, mod, ast.parse(node.value, mode="eval").body)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        parts = flatten_union(node)
        return union(res, mod, parts)
    if isinstance(node, ast.Subscript):
        origin = ast.unparse(node.value).split(".")[-1]
        args = type_args(node)
        if origin == "Optional":
            return union(res, mod, args + [ast.Constant(None)])
        if origin == "Union":
            flat = []
            for a in args:
                flat.extend(flatten_union(a) if isinstance(a, ast.BinOp) else [a])
            return union(res, mod, flat)
        if origin in ("list", "List"):
            if len(args) != 1:
                raise TypeInferenceError(f"multi-type list {ast.unparse(node)}")
            t = extract_type(res, mod, args[0])
            t["nargs"] = "+"
            return t
        if origin == "Literal":
            values = [res.expr(mod, a, {}) for a in args]
            kinds = {type(v).__name__ for v in values}
            if len(kinds) != 1:
                raise TypeInferenceError(f"mixed Literal {ast.unparse(node)}")
            return {"type": kinds.pop(), "choices": values}
        raise TypeInferenceError(f"unsupported type {ast.unparse(node)}")
    text = ast.unparse(node)
    if text in ("int", "float", "str", "bool"):
        return {"type": text}
    if text.split(".")[-1] == "Callable":
        # typing.Callable has an origin (collections.abc.Callable): the factory refuses it.
        entry = mod.names.get(text.split(".")[0])
        if text.startswith("typing.") or (entry is not None and entry[0] == "import" and entry[1] == "typing"):
            raise TypeInferenceError(f"unsupported type {text}")
    v = res.expr(mod, node, {})
    if isinstance(v, Sym) and v.kind == "class":
        members = res.enum_members(v)
        if members is not None:
            return {"type": v.node.name, "choices": [m.name for m in members]}
        return {"type": v.node.name}
    members = stdlib_enum(mod, node)
    if members is not None:
        return {"type": text.split(".")[-1], "choices": members}
    if text in ("list", "dict", "tuple"):
        return {"type": text}
    return {"type": text}


def stdlib_enum(mod, node):
    """The member names of a standard-library Enum (`signal.Signals`), read from this Python."""
    text = ast.unparse(node)
    head, _, rest = text.partition(".")
    entry = mod.names.get(head)
    if entry is None or entry[0] != "import":
        return None
    _, base, attr = entry
    path = base if attr is None else f"{base}.{attr}"
    if path.split(".")[0] not in sys.stdlib_module_names:
        return None
    import enum
    import importlib

    try:
        obj = importlib.import_module(path) if attr is None else getattr(importlib.import_module(base), attr)
        for part in rest.split(".") if rest else []:
            obj = getattr(obj, part)
    except (ImportError, AttributeError):
        return None
    if isinstance(obj, type) and issubclass(obj, enum.Enum):
        return [m.name for m in obj]
    return None


def flatten_union(node):
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        return flatten_union(node.left) + flatten_union(node.right)
    return [node]


def union(res, mod, parts):
    # typing collapses duplicates and flattens; the factory looks only at the second member.
    if len(parts) >= 2 and is_none(parts[1]):
        return extract_type(res, mod, parts[0])
    if len(parts) == 1:
        return extract_type(res, mod, parts[0])
    raise TypeInferenceError("Unions not supported by argparse: " + " | ".join(ast.unparse(p) for p in parts))


def is_none(node):
    return (isinstance(node, ast.Constant) and node.value is None) or ast.unparse(node) in ("None", "type(None)")


# ---------------------------------------------------------------- stacks


def megatron_parser(index, reg, visitor):
    mod = index.module("megatron.training.arguments")
    if mod is None:
        sys.exit("megatron/training/arguments.py not found")
    fn = visitor.res.name(mod, "add_megatron_arguments")
    if not isinstance(fn, Sym):
        sys.exit("add_megatron_arguments not found")
    # ArgumentParser(add_help=True) declares -h/--help before anything else.
    reg.add(Flag("-h", "help", "", None, None, "help", "argparse", False))
    reg.add(Flag("--help", "help", "", None, None, "help", "argparse", False))
    visitor.call_function(fn, [PARSER], {}, False)


def features(index, res, module, function):
    """The feature classes `function` (e.g. create_features_list) instantiates, in order."""
    mod = index.module(module)
    fn = res.name(mod, function) if mod else UNKNOWN
    if not isinstance(fn, Sym):
        sys.exit(f"{module}.{function} not found")
    out = []

    def walk(fsym, depth):
        calls = [n for n in ast.walk(fsym.node) if isinstance(n, ast.Call)]
        calls.sort(key=lambda n: (n.lineno, n.col_offset))
        for c in calls:
            v = res.expr(fsym.mod, c.func, {})
            if isinstance(v, Sym) and v.kind == "class":
                out.append(v)
            elif isinstance(v, Sym) and v.kind == "func" and depth < 5:
                walk(v, depth + 1)

    walk(fn, 0)
    return out


def feature_args(index, reg, visitor, module, function):
    seen = []
    for cls in features(index, visitor.res, module, function):
        if cls in seen:
            reg.notes.append(f"feature {cls.node.name} listed twice: its register_args runs twice")
        seen.append(cls)
        m = visitor.res.member(cls, "register_args")
        if not isinstance(m, Sym):
            continue
        visitor.call_function(m, [PARSER], {}, False, cls, visitor.owner(m), bound=True)


# ---------------------------------------------------------------- MindSpeed-RL


def config_keys(res, cls):
    """The attributes a config class sets in __init__ before its first `self.update(...)`."""
    init = res.member(cls, "__init__")
    keys = []
    nested = {}
    if not isinstance(init, Sym):
        return keys, nested
    for stmt in init.node.body:
        if any(
            isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "update"
            and isinstance(n.func.value, ast.Name) and n.func.value.id == "self"
            for n in ast.walk(stmt)
        ):
            break
        targets = stmt.targets if isinstance(stmt, ast.Assign) else []
        for t in targets:
            if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self":
                if t.attr not in [k for k, _ in keys]:
                    keys.append((t.attr, stmt.lineno))
                if isinstance(stmt.value, ast.Dict) and checks_subkeys(init.node, t.attr):
                    nested[t.attr] = [
                        (k.value, k.lineno) for k in stmt.value.keys if isinstance(k, ast.Constant)
                    ]
    return keys, nested


def checks_subkeys(init, attr):
    """Whether __init__ refuses keys missing from the dict attribute (`if key not in self.attr: raise`)."""
    for n in ast.walk(init):
        if (
            isinstance(n, ast.Compare)
            and len(n.ops) == 1
            and isinstance(n.ops[0], ast.NotIn)
            and isinstance(n.comparators[0], ast.Attribute)
            and n.comparators[0].attr == attr
        ):
            return True
    return False


def rl_sections(index, res, root):
    """Section name (dotted) -> config class, from the calls in cli/*.py."""
    out = {}
    cli = os.path.join(root, "cli")
    for fname in sorted(os.listdir(cli)):
        if not fname.endswith(".py"):
            continue
        mod = index.module("cli." + fname[:-3])
        if mod is None:
            continue
        for n in ast.walk(mod.node):
            if not (isinstance(n, ast.Call) and n.args):
                continue
            v = res.expr(mod, n.func, {})
            if not (isinstance(v, Sym) and v.kind == "class" and v.mod.name.startswith("mindspeed_rl.config_cls")):
                continue
            for sec in section_paths(n.args[0]):
                out.setdefault(sec, v)
    return out


def section_paths(node):
    """`config.get("a")` -> ["a"]; `config.get("a", {}).get("b", {})` -> ["a.b"]; `{**x, **y}` -> both."""
    if isinstance(node, ast.Dict):
        res = []
        for k, v in zip(node.keys, node.values):
            if k is None:
                res.extend(section_paths(v))
        return res
    parts = []
    while isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get":
        if not (node.args and isinstance(node.args[0], ast.Constant)):
            return []
        parts.append(node.args[0].value)
        node = node.func.value
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant):
        parts.append(node.slice.value)
        node = node.value
    return [".".join(reversed(parts))] if parts else []


# ---------------------------------------------------------------- output


def write(path, header, rows):
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        for line in header:
            f.write(f"# {line}".rstrip() + "\n")
        for row in rows:
            for cell in row:
                if "\t" in cell or "\n" in cell:
                    sys.exit(f"a cell holds a tab or newline: {row}")
            f.write("\t".join(row).rstrip("\t") + "\n")


class Files:
    """Source files numbered, so a row says `3:1260` rather than the path again."""

    ORDER = {"M": 0, "S": 1, "L": 2, "R": 3}

    def __init__(self, places):
        files = set()
        for place in places:
            key, path, _ = place.rsplit(":", 2) if place.count(":") >= 2 else (None, None, None)
            if key is not None:
                files.add((key, path))
        self.files = sorted(files, key=lambda f: (self.ORDER.get(f[0], 9), f[1]))
        self.ids = {f: str(i) for i, f in enumerate(self.files)}

    def short(self, place):
        if place.count(":") < 2:
            return place
        key, path, line = place.rsplit(":", 2)
        return f"{self.ids[(key, path)]}:{line}"

    def header(self):
        return [f"file\t{self.ids[f]}\t{f[0]}\t{f[1]}" for f in self.files]


def flag_rows(reg, files):
    rows = []
    for name in sorted(reg.flags):
        fl = reg.flags[name]
        dest = "" if fl.dest == default_dest(name) else fl.dest
        rows.append([name, fl.kind, fl.type, fmt_choices(fl.choices), fl.nargs or "", dest,
                     "if" if fl.cond else "", ",".join(files.short(a) for a in fl.at)])
    return rows


KINDS = (
    "kind: store_true, store_false, store_const, count, help take no value; value, append, "
    "action:<class> take values as nargs says (empty: exactly one)"
)
TYPES = "type: int, float, str (argparse converts with it), else the converting callable's name; choices | separated"
COND = "cond: if = declared inside a conditional branch or after a guard that may return"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("table", choices=["megatron-lm", "mindspeed-llm", "mindspeed-rl"])
    ap.add_argument("--tree", action="append", required=True, help="KEY=DIR (M Megatron-LM, S MindSpeed, L MindSpeed-LLM, R MindSpeed-RL)")
    ap.add_argument("--source", action="append", default=[], help="KEY<TAB>owner/repo<TAB>commit<TAB>ref<TAB>date")
    ap.add_argument("--title", default="")
    ap.add_argument("--note", action="append", default=[], help="a header note line")
    ap.add_argument("--command", default="tools/flagtable/regenerate")
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    trees = []
    for t in args.tree:
        key, _, root = t.partition("=")
        trees.append((key, root))
    roots = dict(trees)
    # MindSpeed-RL, MindSpeed-LLM, MindSpeed, Megatron-LM: a module name is looked up in that order.
    order = {"R": 0, "L": 1, "S": 2, "M": 3}
    index = Index(sorted(trees, key=lambda t: order.get(t[0], 9)))
    reg = Registry()
    visitor = Visitor(index, reg)
    megatron_parser(index, reg, visitor)
    if args.table in ("mindspeed-llm", "mindspeed-rl"):
        feature_args(index, reg, visitor, "mindspeed_llm.features_manager", "create_features_list")

    header = [args.title] if args.title else []
    header += ["source\t" + s for s in args.source]
    header.append(f"regenerate\t{args.command}")
    header += ["note\t" + n for n in args.note]
    if args.table != "mindspeed-rl":
        files = Files(a for fl in reg.flags.values() for a in fl.at)
        rows = flag_rows(reg, files)
        header += ["note\t" + n for n in reg.notes]
        header += ["note\t" + KINDS, "note\t" + TYPES, "note\t" + COND]
        header += files.header()
        header.append("columns\tname\tkind\ttype\tchoices\tnargs\tdest\tcond\tdeclared_at")
    else:
        res = visitor.res
        sections = rl_sections(index, res, roots["R"])
        classes = []
        for c in sections.values():
            if c not in classes:
                classes.append(c)
        raw = []
        for cls in sorted(classes, key=lambda c: c.node.name):
            keys, nested = config_keys(res, cls)
            megatron = cls.node.name == "MegatronConfig"
            for key, line in sorted(keys):
                at = f"R:{cls.mod.rel}:{line}"
                fl = reg.flags.get("--" + key.replace("_", "-")) if megatron else None
                if megatron and fl is None:
                    raw.append(([cls.node.name, key, "undeclared", "", "", "", ""], at, []))
                elif megatron:
                    raw.append(([cls.node.name, key, fl.kind, fl.type, fmt_choices(fl.choices), fl.nargs or "",
                                 "if" if fl.cond else ""], at, fl.at))
                else:
                    raw.append(([cls.node.name, key, "", "", "", "", ""], at, []))
            for parent, subkeys in sorted(nested.items()):
                for key, line in sorted(subkeys):
                    raw.append(([f"{cls.node.name}.{parent}", key, "", "", "", "", ""], f"R:{cls.mod.rel}:{line}", []))
        files = Files([r[1] for r in raw] + [a for r in raw for a in r[2]])
        rows = [cells + [files.short(at), ",".join(files.short(a) for a in flag_at)] for cells, at, flag_at in raw]
        sec_lines = [(sec, sections[sec].node.name) for sec in sections]
        for sec in list(sections):
            _, nested = config_keys(res, sections[sec])
            sec_lines += [(f"{sec}.{p}", f"{sections[sec].node.name}.{p}") for p in nested]
        sec_lines.append(("model", "MegatronConfig"))
        header += [f"section\t{s}\t{c}" for s, c in sorted(sec_lines)]
        header += ["note\t" + n for n in reg.notes]
        header += ["note\t" + KINDS + "; undeclared: no parser in the stack declares the flag", "note\t" + TYPES,
                   "note\t" + COND]
        header += files.header()
        header.append("columns\tclass\tkey\tkind\ttype\tchoices\tnargs\tcond\tdeclared_at\tflag_declared_at")
    write(args.out, header, rows)
    for w in Warnings.items:
        print("warning: " + w, file=sys.stderr)
    print(f"{args.out}: {len(rows)} rows, {len(reg.notes)} notes, {len(Warnings.items)} warnings", file=sys.stderr)


if __name__ == "__main__":
    main()
