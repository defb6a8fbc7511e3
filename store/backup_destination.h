// Where `kvsweep backup` may write its copy: DEST checked against the store it copies, and the
// file it becomes.
#pragma once

#include <string>

namespace kvsweep::store {

// The file a backup replaces (DEST, or the file a symbolic link DEST names) and the mode its
// copy gets (the source's permission bits).
struct BackupTarget {
  std::string path;
  unsigned mode = 0600;
};

// Throws std::invalid_argument, before anything is written, when `dest` is the store at
// `source` itself or its -wal, -shm or -journal file (the same device and inode, so a
// symbolic link, a hard link or another spelling of the path is caught, and for a path that
// does not exist yet, the same name once resolved), or anything but a regular file or a new
// path in an existing directory (a directory, a device such as /dev/null, a FIFO, a socket, a
// link to nothing), or a store whose -wal file still holds transactions (it is in use or was
// not closed). An existing file that is not a kvsweep store (a SQLite file stamped with
// kvsweep's application_id) is refused unless `force`. Called again just before the rename,
// so a DEST changed meanwhile is refused too.
BackupTarget check_backup_destination(const std::string& source, const std::string& dest,
                                      bool force);

// Creates `path` new (never following a link, never over an existing file) with exactly
// `mode`, empty, so the copy is never readable by more people than the source is. Throws
// std::runtime_error naming the path when it cannot.
void create_private_file(const std::string& path, unsigned mode);

}  // namespace kvsweep::store
