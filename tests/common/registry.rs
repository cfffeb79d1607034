//! The test Schema Registry (`scripts/registry-local.sh start`: Apicurio Registry's
//! Confluent-compatible API), started once per test binary, and plain-HTTP helpers (curl) that
//! register and fetch schemas without going through sluice's own registry client.

use std::process::Command;
use std::sync::OnceLock;

fn script() -> &'static str {
    concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/registry-local.sh")
}

/// The registry's Confluent API base URL.
pub fn registry() -> &'static str {
    static R: OnceLock<String> = OnceLock::new();
    R.get_or_init(|| {
        let out = Command::new("bash")
            .args([script(), "start"])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "the Avro tests need a schema registry: scripts/registry-local.sh start failed:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let env = Command::new("bash")
            .args([script(), "env"])
            .output()
            .unwrap();
        String::from_utf8_lossy(&env.stdout)
            .lines()
            .find_map(|l| l.strip_prefix("export SLUICE_SCHEMA_REGISTRY="))
            .map(|v| v.trim_matches('\'').to_string())
            .expect("registry-local.sh env prints SLUICE_SCHEMA_REGISTRY")
    })
}

fn curl(args: &[&str]) -> serde_json::Value {
    let out = Command::new("curl")
        .args(["-sS", "--max-time", "30"])
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "curl {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "curl {args:?}: {e}: {}",
            String::from_utf8_lossy(&out.stdout)
        )
    })
}

/// Registers `schema` under `subject`; its global id.
pub fn register(subject: &str, schema: &str) -> u32 {
    let body = serde_json::json!({ "schema": schema }).to_string();
    let url = format!("{}/subjects/{subject}/versions", registry());
    let v = curl(&[
        "-X",
        "POST",
        "-H",
        "Content-Type: application/vnd.schemaregistry.v1+json",
        "--data",
        &body,
        &url,
    ]);
    v["id"]
        .as_u64()
        .unwrap_or_else(|| panic!("registering {subject}: {v}")) as u32
}

/// The schema text with global id `id`.
pub fn schema_by_id(id: u32) -> String {
    let v = curl(&[&format!("{}/schemas/ids/{id}", registry())]);
    v["schema"]
        .as_str()
        .unwrap_or_else(|| panic!("schema {id}: {v}"))
        .to_string()
}
