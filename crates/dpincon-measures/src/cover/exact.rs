//! The exact minimum vertex cover I_R, for experiments and `--non-private`
//! reports only: NP-hard in general, so it stops after a work limit.
//!
//! 1. The half-integral LP optimum (`fractional.rs`) splits V into V_1,
//!    V_½, V_0; some minimum cover contains V_1 and avoids V_0
//!    (Nemhauser–Trotter), so I_R = |V_1| + I_R(G[V_½]).
//! 2. G[V_½] splits into connected components, solved one by one.
//! 3. Each component: branch and bound. Reductions at every node: degree 0
//!    (drop), degree 1 (take the neighbour), simplicial vertices (its
//!    neighbourhood is a clique: take the neighbourhood), all degrees ≤ 2
//!    (cycles: ⌈len/2⌉ each). Branch on a vertex v of maximum degree: v in
//!    the cover (first, so the first dive is the greedy max-degree cover),
//!    or all of N(v). Lower bound: the larger of a greedy clique
//!    partition (a k-clique needs k − 1) and a greedy maximal matching.
//!
//! Conflict graphs of FDs are unions of complete multipartite groups: the
//! kernel removes the bipartite (star-like) parts, the simplicial rule the
//! cliques. Where neither applies the search can be exponential; after
//! `work_limit` units of work it reports the bounds it has instead.

use super::{Adjacency, FractionalCover};

/// The exact minimum vertex cover, or the bounds reached before the limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MinimumCover {
    /// I_R, exactly.
    Exact(u64),
    /// The work limit was reached: lower ≤ I_R ≤ upper.
    TooSlow {
        /// ⌈LP⌉ over the unsolved components plus the solved ones.
        lower: u64,
        /// The best cover found.
        upper: u64,
    },
}

impl MinimumCover {
    /// I_R when it was computed.
    pub fn exact(self) -> Option<u64> {
        match self {
            MinimumCover::Exact(v) => Some(v),
            MinimumCover::TooSlow { .. } => None,
        }
    }
}

/// I_R of the graph: exact unless the branch and bound does more than
/// `work_limit` units of work, summed over all components. A unit is one
/// node looked at by a reduction or bound scan, so the limit is roughly
/// proportional to time (about a nanosecond per unit in a release build).
pub fn minimum_cover(
    adjacency: &Adjacency,
    fractional: &FractionalCover,
    work_limit: u64,
) -> MinimumCover {
    let n = adjacency.nodes() as usize;
    let ones = fractional.ones().count() as u64;
    let half: Vec<u32> = fractional.halves().collect();
    let mut local = vec![u32::MAX; n];
    for (i, &v) in half.iter().enumerate() {
        local[v as usize] = i as u32;
    }
    let mut seen = vec![false; half.len()];
    let (mut lower, mut upper) = (ones, ones);
    let mut work = Work { used: 0, limit: work_limit };
    let mut exact = true;
    for start in 0..half.len() {
        if seen[start] {
            continue;
        }
        // One component of G[V_½], relabelled 0..k.
        seen[start] = true;
        let mut members = vec![half[start]];
        let mut head = 0;
        while head < members.len() {
            let u = members[head];
            head += 1;
            for &w in adjacency.neighbours(u) {
                let l = local[w as usize];
                if l != u32::MAX && !seen[l as usize] {
                    seen[l as usize] = true;
                    members.push(w);
                }
            }
        }
        members.sort_unstable();
        let index = |v: u32| members.binary_search(&v).ok().map(|i| i as u32);
        let adj: Vec<Vec<u32>> = members
            .iter()
            .map(|&u| adjacency.neighbours(u).iter().filter_map(|&w| index(w)).collect())
            .collect();
        match solve_component(adj, &mut work) {
            Ok(size) => {
                lower += size;
                upper += size;
            }
            Err(best) => {
                exact = false;
                // Every x_v = ½ is optimal on the kernel: LP = k/2 there.
                lower += (members.len() as u64).div_ceil(2);
                upper += best;
            }
        }
    }
    if exact { MinimumCover::Exact(upper) } else { MinimumCover::TooSlow { lower, upper } }
}

struct Work {
    used: u64,
    limit: u64,
}

/// The branch and bound on one component: Ok(optimum), or Err(best cover
/// found) past the work limit.
fn solve_component(adj: Vec<Vec<u32>>, work: &mut Work) -> Result<u64, u64> {
    let n = adj.len();
    let mut search = Search {
        deg: adj.iter().map(|a| a.len() as u32).collect(),
        alive: vec![true; n],
        adj,
        trail: Vec::new(),
        alive_count: n,
        best: n as u64,
        scans: 0,
    };
    match search.search(0, work) {
        Ok(()) => Ok(search.best),
        Err(()) => Err(search.best),
    }
}

/// Largest neighbourhood the simplicial rule tests for being a clique.
const SIMPLICIAL_MAX: u32 = 64;

struct Search {
    adj: Vec<Vec<u32>>,
    deg: Vec<u32>,
    alive: Vec<bool>,
    alive_count: usize,
    trail: Vec<u32>,
    best: u64,
    /// Full passes of the reductions, charged to the work limit.
    scans: u64,
}

impl Search {
    fn adjacent(&self, a: u32, b: u32) -> bool {
        self.adj[a as usize].binary_search(&b).is_ok()
    }

