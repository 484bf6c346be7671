//! A schema document as a graph: every subschema is a node, every keyword that applies a
//! subschema is an edge, and `$ref`s are resolved the way the validator resolves them (JSON
//! Pointer fragments and anchors, relative to the nearest `$id`). The strict rewrite and the
//! validation-cost bound both walk this graph instead of the document, so a subschema shared
//! through references is looked at once, however many paths lead to it.

use std::collections::HashMap;

use serde_json::Value;

use crate::pointer::{child_pointer, percent_decode};

/// How a keyword applies its subschema.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Edge<'v> {
    /// `$ref`, and every anchor a `$dynamicRef` may land on.
    Ref,
    AllOf,
    AnyOf,
    OneOf,
    Not,
    If,
    Then,
    Else,
    /// `dependentSchemas`, applied when the named property is present.
    Dependent,
    /// `properties` member of this name.
    Property(&'v str),
    Pattern,
    Additional,
    UnevaluatedProperties,
    /// `propertyNames`: applied to each name, a string.
    Names,
    Prefix(usize),
    Items,
    Contains,
    UnevaluatedItems,
    /// `contentSchema`: applied to decoded string content, which this validator never decodes.
    Content,
    /// A `$defs` member: applied only where a reference names it.
    Definition,
}

impl Edge<'_> {
    /// Applied to the same instance location as the schema that holds it.
    pub(super) fn in_place(&self) -> bool {
        matches!(
            self,
            Edge::Ref
                | Edge::AllOf
                | Edge::AnyOf
                | Edge::OneOf
                | Edge::Not
                | Edge::If
                | Edge::Then
                | Edge::Else
                | Edge::Dependent
        )
    }
}

pub(super) struct Node<'v> {
    pub(super) value: &'v Value,
    /// JSON Pointer from the document root.
    pub(super) pointer: String,
    pub(super) edges: Vec<(Edge<'v>, usize)>,
    /// A `$ref` or `$dynamicRef` here that does not name a subschema of the document.
    pub(super) unresolved: bool,
}

pub(super) struct Graph<'v> {
    pub(super) nodes: Vec<Node<'v>>,
    /// Node of each subschema, by address in the document.
    pub(super) index: HashMap<*const Value, usize>,
    /// Whether references can be moved: no `$id` below the root, no dynamic references or
    /// anchors. Then every reference is a plain pointer or anchor into one resource.
    pub(super) single_resource: bool,
}

