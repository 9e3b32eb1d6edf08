#!/usr/bin/env python3
"""Writes the fake sysfs trees the topology tests read.

Each tree holds only the files SysfsTopology reads, laid out as Linux 6.x
writes them: cpu/online, cpu/cpuN/topology/core_cpus_list (or
thread_siblings_list before v5.4), cpu/cpuN/topology/cluster_cpus_list
(v5.16+; only the cluster_* trees have it), cpu/cpuN/cache/indexK/{level,
type,shared_cpu_list}, node/online, node/nodeN/cpulist. Offline CPUs keep
no topology/ or cache/ directory, as on a real system.

Run from anywhere: python3 generate.py  (rewrites the trees beside it).
"""
import os
import shutil

HERE = os.path.dirname(os.path.abspath(__file__))


def cpulist(cpus):
    cpus = sorted(set(cpus))
    out, i = [], 0
    while i < len(cpus):
        j = i
        while j + 1 < len(cpus) and cpus[j + 1] == cpus[j] + 1:
            j += 1
        out.append(str(cpus[i]) if i == j else f"{cpus[i]}-{cpus[j]}")
        i = j + 1
    return ",".join(out)


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text + "\n")


def tree(name, ncpu, core, caches, nodes, offline=(), siblings_file="core_cpus_list",
         cluster=None):
    """core(c) -> set of siblings; caches: list of (level, type, fn(c) -> set);
    nodes: list of CPU sets (None: no node directory); cluster(c) -> set of
    CPUs in c's cluster (None: no cluster_cpus_list, a pre-5.16 kernel)."""
    root = os.path.join(HERE, name)
    shutil.rmtree(root, ignore_errors=True)
    online = [c for c in range(ncpu) if c not in offline]
    on = set(online)
    write(os.path.join(root, "cpu", "online"), cpulist(online))
    for c in online:
        d = os.path.join(root, "cpu", f"cpu{c}")
        write(os.path.join(d, "topology", siblings_file), cpulist(core(c) & on))
        if cluster is not None:
            write(os.path.join(d, "topology", "cluster_cpus_list"), cpulist(cluster(c) & on))
        for k, (level, typ, fn) in enumerate(caches):
            idx = os.path.join(d, "cache", f"index{k}")
            write(os.path.join(idx, "level"), str(level))
            write(os.path.join(idx, "type"), typ)
            write(os.path.join(idx, "shared_cpu_list"), cpulist(fn(c) & on))
    if nodes is not None:
        write(os.path.join(root, "node", "online"), cpulist(range(len(nodes))))
        for n, cpus in enumerate(nodes):
            write(os.path.join(root, "node", f"node{n}", "cpulist"), cpulist(set(cpus) & on))


def per_core(core):
    return [(1, "Data", core), (1, "Instruction", core), (2, "Unified", core)]


def main():
    # vm2: this kind of 2-vCPU cloud VM: 2 cores without SMT, private L1/L2,
    # one L3 shared by both, one node.
    solo = lambda c: {c}
    tree("vm2", 2, solo, per_core(solo) + [(3, "Unified", lambda c: {0, 1})], [range(2)])

    # intel_2s_smt: 2 sockets x 4 cores x 2 threads, Linux x86 numbering
    # (sibling of cpu k is k + 8), an L3 and a node per socket.
    smt8 = lambda c: {c % 8, c % 8 + 8}
    sock = lambda c: {x for x in range(16) if (x % 8) // 4 == (c % 8) // 4}
    tree("intel_2s_smt", 16, smt8, per_core(smt8) + [(3, "Unified", sock)],
         [sock(0), sock(4)])

    # amd_multi_llc: 1 socket, 4 CCXs of 4 cores x 2 threads, an L3 per CCX
    # (sibling of cpu k is k + 16), one node.
    smt16 = lambda c: {c % 16, c % 16 + 16}
    ccx = lambda c: {x for x in range(32) if (x % 16) // 4 == (c % 16) // 4}
    tree("amd_multi_llc", 32, smt16, per_core(smt16) + [(3, "Unified", ccx)], [range(32)])

    # offline_cpus: 4 cores x 2 threads (sibling of cpu k is k + 4), one L3,
    # CPUs 2 and 5 offline: cores {0,4}, {1}, {3,7}, {6} remain.
    smt4 = lambda c: {c % 4, c % 4 + 4}
    tree("offline_cpus", 8, smt4, per_core(smt4) + [(3, "Unified", lambda c: set(range(8)))],
         [range(8)], offline=(2, 5))

    # no_l3: 4 cores, L1 private, L2 shared by pairs, no L3 (older Atom / ARM
    # style); a pre-5.4 kernel, so thread_siblings_list only; no node
    # directory (CONFIG_NUMA off).
    pair = lambda c: {c - c % 2, c - c % 2 + 1}
    tree("no_l3", 4, solo, [(1, "Data", solo), (1, "Instruction", solo), (2, "Unified", pair)],
         None, siblings_file="thread_siblings_list")

    # snc2: Intel sub-NUMA clustering, 1 socket of 8 cores sharing one L3,
    # split into 2 nodes of 4: the nodes lie inside the LLC.
    tree("snc2", 8, solo, per_core(solo) + [(3, "Unified", lambda c: set(range(8)))],
         [range(4), range(4, 8)])

    # cluster_l2: 8 cores without SMT in 2 clusters of 4, each cluster
    # sharing an L2 (an arm64 part with clusters, or a row of Intel E-core
    # modules), one L3 for all 8, one node; cluster_cpus_list (v5.16+)
    # names the 4 cores of the cluster.
    quad = lambda c: set(range(c - c % 4, c - c % 4 + 4))
    tree("cluster_l2", 8, solo,
         [(1, "Data", solo), (1, "Instruction", solo), (2, "Unified", quad),
          (3, "Unified", lambda c: set(range(8)))],
         [range(8)], cluster=quad)

    # cluster_is_core: an x86 part with a private L2 per core, 4 cores x 2
    # threads (sibling of cpu k is k + 4), one L3, one node. Linux reports
    # each core's L2 sharers as its cluster, so cluster_cpus_list equals
    # core_cpus_list: a degenerate cluster, no level.
    tree("cluster_is_core", 8, smt4, per_core(smt4) + [(3, "Unified", lambda c: set(range(8)))],
         [range(8)], cluster=smt4)

    # cluster_hybrid: an Intel hybrid part in small, 2 P-cores x 2 threads
    # (CPUs 0-3, siblings adjacent) with a private L2 each, and one module of
    # 4 E-cores (CPUs 4-7) sharing an L2; one L3 for all 8, one node. The
    # P-cores' cluster is their core, the E-cores' the module.
    pcore = lambda c: {c - c % 2, c - c % 2 + 1} if c < 4 else {c}
    module = lambda c: pcore(c) if c < 4 else set(range(4, 8))
    tree("cluster_hybrid", 8, pcore,
         [(1, "Data", pcore), (1, "Instruction", pcore), (2, "Unified", module),
          (3, "Unified", lambda c: set(range(8)))],
         [range(8)], cluster=module)


if __name__ == "__main__":
    main()
