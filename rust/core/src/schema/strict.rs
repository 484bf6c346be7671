//! Strict mode: the copy of a schema that refuses properties the schema does not declare.
//!
//! The one rule everything here follows: strict mode may only add restrictions. Whatever the
//! strict copy accepts, the schema as written accepts. Closing an object schema (making it
//! refuse undeclared properties) makes that subschema accept less, and that makes the whole
//! schema accept less only where the subschema sits in a position that is monotone:
//!
//! - `properties`, `patternProperties`, `additionalProperties`, `unevaluatedProperties`,
//!   `items`, `prefixItems`, `unevaluatedItems` apply their subschema to a member or an item,
//!   which must pass: these are the *entries* that get closed.
//! - `allOf` and `anyOf` members, `then`, `else` and `dependentSchemas` values apply to the
//!   same value and must pass when they apply: these *branches* are rewritten (their entries
//!   are closed) but not closed themselves, since each declares only part of the object.
//! - `not`, `if`, `contains` and `propertyNames` are left exactly as written. Under `not`,
//!   refusing more means accepting more; an `if` that fails more often skips its `then`; a
//!   `contains` that matches fewer items lets `maxContains` pass; a `propertyNames` schema
//!   applies to strings, where closing means nothing.
//! - `oneOf` members are left as written too: refusing more in one member can turn "two
//!   members match" (refused) into "exactly one matches" (accepted). Instead, when rewriting a
//!   member would change it, the strict copy adds `anyOf` over the rewritten members beside the
//!   `oneOf`, a plain conjunction.
//!
//! An entry that declares `properties` and says nothing about other properties is closed with
//! `additionalProperties: false` when it combines nothing, and with `unevaluatedProperties:
//! false` when it has `$ref`, `allOf`, `anyOf`, `oneOf`, `if`/`then`/`else` or
//! `dependentSchemas`: that keyword sees the properties declared in whichever parts applied
//! (a `$ref`'s base, an `allOf` extension, the `then` that held). Property names an `if`
//! tests are also declared on the entry as `true` (no constraint), so an object whose `if` fails
//! may still hold them. A free map (`{"type": "object"}`, no `properties` anywhere in its
//! parts) stays open.
//!
//! `$ref`s are rewritten to point at a copy of their target, made once per target and role
//! (rewritten, or as written) under `$defs`: a subschema shared by many references, or by a
//! "diamond" of references, is rewritten once, and the references in an as-written region keep
//! pointing at an as-written copy. Schemas whose references cannot be moved (an `$id` below the
//! root, `$dynamicRef`, `$dynamicAnchor`) are validated as written.

use std::collections::{HashMap, HashSet, VecDeque};

use serde_json::{Map, Value};

use super::graph::{Edge, Graph};
use super::RegistryError;
use crate::error::ErrorCode;

/// Most schema objects built for one strict copy, per object of the original (a backstop: each
/// reference target is copied at most twice, and nested `oneOf`s add one copy per level).
const MAX_GROWTH: usize = 64;
/// Most nodes visited collecting the property names `if`s test, for one schema.
const MAX_NAME_STEPS: usize = 1_000_000;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Role {
    /// Applied to a member or item of its own: closed when it declares properties.
    Entry,
    /// Applied with others to the same value: rewritten inside, not closed at its top.
    Branch,
    /// In a position where refusing more could accept more: copied as written.
    AsWritten,
}

/// The strict copy of `schema`, which must have passed the definition checks.
pub(super) fn strict_schema(schema: &Value) -> Result<Value, RegistryError> {
    let graph = Graph::new(schema);
    let Ok(order) = graph.in_place_order() else {
        // A reference cycle: compilation reports it with its location.
        return Ok(schema.clone());
    };
    let has_refs = graph
        .nodes
        .iter()
        .any(|n| n.unresolved || n.edges.iter().any(|(e, _)| *e == Edge::Ref));
    if graph.nodes.iter().any(|n| n.unresolved) || (has_refs && !graph.single_resource) {
        // References this rewrite cannot move (or that compilation will refuse): validated as
        // written, which adds nothing and so loosens nothing.
        return Ok(schema.clone());
    }
    let facts = Facts::new(&graph, &order);
    let mut rewrite = Rewrite {
        graph: &graph,
        facts,
        copies: Vec::new(),
        memo: HashMap::new(),
        pending: VecDeque::new(),
        built: 0,
        name_steps: 0,
    };
    let mut out = rewrite.node(0, Role::Entry, true)?;
    // Copies are made breadth-first from a queue, so a long chain of references costs no stack.
    while let Some((slot, target, role)) = rewrite.pending.pop_front() {
        rewrite.copies[slot].1 = rewrite.node(target, role, false)?;
    }
    if !rewrite.copies.is_empty() {
        if let Value::Object(map) = &mut out {
            map.insert(
                "$defs".into(),
                Value::Object(rewrite.copies.into_iter().collect()),
            );
        }
    }
    Ok(out)
}

