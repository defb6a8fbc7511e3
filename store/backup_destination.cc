// Where `kvsweep backup` may write its copy: DEST checked against the store it copies.
#include "store/backup_destination.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <stdexcept>
#include <system_error>

#include "common/error_kinds.h"
#include "common/unique_fd.h"
#include "store/store_identity.h"

namespace kvsweep::store {
namespace {

namespace fs = std::filesystem;

// The files SQLite keeps beside a store; a backup over any of them would wreck it.
constexpr std::array<const char*, 4> kStoreFiles = {"", "-wal", "-shm", "-journal"};

// stat(2), following links; nullopt when nothing is there.
std::optional<struct stat> stat_of(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) return st;
  if (errno == ENOENT) return std::nullopt;
  throw UsageError(path + ": cannot look at it: " + std::strerror(errno));
}

const char* kind_of(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

// The path with every link and "." or ".." resolved, as far as it exists.
std::string resolved(const std::string& path) {
  std::error_code error;
  const fs::path out = fs::weakly_canonical(fs::absolute(path, error), error);
  return error ? path : out.string();
}

// A SQLite file whose header carries kvsweep's application_id (bytes 68 to 71, big-endian).
bool is_kvsweep_store_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::array<char, 72> header{};
  if (!in.read(header.data(), header.size())) return false;
  if (std::memcmp(header.data(), "SQLite format 3", 16) != 0) return false;
  std::uint32_t id = 0;
  for (int i = 68; i < 72; ++i) id = (id << 8) | static_cast<unsigned char>(header[i]);
  return id == static_cast<std::uint32_t>(kApplicationId);
}

}  // namespace

BackupTarget check_backup_destination(const std::string& source, const std::string& dest,
                                      bool force) {
  const auto source_stat = stat_of(source);
  if (!source_stat) throw UsageError(source + ": no such store");
  BackupTarget target;
  target.mode = source_stat->st_mode & 07777;
  const std::string source_name = resolved(source);
  const auto refuse = [&](const std::string& why) {
    throw UsageError("backup: " + dest + ": " + why + "; nothing was written");
  };
  const auto dest_stat = stat_of(dest);
  for (const char* suffix : kStoreFiles) {
    const auto st = *suffix == '\0' ? source_stat : stat_of(source_name + suffix);
    const bool same_file =
        dest_stat && st && st->st_dev == dest_stat->st_dev && st->st_ino == dest_stat->st_ino;
    if (same_file || resolved(dest) == source_name + suffix) {
      refuse(*suffix == '\0'
                 ? "is the store being backed up (" + source +
                       "); replacing it would lose what a running sweep writes. Give a new "
                       "file name"
                 : "is the " + std::string(suffix + 1) + " file of the store being backed up (" +
                       source + ")");
    }
  }
  if (!dest_stat) {
    struct stat link {};
    if (::lstat(dest.c_str(), &link) == 0) refuse("is a symbolic link to nothing");
    const fs::path parent = fs::path(dest).parent_path();
    std::error_code error;
    if (!fs::is_directory(parent.empty() ? fs::path(".") : parent, error)) {
      refuse("no such directory " + parent.string());
    }
    target.path = dest;
    return target;
  }
  if (!S_ISREG(dest_stat->st_mode)) {
    refuse(std::string("is ") + kind_of(dest_stat->st_mode) +
           "; backup writes a regular file or a new path");
  }
  // Through a link, the file it names is replaced, not the link.
  std::error_code error;
  const fs::path real = fs::canonical(dest, error);
  target.path = error ? dest : real.string();
  if (!force && !is_kvsweep_store_file(target.path)) {
    refuse("exists and is not a kvsweep store; backup replaces it only with --force");
  }
  const auto wal = stat_of(target.path + "-wal");
  if (wal && wal->st_size > 0) {
    refuse(
        "its -wal file holds transactions: the store is open in another kvsweep or was not "
        "closed; stop it, or open it once with `kvsweep --db " +
        dest + " runs`, then back up again");
  }
  return target;
}

void create_private_file(const std::string& path, unsigned mode) {
  UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
  if (!fd) throw std::runtime_error(path + ": cannot create: " + std::strerror(errno));
  // fchmod, not open's mode alone: the umask would otherwise narrow or the default widen it.
  const int changed = ::fchmod(fd.get(), static_cast<mode_t>(mode));
  const int saved = errno;
  fd.reset();
  if (changed != 0) {
    std::error_code ignored;
    fs::remove(path, ignored);
    throw std::runtime_error(path + ": cannot set its mode: " + std::strerror(saved));
  }
}

}  // namespace kvsweep::store
