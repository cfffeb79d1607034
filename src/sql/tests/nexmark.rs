//! `'connector' = 'nexmark'`: a Nexmark raw table of `benches/nexmark/ddl.sql` compiled to the
//! Nexmark generator, and what it refuses.

use super::{job, refusal};
use crate::config::SourceConfig;
use crate::connectors::generator::{GeneratorModel, NexmarkTable};

const BID: &str = "CREATE TABLE bid_raw (auction BIGINT, bidder BIGINT, price BIGINT, channel STRING,
  url STRING, `dateTime` BIGINT, extra STRING, dt AS TO_TIMESTAMP_LTZ(`dateTime`, 3),
  WATERMARK FOR dt AS dt - INTERVAL '4' SECOND
) WITH ('connector' = 'nexmark', 'table' = 'bid', 'events.num' = '20000', 'first-event.rate' = '500', 'seed' = '7');
CREATE TABLE o (auction BIGINT, price BIGINT) WITH ('connector' = 'print');
INSERT INTO o SELECT auction, price FROM bid_raw WHERE price > 1000;
";

#[test]
fn a_nexmark_table_is_the_generators_table_with_its_options() {
    let cfg = job(BID);
    let SourceConfig::Generator(g) = &cfg.sources["bid_raw"] else {
        panic!("{:?}", cfg.sources["bid_raw"]);
    };
    assert_eq!(
        (g.model, g.table, g.count, g.events_per_second, g.seed),
        (
            GeneratorModel::Nexmark,
            Some(NexmarkTable::Bid),
            Some(20000),
            Some(500),
            7
        )
    );
    assert_eq!(g.event_time().field, "dateTime");
    assert_eq!(g.watermark.max_out_of_orderness.as_millis(), 4000);
}

#[test]
fn a_nexmark_table_refuses_what_its_records_do_not_have() {
    let (_, _, m) = refusal(&BID.replace("'table' = 'bid'", "'table' = 'bids'"));
    assert!(
        m.contains("'bids' is not a Nexmark table (expected 'person', 'auction' or 'bid')"),
        "{m}"
    );
    let (_, _, m) = refusal(&BID.replace("'table' = 'bid', ", ""));
    assert!(
        m.contains("table `bid_raw` needs the option 'table'"),
        "{m}"
    );
    let (_, _, m) = refusal(&BID.replace("'table' = 'bid'", "'table' = 'person'"));
    assert!(
        m.contains("Nexmark person records have no field `auction`"),
        "{m}"
    );
    let (_, _, m) = refusal(&BID.replace("'seed' = '7'", "'path' = 'x'"));
    assert!(
        m.contains("'path': not supported for connector 'nexmark'"),
        "{m}"
    );
    let (_, _, m) = refusal(&BID.replace("'events.num' = '20000'", "'events.num' = 'many'"));
    assert!(
        m.contains("'events.num': 'many' is not a whole number"),
        "{m}"
    );
}
