# Prints the public API of the Python package in sys.argv[1] as JSON, read
# from its source with ast (nothing of it is imported): every name of
# __all__ and the fixtures of pytest_plugin.py. refdoc.PythonHelpers runs it
# (python3 -c) and writes docs/reference/python-helpers.md from its output.
import ast
import json
import os
import sys

pkg = sys.argv[1]
sources = {}
trees = {}


def module(name):
    if name not in trees:
        path = os.path.join(pkg, name + ".py")
        with open(path, encoding="utf-8") as f:
            sources[name] = f.read().splitlines()
        trees[name] = ast.parse("\n".join(sources[name]), path, type_comments=True)
    return trees[name]


def first_sentence(doc):
    """The docstring's first paragraph on one line, up to its first sentence."""
    if not doc:
        return ""
    para = " ".join(doc.strip().split("\n\n")[0].split())
    for end in (". ", ".) "):
        at = para.find(end)
        if at >= 0:
            return para[:at + 1]
    return para


def comment_above(mod, lineno):
    """The #: comment lines just above a line (Sphinx's attribute docs)."""
    lines, out = sources[mod], []
    i = lineno - 2
    while i >= 0 and lines[i].strip().startswith("#:"):
        out.insert(0, lines[i].strip()[2:].strip())
        i -= 1
    return " ".join(out)


def split_top(text):
    """Splits "A, B[C, D], E" at its top-level commas."""
    parts, depth, cur = [], 0, ""
    for ch in text:
        if ch in "[(":
            depth += 1
        elif ch in "])":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        parts.append(cur.strip())
    return parts


def signature(fn, method=False):
    """name(arg: type = default, ...) -> type, the types from the annotations
    or from a "# type: (...) -> R" comment."""
    types, ret = [], None
    if fn.type_comment:
        head, _, ret = fn.type_comment.partition("->")
        types = split_top(head.strip()[1:-1])
        ret = ret.strip()
    a = fn.args
    positional = a.posonlyargs + a.args
    if method and positional and positional[0].arg in ("self", "cls"):
        positional = positional[1:]
    defaults = [None] * (len(positional) - len(a.defaults)) + list(a.defaults)
    params, t = [], 0

    def typed(arg):
        nonlocal t
        ann = ast.unparse(arg.annotation) if arg.annotation else (types[t] if t < len(types) else "")
        t += 1
        return arg.arg + (": " + ann if ann else "")

    for arg, d in zip(positional, defaults):
        params.append(typed(arg) + ("" if d is None else (" = " if arg.annotation or types else "=") + ast.unparse(d)))
    if a.vararg:
        params.append("*" + typed(a.vararg))
    elif a.kwonlyargs:
        params.append("*")
    for arg, d in zip(a.kwonlyargs, a.kw_defaults):
        params.append(typed(arg) + ("" if d is None else "=" + ast.unparse(d)))
    if a.kwarg:
        params.append("**" + typed(a.kwarg))
    if fn.returns is not None:
        ret = ast.unparse(fn.returns)
    return "%s(%s)%s" % (fn.name, ", ".join(params), " -> " + ret if ret else "")


def is_typeddict(cls):
    return any(ast.unparse(b) in ("TypedDict", "typing.TypedDict") for b in cls.bases)


