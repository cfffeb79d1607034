//! A Kafka source's or sink's librdkafka options as the clients get them: `options` as written,
//! then values taken from environment variables (`options_env`) and files (`options_file`), each
//! read here, before anything runs, so a missing secret is a config error naming its key; and
//! refused where this build cannot honour them (TLS without the `kafka-tls` feature).

use crate::connectors::check::Check;
use std::collections::BTreeMap;
use std::path::PathBuf;

/// The options of the Kafka client of the table `cx` checks.
pub fn kafka_options(
    cx: &mut Check<'_>,
    options: &BTreeMap<String, String>,
    from_env: &BTreeMap<String, String>,
    from_file: &BTreeMap<String, PathBuf>,
) -> BTreeMap<String, String> {
    let at = cx.table();
    let key = |table: &str, k: &str| at.clone().key(table).key(k);
    let mut out = options.clone();
    for (k, var) in from_env {
        if options.contains_key(k) {
            cx.err(
                key("options_env", k),
                format!("`{k}` is also set in `options`; give it once"),
            );
            continue;
        }
        match std::env::var(var) {
            Ok(v) if !v.is_empty() => {
                out.insert(k.clone(), v);
            }
            Ok(_) => cx.err(
                key("options_env", k),
                format!("the environment variable `{var}` is empty"),
            ),
            Err(_) => cx.err(
                key("options_env", k),
                format!("the environment variable `{var}` is not set (or not UTF-8)"),
            ),
        }
    }
    for (k, path) in from_file {
        if out.contains_key(k) {
            cx.err(
                key("options_file", k),
                format!("`{k}` is also set in `options` or `options_env`; give it once"),
            );
            continue;
        }
        match std::fs::read_to_string(path) {
            Ok(v) => {
                let v = v.strip_suffix('\n').unwrap_or(&v);
                let v = v.strip_suffix('\r').unwrap_or(v);
                out.insert(k.clone(), v.to_string());
            }
            Err(e) => cx.err(
                key("options_file", k),
                format!("cannot read `{}`: {e}", path.display()),
            ),
        }
    }
    if let Some((k, why)) = super::client::unsupported(&out) {
        let table = if options.contains_key(&k) {
            "options"
        } else if from_env.contains_key(&k) {
            "options_env"
        } else {
            "options_file"
        };
        cx.err(key(table, &k), why);
    }
    out
}

#[cfg(test)]
mod tests {
    use crate::config::parse;
    use crate::connectors::kafka::KafkaSinkPlan;
    use crate::connectors::kafka::KafkaSource;
    use crate::plan::{build, Plan};

    fn job(client: &str) -> String {
        format!(
            "[sources.ev]\ntype = \"kafka\"\nbrokers = \"b:9092\"\ntopic = \"t\"\n\
             event_time = {{ field = \"ts\", unit = \"ms\" }}\n{client}\n\
             [transforms.kept]\ntype = \"filter\"\ninputs = [\"ev\"]\nwhere = \"true\"\n\n\
             [sinks.out]\ntype = \"kafka\"\ninputs = [\"kept\"]\nbrokers = \"b:9092\"\ntopic = \"o\"\n{client}"
        )
    }

    fn built(text: &str) -> Result<Plan, String> {
        let (config, src) = parse(text, "k.toml").map_err(|e| e.to_string())?;
        build(&config, &src).map_err(|e| e.to_string())
    }

    #[test]
    fn secrets_come_from_the_environment_and_files_into_both_clients() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("pw");
        std::fs::write(&file, "key-secret\n").unwrap();
        // PATH is set wherever tests run; its value stands in for a secret.
        let path_value = std::env::var("PATH").unwrap();
        let client = format!(
            "options = {{ \"sasl.username\" = \"u\" }}\n\
             options_env = {{ \"sasl.password\" = \"PATH\" }}\n\
             options_file = {{ \"ssl.key.password\" = {:?} }}\n",
            file.display().to_string()
        );
        let plan = built(&job(&client)).unwrap();
        let Some(k) = plan.sources[0].source_as::<KafkaSource>().map(|k| &k.plan) else {
            panic!()
        };
        let Some(s) = plan.sinks[0].sink_as::<KafkaSinkPlan>() else {
            panic!()
        };
        for o in [&k.options, &s.options] {
            assert_eq!(o["sasl.username"], "u");
            assert_eq!(o["sasl.password"], path_value);
            assert_eq!(o["ssl.key.password"], "key-secret");
        }
    }

    #[test]
    fn a_missing_variable_or_file_and_a_twice_given_option_name_their_keys() {
        let client = "options = { \"sasl.password\" = \"x\" }\n\
                      options_env = { \"sasl.password\" = \"PATH\", \"sasl.username\" = \"SLUICE_NO_SUCH_VAR_9\" }\n\
                      options_file = { \"ssl.key.password\" = \"/nonexistent/pw\" }\n";
        let e = built(&job(client)).unwrap_err();
        for want in [
            "k.toml:7:17:",
            "sources.ev.options_env.\"sasl.password\"",
            "also set in `options`",
            "sources.ev.options_env.\"sasl.username\"",
            "`SLUICE_NO_SUCH_VAR_9` is not set",
            "sources.ev.options_file.\"ssl.key.password\"",
            "cannot read `/nonexistent/pw`",
            "sinks.out.options_env.\"sasl.username\"",
        ] {
            assert!(e.contains(want), "{want:?} not in:\n{e}");
        }
    }
}
