#!/usr/bin/env python3
"""Check the workspace's layout rules; exit 1 with a report when one is broken.

A layer a newcomer can walk has no module cycles, no file too long to read, and no crate
that swallows the rest. So, for the Rust crates under crates/*:

1. No module cycle in any crate. Each module file is a node (lib.rs/main.rs is `crate`,
   foo.rs or foo/mod.rs is `crate::foo`); A -> B when A's code names a path that resolves
   into B (`use crate::b::..`, `super::x`, `self::c::f()`, `child::f()`, grouped uses), to the
   deepest module file along the path; `crate::Name` follows one `pub use m::Name` re-export.
   Not edges: comments, strings, `mod x;` declarations, a parent's `pub use child::X`, and
   anything under `#[cfg(test)]`. Every strongly connected component of size > 1 is reported
   with one example file:line per edge.
2. No source file above 1,000 lines (every *.rs under crates/, tests included).
3. No crate above 30 % of the workspace's Rust lines (all *.rs under crates/<name>/).

Each src/lib.rs or src/main.rs is one crate's root; fuzz/ (no src/, its targets are
separate binaries) is left out. Paths are found by a small lexer, not by the compiler: a
macro that builds a path from pieces, or a path in a string (serde's `with = "..."`), is not
seen. Standard library only; `--selftest` checks the checker on a few synthetic crates.
"""
import argparse
import re
import sys
import tempfile
from pathlib import Path

MAX_FILE_LINES = 1000
MAX_CRATE_SHARE = 30.0
ROOT = Path(__file__).resolve().parent.parent
IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# Skipped: line comments, (raw, byte) strings, char literals; a block comment's `/*` is
# followed by hand (they nest). Kept: identifiers, numbers, `::`, single punctuation.
LEX = re.compile(r"(?P<skip>//[^\n]*|[bc]?r(?P<h>#*)\".*?\"(?P=h)|[bc]?\"(?:\\.|[^\"\\])*\""
                 r"|b?'(?:\\.[^']*|[^\\'\n])')|(?P<open>/\*)"
                 r"|(?P<tok>[A-Za-z_][A-Za-z0-9_]*|[0-9][A-Za-z0-9_]*|::|\S)", re.S)
COMMENT = re.compile(r"/\*|\*/")


# ---- lexing: the code's tokens, with their lines; comments and literals dropped -----------

def tokenize(src):
    """(tokens, their lines) of the code in `src`."""
    toks, lines, pos, line = [], [], 0, 1
    while m := LEX.search(src, pos):
        start, end = m.span()
        line += src.count("\n", pos, start)
        if m.group("open"):
            depth = 1
            while depth and (c := COMMENT.search(src, end)):
                depth, end = depth + (1 if c.group() == "/*" else -1), c.end()
            end = end if depth == 0 else len(src)
        elif m.group("tok"):
            toks.append(m.group("tok"))
            lines.append(line)
        line += src.count("\n", start, end)
        pos = end
    return toks + [";"], lines + [line]  # a sentinel, so that toks[k + 1] is safe


# ---- parsing one file: module declarations, uses, paths, re-exports ----------------------

def close(toks, i):
    """Index just past the bracket group that opens at toks[i]."""
    depth = 0
    for k in range(i, len(toks)):
        depth += (toks[k] in "([{") - (toks[k] in ")]}")
        if depth == 0:
            return k + 1
    return len(toks)


def item_end(toks, i):
    """Index past the item (or field, arm, statement) at toks[i], or of its block's closer."""
    depth, is_item = 0, False
    for k in range(i, len(toks)):
        t = toks[k]
        is_item |= depth == 0 and t in ("fn", "impl", "struct", "enum", "trait", "type", "mod")
        depth += (t in "([{") - (t in ")]}")
        if depth < 0:
            return k
        if depth == 0 and (t == "}" or t == ";" or t == "," and not is_item):
            return k + 1
    return len(toks)


