//! Tests of `sluice loadgen clicks`: argument defaults and validation, how output is split into
//! files and chunks, and that the written lines are exactly the model's stream.

use super::*;
use clap::Parser;

#[derive(Parser)]
struct Cli {
    #[command(flatten)]
    args: LoadgenArgs,
}

fn parse(argv: &[&str]) -> Result<LoadgenArgs, clap::Error> {
    Cli::try_parse_from(std::iter::once("loadgen").chain(argv.iter().copied())).map(|c| c.args)
}

fn expected_lines(plan: &GeneratorPlan, range: std::ops::Range<u64>) -> Vec<u8> {
    let model = ClickModel::new(plan);
    let mut out = Vec::new();
    for i in range {
        write_ndjson(&model.click(i), &mut out);
    }
    out
}

#[test]
fn defaults_equal_the_generator_defaults() {
    let args = parse(&["clicks", "--events", "5", "--out", "x.ndjson"]).expect("parses");
    let plan = args.plan().expect("valid");
    assert_eq!(
        plan,
        crate::connectors::generator::model::default_plan(Some(5))
    );
    assert_eq!(args.files, 1);
    assert_eq!(args.output_paths(), vec![PathBuf::from("x.ndjson")]);
}

#[test]
fn flags_parse_and_bad_values_are_refused() {
    let args = parse(&[
        "clicks",
        "--events",
        "9",
        "--out",
        "o.ndjson",
        "--seed",
        "1",
        "--keys",
        "2",
        "--zipf",
        "0.5",
        "--celebrity-share",
        "0.25",
        "--users",
        "3",
        "--rate",
        "4",
        "--start-ms",
        "-10",
        "--out-of-orderness-ms",
        "5",
        "--late-fraction",
        "0.5",
        "--late-by-ms",
        "6",
        "--files",
        "3",
    ])
    .expect("parses");
    let plan = args.plan().expect("valid");
    let want = GeneratorPlan {
        seed: 1,
        keys: 2,
        zipf_exponent: 0.5,
        celebrity_share: 0.25,
        users: 3,
        events_per_second: 4,
        start_ms: -10,
        out_of_orderness_ms: 5,
        late_fraction: 0.5,
        late_by_ms: 6,
        count: Some(9),
    };
    assert_eq!(plan, want);
    assert!(parse(&["views", "--events", "1", "--out", "o"]).is_err());
    assert!(
        parse(&["clicks", "--out", "o"]).is_err(),
        "--events is required"
    );
    for (flag, value) in [
        ("--keys", "0"),
        ("--users", "0"),
        ("--rate", "0"),
        ("--zipf", "-1"),
        ("--zipf", "inf"),
        ("--celebrity-share", "1.5"),
        ("--late-fraction", "NaN"),
        ("--out-of-orderness-ms", "-1"),
        ("--late-by-ms", "-1"),
        ("--files", "0"),
    ] {
        let arg = format!("{flag}={value}");
        let args = parse(&["clicks", "--events", "1", "--out", "o", &arg]);
        let err = args.map(|a| a.plan());
        match err {
            Ok(Err(LoadgenError::InvalidArg { arg, .. })) => {
                assert_eq!(format!("--{arg}"), flag)
            }
            other => panic!("{flag} {value}: expected InvalidArg, got {other:?}"),
        }
    }
    assert!(parse(&["clicks", "--events", "1", "--out", "o", "--keys", "-3"]).is_err());
}

