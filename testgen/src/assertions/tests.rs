use super::*;

fn cat() -> TargetRef {
    TargetRef { sprite: "Cat".into(), clone: 0 }
}

#[test]
fn changes_only() {
    let a = Snapshot::from_assertions([
        Assertion::Position { target: cat(), x: 0.0, y: 0.0 },
        Assertion::Visibility { target: cat(), visible: true },
    ]);
    let b = Snapshot::from_assertions([
        Assertion::Position { target: cat(), x: 10.0, y: 0.0 },
        Assertion::Visibility { target: cat(), visible: true },
    ]);
    assert_eq!(b.changes_since(&a), vec![Assertion::Position { target: cat(), x: 10.0, y: 0.0 }]);
    assert!(b.changes_since(&b).is_empty());
}

#[test]
fn tolerances() {
    let p = Assertion::Position { target: cat(), x: 10.0, y: 0.0 };
    assert!(p.accepts(Some(&Assertion::Position { target: cat(), x: 15.0, y: -5.0 })));
    assert!(!p.accepts(Some(&Assertion::Position { target: cat(), x: 15.5, y: 0.0 })));
    assert!(!p.accepts(None));
    let d = Assertion::Direction { target: cat(), direction: 179.5 };
    assert!(d.accepts(Some(&Assertion::Direction { target: cat(), direction: -179.6 })));
    assert!(!d.accepts(Some(&Assertion::Direction { target: cat(), direction: 177.0 })));
    let s = Assertion::Say { target: cat(), text: "Hi".into(), think: false };
    assert!(!s.accepts(Some(&Assertion::Say { target: cat(), text: "Hi".into(), think: true })));
}

#[test]
fn javascript() {
    let js = Assertion::Say { target: TargetRef { sprite: "Cat".into(), clone: 2 }, text: "a\"b".into(), think: false }
        .to_js();
    assert_eq!(
        js,
        r#"t.assert.equal(t.getSprite("Cat").getClones()[1].sayText, "a\"b", "Expected Clone 2 of Cat to say a\"b");"#
    );
    let s = Assertion::Size { target: cat(), size: 100.5 }.to_js();
    assert!(s.starts_with(r#"t.assert.withinRange(t.getSprite("Cat").size, 101, 1, "#), "{s}");
    let v =
        Assertion::Variable { target: TargetRef::stage(), variable: "score".into(), value: "3".into(), boolean: false }
            .to_js();
    assert!(v.starts_with(r#"t.assert.equal(t.getStage().getVariable("score", false).value, "3", "#), "{v}");
    let p = Assertion::Position { target: cat(), x: 1.5, y: -2.0 }.to_js();
    assert!(p.contains("t.assert.withinRange(t.getSprite(\"Cat\").x, 1.5, 5, ") && p.contains(".y, -2, 5, "));
    let json = serde_json::to_string(&Assertion::TouchingEdge { target: cat(), touching: true }).unwrap();
    assert_eq!(json, r#"{"kind":"touching_edge","target":{"sprite":"Cat","clone":0},"touching":true}"#);
}

#[test]
fn computed_numbers_are_checked_within_a_relative_tolerance() {
    // Values read in the round trip: Whisker's Chromium and clowder differ in the last digits.
    assert_eq!(computed_number("23.291175050836813"), Some(23.291175050836813));
    assert_eq!(computed_number("-1.6634016249431547"), Some(-1.6634016249431547));
    assert_eq!(computed_number("1.2246467991473532e-16"), Some(1.2246467991473532e-16));
    for exact in ["3", "4.5", "0.30000000000001", "-0", "0", "abc", "1e400", "", "123456789012345x", "true"] {
        assert_eq!(computed_number(exact), None, "{exact}");
    }
    let var = |value: &str| Assertion::Variable {
        target: TargetRef::stage(),
        variable: "x".into(),
        value: value.into(),
        boolean: false,
    };
    let e = var("23.291175050836813");
    assert!(e.accepts(Some(&var("23.291175050836827"))));
    assert!(!e.accepts(Some(&var("23.2911755"))));
    assert!(!e.accepts(Some(&var("abc"))));
    assert!(!var("4.5").accepts(Some(&var("4.500000000000001"))));
    let other = Assertion::Variable {
        target: TargetRef::stage(),
        variable: "y".into(),
        value: "23.291175050836827".into(),
        boolean: false,
    };
    assert!(!e.accepts(Some(&other)));
    let js = e.to_js();
    assert!(
        js.starts_with(
            r#"t.assert.withinRange(t.getStage().getVariable("x", false).value, 23.291175050836813, 1e-7, "#
        ),
        "{js}"
    );
    assert!(var("3").to_js().starts_with("t.assert.equal("));
    assert_eq!(value_tolerance(23.29), 1e-7);
    assert_eq!(value_tolerance(-1.66), 1e-8);
    assert_eq!(value_tolerance(1e-16), 1e-25);
}
