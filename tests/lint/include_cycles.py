#!/usr/bin/env python3
"""Fails when the folder-level include graph of denote has a cycle or an edge against the declared order.

Each folder under include/denote/ and src/ is a layer; a file in folder A that includes
"denote/B/..." (or a quoted header that resolves next to it or on the library's -I src path, as the
compiler resolves it) makes an edge A -> B. The declared order, lowest first (a layer includes only
layers listed before it, and itself), ORDER below:

  base < kernels < scalar < tensor < ir < certify < ops < check < eval < typed < autodiff < bounds
       < program < plan < providers < io < verify

(kernels: the numeric kernels on plain arrays, gemm, row sums, the interval mat-vec, the exact
linear folds, the avx2 provider's panels, the one place that calls BLAS, needing only base; scalar:
contexts and formats, needing only base; tensor: Shape and Tensor<S>; ir: op table,
attrs, graph, payload; certify: the certificate checker, which must not see the bound engine or the
search it checks (docs/CERTIFICATES.md); ops: the per-family rules; check: verification and shape inference over
the rules; program: the GraphBuilder and example graphs, which check as they build; plan: capsules,
registry, planner, executor, naming no provider; providers: register themselves through a list
the build generates.)

It prints each cycle found as "a -> b -> a" and each edge against the order (an upward include, or
a folder the order does not name) with the include line as evidence. `--print-order` prints the
order and the edges that hold it up, the text docs/ARCHITECTURE.md carries.

Usage: include_cycles.py <repo root> [--print-order]
"""
import os
import re
import sys

ORDER = ["base", "kernels", "scalar", "tensor", "ir", "certify", "ops", "check", "eval", "typed", "autodiff", "bounds", "program", "plan",
         "providers", "io", "verify"]

INCLUDE = re.compile(r'^\s*#\s*include\s*[<"]([^">]+)[">]')


def folder_of(root, path):
    rel = os.path.relpath(path, root).split(os.sep)
    if rel[0] == "include" and len(rel) > 3 and rel[1] == "denote":
        return rel[2]
    if rel[0] == "src" and len(rel) > 2:
        return rel[1]
    return None


def target_folder(root, path, inc):
    if inc.startswith("denote/"):
        parts = inc.split("/")
        return parts[1] if len(parts) > 2 else None
    # A quoted include resolves like the compiler: next to the including file first, then on the
    # library's -I src path ("plan/thread_pool.h" from src/scalar/ is an edge scalar -> plan).
    for base in (os.path.dirname(path), os.path.join(root, "src")):
        resolved = os.path.normpath(os.path.join(base, inc))
        if os.path.exists(resolved):
            return folder_of(root, resolved)
    return None


def edges_of(root):
    edges = {}
    for top in ("include/denote", "src"):
        for dirpath, _, files in os.walk(os.path.join(root, top)):
            for name in sorted(files):
                if not name.endswith((".h", ".cc", ".def", ".inc")):
                    continue
                path = os.path.join(dirpath, name)
                src = folder_of(root, path)
                if src is None:
                    continue
                with open(path, encoding="utf-8", errors="replace") as f:
                    for lineno, line in enumerate(f, 1):
                        m = INCLUDE.match(line)
                        if not m:
                            continue
                        dst = target_folder(root, path, m.group(1))
                        if dst is None or dst == src:
                            continue
                        where = f"{os.path.relpath(path, root)}:{lineno}: {line.strip()}"
                        edges.setdefault(src, {}).setdefault(dst, where)
    return edges


def find_cycles(edges):
    """One cycle per strongly connected component with more than one folder (Tarjan, iterative)."""
    index, low, on_stack, stack, sccs, counter = {}, {}, set(), [], [], [0]
    nodes = sorted(set(edges) | {d for e in edges.values() for d in e})
    for start in nodes:
        if start in index:
            continue
        work = [(start, iter(sorted(edges.get(start, {}))))]
        index[start] = low[start] = counter[0]
        counter[0] += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            v, it = work[-1]
            advanced = False
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(edges.get(w, {})))))
                    advanced = True
                    break
                if w in on_stack:
                    low[v] = min(low[v], index[w])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                scc = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    scc.append(w)
                    if w == v:
                        break
                if len(scc) > 1:
                    sccs.append(sorted(scc))
    cycles = []
    for scc in sccs:
        members = set(scc)
        # Shortest path back to the first member: breadth-first inside the component.
        first = scc[0]
        prev, frontier, found = {first: None}, [first], None
        while frontier and found is None:
            nxt = []
            for v in frontier:
                for w in sorted(edges.get(v, {})):
                    if w not in members:
                        continue
                    if w == first:
                        found = v
                        break
                    if w not in prev:
                        prev[w] = v
                        nxt.append(w)
                if found is not None:
                    break
            frontier = nxt
        path = [found]
        while prev[path[-1]] is not None:
            path.append(prev[path[-1]])
        path.reverse()
        cycles.append(path + [first])
    return cycles


def order_violations(edges):
    """Edges from a layer to a later one in ORDER, or touching a folder ORDER does not name."""
    pos = {f: i for i, f in enumerate(ORDER)}
    out = []
    for a in sorted(edges):
        for b in sorted(edges[a]):
            if a not in pos or b not in pos:
                out.append(f"{a} -> {b}: '{a if a not in pos else b}' is not in the declared order ({edges[a][b]})")
            elif pos[b] > pos[a]:
                out.append(f"{a} -> {b}: {b} is above {a} in the declared order ({edges[a][b]})")
    return out


def print_order(edges):
    print("  " + " < ".join(ORDER))
    for a in reversed(ORDER):
        below = sorted((b for b in edges.get(a, {})), key=ORDER.index)
        if below:
            print(f"  {a:9} includes {', '.join(below)}")


def main():
    root = sys.argv[1] if len(sys.argv) > 1 and not sys.argv[1].startswith("--") else "."
    edges = edges_of(root)
    if "--print-order" in sys.argv:
        print_order(edges)
        return 0
    cycles = find_cycles(edges)
    violations = order_violations(edges)
    for cycle in cycles:
        print("include cycle: " + " -> ".join(cycle))
        for a, b in zip(cycle, cycle[1:]):
            print("  " + edges[a][b])
    for v in violations:
        print("include order: " + v)
    if cycles or violations:
        return 1
    print("include graph: no cycles between folders; every include follows the declared order")
    return 0


if __name__ == "__main__":
    sys.exit(main())
