//! The column walk's cases: DIRECT/INDIRECT, cold trails, connectors,
//! cycles, the depth cap and the budget.

use super::*;

fn f(name: &str, field: &str) -> FieldRef {
    FieldRef::new("ns", name, field)
}

fn ds(name: &str) -> DatasetKey {
    f(name, "").dataset
}

fn edge(g: &mut ColumnGraph, from: FieldRef, to: FieldRef, kind: Transform) {
    g.add_edge(
        &to.dataset,
        &ColumnEdge {
            from,
            to: to.field,
            kind,
            subtypes: vec![],
        },
    );
}

fn chain() -> ColumnGraph {
    // orders.amount → daily.revenue (DIRECT) → dash.total (DIRECT)
    // orders.amount → big.flag (INDIRECT) → dash.alert (DIRECT)
    let mut g = ColumnGraph::new();
    edge(
        &mut g,
        f("orders", "amount"),
        f("daily", "revenue"),
        Transform::Direct,
    );
    edge(
        &mut g,
        f("daily", "revenue"),
        f("dash", "total"),
        Transform::Direct,
    );
    edge(
        &mut g,
        f("orders", "amount"),
        f("big", "flag"),
        Transform::Indirect,
    );
    edge(
        &mut g,
        f("big", "flag"),
        f("dash", "alert"),
        Transform::Direct,
    );
    edge(
        &mut g,
        f("orders", "id"),
        f("daily", "n"),
        Transform::Direct,
    );
    for d in ["orders", "daily", "big", "dash"] {
        g.know(ds(d));
    }
    g
}

fn reached(i: &FieldImpact) -> Vec<(String, Transform, u32)> {
    i.fields
        .iter()
        .map(|r| {
            (
                format!("{}.{}", r.field.dataset.name, r.field.field),
                r.kind,
                r.depth,
            )
        })
        .collect()
}

#[test]
fn a_path_is_direct_only_when_every_hop_is() {
    let i = walk(
        &chain(),
        &f("orders", "amount"),
        Direction::Downstream,
        Limits::default(),
    );
    assert_eq!(
        reached(&i),
        vec![
            ("big.flag".into(), Transform::Indirect, 1),
            ("daily.revenue".into(), Transform::Direct, 1),
            ("dash.alert".into(), Transform::Indirect, 2),
            ("dash.total".into(), Transform::Direct, 2),
        ]
    );
    let total = &i.fields[3];
    assert_eq!(
        total.path,
        vec![
            f("orders", "amount"),
            f("daily", "revenue"),
            f("dash", "total")
        ]
    );
    assert!(!i.partial);
    assert!(i.fields.iter().all(|r| r.known));
}

#[test]
fn upstream_walks_the_edges_backwards() {
    let i = walk(
        &chain(),
        &f("dash", "total"),
        Direction::Upstream,
        Limits::default(),
    );
    assert_eq!(
        reached(&i),
        vec![
            ("daily.revenue".into(), Transform::Direct, 1),
            ("orders.amount".into(), Transform::Direct, 2),
        ]
    );
}

#[test]
fn a_job_without_column_lineage_is_a_cold_trail_and_one_with_it_is_not() {
    let mut g = chain();
    let cold = Reader::new(
        JobKey {
            namespace: "kafka".into(),
            name: "billing-consumer".into(),
        },
        vec![],
    );
    let precise = Reader::new(
        JobKey {
            namespace: "dbt".into(),
            name: "daily".into(),
        },
        vec![(ds("daily"), true)],
    );
    g.add_reader(ds("orders"), cold.clone());
    g.add_reader(ds("orders"), precise);
    g.add_reader(ds("dash"), cold);
    let i = walk(
        &g,
        &f("orders", "amount"),
        Direction::Downstream,
        Limits::default(),
    );
    let trails: Vec<(&str, &str, usize)> = i
        .cold
        .iter()
        .map(|c| (c.job.name.as_str(), c.dataset.name.as_str(), c.via.len()))
        .collect();
    // Once per (job, dataset), with the path to what it reads.
    assert_eq!(
        trails,
        vec![
            ("billing-consumer", "orders", 1),
            ("billing-consumer", "dash", 3)
        ]
    );
    assert_eq!(i.cold[0].message, "reads orders; which fields is unknown");
}

#[test]
fn a_connector_copies_a_field_to_the_column_of_its_name() {
    let mut g = ColumnGraph::new();
    let sink = JobKey {
        namespace: "kafka-connect://main".into(),
        name: "orders-to-db".into(),
    };
    g.add_reader(
        ds("orders"),
        Reader::new(sink, vec![(ds("orders_table"), false)]),
    );
    edge(
        &mut g,
        f("orders_table", "amount"),
        f("daily", "amount"),
        Transform::Direct,
    );
    let i = walk(
        &g,
        &f("orders", "amount"),
        Direction::Downstream,
        Limits::default(),
    );
    assert_eq!(
        reached(&i),
        vec![
            ("orders_table.amount".into(), Transform::Direct, 1),
            ("daily.amount".into(), Transform::Direct, 2),
        ]
    );
    assert!(i.cold.is_empty(), "a connector is not a cold trail");
    let up = walk(
        &g,
        &f("daily", "amount"),
        Direction::Upstream,
        Limits::default(),
    );
    assert_eq!(up.fields.len(), 2, "and back: {:?}", reached(&up));
}

