use super::*;
use crate::record::columns::fields;
use arrow_array::{Array, Decimal128Array, Int64Array, StringArray};

/// The shape the values of field `col` in `lines` imply.
fn shape_of(col: &str, lines: &[&str]) -> Option<Shape> {
    let rows: Vec<_> = lines
        .iter()
        .map(|l| fields(l.as_bytes()).unwrap())
        .collect();
    Shape::infer(
        rows.iter()
            .flat_map(|r| r.iter().filter(|(n, _)| n == col))
            .map(|(_, v)| v),
    )
}

fn leaf(t: ColumnType) -> Shape {
    Shape::Leaf(t)
}

fn st(fields: Vec<(&str, Shape)>) -> Shape {
    Shape::Struct(
        fields
            .into_iter()
            .map(|(n, s)| (n.to_string(), s))
            .collect(),
    )
}

fn dec(s: u8) -> ColumnType {
    ColumnType::Decimal(Some((38, s)))
}

#[test]
fn an_object_column_is_the_union_of_its_fields_in_first_seen_order() {
    let got = shape_of(
        "u",
        &[
            r#"{"u":{"id":1,"geo":{"cc":"DE"},"tags":[]}}"#,
            r#"{"u":null}"#,
            r#"{"u":{"tags":["a","b"],"id":2.5,"score":1.25,"note":null}}"#,
            r#"{"u":{"id":3,"score":7.125,"geo":{"cc":"FR","zip":75001}}}"#,
        ],
    );
    let want = st(vec![
        ("id", leaf(dec(1))),
        (
            "geo",
            st(vec![
                ("cc", leaf(ColumnType::Text)),
                ("zip", leaf(ColumnType::BigInt)),
            ]),
        ),
        ("tags", Shape::List(Box::new(leaf(ColumnType::Text)))),
        ("score", leaf(dec(3))),
        ("note", leaf(ColumnType::Text)),
    ]);
    assert_eq!(got, Some(want.clone()));
    // What a file keeps is what a resumed run reads back.
    assert_eq!(Shape::from_data_type(&want.data_type()), Some(want));
}