def use_tree(toks, k, prefix, out):
    """Parse the use tree at toks[k] into `out` as (segments, alias); return the next index."""
    segs = ["::"] if toks[k] == "::" else list(prefix)  # `use ::extern_crate::..`
    k += toks[k] == "::"
    while IDENT.fullmatch(toks[k]):
        segs.append(toks[k])
        if toks[k + 1] != "::":
            alias = toks[k + 2] if toks[k + 1] == "as" else None
            out.append((segs, alias))
            return k + 3 if alias else k + 1
        k += 2
    if toks[k] == "*":
        out.append((segs + ["*"], None))
    elif toks[k] == "{":
        k += 1
        while toks[k] not in "};":
            start, k = k, use_tree(toks, k, segs, out)
            k += toks[k] == "," or k == start
    return k + 1


def parse_file(text):
    """The facts of one file about modules. `scope` is the inline module path in the file."""
    toks, lines = tokenize(text)
    info = {"mods": [], "inline": [], "refs": [], "reexports": {}, "test": False}
    scope, depth, i = [], 0, 0  # scope: [(inline module name, brace depth at its `{`)]
    while i < len(toks):
        t, nxt, here = toks[i], toks[i + 1:i + 3], tuple(name for name, _ in scope)
        if t == "#" and nxt[0] in "[!":  # an attribute; skip what `#[cfg(test)]` gates
            end = close(toks, i + 1 + (nxt[0] == "!"))
            attr = toks[i:end]
            if "cfg" in attr and "test" in attr and "not" not in attr:
                if nxt[0] == "!" and depth == 0:  # `#![cfg(test)]`: all the file
                    return dict(info, test=True)
                while toks[end] == "#":  # further attributes
                    end = close(toks, end + 1 + (toks[end + 1] == "!"))
                i = item_end(toks, end)  # a test module `mod tests;` never gets read
            else:
                i = end
            continue
        if t == "mod" and IDENT.fullmatch(nxt[0]) and nxt[1] in ("{", ";"):
            info["mods" if nxt[1] == ";" else "inline"].append(here + (nxt[0],))
            if nxt[1] == "{":
                scope.append((nxt[0], depth))
                depth += 1
            i += 3
            continue
        if t == "{":
            depth += 1
        elif t == "}":
            depth -= 1
            if scope and scope[-1][1] == depth:
                scope.pop()
        elif t == "use" and toks[i - 1] != "::":
            back = toks[max(0, i - 6):i]  # `pub use`, `pub(crate) use`
            after_pub = back[len(back) - back[::-1].index("pub"):] if "pub" in back else [";"]
            public = not {";", "{", "}"} & set(after_pub)
            trees = []
            k = use_tree(toks, i + 1, [], trees)
            for segs, alias in trees:
                info["refs"].append((here, segs, lines[i], public))
                if public and not here:  # the file's re-exports, by the name they export
                    info["reexports"][alias or segs[-1 - (segs[-1] == "self")]] = segs
            i = k
            continue
        elif (IDENT.fullmatch(t) and nxt[0] == "::" and IDENT.fullmatch(nxt[1])
              and toks[i - 1] != "::" and toks[i - 2:i] != ["(", "in"]):  # not `pub(in path)`
            k = i + 1
            while toks[k] == "::" and IDENT.fullmatch(toks[k + 1]):
                k += 2
            info["refs"].append((here, toks[i:k:2], lines[i], False))
            i = k
            continue
        i += 1
    return info


# ---- one crate: its module tree, the graph, the cycles -----------------------------------

