#!/usr/bin/env python3
"""Fails when the folder-level include graph of denote has a cycle.

Each folder under include/denote/ and src/ is a layer; a file in folder A that includes
"denote/B/..." (or a src-relative "../B/..." header) makes an edge A -> B. The intended order,
lowest first (a layer includes only layers listed before it, and itself):

  base < scalar < tensor < ir < ops < check < eval < typed < bounds < program < plan < providers < io

(scalar: contexts and formats, needing only base; tensor: Shape and Tensor<S>; ir: op table,
attrs, graph, payload; ops: the per-family rules; check: verification and shape inference over
the rules; program: the GraphBuilder and example graphs, which check as they build; plan: capsules,
registry, planner, executor, naming no provider; providers: register themselves through a list
the build generates.)

The test checks for cycles only (a cycle means two layers cannot be built or understood apart);
it prints each cycle found as "a -> b -> a" with one include line per edge as evidence.

Usage: include_cycles.py <repo root>
"""
import os
import re
import sys

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
    resolved = os.path.normpath(os.path.join(os.path.dirname(path), inc))
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


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else "."
    edges = edges_of(root)
    cycles = find_cycles(edges)
    if not cycles:
        print("include graph: no cycles between folders")
        return 0
    for cycle in cycles:
        print("include cycle: " + " -> ".join(cycle))
        for a, b in zip(cycle, cycle[1:]):
            print("  " + edges[a][b])
    return 1


if __name__ == "__main__":
    sys.exit(main())
