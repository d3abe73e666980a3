"""Drive the paper's Python artifact (github mshubhankar/DPMeasures) on one
table, one constraint file and one ε, without editing its files.

Run by benches/compare.sh with a Python that has the artifact's
dependencies. The artifact's own scripts hard-code their inputs
(create_graph.py samples 10,000 rows of datasets/<name>/inputDB2.csv and
adds noise; compute_measures.py loops over seven ε and ten repeats of
pickled graphs), so this driver imports its modules (util, graph_algos)
and calls their functions in the order those two scripts do, for ONE
graph, ONE ε and ONE release of each measure:

1. graph build (create_graph.py, without its sampling and noise): read the
   CSV with the artifact's read_csv options, util.build_dynamic_queries +
   util.constraints_check (pandasql self-join in SQLite), then a networkx
   Graph with every row as a node and one edge per violating pair
   (iterrows, as create_graph.py does). The pickle/CSV round trip between
   the two scripts is skipped.
2. I_MI and I_P (compute_measures.py): the θ candidates it builds from the
   row count, for `bound_hier` util.get_upperbound (reading the table and
   a dcs.txt again, as it does), then graph_algos.nodedp_add_edge_nedges_lap
   and nodedp_add_edge_pdnodes_lap with the ε arguments it passes.
3. I_R: graph_algos.vertex_cover(G, ε) (random-order greedy cover; no
   Gurobi needed).

Not done: util.I_lin_R, the Gurobi LP that compute_measures.py runs on
every graph as its non-private reference for I_R's error; it is not part
of any release, and the pip build of gurobipy is size-limited (2,000
variables), below a 10k-row dirty table's problematic rows. If gurobipy is
not installed at all, util's top-level import of it is satisfied by an
empty stand-in module (reported in "notes").

Prints one JSON line on standard output: the exact graph facts, the three
noisy releases, the greedy cover size and per-phase seconds. The
artifact's own prints go to standard error.
"""

import argparse
import contextlib
import json
import os
import sys
import tempfile
import time
import types

# create_graph.py's read_csv options: only these strings are NULL.
NA_VALUES = ['-1.#IND', '1.#QNAN', '1.#IND', '-1.#QNAN', '#N/A N/A', '#N/A', 'N/A',
             'n/a', '', '#NA', 'NULL', 'null', 'NaN', '-NaN', 'nan', '-nan', '']
ALGOS = ['bound_hier', 'hier_expomech', 'expomech', 'baseline_maxdeg']


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    p.add_argument('--artifact', required=True, help='a checkout of DPMeasures')
    p.add_argument('--data', required=True, help='CSV table with a header row')
    p.add_argument('--dcs', required=True, help='constraints, not(t1.A=t2.A&...) per line')
    p.add_argument('--epsilon', type=float, default=1.0)
    p.add_argument('--algo', default='bound_hier', choices=ALGOS)
    return p.parse_args()


def epsilon_shares(epsilon, algo):
    """compute_measures.py's split of ε: (measure ε, EM ε, upper-bound ε)."""
    if 'baseline' in algo:
        return epsilon, None, None
    expo_eps = epsilon * 0.4  # optimization_eps_percentage
    measure_eps = epsilon - expo_eps
    bound_eps = None
    if algo == 'bound_hier':
        bound_eps = 0.25 * expo_eps  # bound_eps_percentage
        expo_eps -= bound_eps
    return measure_eps, expo_eps, bound_eps


def theta_candidates(n_rows, algo):
    """compute_measures.py's candidates, with our row count for its n_rows."""
    if algo == 'baseline_maxdeg':
        return [n_rows]
    step = n_rows // 10
    top = int(n_rows / step) * step
    return [1, 5, 10, 100, 500] + list(range(step, top, step))