def crate_graph(root_file):
    """(files {node: path}, edges {(a, b): (path, line)}) of the crate rooted at root_file."""
    files, infos, mods = {}, {}, {}  # mods: module path (file or inline) -> its file's node
    todo = [((), root_file)]
    while todo:
        node, path = todo.pop()
        info = parse_file(path.read_text(encoding="utf-8", errors="replace"))
        if info["test"]:
            continue
        files[node], infos[node], mods[node] = path, info, node
        mods.update((node + inline, node) for inline in info["inline"])
        owner_dir = path.parent if node == () or path.name == "mod.rs" else path.with_suffix("")
        for decl in info["mods"]:  # `mod x;` is x.rs or x/mod.rs (inline modules: dirs)
            base = owner_dir.joinpath(*decl)
            found = [f for f in (base.with_suffix(".rs"), base / "mod.rs") if f.is_file()]
            todo += [(node + decl, found[0])] if found else []
    kids = {}  # module path -> the names of its child modules
    for m in filter(None, mods):
        kids.setdefault(m[:-1], set()).add(m[-1])

    def resolve(scope, segs, follow=True):
        """The file node that `segs`, named in module `scope`, points into (None: not ours)."""
        first = segs[0]
        if first == "crate":
            base, rest = (), segs[1:]
        elif first in ("self", "super"):
            base, k = scope, int(first == "self")
            while k < len(segs) and segs[k] == "super":
                if not base:
                    return None
                base, k = base[:-1], k + 1
            rest = segs[k:]
        elif first in kids.get(scope, ()):
            base, rest = scope, segs
        else:
            return None  # an external crate, a local item, a type's associated path
        while rest and base + (rest[0],) in mods:
            base, rest = base + (rest[0],), rest[1:]
        reexports = infos[()]["reexports"] if base == () and follow else {}
        if rest and rest[0] in reexports:  # `crate::Name`, lib.rs has `pub use m::Name`
            return resolve(base, reexports[rest[0]], follow=False) or ()
        return mods[base]

    edges = {}
    for node, info in infos.items():
        for scope, segs, line, public in info["refs"]:
            target = resolve(node + scope, segs)
            if target is None or target == node:
                continue
            if public and target[:len(node)] == node:  # a facade `pub use child::X`
                continue
            edges.setdefault((node, target), (files[node], line))
    return files, edges


def cycles(nodes, edges):
    """Strongly connected components of more than one node (Tarjan's algorithm)."""
    succ = {n: sorted(b for a, b in edges if a == n) for n in nodes}
    index, low, stack, found = {}, {}, [], []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in succ[v]:
            if w not in index:
                visit(w)
            if w in stack:
                low[v] = min(low[v], low[w])
        if low[v] == index[v]:
            comp = stack[stack.index(v):]
            del stack[stack.index(v):]
            if len(comp) > 1:
                found.append(sorted(comp))

    for v in sorted(nodes):
        if v not in index:
            visit(v)
    return found


def label(node):
    return "::".join(("crate",) + node)


# ---- the rules ---------------------------------------------------------------------------

def crate_dirs(root, only=None):
    dirs = sorted(d for d in (root / "crates").iterdir() if (d / "Cargo.toml").is_file())
    return [d for d in dirs if only in (None, d.name, "apiary-" + d.name)]


def rs_lines(crate_dir):
    """{path: line count} of every *.rs under a crate (but a build's target/)."""
    return {p: len(p.read_text(encoding="utf-8", errors="replace").splitlines())
            for p in crate_dir.rglob("*.rs") if "target" not in p.relative_to(crate_dir).parts}


def check(root, only=None):
    """([problem lines], [summary lines]) for the workspace at `root`."""
    chosen = crate_dirs(root, only)
    if not chosen:
        return [f"no crate named {only!r} under {root / 'crates'}"], []
    rel = lambda p: p.relative_to(root).as_posix()
    problems, n_cycles = [], 0
    for crate in chosen:
        for root_file in (crate / "src" / "lib.rs", crate / "src" / "main.rs"):
            if not root_file.is_file():
                continue
            files, edges = crate_graph(root_file)
            for comp in cycles(files, edges):
                n_cycles += 1
                problems.append(f"cycle in {rel(crate)} ({len(comp)} modules): "
                                + ", ".join(map(label, comp)))
                problems += [f"    {label(a)} -> {label(b)}   {rel(path)}:{line}"
                             for (a, b), (path, line) in sorted(edges.items())
                             if a in comp and b in comp]
    summary = [f"cycles: {n_cycles or 'none'} in {len(chosen)} crate{'s' * (len(chosen) > 1)}"]

    lines = {c: rs_lines(c) for c in crate_dirs(root)}
    mine = {p: n for c in chosen for p, n in lines[c].items()}
    problems += [f"file too long: {rel(p)} {n} lines (limit {MAX_FILE_LINES})"
                 for p, n in sorted(mine.items(), key=lambda kv: -kv[1]) if n > MAX_FILE_LINES]
    if mine:
        longest = max(mine, key=mine.get)
        summary.append(f"longest file: {rel(longest)} {mine[longest]} lines")

    total = sum(sum(v.values()) for v in lines.values()) or 1
    share = {c.name: 100.0 * sum(v.values()) / total for c, v in lines.items()}
    if any(share[c.name] > MAX_CRATE_SHARE for c in chosen):
        problems.append(f"crate above {MAX_CRATE_SHARE:g} % of the workspace's {total} Rust lines:")
        problems += [f"    {name} {pct:.1f} %" + " <- too big" * (pct > MAX_CRATE_SHARE)
                     for name, pct in sorted(share.items(), key=lambda kv: -kv[1])]
    biggest = max((c.name for c in chosen), key=share.get)
    summary.append(f"biggest crate: {biggest} {share[biggest]:.1f} %")
    return problems, summary