#[test]
fn arrays_of_objects_and_scalar_kinds_widen_like_top_level_columns() {
    let got = shape_of(
        "items",
        &[
            r#"{"items":[{"sku":"a","qty":1},{"sku":"b","qty":2,"ok":true}]}"#,
            r#"{"items":[{"sku":7,"qty":null}]}"#,
        ],
    );
    let want = Shape::List(Box::new(st(vec![
        ("sku", leaf(ColumnType::Text)),
        ("qty", leaf(ColumnType::BigInt)),
        ("ok", leaf(ColumnType::Boolean)),
    ])));
    assert_eq!(got, Some(want));
    let nested = shape_of("m", &[r#"{"m":[[1,2],[],null,[3.50]]}"#]);
    assert_eq!(
        nested,
        Some(Shape::List(Box::new(Shape::List(Box::new(leaf(dec(2)))))))
    );
}

#[test]
fn values_no_single_shape_holds_stay_json_text() {
    for lines in [
        &[r#"{"v":{"a":1}}"#, r#"{"v":[1]}"#][..],
        &[r#"{"v":{"a":1}}"#, r#"{"v":3}"#],
        &[r#"{"v":{"a":{"b":1}}}"#, r#"{"v":{"a":[1]}}"#],
        &[r#"{"v":{}}"#],
        &[r#"{"v":{"a":{}}}"#],
        &[r#"{"v":[1.000000000000000000000000000000000000000001]}"#],
        // Not nested at all: a scalar column, not a shape.
        &[r#"{"v":1}"#],
        &[r#"{"v":null}"#],
    ] {
        assert_eq!(shape_of("v", lines), None, "{lines:?}");
    }
}

/// Converts each line's `v` for `shape` and builds the column.
fn column(shape: &Shape, lines: &[&str]) -> (Result<ArrayRef, ArrowError>, Vec<String>) {
    let mut b = NestedBuilder::new(shape);
    let mut errors = Vec::new();
    for l in lines {
        let f = fields(l.as_bytes()).unwrap();
        let v = f
            .iter()
            .find(|(n, _)| n == "v")
            .map_or(Value::Null, |(_, v)| v.clone());
        match convert(shape, &v) {
            Ok(n) => b.append(n),
            Err(e) => errors.push(e),
        }
    }
    (b.finish(), errors)
}

#[test]
fn structs_build_with_nulls_missing_fields_and_exact_decimals() {
    let shape = st(vec![
        ("id", leaf(ColumnType::BigInt)),
        ("price", leaf(dec(2))),
        ("geo", st(vec![("cc", leaf(ColumnType::Text))])),
    ]);
    let (col, errors) = column(
        &shape,
        &[
            r#"{"v":{"id":1,"price":2.50,"geo":{"cc":"DE"}}}"#,
            r#"{"v":null}"#,
            r#"{"v":{"price":0.1}}"#,
            r#"{"v":{"id":"x"}}"#,
            r#"{"v":{"geo":{"cc":"FR","zz":1}}}"#,
            r#"{"v":[1]}"#,
            r#"{"v":{"price":1.005}}"#,
        ],
    );
    let col = col.unwrap();
    let s = col.as_any().downcast_ref::<StructArray>().unwrap();
    assert_eq!(
        (s.len(), s.is_null(0), s.is_null(1), s.is_null(2)),
        (3, false, true, false)
    );
    let id = s.column(0).as_any().downcast_ref::<Int64Array>().unwrap();
    assert_eq!((id.value(0), id.is_null(2)), (1, true));
    let price = s
        .column(1)
        .as_any()
        .downcast_ref::<Decimal128Array>()
        .unwrap();
    assert_eq!((price.value(0), price.value(2)), (250, 10));
    let geo = s.column(2).as_any().downcast_ref::<StructArray>().unwrap();
    assert!(!geo.is_null(0) && geo.is_null(2));
    let cc = geo
        .column(0)
        .as_any()
        .downcast_ref::<StringArray>()
        .unwrap();
    assert_eq!(cc.value(0), "DE");
    assert_eq!(errors.len(), 4, "{errors:?}");
    assert!(
        errors[0].starts_with("at `.id`:") && errors[0].contains("not an integer"),
        "{}",
        errors[0]
    );
    assert!(
        errors[1].starts_with("at `.geo`:") && errors[1].contains("field `zz`"),
        "{}",
        errors[1]
    );
    assert!(errors[2].contains("not an object"), "{}", errors[2]);
    assert!(errors[3].starts_with("at `.price`:"), "{}", errors[3]);
}

#[test]
fn lists_build_with_null_and_empty_lists_and_name_the_bad_element() {
    let shape = Shape::List(Box::new(st(vec![
        ("sku", leaf(ColumnType::Text)),
        ("qty", leaf(ColumnType::BigInt)),
    ])));
    let (col, errors) = column(
        &shape,
        &[
            r#"{"v":[{"sku":"a","qty":1},null,{"qty":3}]}"#,
            r#"{"v":[]}"#,
            r#"{}"#,
            r#"{"v":[{"sku":"b","qty":2}]}"#,
            r#"{"v":[{"sku":"c"},{"qty":1.5}]}"#,
            r#"{"v":{"sku":"d"}}"#,
        ],
    );
    let col = col.unwrap();
    let l = col.as_any().downcast_ref::<ListArray>().unwrap();
    assert_eq!(l.len(), 4);
    assert_eq!(l.value_offsets(), &[0, 3, 3, 3, 4]);
    assert!(!l.is_null(1) && l.is_null(2));
    let items = l.values().as_any().downcast_ref::<StructArray>().unwrap();
    assert!(items.is_null(1));
    let sku = items
        .column(0)
        .as_any()
        .downcast_ref::<StringArray>()
        .unwrap();
    assert_eq!(
        (sku.value(0), sku.is_null(2), sku.value(3)),
        ("a", true, "b")
    );
    assert_eq!(errors.len(), 2, "{errors:?}");
    assert!(errors[0].starts_with("at `[1].qty`:"), "{}", errors[0]);
    assert!(errors[1].contains("not an array"), "{}", errors[1]);
}