#[test]
fn split_paths_and_chunks() {
    let mut args = parse(&[
        "clicks", "--events", "1", "--out", "d/c.json", "--files", "2",
    ])
    .expect("parses");
    assert_eq!(
        args.output_paths(),
        [PathBuf::from("d/c.0.json"), PathBuf::from("d/c.1.json")]
    );
    args.out = Some(PathBuf::from("d/c"));
    assert_eq!(args.output_paths()[1], PathBuf::from("d/c.1.ndjson"));
    let c = chunks(10, 3, 2);
    let flat: Vec<(usize, u64, u64)> = c.iter().map(|c| (c.file, c.start, c.end)).collect();
    assert_eq!(
        flat,
        [
            (0, 0, 2),
            (0, 2, 3),
            (1, 3, 5),
            (1, 5, 6),
            (2, 6, 8),
            (2, 8, 10)
        ]
    );
    assert!(chunks(0, 3, 2).is_empty());
    assert_eq!(
        chunks(2, 4, 8).iter().map(|c| c.file).collect::<Vec<_>>(),
        [1, 3]
    );
}

#[test]
fn written_lines_equal_the_model() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("nested/deeper/clicks.ndjson");
    // More than two chunks per lane, a ragged last chunk, late and celebrity events.
    let events = CHUNK_EVENTS * 5 + 17;
    let args = LoadgenArgs {
        late_fraction: 0.1,
        celebrity_share: 0.2,
        ..parse(&["clicks", "--events", &events.to_string(), "--out", "x"]).expect("parses")
    };
    let args = LoadgenArgs {
        out: Some(out.clone()),
        ..args
    };
    let report = run(&args).expect("loadgen runs");
    let plan = args.plan().expect("valid");
    let want = expected_lines(&plan, 0..events);
    let got = fs::read(&out).expect("output exists");
    assert!(got == want, "file differs from the model");
    assert_eq!(report.events, events);
    assert_eq!(report.bytes, want.len() as u64);
    assert_eq!(report.files, vec![out]);
    assert!(report.to_string().starts_with("Loadgen wrote events="));
}

#[test]
fn split_files_concatenate_to_the_stream() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("c.ndjson");
    let args =
        parse(&["clicks", "--events", "1000", "--files", "3", "--out", "x"]).expect("parses");
    let args = LoadgenArgs {
        out: Some(out),
        ..args
    };
    run(&args).expect("loadgen runs");
    let plan = args.plan().expect("valid");
    for (k, (start, end)) in [(0, 333), (333, 666), (666, 1000)].into_iter().enumerate() {
        let got = fs::read(dir.path().join(format!("c.{k}.ndjson"))).expect("part exists");
        assert!(got == expected_lines(&plan, start..end), "part {k} differs");
    }
    // More files than events: every file exists, the empty ones included.
    let args = LoadgenArgs {
        events: 2,
        files: 4,
        ..args
    };
    run(&args).expect("loadgen runs");
    let sizes: Vec<usize> = (0..4)
        .map(|k| fs::read(dir.path().join(format!("c.{k}.ndjson"))).map_or(usize::MAX, |b| b.len()))
        .collect();
    assert_eq!(sizes[0], 0);
    assert_eq!(sizes[2], 0);
    assert!(sizes[1] > 0 && sizes[3] > 0 && sizes[1] < 200, "{sizes:?}");
    let args = LoadgenArgs {
        events: 0,
        files: 1,
        ..args
    };
    let report = run(&args).expect("loadgen runs");
    assert_eq!((report.events, report.bytes), (0, 0));
    assert_eq!(
        fs::metadata(&report.files[0]).map(|m| m.len()).ok(),
        Some(0)
    );
}

#[test]
fn unwritable_output_is_an_error() {
    let dir = tempfile::tempdir().expect("tempdir");
    let blocker = dir.path().join("file");
    fs::write(&blocker, b"x").expect("write");
    let args = parse(&["clicks", "--events", "10", "--out", "x"]).expect("parses");
    let args = LoadgenArgs {
        out: Some(blocker.join("sub/c.ndjson")),
        ..args
    };
    assert!(matches!(run(&args), Err(LoadgenError::CreateDir { .. })));
    let args = LoadgenArgs {
        out: Some(dir.path().to_path_buf()),
        ..args
    };
    assert!(matches!(run(&args), Err(LoadgenError::Create { .. })));
}
