//! The minimum fractional vertex cover (the LP relaxation of I_R), exactly.
//!
//! LP(G) = min Σ x_v subject to x_u + x_v ≥ 1 for every edge and x ≥ 0.
//! It has an optimum with every x_v in {0, ½, 1} (Nemhauser–Trotter), and
//! 2·LP(G) is the size of a maximum matching of the bipartite double cover
//! B(G) (left and right copies of V, u_L–v_R and v_L–u_R per edge): a cover
//! C of B gives x_v = (|{v_L, v_R} ∩ C|)/2, and a fractional cover x gives
//! a cover of B of size 2·Σx by König's theorem on the half-integral x. We
//! compute the matching with Hopcroft–Karp and read an optimal half-integral
//! x off König's construction.
//!
//! Bounds: ν(G) ≤ LP(G) ≤ I_R(G) ≤ 2·LP(G), ν the maximum matching; LP = I_R
//! on bipartite graphs, LP = k/2 against I_R = k − 1 on a k-clique.
//!
//! **Node sensitivity 1.** Let G' = G plus a node v with any edges (SPEC §2:
//! row-neighbouring tables give node-neighbouring graphs).
//! - LP(G') ≤ LP(G) + 1: extend an optimum x of G by x_v = 1; every new
//!   edge has v as an endpoint, so it is covered.
//! - LP(G) ≤ LP(G'): restrict an optimum x' of G' to V(G); every edge of G
//!   is an edge of G' and keeps its constraint, and Σ drops by x'_v ≥ 0.
//!
//! So |LP(G') − LP(G)| ≤ 1 and 2·LP, an integer, moves by at most 2: the
//! release adds DLap(2/ε) to 2·LP (`dpincon-release`). No stable order is
//! involved: LP is a function of the graph alone. `tests.rs` checks both
//! inequalities over every graph up to 5 nodes plus a 6th.

use super::Adjacency;

const FREE: u32 = u32::MAX;
const UNREACHED: u32 = u32::MAX;

/// An optimal half-integral fractional vertex cover.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FractionalCover {
    /// 2·x_v for every node: 0, 1 or 2.
    twice: Vec<u8>,
    /// 2·LP(G), the maximum matching of the double cover.
    twice_value: u64,
}

impl FractionalCover {
    /// 2·LP(G): an integer (LP is half-integral), node sensitivity 2.
    pub fn twice_value(&self) -> u64 {
        self.twice_value
    }

    /// 2·x_v of node `v` in the optimum found: 0, 1 or 2.
    pub fn twice_weight(&self, v: u32) -> u8 {
        self.twice[v as usize]
    }

    /// Nodes at x_v = 1: some minimum vertex cover contains them all
    /// (Nemhauser–Trotter).
    pub fn ones(&self) -> impl Iterator<Item = u32> + '_ {
        self.nodes_at(2)
    }

    /// Nodes at x_v = ½: the kernel where the exact search happens.
    pub fn halves(&self) -> impl Iterator<Item = u32> + '_ {
        self.nodes_at(1)
    }

    fn nodes_at(&self, twice: u8) -> impl Iterator<Item = u32> + '_ {
        self.twice.iter().enumerate().filter(move |&(_, &t)| t == twice).map(|(v, _)| v as u32)
    }
}

/// The minimum fractional vertex cover of the graph, exactly: Hopcroft–Karp
/// on the bipartite double cover, O(m·√n) time, 13 bytes per node besides
/// the adjacency.
pub fn fractional_cover(adjacency: &Adjacency) -> FractionalCover {
    let n = adjacency.nodes() as usize;
    let mut matching = DoubleCoverMatching::greedy(adjacency);
    let mut zr = vec![false; n];
    while matching.phase(adjacency, &mut zr) {}
    // The last phase found no augmenting path, so its search ran to the
    // end: it reached Z, the nodes on alternating paths from free left
    // nodes (isolated ones included, which it does not search from).
    let zl = |u: usize| matching.mate_left[u] == FREE || matching.layer[u] != UNREACHED;
    // König: C = (L \ Z) ∪ (R ∩ Z) is a minimum cover of B(G).
    let twice: Vec<u8> = (0..n).map(|v| u8::from(!zl(v)) + u8::from(zr[v])).collect();
    let twice_value = twice.iter().map(|&t| u64::from(t)).sum();
    debug_assert_eq!(twice_value, matching.size);
    FractionalCover { twice, twice_value }
}