    fn alive_neighbours(&self, v: u32) -> impl Iterator<Item = u32> + '_ {
        self.adj[v as usize].iter().copied().filter(|&w| self.alive[w as usize])
    }

    fn remove(&mut self, v: u32) {
        debug_assert!(self.alive[v as usize]);
        self.alive[v as usize] = false;
        self.alive_count -= 1;
        for i in 0..self.adj[v as usize].len() {
            let w = self.adj[v as usize][i] as usize;
            if self.alive[w] {
                self.deg[w] -= 1;
            }
        }
        self.trail.push(v);
    }

    /// Undoes removals back to trail length `mark` (in reverse, so every
    /// degree is restored exactly).
    fn restore(&mut self, mark: usize) {
        while self.trail.len() > mark {
            let v = self.trail.pop().expect("trail longer than mark");
            self.alive[v as usize] = true;
            self.alive_count += 1;
            for i in 0..self.adj[v as usize].len() {
                let w = self.adj[v as usize][i] as usize;
                if self.alive[w] {
                    self.deg[w] += 1;
                }
            }
        }
    }

    /// Puts the alive neighbours of `v` in the cover and drops `v`: the
    /// branch "v not in the cover". Returns how many were taken.
    fn take_neighbourhood(&mut self, v: u32) -> u64 {
        let neighbours: Vec<u32> = self.alive_neighbours(v).collect();
        for &w in &neighbours {
            self.remove(w);
        }
        self.remove(v);
        neighbours.len() as u64
    }

    fn is_simplicial(&self, v: u32) -> bool {
        if self.deg[v as usize] > SIMPLICIAL_MAX {
            return false;
        }
        let nb: Vec<u32> = self.alive_neighbours(v).collect();
        nb.iter().enumerate().all(|(i, &a)| nb[i + 1..].iter().all(|&b| self.adjacent(a, b)))
    }

    /// Applies the reductions until none fires; returns the nodes taken.
    fn reduce(&mut self) -> u64 {
        let mut taken = 0;
        loop {
            self.scans += 1;
            let mut changed = false;
            for v in 0..self.adj.len() as u32 {
                if !self.alive[v as usize] {
                    continue;
                }
                if self.deg[v as usize] == 0 {
                    self.remove(v);
                    changed = true;
                } else if self.is_simplicial(v) {
                    // Covers of the clique N(v) ∪ {v} miss at most one node;
                    // missing v is never worse (degree 1 is the case |N| = 1).
                    taken += self.take_neighbourhood(v);
                    changed = true;
                }
            }
            if !changed {
                return taken;
            }
        }
    }

    fn max_degree_node(&self) -> Option<u32> {
        (0..self.adj.len() as u32)
            .filter(|&v| self.alive[v as usize] && self.deg[v as usize] > 0)
            .max_by_key(|&v| (self.deg[v as usize], std::cmp::Reverse(v)))
    }

    /// A lower bound on the cover of the alive graph.
    fn lower_bound(&self) -> u64 {
        let n = self.adj.len();
        // Greedy clique partition: a clique K needs |K| − 1 cover nodes.
        let mut used = vec![false; n];
        let mut cliques = 0u64;
        let mut clique = Vec::new();
        for v in 0..n as u32 {
            if !self.alive[v as usize] || used[v as usize] {
                continue;
            }
            clique.clear();
            clique.push(v);
            used[v as usize] = true;
            for w in self.alive_neighbours(v) {
                if !used[w as usize] && clique.iter().all(|&c| c == v || self.adjacent(c, w)) {
                    clique.push(w);
                    used[w as usize] = true;
                }
            }
            cliques += 1;
        }
        let partition = self.alive_count as u64 - cliques;
        // Greedy maximal matching: each matched edge needs its own node.
        used.fill(false);
        let mut matching = 0u64;
        for v in 0..n as u32 {
            if !self.alive[v as usize] || used[v as usize] {
                continue;
            }
            if let Some(w) = self.alive_neighbours(v).find(|&w| !used[w as usize]) {
                used[v as usize] = true;
                used[w as usize] = true;
                matching += 1;
            }
        }
        partition.max(matching)
    }

    /// Every alive node has degree exactly 2: disjoint cycles, ⌈len/2⌉ each.
    fn cycles_cover(&self) -> u64 {
        let mut visited = vec![false; self.adj.len()];
        let mut total = 0;
        for s in 0..self.adj.len() as u32 {
            if !self.alive[s as usize] || visited[s as usize] {
                continue;
            }
            let mut len = 0u64;
            let mut stack = vec![s];
            visited[s as usize] = true;
            while let Some(v) = stack.pop() {
                len += 1;
                for w in self.alive_neighbours(v) {
                    if !visited[w as usize] {
                        visited[w as usize] = true;
                        stack.push(w);
                    }
                }
            }
            total += len.div_ceil(2);
        }
        total
    }

    fn search(&mut self, taken: u64, work: &mut Work) -> Result<(), ()> {
        // Every search node scans the component a few times (reductions,
        // bound): charge its size.
        work.used += self.adj.len() as u64;
        if work.used > work.limit {
            return Err(());
        }
        let mark = self.trail.len();
        self.scans = 0;
        let taken = taken + self.reduce();
        work.used += self.scans.saturating_sub(1) * self.adj.len() as u64;
        let result = self.branch(taken, work);
        self.restore(mark);
        result
    }

    fn branch(&mut self, taken: u64, work: &mut Work) -> Result<(), ()> {
        let Some(v) = self.max_degree_node() else {
            self.best = self.best.min(taken);
            return Ok(());
        };
        if self.deg[v as usize] <= 2 {
            // Reduced: no degree 0 or 1 is left, so only cycles remain.
            self.best = self.best.min(taken + self.cycles_cover());
            return Ok(());
        }
        if taken + self.lower_bound() >= self.best {
            return Ok(());
        }
        // v in the cover first: the first dive is the max-degree greedy
        // cover, a good bound to prune with.
        let mark = self.trail.len();
        self.remove(v);
        let result = self.search(taken + 1, work);
        self.restore(mark);
        result?;
        let k = self.take_neighbourhood(v);
        let result = self.search(taken + k, work);
        self.restore(mark);
        result
    }
}
