//! Validation of `[api]`: a socket address, on loopback unless `allow_remote` says otherwise (the
//! endpoint has no authentication), a connection limit and two timeouts that leave it usable.

use super::Builder;
use crate::config::{Config, KeyPath};
use crate::plan::ApiPlan;

impl Builder<'_> {
    pub(super) fn api(&mut self, config: &Config) -> Option<ApiPlan> {
        let a = config.api.as_ref()?;
        let key = |k: &str| KeyPath::new(["api", k]);
        if a.max_connections == 0 {
            self.err(key("max_connections"), "must be at least 1".into());
        } else if a.max_connections > ApiPlan::MAX_CONNECTIONS {
            self.err(
                key("max_connections"),
                format!(
                    "{} is not allowed: at most {} (each connection has a thread of its own)",
                    a.max_connections,
                    ApiPlan::MAX_CONNECTIONS
                ),
            );
        }
        for (name, t) in [
            ("read_timeout", a.read_timeout),
            ("write_timeout", a.write_timeout),
        ] {
            if t.as_millis() <= 0 {
                self.err(key(name), "must be longer than 0 ms".into());
            }
        }
        let Ok(address) = a.address.parse::<std::net::SocketAddr>() else {
            self.err(
                key("address"),
                format!(
                    "`{}` is not a socket address: expected host:port, e.g. \"127.0.0.1:9464\"",
                    a.address
                ),
            );
            return None;
        };
        let remote = !address.ip().to_canonical().is_loopback();
        if remote && !a.allow_remote {
            self.err(
                key("address"),
                format!(
                    "`{address}` is not a loopback address: the endpoint has no authentication, \
                     so serving other hosts needs `allow_remote = true` in [api]"
                ),
            );
        }
        let ms =
            |t: crate::config::Duration| std::time::Duration::from_millis(t.as_millis() as u64);
        Some(ApiPlan {
            address,
            remote,
            max_connections: a.max_connections,
            read_timeout: ms(a.read_timeout),
            write_timeout: ms(a.write_timeout),
        })
    }
}

#[cfg(test)]
mod tests {
    use crate::config::parse;
    use crate::plan::{build, ApiPlan, Plan, PlanErrors};
    use std::time::Duration;

    const BASE: &str = "[sources.clicks]\ntype = \"generator\"\n\n[transforms.cpm]\n\
        type = \"window\"\ninputs = [\"clicks\"]\ngroup_by = [\"ad_id\"]\n\
        window = { type = \"tumbling\", size = \"1m\" }\naggregates = { n = \"count()\" }\n\n\
        [sinks.out]\ntype = \"stdout\"\ninputs = [\"cpm\"]\n\n[api]\n";

    /// Line 16 is the first line of the `[api]` table's body.
    fn build_api(api: &str) -> Result<Plan, PlanErrors> {
        let text = format!("{BASE}{api}");
        let (config, src) = parse(&text, "p.toml").unwrap_or_else(|e| panic!("{e}\n{text}"));
        build(&config, &src)
    }

    fn errors(api: &str) -> Vec<String> {
        match build_api(api) {
            Ok(plan) => panic!("built: {:?}", plan.api),
            Err(e) => e.0.iter().map(ToString::to_string).collect(),
        }
    }

    #[test]
    fn api_defaults_are_loopback_with_bounded_clients() {
        let plan = build_api("").unwrap();
        assert_eq!(
            plan.api,
            Some(ApiPlan {
                address: "127.0.0.1:9464".parse().unwrap(),
                remote: false,
                max_connections: 16,
                read_timeout: Duration::from_secs(2),
                write_timeout: Duration::from_secs(5),
            })
        );
        let ipv6 = build_api("address = \"[::1]:9464\"\n").unwrap();
        assert!(!ipv6.api.unwrap().remote);
    }

    #[test]
    fn api_non_loopback_address_needs_allow_remote() {
        for addr in [
            "0.0.0.0:9464",
            "10.1.2.3:80",
            "[::]:9464",
            "[::ffff:10.0.0.1]:1",
        ] {
            let errs = errors(&format!("address = \"{addr}\"\n"));
            assert_eq!(errs.len(), 1, "{errs:?}");
            assert!(
                errs[0].starts_with("p.toml:16:")
                    && errs[0].contains("api.address")
                    && errs[0].contains("is not a loopback address")
                    && errs[0].contains("allow_remote = true"),
                "{}",
                errs[0]
            );
            let plan = build_api(&format!("address = \"{addr}\"\nallow_remote = true\n")).unwrap();
            assert!(plan.api.unwrap().remote, "{addr}");
        }
        let mapped = build_api("address = \"[::ffff:127.0.0.1]:9464\"\n").unwrap();
        assert!(
            !mapped.api.unwrap().remote,
            "IPv4-mapped loopback is loopback"
        );
    }

    #[test]
    fn api_limits_are_checked_all_at_once() {
        let errs = errors(
            "max_connections = 0\nread_timeout = \"0s\"\nwrite_timeout = \"0s\"\naddress = \"x\"\n",
        );
        assert_eq!(errs.len(), 4, "{errs:#?}");
        for (e, key) in errs.iter().zip([
            "api.max_connections",
            "api.read_timeout",
            "api.write_timeout",
            "api.address",
        ]) {
            assert!(e.contains(key), "{e} does not name {key}");
        }
        let errs = errors("max_connections = 1025\n");
        assert!(errs[0].contains("at most 1024"), "{errs:?}");
    }
}