def describe_class(mod, cls, name):
    if is_typeddict(cls):
        members = []
        for node in cls.body:
            if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                line = sources[mod][node.lineno - 1]
                note = line.split("#", 1)[1].strip() if "#" in line else comment_above(mod, node.lineno)
                members.append({"signature": "%s: %s" % (node.target.id, ast.unparse(node.annotation)), "doc": note})
        total = next((k.value for k in cls.keywords if k.arg == "total"), None)
        sig = "class %s(TypedDict%s)" % (name, ", total=False" if isinstance(total, ast.Constant) and total.value is False else "")
        return {"kind": "typeddict", "name": name, "signature": sig, "doc": first_sentence(ast.get_docstring(cls)), "members": members}
    members = []
    for node in cls.body:
        if isinstance(node, ast.FunctionDef) and node.name == "__init__":
            for sub in ast.walk(node):
                if isinstance(sub, ast.Assign) and len(sub.targets) == 1:
                    tgt = sub.targets[0]
                    if isinstance(tgt, ast.Attribute) and isinstance(tgt.value, ast.Name) and tgt.value.id == "self" \
                            and not tgt.attr.startswith("_"):
                        kind = ": " + sub.type_comment if sub.type_comment else ""
                        members.append({"signature": "." + tgt.attr + kind, "doc": comment_above(mod, sub.lineno)})
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):  # a dataclass's fields
            members.append({"signature": ".%s: %s" % (node.target.id, ast.unparse(node.annotation)), "doc": comment_above(mod, node.lineno)})
    for node in cls.body:
        if isinstance(node, ast.FunctionDef) and not node.name.startswith("_"):
            prop = any(ast.unparse(d) == "property" for d in node.decorator_list)
            sig = "." + (node.name if prop else signature(node, method=True))
            if prop and node.type_comment:
                sig += ": " + node.type_comment.partition("->")[2].strip()
            members.append({"signature": sig, "doc": first_sentence(ast.get_docstring(node))})
    bases = ", ".join(ast.unparse(b) for b in cls.bases)
    return {"kind": "class", "name": name, "signature": "class %s%s" % (name, "(%s)" % bases if bases else ""),
            "doc": first_sentence(ast.get_docstring(cls)), "members": members}


def describe(mod, orig, name):
    tree = module(mod)
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == orig:
            return {"kind": "function", "name": name, "signature": signature(node).replace(orig + "(", name + "(", 1),
                    "doc": first_sentence(ast.get_docstring(node))}
        if isinstance(node, ast.ClassDef) and node.name == orig:
            return describe_class(mod, node, name)
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == orig for t in node.targets):
            if isinstance(node.value, ast.Call) and ast.unparse(node.value.func) == "TypedDict":
                keys = node.value.args[1]
                members = [{"signature": "%s: %s" % (k.value, ast.unparse(v)), "doc": ""} for k, v in zip(keys.keys, keys.values)]
                return {"kind": "typeddict", "name": name, "signature": "%s = TypedDict(%r, {...}, total=False)" % (name, orig),
                        "doc": comment_above(mod, node.lineno), "members": members}
            return {"kind": "constant", "name": name, "doc": comment_above(mod, node.lineno) + " `" + ast.unparse(node.value) + "`"}
    raise SystemExit("pyhelpers: %s is not defined at the top of %s.py" % (orig, mod))


init = module("__init__")
origin = {}
exported = []
for node in init.body:
    if isinstance(node, ast.ImportFrom) and node.level == 1:
        for alias in node.names:
            origin[alias.asname or alias.name] = (node.module, alias.name)
    if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets):
        exported = [e.value for e in node.value.elts]
if not exported:
    raise SystemExit("pyhelpers: no __all__ in __init__.py")

items = []
for name in exported:
    if name == "__version__":
        items.append({"kind": "constant", "name": name, "doc": "The installed package's version (PEP 440), from its metadata."})
        continue
    if name not in origin:
        raise SystemExit("pyhelpers: %s of __all__ is not imported in __init__.py" % name)
    items.append(describe(*origin[name], name))

plugin = module("pytest_plugin")
for node in plugin.body:
    if isinstance(node, ast.FunctionDef):
        for d in node.decorator_list:
            text = ast.unparse(d)
            if text.startswith("pytest.fixture"):
                scope = "function"
                if isinstance(d, ast.Call):
                    for k in d.keywords:
                        if k.arg == "scope":
                            scope = k.value.value
                items.append({"kind": "fixture", "name": node.name, "scope": scope,
                              "doc": first_sentence(ast.get_docstring(node))})

order = {"function": 0, "fixture": 1, "constant": 2, "class": 3, "typeddict": 4}
items.sort(key=lambda it: (order[it["kind"]], it["name"]))
json.dump(items, sys.stdout, indent=1)
