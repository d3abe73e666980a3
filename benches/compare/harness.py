"""Helpers of benches/compare.sh (standard library only).

  harness.py measure OUT -- CMD...   run CMD, its stdout to OUT.stdout and
      stderr to OUT.stderr; write {"wall_s", "peak_rss_kib", "rc"} to OUT.
      Wall time is the child's whole life (start to exit, perf_counter);
      peak RSS is the child's own ru_maxrss from wait4, the same number
      /usr/bin/time -v reports as "Maximum resident set size".
  harness.py summarize DIR [--json FILE]   read DIR's runs, print the table.
"""

import json
import os
import statistics
import subprocess
import sys
import time


def measure(out, cmd):
    with open(out + '.stdout', 'wb') as so, open(out + '.stderr', 'wb') as se:
        start = time.perf_counter()
        child = subprocess.Popen(cmd, stdout=so, stderr=se)
        _, status, usage = os.wait4(child.pid, 0)
        wall = time.perf_counter() - start
    record = {'wall_s': wall, 'peak_rss_kib': usage.ru_maxrss,
              'rc': os.waitstatus_to_exitcode(status)}
    with open(out, 'w') as f:
        json.dump(record, f)
    return record['rc']


def load_runs(directory, side):
    """The measured runs of one side, each with its parsed report."""
    runs = []
    names = sorted(n for n in os.listdir(directory) if n.startswith(side + '.run'))
    for name in names:
        if '.' in name[len(side) + 4:]:
            continue  # .stdout / .stderr
        with open(os.path.join(directory, name)) as f:
            run = json.load(f)
        run['report'] = read_report(os.path.join(directory, name + '.stdout'))
        runs.append(run)
    return runs


def read_report(path):
    """The JSON report a run printed (its last non-empty line)."""
    with open(path) as f:
        lines = [line for line in f.read().splitlines() if line.strip()]
    text = lines[-1] if lines and lines[-1].startswith('{') else '\n'.join(lines)
    return json.loads(text)


def stats(runs):
    walls = [r['wall_s'] for r in runs]
    rss = [r['peak_rss_kib'] / 1024 for r in runs]
    return {'runs': len(runs), 'wall_s_median': statistics.median(walls),
            'wall_s_min': min(walls), 'wall_s_max': max(walls),
            'peak_rss_mib_median': statistics.median(rss), 'peak_rss_mib_max': max(rss)}


def summarize(directory, json_out):
    with open(os.path.join(directory, 'meta.json')) as f:
        meta = json.load(f)
    ours = load_runs(directory, 'dpincon')
    check = read_report(os.path.join(directory, 'dpincon.check.stdout'))['non_private']
    result = {'meta': meta, 'dpincon': stats(ours), 'artifact': None}
    result['dpincon']['exact'] = {k: check[k] for k in ('rows', 'edges', 'problematic',
                                                        'max_degree', 'greedy_cover')}
    result['dpincon']['exact']['min_cover'] = (check.get('repair') or {}).get('min_cover')
    result['dpincon']['releases_last_run'] = {
        k: v['value'] for k, v in ours[-1]['report']['measures'].items()}
    # Phase timings are reported only with --non-private (they are a side
    # channel), so they come from the check run, which also runs I_R's LP.
    timings = read_report(os.path.join(directory, 'dpincon.check.stdout')).get('timings', {})
    result['dpincon']['check_run_phases'] = {
        k: timings[k] for k in ('read_s', 'detect_s', 'measures_s') if k in timings}

    theirs = load_runs(directory, 'artifact') if meta.get('artifact_skip') is None else []
    if theirs:
        last = theirs[-1]['report']
        result['artifact'] = stats(theirs)
        result['artifact']['exact'] = dict(last['exact'])
        result['artifact']['exact']['greedy_cover'] = last['greedy_cover_random_order']
        result['artifact']['releases_last_run'] = last['releases']
        result['artifact']['phases_median'] = median_of(
            [r['report']['phase'] for r in theirs],
            ('import_s', 'read_s', 'graph_s', 'mi_s', 'p_s', 'r_s'))
        result['artifact']['notes'] = last['notes']

    print_table(result, meta)
    if json_out:
        with open(json_out, 'w') as f:
            json.dump(result, f, indent=1)
        print(f'JSON written to {json_out}')


