//! The embedded edge-stream fingerprint of a job, to compare with a
//! cluster job's status (measurements, not tests):
//! `cargo run --release -p dpincon-ballista --example fingerprint -- DATA DCS [SCHEMA]`.

use std::time::Instant;

use dpincon_engine::{JobConfig, NoProgress, load};
use dpincon_graph::edge_stream_fingerprint;

#[tokio::main]
async fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [data, dcs, rest @ ..] = args.as_slice() else {
        eprintln!("usage: fingerprint DATA DCS [SCHEMA]");
        std::process::exit(2);
    };
    let mut job = JobConfig::new(data, dcs);
    job.table.schema = rest.first().map(|s| s.parse().expect("a schema, Name:type,..."));
    if data.ends_with(".parquet") {
        let file = std::fs::File::open(data).expect("the table");
        let reader =
            datafusion::parquet::file::reader::SerializedFileReader::new(file).expect("Parquet");
        use datafusion::parquet::file::reader::FileReader;
        println!("row groups: {}", reader.metadata().num_row_groups());
    }
    let start = Instant::now();
    let loaded = load(&job, &NoProgress).await.expect("embedded load");
    println!(
        "rows {} fingerprint {} (read {:.1} s, detect {:.1} s, total {:.1} s)",
        loaded.facts.rows,
        edge_stream_fingerprint(loaded.graph.edges()),
        loaded.read_s,
        loaded.detect_s,
        start.elapsed().as_secs_f64()
    );
}
