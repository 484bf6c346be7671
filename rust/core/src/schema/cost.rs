//! A bound on the work of validating one value, checked before a schema is compiled.
//!
//! The validator evaluates a subschema once for every path of applicators that leads to it: a
//! "diamond" of references (each level an `allOf` of two `$ref`s to the next) is 1 KB of schema
//! and 2^levels evaluations of its last level for every value, and a property whose schema
//! applies its parent twice doubles the work at every level of nesting. This module counts, for
//! the worst value at every depth, how many subschemas apply to it (paths counted, as the
//! validator counts them) and refuses the schema when that passes [`MAX_APPLICATIONS`].
//!
//! The count is exact for applicators on the same value (`$ref`, `allOf`, `anyOf`, `oneOf`,
//! `not`, `if`/`then`/`else`, `dependentSchemas`) and an upper bound across members and items
//! (every `patternProperties` pattern is assumed to match), taken per property name and per
//! item position, so a recursive schema (a tree whose nodes refer back to the node) counts what
//! one path through it costs, not the sum over all its branches.

use std::collections::{HashMap, HashSet, VecDeque};

use super::graph::{Edge, Graph};
use super::RegistryError;
use crate::error::ErrorCode;

/// Most subschema evaluations one value of the arguments may need. Hand-written schemas stay
/// in the tens; a schema generated from a large model with deep unions, in the hundreds.
pub const MAX_APPLICATIONS: u64 = 10_000;
/// Bounds on the analysis itself: distinct sets of subschemas examined, and total steps.
const MAX_STATES: usize = 100_000;
const MAX_STEPS: usize = 20_000_000;

/// A multiset of subschemas applied to one value: (node, how many paths apply it), by node.
type State = Vec<(usize, u64)>;

/// What a member or an item is, as far as which subschemas apply to it.
#[derive(Clone, PartialEq, Eq, Hash)]
enum Slot<'a> {
    /// A member declared in some `properties` of the state.
    Named(&'a str),
    /// Any other member.
    OtherName,
    /// A member's name (a string, checked by `propertyNames`).
    Name,
    /// An item at this position, inside some `prefixItems` of the state.
    Index(usize),
    /// An item past every `prefixItems`.
    OtherIndex,
}

/// Refuses `schema` (TSR-006) when one value could need more than [`MAX_APPLICATIONS`]
/// subschema evaluations, for values nested at most `max_depth` levels. Reference cycles and
/// dangling references are left to compilation, which reports them.
pub(super) fn check(graph: &Graph<'_>, max_depth: usize) -> Result<(), RegistryError> {
    let Ok(order) = graph.in_place_order() else {
        return Ok(());
    };
    // Position of each node in an order where parts come before the schemas that apply them.
    let mut position = vec![0usize; graph.nodes.len()];
    for (i, &id) in order.iter().enumerate() {
        position[id] = i;
    }
    let mut analysis = Analysis {
        graph,
        position,
        steps: 0,
    };
    let mut seen: HashSet<State> = HashSet::new();
    let mut queue: VecDeque<(State, usize)> = VecDeque::from([(vec![(0, 1)], 0)]);
    while let Some((seed, depth)) = queue.pop_front() {
        let applied = analysis.expand(&seed)?;
        if depth >= max_depth {
            continue;
        }
        for next in analysis.children(&applied)? {
            if !next.is_empty() && !seen.contains(&next) {
                if seen.len() >= MAX_STATES {
                    return Err(too_complex());
                }
                seen.insert(next.clone());
                queue.push_back((next, depth + 1));
            }
        }
    }
    Ok(())
}

struct Analysis<'g, 'v> {
    graph: &'g Graph<'v>,
    position: Vec<usize>,
    steps: usize,
}