/// What the rewrite needs to know of each node, computed once over the graph.
struct Facts {
    /// Whether `combines`: it has `$ref`, `allOf`, `anyOf`, `oneOf`, `if`, `then`, `else` or
    /// `dependentSchemas` (properties may be declared in those parts).
    combines: Vec<bool>,
    /// As an entry, it gets a closing keyword.
    closes: Vec<bool>,
    /// As a branch, its rewrite differs from the schema as written.
    changes: Vec<bool>,
}

/// In-place edges whose subschema must pass where it applies: the parts of an object's shape.
fn positive_in_place(edge: &Edge<'_>) -> bool {
    matches!(
        edge,
        Edge::Ref
            | Edge::AllOf
            | Edge::AnyOf
            | Edge::OneOf
            | Edge::Then
            | Edge::Else
            | Edge::Dependent
    )
}

/// Edges to a member or an item that must pass: their subschemas are entries.
fn entry_edge(edge: &Edge<'_>) -> bool {
    matches!(
        edge,
        Edge::Property(_)
            | Edge::Pattern
            | Edge::Additional
            | Edge::UnevaluatedProperties
            | Edge::Prefix(_)
            | Edge::Items
            | Edge::UnevaluatedItems
    )
}

impl Facts {
    fn new(graph: &Graph<'_>, order: &[usize]) -> Facts {
        let n = graph.nodes.len();
        let has = |id: usize, key: &str| graph.map(id).is_some_and(|m| m.contains_key(key));
        let mut combines = vec![false; n];
        let mut declares = vec![false; n];
        // Children before parents: a part's answer is known when its whole is asked.
        for &id in order {
            combines[id] = [
                "$ref",
                "allOf",
                "anyOf",
                "oneOf",
                "if",
                "then",
                "else",
                "dependentSchemas",
            ]
            .iter()
            .any(|k| has(id, k));
            declares[id] = has(id, "properties")
                || graph.nodes[id]
                    .edges
                    .iter()
                    .any(|(e, t)| positive_in_place(e) && declares[*t]);
        }
        let closes: Vec<bool> = (0..n)
            .map(|id| {
                let says_nothing = ![
                    "additionalProperties",
                    "patternProperties",
                    "unevaluatedProperties",
                ]
                .iter()
                .any(|k| has(id, k));
                says_nothing
                    && if combines[id] {
                        declares[id]
                    } else {
                        has(id, "properties")
                    }
            })
            .collect();
        // A branch changes when an entry below it (through branches, entries and references)
        // closes: found backwards from the nodes that hold such an entry.
        let mut parents: Vec<Vec<usize>> = vec![Vec::new(); n];
        let mut changes = vec![false; n];
        let mut queue = VecDeque::new();
        for (id, node) in graph.nodes.iter().enumerate() {
            for (edge, target) in &node.edges {
                if positive_in_place(edge) || entry_edge(edge) {
                    parents[*target].push(id);
                }
                if entry_edge(edge) && closes[*target] && !changes[id] {
                    changes[id] = true;
                    queue.push_back(id);
                }
            }
        }
        while let Some(id) = queue.pop_front() {
            for &parent in &parents[id] {
                if !changes[parent] {
                    changes[parent] = true;
                    queue.push_back(parent);
                }
            }
        }
        Facts {
            combines,
            closes,
            changes,
        }
    }
}

struct Rewrite<'g, 'v> {
    graph: &'g Graph<'v>,
    facts: Facts,
    /// `$defs` of the strict copy: one per (target, role), in the order they were asked for.
    copies: Vec<(String, Value)>,
    memo: HashMap<(usize, Role), String>,
    /// Copies named but not built yet: (slot in `copies`, target, role).
    pending: VecDeque<(usize, usize, Role)>,
    built: usize,
    name_steps: usize,
}