def main():
    args = parse_args()
    notes = []
    t0 = time.perf_counter()
    sys.path.insert(0, os.path.abspath(args.artifact))
    try:
        import gurobipy  # noqa: F401  (util imports it at top level)
    except ImportError:
        stub = types.ModuleType('gurobipy')
        stub.GRB = types.SimpleNamespace(CONTINUOUS='C', MINIMIZE=1)
        sys.modules['gurobipy'] = stub
        notes.append('gurobipy not installed: stubbed (only util.I_lin_R uses it, not called)')
    import networkx as nx
    import pandas as pd
    import graph_algos
    import util
    phase = {'import_s': time.perf_counter() - t0}

    constraints = [line.strip() for line in open(args.dcs)]
    constraints = [c for c in constraints if c and not c.startswith('#')]
    if not all(c.replace(' ', '').startswith('not(') for c in constraints):
        sys.exit(f"{args.dcs}: the artifact reads only the not(t1.A=t2.A&...) form")
    constraints = [c.replace(' ', '_') for c in constraints]
    # util.get_upperbound reads <dir>/dcs.txt: give it the same constraints.
    dc_dir = tempfile.mkdtemp(prefix='dpmeasures-dcs-')
    with open(os.path.join(dc_dir, 'dcs.txt'), 'w') as f:
        f.write('\n'.join(constraints) + '\n')

    t = time.perf_counter()
    df = pd.read_csv(args.data, keep_default_na=False, na_values=NA_VALUES, header=0)
    phase['read_s'] = time.perf_counter() - t

    t = time.perf_counter()
    with contextlib.redirect_stdout(sys.stderr):
        all_columns = {c: c.replace(' ', '_') for c in df.columns}
        df = df.rename(columns=all_columns)
        queries = util.build_dynamic_queries(constraints, df)
        pairs, _ = util.constraints_check(df, constraints, all_columns, queries[0], queries[1])
        G = nx.Graph()
        for i in range(len(df)):
            G.add_node(i)
        for _, row in pairs.iterrows():
            if row['id1'] != row['id2']:
                G.add_edge(row['id1'], row['id2'])
    phase['graph_s'] = time.perf_counter() - t

    n_rows = len(df)
    if n_rows < 10:
        sys.exit('the artifact\'s θ candidates need at least 10 rows')
    num_nodes = len(G.nodes())
    degrees = [d for _, d in G.degree()]
    exact = {
        'rows': n_rows,
        'edges': G.number_of_edges(),
        'problematic': sum(1 for d in degrees if d > 0),
        'max_degree': max(degrees, default=0),
    }

    eps = args.epsilon
    measure_eps, expo_eps, bound_eps = epsilon_shares(eps, args.algo)
    releases, thetas = {}, {}

    def candidates():
        cands = theta_candidates(n_rows, args.algo)
        if args.algo == 'bound_hier':
            bound = util.get_upperbound(dc_dir, args.data, bound_eps)
            bound = min(max(bound, 1), n_rows)
            cands = [c for c in cands if c <= bound]
            if bound not in cands:
                cands.append(bound)
        return cands

    with contextlib.redirect_stdout(sys.stderr):
        for key, release in (('mi', graph_algos.nodedp_add_edge_nedges_lap),
                             ('p', graph_algos.nodedp_add_edge_pdnodes_lap)):
            t = time.perf_counter()
            cands = candidates()
            if 'baseline' in args.algo:
                noisy, projected = release(G, num_nodes, measure_eps, cands,
                                           algo_version=args.algo)
            else:  # the full ε, as compute_measures.py passes it (SPEC §6 item 8)
                noisy, projected = release(G, num_nodes, eps, cands,
                                           algo_version=args.algo, expo_eps=expo_eps)
            releases[key] = float(noisy)
            thetas[key] = {'candidates': [int(c) for c in cands], 'projected': float(projected)}
            phase[key + '_s'] = time.perf_counter() - t
        t = time.perf_counter()
        cover, noisy_cover, _ = graph_algos.vertex_cover(G, eps)
        releases['r'] = float(noisy_cover)
        phase['r_s'] = time.perf_counter() - t
    phase['total_s'] = time.perf_counter() - t0

    print(json.dumps({'exact': exact, 'greedy_cover_random_order': int(cover),
                      'releases': releases, 'projection': thetas, 'algo': args.algo,
                      'epsilon': eps, 'phase': phase, 'notes': notes}))


if __name__ == '__main__':
    main()