impl<'v> Analysis<'_, 'v> {
    fn spend(&mut self, n: usize) -> Result<(), RegistryError> {
        self.steps += n;
        if self.steps > MAX_STEPS {
            return Err(too_complex());
        }
        Ok(())
    }

    /// Every subschema that applies where `seed` applies, with its number of paths; refused
    /// when the total passes the limit.
    fn expand(&mut self, seed: &State) -> Result<State, RegistryError> {
        // The nodes reached in place, then counts pushed from each schema to its parts, wholes
        // before parts (a part's count is final once every whole that applies it is done).
        let mut reached: Vec<usize> = Vec::new();
        let mut counts: HashMap<usize, u64> = HashMap::new();
        let mut work: Vec<usize> = seed.iter().map(|&(id, _)| id).collect();
        while let Some(id) = work.pop() {
            if counts.insert(id, 0).is_some() {
                continue;
            }
            reached.push(id);
            for (edge, target) in &self.graph.nodes[id].edges {
                if edge.in_place() {
                    work.push(*target);
                }
            }
        }
        self.spend(reached.len())?;
        for &(id, n) in seed {
            counts.insert(id, n);
        }
        reached.sort_unstable_by_key(|&id| std::cmp::Reverse(self.position[id]));
        let cap = MAX_APPLICATIONS + 1;
        let mut total: u64 = 0;
        let mut heaviest = (0u64, 0usize);
        for &id in &reached {
            let n = counts[&id];
            total = total.saturating_add(n);
            heaviest = heaviest.max((n, id));
            for (edge, target) in &self.graph.nodes[id].edges {
                if edge.in_place() {
                    let c = counts.get_mut(target).expect("reached");
                    *c = c.saturating_add(n).min(cap);
                }
            }
            self.spend(self.graph.nodes[id].edges.len())?;
        }
        if total > MAX_APPLICATIONS {
            let at = &self.graph.nodes[heaviest.1].pointer;
            return Err(RegistryError {
                code: ErrorCode::SchemaInvalid,
                message: format!(
                    "Schema would evaluate more than {MAX_APPLICATIONS} subschemas for one value: references or combinators apply the same subschema over and over (at '{}')",
                    if at.is_empty() { "#" } else { at }
                ),
                path: Some(at.clone()),
            });
        }
        let mut state: State = reached.iter().map(|&id| (id, counts[&id])).collect();
        state.sort_unstable();
        Ok(state)
    }

    /// The seeds of the members and items of a value `applied` applies to: one per kind of
    /// member or item, each the subschemas that apply to it directly.
    fn children(&mut self, applied: &State) -> Result<Vec<State>, RegistryError> {
        let graph = self.graph;
        let parts: Vec<(Parts<'v>, u64)> = applied
            .iter()
            .map(|&(id, n)| (Parts::of(graph, id), n))
            .collect();
        let mut slots: Vec<Slot<'v>> = vec![Slot::OtherName, Slot::Name, Slot::OtherIndex];
        let mut named: HashSet<&'v str> = HashSet::new();
        let mut longest_prefix = 0;
        for (p, _) in &parts {
            for name in p.properties.keys() {
                if named.insert(name) {
                    slots.push(Slot::Named(name));
                }
            }
            longest_prefix = longest_prefix.max(p.prefix.len());
        }
        slots.extend((0..longest_prefix).map(Slot::Index));
        self.spend(slots.len() * parts.len())?;
        let cap = MAX_APPLICATIONS + 1;
        Ok(slots
            .into_iter()
            .map(|slot| {
                let mut seed: HashMap<usize, u64> = HashMap::new();
                let mut add = |targets: &[usize], n: u64| {
                    for &t in targets {
                        let c = seed.entry(t).or_insert(0);
                        *c = c.saturating_add(n).min(cap);
                    }
                };
                for (p, n) in &parts {
                    let n = *n;
                    match slot {
                        Slot::Named(name) => {
                            match p.properties.get(name) {
                                Some(targets) => add(targets, n),
                                None => add(&p.additional, n),
                            }
                            add(&p.patterns, n);
                            add(&p.unevaluated_properties, n);
                        }
                        Slot::OtherName => {
                            add(&p.additional, n);
                            add(&p.patterns, n);
                            add(&p.unevaluated_properties, n);
                        }
                        Slot::Name => add(&p.names, n),
                        Slot::Index(i) => {
                            match p.prefix.get(i) {
                                Some(&t) => add(&[t], n),
                                None => add(&p.items, n),
                            }
                            add(&p.contains, n);
                        }
                        Slot::OtherIndex => {
                            add(&p.items, n);
                            add(&p.contains, n);
                        }
                    }
                }
                let mut seed: State = seed.into_iter().collect();
                seed.sort_unstable();
                seed
            })
            .collect())
    }
}

/// The subschemas one schema applies to members and items, by kind.
#[derive(Default)]
struct Parts<'v> {
    properties: HashMap<&'v str, Vec<usize>>,
    /// `additionalProperties` (members not in `properties`).
    additional: Vec<usize>,
    /// `patternProperties` (assumed to match every name) and `unevaluatedProperties`.
    patterns: Vec<usize>,
    unevaluated_properties: Vec<usize>,
    names: Vec<usize>,
    prefix: Vec<usize>,
    items: Vec<usize>,
    /// `contains` and `unevaluatedItems`: every item.
    contains: Vec<usize>,
}

impl<'v> Parts<'v> {
    fn of(graph: &Graph<'v>, id: usize) -> Parts<'v> {
        let mut p = Parts::default();
        for (edge, target) in &graph.nodes[id].edges {
            let t = *target;
            match edge {
                Edge::Property(name) => p.properties.entry(name).or_default().push(t),
                Edge::Additional => p.additional.push(t),
                Edge::Pattern => p.patterns.push(t),
                Edge::UnevaluatedProperties => p.unevaluated_properties.push(t),
                Edge::Names => p.names.push(t),
                Edge::Prefix(i) => {
                    if p.prefix.len() <= *i {
                        p.prefix.resize(i + 1, t);
                    }
                    p.prefix[*i] = t;
                }
                Edge::Items => p.items.push(t),
                Edge::Contains | Edge::UnevaluatedItems => p.contains.push(t),
                _ => {}
            }
        }
        p
    }
}

fn too_complex() -> RegistryError {
    RegistryError::new(
        ErrorCode::SchemaInvalid,
        "Schema is too complex to bound the cost of validating it; simplify its references and combinators",
    )
}