# ---- self-test ---------------------------------------------------------------------------

SELFTEST = {  # crate: ({file: source}, the cycles expected)
    "cycle": ({"lib.rs": "mod a;\nmod b;\n", "a.rs": "use crate::b::g;\npub fn f() { g() }\n",
               "b.rs": "pub fn g() { crate::a::f() }\n"}, [[("a",), ("b",)]]),
    "grouped": ({"lib.rs": "mod a;\nmod b;\nmod n;\n", "a.rs": "use crate::{b::{x, y}, n::c::Z};\n",
                 "b.rs": "", "n/mod.rs": "pub mod c;\n", "n/c.rs": "fn f() { super::super::a::g() }\n"},
                [[("a",), ("n", "c")]]),
    "test_module": ({"lib.rs": "mod a;\nmod b;\n", "a.rs": "pub fn f() { crate::b::g() }\n",
                     "b.rs": "pub fn g() {}\n#[cfg(test)]\nmod tests {\n    use super::*;\n"
                             "    use crate::a::f;\n}\n"}, []),
    "literals": ({"lib.rs": "mod a;\nmod b;\n", "a.rs": "pub fn f() { crate::b::g() }\n",
                  "b.rs": "// crate::a::f()\n/* crate::a /* nested */ crate::a */\n/// [`crate::a`]\n"
                          "fn g<'a>() { (\"crate::a::f\", r#\"crate::a\"#, '\"', b'\\'', 'x'); }\n"}, []),
    "facade": ({"lib.rs": "mod p;\n", "p/mod.rs": "mod c;\npub use c::X;\npub fn h() {}\n",
                "p/c.rs": "pub struct X;\nfn f() { super::h() }\n"}, []),
    "child_call": ({"lib.rs": "mod p;\n", "p/mod.rs": "mod c;\npub fn h() { c::f() }\n",
                    "p/c.rs": "pub fn f() { super::h() }\n"}, [[("p",), ("p", "c")]]),
    "root_reexport": ({"lib.rs": "mod a;\nmod b;\npub use a::Thing;\n",
                       "a.rs": "pub struct Thing;\npub fn f() { crate::b::g() }\n",
                       "b.rs": "use crate::Thing;\npub fn g() {}\n"}, [[("a",), ("b",)]]),
}


def selftest():
    """Check the cycle finder on the synthetic crates of SELFTEST, built in a temp dir."""
    failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        for name, (sources, want) in SELFTEST.items():
            for rel_path, text in sources.items():
                path = Path(tmp, name, "src", rel_path)
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(text)
            got = cycles(*crate_graph(Path(tmp, name, "src", "lib.rs")))
            failed += got != want
            print(f"selftest {name}: " + ("ok" if got == want else f"FAILED: {got}, want {want}"))
    return 1 if failed else 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--crate", help="check one crate only (its directory or package name)")
    parser.add_argument("--quiet", action="store_true", help="print nothing when all passes")
    parser.add_argument("--selftest", action="store_true", help="check this checker")
    args = parser.parse_args()
    if args.selftest:
        return selftest()
    problems, summary = check(ROOT, args.crate)
    if problems or not args.quiet:
        print("\n".join(problems + summary))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