impl Rewrite<'_, '_> {
    fn node(&mut self, id: usize, role: Role, top: bool) -> Result<Value, RegistryError> {
        self.built += 1;
        if self.built > MAX_GROWTH * self.graph.nodes.len() + 1024 {
            return Err(too_complex());
        }
        let graph = self.graph;
        let value = graph.nodes[id].value;
        let Some(map) = value.as_object() else {
            return Ok(value.clone());
        };
        let mut out = Map::with_capacity(map.len() + 1);
        for (key, v) in map {
            let child = child_role(role, key);
            let rewritten = match key.as_str() {
                // Every reference is rewritten to a copy, so definitions and anchors are unused;
                // copies drop the root's identity (`$id` twice would be two resources).
                "$defs" | "$anchor" | "$dynamicAnchor" => continue,
                "$id" | "$schema" if !top => continue,
                "$ref" => {
                    let target = graph.ref_target(id).expect("resolved reference");
                    let copy_role = if role == Role::AsWritten || !self.facts.changes[target] {
                        Role::AsWritten
                    } else {
                        Role::Branch
                    };
                    Value::String(format!("#/$defs/{}", self.copy(target, copy_role)))
                }
                "allOf" | "anyOf" | "oneOf" | "prefixItems" => match v {
                    Value::Array(items) => Value::Array(
                        items
                            .iter()
                            .map(|item| self.node(graph.id(item), child, false))
                            .collect::<Result<_, _>>()?,
                    ),
                    other => other.clone(),
                },
                "properties" | "patternProperties" | "dependentSchemas" => match v {
                    Value::Object(members) => Value::Object(
                        members
                            .iter()
                            .map(|(k, m)| Ok((k.clone(), self.node(graph.id(m), child, false)?)))
                            .collect::<Result<_, RegistryError>>()?,
                    ),
                    other => other.clone(),
                },
                "not"
                | "if"
                | "then"
                | "else"
                | "contains"
                | "propertyNames"
                | "items"
                | "additionalProperties"
                | "unevaluatedProperties"
                | "unevaluatedItems"
                | "contentSchema" => self.node(graph.id(v), child, false)?,
                _ => v.clone(),
            };
            out.insert(key.clone(), rewritten);
        }
        if role == Role::AsWritten {
            return Ok(Value::Object(out));
        }
        if let Some(Value::Array(members)) = map.get("oneOf") {
            if members.iter().any(|m| self.facts.changes[graph.id(m)]) {
                let rewritten = members
                    .iter()
                    .map(|m| self.node(graph.id(m), Role::Branch, false))
                    .collect::<Result<Vec<_>, _>>()?;
                let conjunct = Value::Object(Map::from_iter([(
                    "anyOf".to_string(),
                    Value::Array(rewritten),
                )]));
                match out
                    .entry("allOf")
                    .or_insert_with(|| Value::Array(Vec::new()))
                {
                    Value::Array(all) => all.push(conjunct),
                    other => *other = Value::Array(vec![conjunct]),
                }
            }
        }
        if role == Role::Entry && self.facts.closes[id] {
            if self.facts.combines[id] {
                let tested = self.if_names(id)?;
                if !tested.is_empty() {
                    let properties = out
                        .entry("properties")
                        .or_insert_with(|| Value::Object(Map::new()));
                    if let Value::Object(properties) = properties {
                        for name in tested {
                            properties.entry(name).or_insert(Value::Bool(true));
                        }
                    }
                }
                out.insert("unevaluatedProperties".into(), Value::Bool(false));
            } else {
                out.insert("additionalProperties".into(), Value::Bool(false));
            }
        }
        Ok(Value::Object(out))
    }

    /// The `$defs` name of the copy of `target` in `role`, made on first use.
    fn copy(&mut self, target: usize, role: Role) -> String {
        if let Some(name) = self.memo.get(&(target, role)) {
            return name.clone();
        }
        let last = self.graph.nodes[target]
            .pointer
            .rsplit('/')
            .next()
            .unwrap_or_default();
        let label: String = last
            .chars()
            .filter(|c| c.is_ascii_alphanumeric() || *c == '_')
            .take(32)
            .collect();
        let name = format!(
            "{}{}{}",
            self.copies.len(),
            if role == Role::AsWritten { "-" } else { "+" },
            if label.is_empty() { "root" } else { &label }
        );
        self.memo.insert((target, role), name.clone());
        self.pending.push_back((self.copies.len(), target, role));
        self.copies.push((name.clone(), Value::Null));
        name
    }

    /// Property names tested by the `if`s among the parts of `id` that are not declared in
    /// `id`'s own `properties`, in the order they are found.
    fn if_names(&mut self, id: usize) -> Result<Vec<String>, RegistryError> {
        let graph = self.graph;
        let own = graph
            .map(id)
            .and_then(|m| m.get("properties"))
            .and_then(Value::as_object);
        let mut names: Vec<String> = Vec::new();
        let mut seen: HashSet<(usize, bool)> = HashSet::new();
        let mut work = vec![(id, false)];
        while let Some((node, under_if)) = work.pop() {
            if !seen.insert((node, under_if)) {
                continue;
            }
            self.name_steps += 1;
            if self.name_steps > MAX_NAME_STEPS {
                return Err(too_complex());
            }
            if under_if {
                if let Some(props) = graph
                    .map(node)
                    .and_then(|m| m.get("properties"))
                    .and_then(Value::as_object)
                {
                    for name in props.keys() {
                        if !own.is_some_and(|o| o.contains_key(name)) && !names.contains(name) {
                            names.push(name.clone());
                        }
                    }
                }
            }
            for (edge, target) in graph.nodes[node].edges.iter().rev() {
                if positive_in_place(edge) {
                    work.push((*target, under_if));
                } else if *edge == Edge::If {
                    work.push((*target, true));
                }
            }
        }
        Ok(names)
    }
}

fn child_role(parent: Role, keyword: &str) -> Role {
    if parent == Role::AsWritten {
        return Role::AsWritten;
    }
    match keyword {
        "properties"
        | "patternProperties"
        | "additionalProperties"
        | "unevaluatedProperties"
        | "prefixItems"
        | "items"
        | "unevaluatedItems" => Role::Entry,
        "allOf" | "anyOf" | "then" | "else" | "dependentSchemas" => Role::Branch,
        _ => Role::AsWritten,
    }
}

fn too_complex() -> RegistryError {
    RegistryError::new(
        ErrorCode::SchemaInvalid,
        "Schema is too complex to close for strict mode; simplify it or register it with strict=False",
    )
}
