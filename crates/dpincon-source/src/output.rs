//! [`OutputFile`]: how a dpincon command writes a file (a generated table,
//! a constraint file, the CLI's reports): whole or not at all.

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

use tempfile::NamedTempFile;

/// A file written whole or not at all.
///
/// A path that exists and is no regular file (`/dev/null`, a FIFO, a
/// terminal) is opened and written in place: a rename would replace the
/// device with a file, and a temporary file beside it would land in its
/// directory (`/dev`, not writable for most users). Any other path is
/// written to a temporary file in its directory, renamed onto it by
/// [`OutputFile::commit`]; dropped uncommitted (a failed run), the
/// temporary file is removed and the path left as it was.
#[derive(Debug)]
pub struct OutputFile {
    path: PathBuf,
    target: Target,
}

#[derive(Debug)]
enum Target {
    InPlace(File),
    Beside(NamedTempFile),
}

impl OutputFile {
    /// Opens `path` for writing (see the type's docs); a new file is an
    /// ordinary one (0644 before the umask, as a shell's `>` makes): a
    /// generated table or constraint file.
    pub fn create(path: &Path) -> std::io::Result<Self> {
        Self::with_mode(path, 0o644)
    }

    /// As [`OutputFile::create`], but a new file is its owner's only
    /// (0600): a report, which with `--non-private` holds exact values.
    pub fn create_private(path: &Path) -> std::io::Result<Self> {
        Self::with_mode(path, 0o600)
    }

    fn with_mode(path: &Path, mode: u32) -> std::io::Result<Self> {
        let special = std::fs::metadata(path).is_ok_and(|m| !m.is_file());
        let target = if special {
            Target::InPlace(std::fs::OpenOptions::new().write(true).open(path)?)
        } else {
            let dir = match path.parent() {
                Some(p) if !p.as_os_str().is_empty() => p,
                _ => Path::new("."),
            };
            let mut builder = tempfile::Builder::new();
            builder.prefix(".dpincon-").suffix(".tmp");
            // The temporary file is created with the mode the file it
            // becomes keeps (tempfile's own default is 0600).
            #[cfg(unix)]
            {
                use std::os::unix::fs::PermissionsExt;
                builder.permissions(std::fs::Permissions::from_mode(mode));
            }
            #[cfg(not(unix))]
            let _ = mode;
            Target::Beside(builder.tempfile_in(dir)?)
        };
        Ok(OutputFile { path: path.to_path_buf(), target })
    }

    /// The open file, for writers that own a [`File`] (`try_clone` it).
    pub fn file(&self) -> &File {
        match &self.target {
            Target::InPlace(f) => f,
            Target::Beside(tmp) => tmp.as_file(),
        }
    }

    /// Makes the written bytes the path's: synced and renamed onto it, or
    /// (a device, a FIFO) flushed where they already went.
    pub fn commit(self) -> std::io::Result<()> {
        match self.target {
            Target::InPlace(mut f) => f.flush(),
            Target::Beside(tmp) => {
                tmp.as_file().sync_all()?;
                tmp.persist(&self.path).map(|_| ()).map_err(|e| e.error)
            }
        }
    }
}

impl Write for OutputFile {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let mut file = self.file();
        file.write(buf)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        let mut file = self.file();
        file.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A FIFO (or `/dev/null`) is written through, not renamed over, and
    /// no temporary file is made beside it; a regular file is replaced
    /// whole, and only on commit.
    #[test]
    fn devices_are_written_in_place_and_files_whole() {
        use std::os::unix::fs::FileTypeExt;
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("table.fifo");
        assert!(std::process::Command::new("mkfifo").arg(&fifo).status().unwrap().success());
        let reader = {
            let fifo = fifo.clone();
            std::thread::spawn(move || std::fs::read_to_string(fifo).unwrap())
        };
        let mut out = OutputFile::create(&fifo).unwrap();
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1, "no temporary file");
        out.write_all(b"a,b\n1,2\n").unwrap();
        out.commit().unwrap();
        assert!(std::fs::symlink_metadata(&fifo).unwrap().file_type().is_fifo());
        assert_eq!(reader.join().unwrap(), "a,b\n1,2\n");

        let file = dir.path().join("table.csv");
        std::fs::write(&file, "old, longer content\n").unwrap();
        let mut out = OutputFile::create(&file).unwrap();
        out.write_all(b"new\n").unwrap();
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "old, longer content\n");
        out.commit().unwrap();
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "new\n");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 2, "no temporary left");

        // A report stays its owner's.
        use std::os::unix::fs::PermissionsExt;
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        let report = dir.path().join("report.json");
        let mut out = OutputFile::create_private(&report).unwrap();
        out.write_all(b"{}").unwrap();
        out.commit().unwrap();
        assert_eq!(mode(&report), 0o600);
        std::fs::remove_file(&report).unwrap();

        let mut out = OutputFile::create(&file).unwrap();
        out.write_all(b"half").unwrap();
        drop(out);
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "new\n", "uncommitted: unchanged");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 2, "no temporary left");
    }
}
