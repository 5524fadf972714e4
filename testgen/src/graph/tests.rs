use super::*;
use crate::testkit::{Arg, ProjectBuilder};

/// The paper's Figure 8: cat and bear.
pub(crate) fn cat_and_bear() -> (ProjectBuilder, Vec<String>) {
    let mut p = ProjectBuilder::new();
    p.message("answer cat");
    let cat = p.sprite("Cat");
    let bear = p.sprite("Bear");
    let c = p.t(cat);
    let h1 = c.when_clicked();
    let s1 = c.say_for(Arg::t("Hello bear!"), 2.0);
    let b1 = c.broadcast("answer cat");
    c.script(h1.clone(), &[s1.clone(), b1.clone()]);
    let b = p.t(bear);
    let h2 = b.when_receive("answer cat");
    let s2 = b.say_for(Arg::t("Hello cat!"), 2.0);
    let k = b.key_pressed("space");
    let sw = b.switch_costume("smiling bear");
    let iff = b.if_(&k, std::slice::from_ref(&sw));
    let fe = b.forever(std::slice::from_ref(&iff));
    b.script(h2.clone(), &[s2.clone(), fe.clone()]);
    (p, vec![h1, s1, b1, h2, s2, fe, iff, sw])
}

fn node_of(g: &Graph, p: &clowder_vm::Project, t: usize, id: &str) -> NodeId {
    let b = p.blocks.iter().position(|b| b.id == id && b.target as usize == t).expect("block") as BlockIdx;
    g.block_node[b as usize]
}

#[test]
fn cat_and_bear_dependences() {
    let (pb, ids) = cat_and_bear();
    let p = pb.load();
    let g = Graph::build(&p);
    let n = |t: usize, i: usize| node_of(&g, &p, t, &ids[i]);
    let (h1, s1, b1) = (n(1, 0), n(1, 1), n(1, 2));
    let (h2, s2, fe, iff, sw) = (n(2, 3), n(2, 4), n(2, 5), n(2, 6), n(2, 7));
    for x in [h1, s1, b1, h2, s2, fe, iff, sw] {
        assert_ne!(x, NONE, "all eight statements are reachable");
    }
    let deps = |x: NodeId| -> Vec<NodeId> { g.cd_pred[x as usize].iter().map(|(a, _)| *a).collect() };
    let click = g.nodes.iter().position(|n| *n == Node::UserEvent("click:Cat".into())).expect("click node") as NodeId;
    let msg =
        g.nodes.iter().position(|n| *n == Node::Event("broadcast:answer cat".into())).expect("event node") as NodeId;
    assert_eq!(deps(h1), vec![click]);
    assert_eq!(deps(s1), vec![click]);
    assert_eq!(deps(b1), vec![s1], "after a timed block, statements depend on it");
    assert_eq!(deps(msg), vec![b1], "the message event depends on its sender");
    assert_eq!(deps(h2), vec![msg]);
    assert_eq!(deps(s2), vec![msg]);
    assert_eq!(deps(fe), vec![s2, fe], "a loop head depends on itself");
    let mut d_if = deps(iff);
    d_if.sort_unstable();
    assert_eq!(d_if, vec![fe], "the if depends on the forever loop");
    assert_eq!(g.cd_pred[sw as usize], vec![(iff, Label::True)]);
    assert_eq!(deps(click), vec![ENTRY]);
}

#[test]
fn unreachable_scripts_are_not_nodes() {
    let mut p = ProjectBuilder::new();
    let s = p.sprite("S");
    let t = p.t(s);
    // A receiver without sender, a procedure without call, a loose block.
    let h = t.when_receive("nobody");
    let a = t.move_steps(1.0);
    let f = t.forever(&[a]);
    t.script(h, &[f]);
    let d = t.define("lonely");
    let m = t.move_steps(2.0);
    t.script(d, &[m]);
    let loose = t.move_steps(3.0);
    t.script(loose, &[]);
    let flag = t.when_flag();
    let m2 = t.move_steps(4.0);
    t.script(flag, &[m2]);
    let g = Graph::build(&p.load());
    let blocks: Vec<_> = g.nodes.iter().filter(|n| matches!(n, Node::Block(_))).collect();
    assert_eq!(blocks.len(), 2, "only the green-flag script counts: {:?}", g.nodes);
}

#[test]
fn procedure_returns_link_to_call_successors() {
    let mut p = ProjectBuilder::new();
    let s = p.sprite("S");
    let t = p.t(s);
    let d = t.define("jump");
    let w = t.wait(1.0);
    let m = t.move_steps(2.0);
    t.script(d.clone(), &[w, m.clone()]);
    let flag = t.when_flag();
    let c = t.call("jump");
    let after = t.say(Arg::t("done"));
    t.script(flag, &[c.clone(), after.clone()]);
    let pr = p.load();
    let g = Graph::build(&pr);
    let (dn, mn, cn, an) =
        (node_of(&g, &pr, 1, &d), node_of(&g, &pr, 1, &m), node_of(&g, &pr, 1, &c), node_of(&g, &pr, 1, &after));
    assert_eq!(g.succ[cn as usize].iter().map(|e| e.0).collect::<Vec<_>>(), vec![dn]);
    assert!(g.succ[mn as usize].iter().any(|e| e.0 == an), "return edge to the statement after the call");
    // The statement after the call waits for the procedure's wait block.
    assert_eq!(g.cd_pred[an as usize].len(), 1);
}
