//! Nested paths read in one pass per object (`nested`) against the same steps reading every path
//! by itself, as before: on records whose objects miss keys, repeat them, hold objects, arrays,
//! escapes and nulls, or are no object at all, both give the same output or the same error.

use super::*;
use proptest::prelude::*;

fn chain(objects: bool) -> StepChain {
    let stages = vec![
        StepPlan {
            name: "cut".into(),
            kind: StepKind::Filter {
                condition: "coalesce(left.b, 0) != 7 || right.c == 'x'".into(),
            },
        },
        StepPlan {
            name: "pick".into(),
            kind: StepKind::Select {
                fields: vec![
                    ("a".into(), "left.a".into()),
                    ("b".into(), "left.b".into()),
                    ("c".into(), "right.c".into()),
                    ("y".into(), "left.x.y".into()),
                    ("same".into(), "left.a == right.c".into()),
                    ("k".into(), "k".into()),
                ],
            },
        },
    ];
    let mut c = StepChain::new(&stages, &[0, 1]).unwrap();
    if !objects {
        for (_, step) in &mut c.steps {
            step.objects = nested::Objects::new(&[]);
            step.objects.slots = vec![None; step.nested.len()];
        }
    }
    c
}

fn run(c: &mut StepChain, line: &str) -> Result<Option<String>, String> {
    Ok(match c.apply(line.as_bytes(), None)? {
        Outcome::Kept(b) => Some(String::from_utf8(b.to_vec()).unwrap()),
        Outcome::Dropped => None,
    })
}

const VALUES: [&str; 10] = [
    "1",
    "7",
    "-2.50",
    "\"x\"",
    "\"q\\\"\\u00e9\"",
    "null",
    "true",
    "{\"y\":3}",
    "[1,{\"y\":2}]",
    "\"long long long long long long long long\"",
];

/// An object of (key, value) entries, keys repeating as drawn; or, by `shape`, no object.
fn object(entries: &[(u8, u8)], shape: u8) -> Option<String> {
    match shape {
        0 => None,
        1 => Some("null".into()),
        2 => Some("\"left\"".into()),
        _ => {
            let body: Vec<String> = entries
                .iter()
                .map(|&(k, v)| {
                    format!(
                        "\"{}\":{}",
                        ["a", "b", "c", "x", "z"][k as usize % 5],
                        VALUES[v as usize % VALUES.len()]
                    )
                })
                .collect();
            Some(format!("{{{}}}", body.join(",")))
        }
    }
}

#[test]
fn a_hand_written_join_record_reads_the_same_either_way() {
    let line = r#"{"k":1,"left":{"z":"skip me, a long description","a":"x","b":2,"x":{"y":5}},"right":{"c":"x","d":[1,2]}}"#;
    let (mut one, mut each) = (chain(true), chain(false));
    let want = Some(r#"{"a":"x","b":2,"c":"x","y":5,"same":true,"k":1}"#.to_string());
    assert_eq!(run(&mut one, line), Ok(want.clone()));
    assert_eq!(run(&mut each, line), Ok(want));
    assert!(one.steps.iter().all(|(_, s)| s.objects.total > 0));
}

proptest! {
    #[test]
    fn one_pass_per_object_reads_what_each_path_reads(
        left in proptest::collection::vec((0u8..5, 0u8..10), 0..8),
        right in proptest::collection::vec((0u8..5, 0u8..10), 0..5),
        shapes in (0u8..6, 0u8..6),
    ) {
        let mut fields = vec!["\"k\":1".to_string()];
        if let Some(l) = object(&left, shapes.0) {
            fields.push(format!("\"left\":{l}"));
        }
        if let Some(r) = object(&right, shapes.1) {
            fields.push(format!("\"right\":{r}"));
        }
        let line = format!("{{{}}}", fields.join(","));
        let (mut one, mut each) = (chain(true), chain(false));
        prop_assert_eq!(run(&mut one, &line), run(&mut each, &line), "{}", line);
    }
}