#[test]
fn a_cycle_is_walked_once() {
    let mut g = ColumnGraph::new();
    edge(&mut g, f("a", "x"), f("b", "x"), Transform::Direct);
    edge(&mut g, f("b", "x"), f("a", "x"), Transform::Direct);
    edge(&mut g, f("b", "x"), f("c", "x"), Transform::Direct);
    let i = walk(&g, &f("a", "x"), Direction::Downstream, Limits::default());
    assert_eq!(
        reached(&i),
        vec![
            ("b.x".into(), Transform::Direct, 1),
            ("c.x".into(), Transform::Direct, 2)
        ]
    );
    assert!(!i.partial);
    // Named by an edge only: kept, and marked unknown.
    assert!(i.fields.iter().all(|r| !r.known));
}

#[test]
fn the_depth_cap_and_the_budget_cut_the_answer_and_say_so() {
    let mut g = ColumnGraph::new();
    for n in 0..10 {
        edge(
            &mut g,
            f(&format!("d{n}"), "x"),
            f(&format!("d{}", n + 1), "x"),
            Transform::Direct,
        );
    }
    let deep = walk(
        &g,
        &f("d0", "x"),
        Direction::Downstream,
        Limits {
            depth: 3,
            budget: 100,
        },
    );
    assert_eq!(deep.fields.len(), 3);
    assert!(deep.partial && deep.cut.depth && !deep.cut.budget);
    let exact = walk(
        &g,
        &f("d0", "x"),
        Direction::Downstream,
        Limits {
            depth: 10,
            budget: 100,
        },
    );
    assert!(!exact.partial, "nothing lies past d10");
    let small = walk(
        &g,
        &f("d0", "x"),
        Direction::Downstream,
        Limits {
            depth: 50,
            budget: 4,
        },
    );
    assert_eq!(small.fields.len(), 4);
    assert!(small.partial && small.cut.budget && !small.cut.depth);
}

#[test]
fn owners_are_attached_to_fields_and_cold_jobs() {
    let mut g = chain();
    g.add_reader(
        ds("dash"),
        Reader::new(
            JobKey {
                namespace: "bi".into(),
                name: "Finance daily".into(),
            },
            vec![],
        ),
    );
    let mut i = walk(
        &g,
        &f("orders", "amount"),
        Direction::Downstream,
        Limits::default(),
    );
    i.attach_owners(|k| match k {
        NodeKey::Dataset(d) if d.name == "daily" => Some("analytics".into()),
        NodeKey::Job(j) if j.name == "Finance daily" => Some("finance".into()),
        _ => None,
    });
    let revenue = i.fields.iter().find(|r| r.field == f("daily", "revenue"));
    assert_eq!(revenue.and_then(|r| r.owner.as_deref()), Some("analytics"));
    assert_eq!(i.cold[0].owner.as_deref(), Some("finance"));
    assert_eq!(i.nodes().len(), 4);
}

#[test]
fn a_field_reached_at_one_depth_by_a_direct_path_is_direct_whatever_the_order() {
    // s.x → a.x → t.y → u.z and s.x → b.x → t.y: one path DIRECT all the
    // way, the other INDIRECT at its first hop, tried both ways round
    // (hops are walked in field order, so `a` is always met first).
    for (via_a, via_b) in [
        (Transform::Indirect, Transform::Direct),
        (Transform::Direct, Transform::Indirect),
    ] {
        let mut g = ColumnGraph::new();
        edge(&mut g, f("s", "x"), f("a", "x"), via_a);
        edge(&mut g, f("s", "x"), f("b", "x"), via_b);
        edge(&mut g, f("a", "x"), f("t", "y"), Transform::Direct);
        edge(&mut g, f("b", "x"), f("t", "y"), Transform::Direct);
        edge(&mut g, f("t", "y"), f("u", "z"), Transform::Direct);
        let i = walk(&g, &f("s", "x"), Direction::Downstream, Limits::default());
        let got = reached(&i);
        assert!(
            got.contains(&("t.y".into(), Transform::Direct, 2)),
            "{via_a:?}/{via_b:?}: {got:?}"
        );
        assert!(
            got.contains(&("u.z".into(), Transform::Direct, 3)),
            "{via_a:?}/{via_b:?}: {got:?}"
        );
        let direct = if via_a == Transform::Direct { "a" } else { "b" };
        let t = i.fields.iter().find(|r| r.field == f("t", "y"));
        assert_eq!(
            t.map(|r| r.path.clone()),
            Some(vec![f("s", "x"), f(direct, "x"), f("t", "y")]),
            "the path shown is the DIRECT one"
        );
    }
}

#[test]
fn an_output_without_column_lineage_of_a_job_with_several_is_a_cold_trail() {
    let mut g = chain();
    let job = JobKey {
        namespace: "spark".into(),
        name: "fanout".into(),
    };
    g.add_reader(
        ds("orders"),
        Reader::new(job.clone(), vec![(ds("daily"), true), (ds("audit"), false)]),
    );
    let i = walk(
        &g,
        &f("orders", "amount"),
        Direction::Downstream,
        Limits::default(),
    );
    let trails: Vec<(&JobKey, &str, &[DatasetKey])> = i
        .cold
        .iter()
        .map(|c| (&c.job, c.dataset.name.as_str(), c.outputs.as_slice()))
        .collect();
    // Only the output that says nothing of its fields is cold.
    assert_eq!(trails, vec![(&job, "orders", &[ds("audit")][..])]);
}