def median_of(dicts, keys):
    return {k: statistics.median(d[k] for d in dicts) for k in keys if all(k in d for d in dicts)}


def print_table(result, meta):
    print(f"input: {meta['data']} + {meta['dcs']}, ε = {meta['epsilon']}, "
          f"{meta['repeat']} run(s) per side, whole-process wall time and peak RSS")
    print(f"dpincon:  {meta['dpincon_command']}")
    if meta['artifact_skip'] is None:
        print(f"artifact: {meta['artifact_command']}")
    head = f"{'side':<9} {'wall s median (min-max)':>24} {'peak RSS MiB':>13} " \
           f"{'I_MI':>9} {'I_P':>7} {'max deg':>8} {'greedy cover':>13}"
    print(head)
    print('-' * len(head))
    for side in ('dpincon', 'artifact'):
        s = result[side]
        if s is None:
            print(f"{side:<9} skipped: {meta['artifact_skip']}")
            continue
        e = s['exact']
        wall = f"{s['wall_s_median']:.3f} ({s['wall_s_min']:.3f}-{s['wall_s_max']:.3f})"
        print(f"{side:<9} {wall:>24} {s['peak_rss_mib_median']:>13.0f} "
              f"{e['edges']:>9} {e['problematic']:>7} {e['max_degree']:>8} {e['greedy_cover']:>13}")
    ours, theirs = result['dpincon'], result['artifact']
    if ours['exact'].get('min_cover') is not None:
        print(f"dpincon's exact I_R (minimum vertex cover): {ours['exact']['min_cover']}; "
              "greedy covers are 2-approximations and depend on the edge order "
              "(dpincon: stable order, artifact: a random permutation), so they may differ")
    print('dpincon phases of the untimed --non-private run (s): ' + fmt(ours['check_run_phases']))
    if theirs is None:
        print('ratio: none (the artifact did not run)')
        return
    print('artifact phases (median s): ' + fmt(theirs['phases_median']))
    for note in theirs['notes']:
        print(f'artifact note: {note}')
    keys = ('rows', 'edges', 'problematic', 'max_degree')
    mismatch = [k for k in keys if ours['exact'][k] != theirs['exact'][k]]
    result['graphs_agree'] = not mismatch
    if mismatch:
        print('GRAPH MISMATCH: ' + ', '.join(
            f"{k} dpincon {ours['exact'][k]} vs artifact {theirs['exact'][k]}" for k in mismatch))
    else:
        print(f"graphs agree (same fingerprint): {ours['exact']['edges']} edges (I_MI), "
              f"{ours['exact']['problematic']} rows in a conflict (I_P), "
              f"max degree {ours['exact']['max_degree']} on both sides")
    wall = theirs['wall_s_median'] / ours['wall_s_median']
    rss = theirs['peak_rss_mib_median'] / ours['peak_rss_mib_median']
    result['ratio'] = {'wall': wall, 'peak_rss': rss}
    print(f"ratio artifact / dpincon: wall {wall:.1f}x, peak RSS {rss:.1f}x")


def fmt(d):
    return ', '.join(f"{k[:-2]} {v:.3f}" for k, v in d.items())


def main():
    if len(sys.argv) >= 4 and sys.argv[1] == 'measure' and sys.argv[3] == '--':
        sys.exit(measure(sys.argv[2], sys.argv[4:]))
    if len(sys.argv) in (3, 5) and sys.argv[1] == 'summarize':
        json_out = sys.argv[4] if len(sys.argv) == 5 and sys.argv[3] == '--json' else None
        summarize(sys.argv[2], json_out)
        return
    sys.exit(__doc__)


if __name__ == '__main__':
    main()