/// A matching of the double cover B(G): left u is matched to right
/// `mate_left[u]`, right v to left `mate_right[v]`.
struct DoubleCoverMatching {
    mate_left: Vec<u32>,
    mate_right: Vec<u32>,
    size: u64,
    /// BFS layer of each left node in the current phase.
    layer: Vec<u32>,
}

impl DoubleCoverMatching {
    /// A maximal matching to start from (most of the work on sparse graphs).
    fn greedy(adjacency: &Adjacency) -> Self {
        let n = adjacency.nodes() as usize;
        let mut m = DoubleCoverMatching {
            mate_left: vec![FREE; n],
            mate_right: vec![FREE; n],
            size: 0,
            layer: vec![UNREACHED; n],
        };
        for u in 0..n as u32 {
            if let Some(&v) =
                adjacency.neighbours(u).iter().find(|&&v| m.mate_right[v as usize] == FREE)
            {
                m.mate_left[u as usize] = v;
                m.mate_right[v as usize] = u;
                m.size += 1;
            }
        }
        m
    }

    /// One Hopcroft–Karp phase: layers by BFS from the free left nodes,
    /// then vertex-disjoint shortest augmenting paths by DFS. False when no
    /// augmenting path exists (the matching is maximum): the search then
    /// reached every node alternating paths reach, the left ones with a
    /// layer and the right ones marked in `reached` (one search fewer than
    /// walking them again: half a second at 330M edges).
    fn phase(&mut self, adjacency: &Adjacency, reached: &mut [bool]) -> bool {
        let n = self.mate_left.len();
        reached.fill(false);
        let mut queue: Vec<u32> = Vec::new();
        for u in 0..n {
            if self.mate_left[u] == FREE && adjacency.degree(u as u32) > 0 {
                self.layer[u] = 0;
                queue.push(u as u32);
            } else {
                self.layer[u] = UNREACHED;
            }
        }
        let mut shortest = UNREACHED;
        let mut head = 0;
        while head < queue.len() {
            let u = queue[head];
            head += 1;
            let next = self.layer[u as usize] + 1;
            if next > shortest {
                break;
            }
            for &v in adjacency.neighbours(u) {
                reached[v as usize] = true;
                match self.mate_right[v as usize] {
                    FREE => shortest = shortest.min(next),
                    w if self.layer[w as usize] == UNREACHED => {
                        self.layer[w as usize] = next;
                        queue.push(w);
                    }
                    _ => {}
                }
            }
        }
        if shortest == UNREACHED {
            return false;
        }
        let roots: Vec<u32> =
            queue.iter().copied().take_while(|&u| self.layer[u as usize] == 0).collect();
        let mut cursor = vec![0u32; n];
        let mut stack: Vec<u32> = Vec::new();
        let mut via: Vec<u32> = Vec::new();
        for root in roots {
            stack.clear();
            via.clear();
            stack.push(root);
            while let Some(&u) = stack.last() {
                let neighbours = adjacency.neighbours(u);
                let depth = self.layer[u as usize];
                let mut descended = false;
                while (cursor[u as usize] as usize) < neighbours.len() {
                    let v = neighbours[cursor[u as usize] as usize];
                    cursor[u as usize] += 1;
                    let w = self.mate_right[v as usize];
                    if w == FREE {
                        if depth + 1 == shortest {
                            self.flip(&stack, &via, v);
                            stack.clear();
                            descended = true;
                            break;
                        }
                    } else if self.layer[w as usize] == depth + 1 {
                        via.push(v);
                        stack.push(w);
                        descended = true;
                        break;
                    }
                }
                if !descended {
                    // A dead end this phase: no shortest path continues here.
                    self.layer[u as usize] = UNREACHED;
                    stack.pop();
                    via.pop();
                }
            }
        }
        true
    }

    /// Augments along stack[0] –via[0]– stack[1] … stack[k] – free `v`.
    fn flip(&mut self, stack: &[u32], via: &[u32], free: u32) {
        let mut right = free;
        for i in (0..stack.len()).rev() {
            let left = stack[i];
            self.mate_left[left as usize] = right;
            self.mate_right[right as usize] = left;
            // Every node of the path is used up for this phase.
            self.layer[left as usize] = UNREACHED;
            if i > 0 {
                right = via[i - 1];
            }
        }
        self.size += 1;
    }
}