impl<'v> Graph<'v> {
    pub(super) fn new(root: &'v Value) -> Graph<'v> {
        // Pass 1: every subschema, its pointer and the resource (nearest `$id`) it belongs to.
        let mut nodes: Vec<Node<'v>> = Vec::new();
        let mut resource_of: Vec<usize> = Vec::new();
        let mut by_address: HashMap<*const Value, usize> = HashMap::new();
        let mut anchors: HashMap<(usize, &'v str), usize> = HashMap::new();
        let mut dynamic_anchors: HashMap<&'v str, Vec<usize>> = HashMap::new();
        let mut single_resource = true;
        let mut work: Vec<(&'v Value, String, Option<usize>)> = vec![(root, String::new(), None)];
        while let Some((value, pointer, parent_resource)) = work.pop() {
            if by_address.contains_key(&(value as *const Value)) {
                continue;
            }
            let id = nodes.len();
            by_address.insert(value, id);
            let map = value.as_object();
            let has_id = map.is_some_and(|m| m.get("$id").is_some_and(Value::is_string));
            let resource = match parent_resource {
                None => id,
                Some(_) if has_id => {
                    single_resource = false;
                    id
                }
                Some(r) => r,
            };
            resource_of.push(resource);
            if let Some(m) = map {
                if let Some(name) = m.get("$anchor").and_then(Value::as_str) {
                    anchors.insert((resource, name), id);
                }
                if let Some(name) = m.get("$dynamicAnchor").and_then(Value::as_str) {
                    single_resource = false;
                    anchors.entry((resource, name)).or_insert(id);
                    dynamic_anchors.entry(name).or_default().push(id);
                }
                if m.contains_key("$dynamicRef") {
                    single_resource = false;
                }
                for_each_subschema(m, &pointer, |_, child, child_pointer| {
                    work.push((child, child_pointer(), Some(resource)));
                });
            }
            nodes.push(Node {
                value,
                pointer,
                edges: Vec::new(),
                unresolved: false,
            });
        }
        // Pass 2: edges, references resolved against each node's resource.
        for id in 0..nodes.len() {
            let value: &'v Value = nodes[id].value;
            let Some(map) = value.as_object() else {
                continue;
            };
            let mut edges = Vec::new();
            let mut unresolved = false;
            let pointer = nodes[id].pointer.clone();
            for_each_subschema(map, &pointer, |edge, child, _| {
                if let Some(&c) = by_address.get(&(child as *const Value)) {
                    edges.push((edge, c));
                }
            });
            let resolve = |reference: &str| -> Option<usize> {
                let fragment = reference.strip_prefix('#')?;
                let resource = resource_of[id];
                if fragment.is_empty() || fragment.starts_with('/') {
                    let target = nodes[resource].value.pointer(&percent_decode(fragment))?;
                    by_address.get(&(target as *const Value)).copied()
                } else {
                    anchors
                        .get(&(resource, percent_decode(fragment).as_str()))
                        .copied()
                }
            };
            if let Some(reference) = map.get("$ref").and_then(Value::as_str) {
                match resolve(reference) {
                    Some(target) => edges.push((Edge::Ref, target)),
                    None => unresolved = true,
                }
            }
            if let Some(reference) = map.get("$dynamicRef").and_then(Value::as_str) {
                let fragment = reference.strip_prefix('#').unwrap_or_default();
                let dynamic = dynamic_anchors.get(fragment).map_or(&[][..], Vec::as_slice);
                let found = resolve(reference);
                if found.is_none() && dynamic.is_empty() {
                    unresolved = true;
                }
                edges.extend(found.map(|t| (Edge::Ref, t)));
                edges.extend(dynamic.iter().map(|&t| (Edge::Ref, t)));
            }
            nodes[id].edges = edges;
            nodes[id].unresolved = unresolved;
        }
        Graph {
            nodes,
            index: by_address,
            single_resource,
        }
    }

    /// The node of a subschema of the document.
    pub(super) fn id(&self, value: &Value) -> usize {
        self.index[&(value as *const Value)]
    }

    pub(super) fn map(&self, id: usize) -> Option<&'v serde_json::Map<String, Value>> {
        self.nodes[id].value.as_object()
    }

    /// The node a `$ref` of `id` points at.
    pub(super) fn ref_target(&self, id: usize) -> Option<usize> {
        self.nodes[id]
            .edges
            .iter()
            .find(|(e, _)| *e == Edge::Ref)
            .map(|&(_, t)| t)
    }

    /// In-place edges only, in an order where every node comes after all nodes it applies in
    /// place; `Err(node)` names a node on a cycle of in-place applications.
    pub(super) fn in_place_order(&self) -> Result<Vec<usize>, usize> {
        // Iterative depth-first post-order with three colours.
        let n = self.nodes.len();
        let mut state = vec![0u8; n]; // 0 new, 1 on the stack, 2 done
        let mut order = Vec::with_capacity(n);
        for start in 0..n {
            if state[start] != 0 {
                continue;
            }
            let mut stack: Vec<(usize, usize)> = vec![(start, 0)];
            state[start] = 1;
            while let Some(&mut (node, ref mut next)) = stack.last_mut() {
                let edges = &self.nodes[node].edges;
                if let Some((edge, target)) = edges.get(*next) {
                    *next += 1;
                    if !edge.in_place() {
                        continue;
                    }
                    match state[*target] {
                        0 => {
                            state[*target] = 1;
                            stack.push((*target, 0));
                        }
                        1 => return Err(*target),
                        _ => {}
                    }
                } else {
                    state[node] = 2;
                    order.push(node);
                    stack.pop();
                }
            }
        }
        Ok(order)
    }
}

/// Calls `f(edge, subschema, pointer)` for each subschema a schema object applies directly.
pub(super) fn for_each_subschema<'v>(
    map: &'v serde_json::Map<String, Value>,
    pointer: &str,
    mut f: impl FnMut(Edge<'v>, &'v Value, &dyn Fn() -> String),
) {
    // `then` and `else` apply nothing without an `if`.
    let conditional = map.contains_key("if");
    for (key, value) in map {
        let here = || child_pointer(pointer, key);
        let one = match key.as_str() {
            "allOf" | "anyOf" | "oneOf" | "prefixItems" => {
                if let Value::Array(items) = value {
                    for (i, item) in items.iter().enumerate() {
                        let edge = match key.as_str() {
                            "allOf" => Edge::AllOf,
                            "anyOf" => Edge::AnyOf,
                            "oneOf" => Edge::OneOf,
                            _ => Edge::Prefix(i),
                        };
                        f(edge, item, &|| child_pointer(&here(), &i.to_string()));
                    }
                }
                continue;
            }
            "properties" | "patternProperties" | "dependentSchemas" | "$defs" => {
                if let Value::Object(members) = value {
                    for (name, member) in members {
                        let edge = match key.as_str() {
                            "properties" => Some(Edge::Property(name.as_str())),
                            "patternProperties" => Some(Edge::Pattern),
                            "dependentSchemas" => Some(Edge::Dependent),
                            // Definitions apply nothing; they are reached through `$ref`.
                            _ => None,
                        };
                        let at = || child_pointer(&here(), name);
                        f(edge.unwrap_or(Edge::Definition), member, &at);
                    }
                }
                continue;
            }
            "not" => Edge::Not,
            "if" => Edge::If,
            "then" if conditional => Edge::Then,
            "else" if conditional => Edge::Else,
            // Still a subschema (a reference may point into it), applied nowhere.
            "then" | "else" => Edge::Definition,
            "additionalProperties" => Edge::Additional,
            "unevaluatedProperties" => Edge::UnevaluatedProperties,
            "propertyNames" => Edge::Names,
            "items" => Edge::Items,
            "contains" => Edge::Contains,
            "unevaluatedItems" => Edge::UnevaluatedItems,
            "contentSchema" => Edge::Content,
            _ => continue,
        };
        f(one, value, &here);
    }
}
