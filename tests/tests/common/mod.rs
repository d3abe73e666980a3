//! A throwaway PostgreSQL server for tests: Debian's `postgresql` binaries,
//! a cluster in a temporary directory, listening on a free loopback port
//! (its unix socket in the same directory), password authentication on
//! TCP, stopped and deleted on drop.

use std::path::PathBuf;
use std::process::Command;

/// The superuser's password: TCP connections must send it.
pub const PASSWORD: &str = "pw-9f3c-never-printed";

/// A running server.
pub struct PgServer {
    bin: PathBuf,
    dir: tempfile::TempDir,
    /// Its TCP port on 127.0.0.1.
    pub port: u16,
    as_postgres: bool,
}

/// The directory of `initdb` and `pg_ctl`: on the PATH, else the newest
/// of Debian's /usr/lib/postgresql/*/bin.
fn bin_dir() -> Option<PathBuf> {
    let on_path = std::env::var_os("PATH").and_then(|p| {
        std::env::split_paths(&p).find(|d| d.join("initdb").is_file() && d.join("pg_ctl").is_file())
    });
    on_path.or_else(|| {
        let mut dirs: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
            .ok()?
            .filter_map(|e| Some(e.ok()?.path().join("bin")))
            .filter(|d| d.join("initdb").is_file())
            .collect();
        dirs.sort_by_key(|d| {
            let version = d.parent().and_then(|v| v.file_name()).and_then(|v| v.to_str());
            version.and_then(|v| v.parse::<u32>().ok()).unwrap_or(0)
        });
        dirs.pop()
    })
}

impl PgServer {
    /// Starts a server, or `None` (with a message) when the binaries are
    /// absent and `DPINCON_REQUIRE_POSTGRES` is unset. Panics when they
    /// are required but absent, or when the server does not start.
    pub fn start() -> Option<PgServer> {
        let Some(bin) = bin_dir() else {
            assert!(
                std::env::var_os("DPINCON_REQUIRE_POSTGRES").is_none(),
                "DPINCON_REQUIRE_POSTGRES is set but no PostgreSQL server binaries were found \
                 (apt-get install postgresql)"
            );
            eprintln!(
                "SKIPPED: no PostgreSQL server binaries (initdb, pg_ctl); apt-get install \
                 postgresql, or set DPINCON_REQUIRE_POSTGRES=1 to make this a failure"
            );
            return None;
        };
        let dir = tempfile::tempdir().unwrap();
        // initdb refuses to run as root: the cluster then belongs to the
        // `postgres` user the Debian package creates.
        let as_postgres = uid("") == Some(0);
        if as_postgres {
            let status = Command::new("chown")
                .args(["-R", "postgres:postgres"])
                .arg(dir.path())
                .status()
                .unwrap();
            assert!(status.success(), "chown of the cluster directory failed");
        }
        let pwfile = dir.path().join("pw");
        std::fs::write(&pwfile, PASSWORD).unwrap();
        let mut server = PgServer { bin, port: 0, dir, as_postgres };
        if as_postgres {
            server.run("chown", &["postgres", pwfile.to_str().unwrap()], false);
        }
        let data = server.data();
        server.run(
            "initdb",
            &[
                "-D",
                data.to_str().unwrap(),
                "-U",
                "postgres",
                "--pwfile",
                pwfile.to_str().unwrap(),
                "--auth-local=trust",
                "--auth-host=scram-sha-256",
                "-E",
                "UTF8",
                "--locale=C",
                "--no-sync",
            ],
            true,
        );
        server.port = free_port();
        let options = format!(
            "-p {} -k {} -c listen_addresses=127.0.0.1 -F",
            server.port,
            server.dir.path().display()
        );
        let log = server.dir.path().join("server.log");
        // -w waits until the server accepts connections.
        server.run(
            "pg_ctl",
            &[
                "-D",
                data.to_str().unwrap(),
                "-o",
                &options,
                "-l",
                log.to_str().unwrap(),
                "-w",
                "start",
            ],
            true,
        );
        Some(server)
    }

    fn data(&self) -> PathBuf {
        self.dir.path().join("data")
    }

    fn run(&self, program: &str, args: &[&str], postgres_bin: bool) {
        let program = if postgres_bin { self.bin.join(program) } else { PathBuf::from(program) };
        let mut command = if self.as_postgres && postgres_bin {
            let mut c = Command::new("runuser");
            c.args(["-u", "postgres", "--"]).arg(&program);
            c
        } else {
            Command::new(&program)
        };
        let out = command.args(args).current_dir(self.dir.path()).output().unwrap();
        assert!(
            out.status.success(),
            "{} failed: {}{}",
            program.display(),
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// The URL of database `postgres` as the superuser, password included.
    pub fn url(&self) -> String {
        format!("postgres://postgres:{PASSWORD}@127.0.0.1:{}/postgres", self.port)
    }

    /// The same without the password.
    pub fn url_without_password(&self) -> String {
        format!("postgres://postgres@127.0.0.1:{}/postgres", self.port)
    }

    /// A connected client (its connection driven on the runtime).
    pub async fn client(&self) -> tokio_postgres::Client {
        let (client, connection) =
            tokio_postgres::connect(&self.url(), tokio_postgres::NoTls).await.unwrap();
        tokio::spawn(connection);
        client
    }

    /// The directory of the server's files (for the log on failures).
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("server.log")).unwrap_or_default()
    }
}

impl Drop for PgServer {
    fn drop(&mut self) {
        let data = self.data();
        let mut command = if self.as_postgres {
            let mut c = Command::new("runuser");
            c.args(["-u", "postgres", "--"]).arg(self.bin.join("pg_ctl"));
            c
        } else {
            Command::new(self.bin.join("pg_ctl"))
        };
        let _ = command.arg("-D").arg(&data).args(["-m", "immediate", "-w", "stop"]).output();
    }
}

fn uid(user: &str) -> Option<u32> {
    let out =
        Command::new("id").arg("-u").args((!user.is_empty()).then_some(user)).output().ok()?;
    String::from_utf8_lossy(&out.stdout).trim().parse().ok()
}

/// A loopback port nobody listens on now.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}
